"""Bulk export and import: JSON Lines out, one commit in, nothing overwritten or leaked."""

from __future__ import annotations

import json
from pathlib import Path

from memdir import service
from tests.conftest import git, run_cli


def _export(*args: str) -> list[dict[str, object]]:
    result = run_cli("export", *args)
    assert result.exit_code == 0, result.output
    return [json.loads(line) for line in result.stdout.splitlines()]


def test_export_then_import_into_another_store_round_trips_in_one_commit(
    store: Path, tmp_path: Path
) -> None:
    kept = service.remember(store, "Deploys go out on Tuesdays", kind="rule").record
    old = service.remember(store, "The queue is RabbitMQ").record
    service.correct(store, old.id, "The queue is Kafka", reason="migrated")
    rows = _export()
    assert {r["status"] for r in rows} == {"active", "superseded"}
    assert [r["id"] for r in _export("--status", "active")].count(kept.id) == 1
    dump = tmp_path / "export.jsonl"
    assert run_cli("export", "-o", str(dump)).exit_code == 0

    other = tmp_path / "other"
    other.mkdir()
    git(other, "init", "-q")
    service.init(other)
    commits = int(git(other / ".memdir", "rev-list", "--count", "HEAD"))
    result = run_cli("import", "--from", "jsonl", str(dump), "--store", str(other / ".memdir"))
    assert result.exit_code == 0, result.output
    assert "imported 3 records; 0 already there" in result.stdout
    assert int(git(other / ".memdir", "rev-list", "--count", "HEAD")) == commits + 1
    texts = {r.text: r.status for r in service.list_records(other / ".memdir")}
    assert texts == {
        "Deploys go out on Tuesdays": "active",
        "The queue is RabbitMQ": "superseded",
        "The queue is Kafka": "active",
    }
    again = run_cli("import", "--from", "jsonl", str(dump), "--store", str(other / ".memdir"))
    assert "imported 0 records; 3 already there" in again.stdout


def test_import_never_overwrites_a_file_on_disk_nor_commits_hand_edits(
    store: Path, tmp_path: Path
) -> None:
    service.remember(store, "Logs are shipped to Loki")
    hand = next((store / "records").rglob("*.md"))
    hand.write_text(hand.read_text() + "\nA note added by hand.\n")
    broken = store / "records" / "fact" / "f-00000000000001.md"
    broken.write_bytes(b"---\nid: f-00000000000001\n\x00 not a record\n")  # health quarantines it
    rows = [
        {"id": "f-00000000000001", "kind": "fact", "text": "Would replace the broken file"},
        {"id": "f-00000000000002", "kind": "fact", "text": "A new imported fact"},
        {"id": "f-00000000000003", "kind": "fact", "text": "key AKIAZZZZZZZZZZZZZZZZ"},
        "not json at all",
    ]
    source = tmp_path / "in.jsonl"
    source.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n")
    result = run_cli("import", "--from", "jsonl", str(source), "--json")
    assert result.exit_code == 0, result.output
    done = json.loads(result.stdout)
    assert (done["imported"], done["existing"]) == (1, 1)
    assert sorted(r["why"] for r in done["refused"]) == ["not JSON", "secret"]
    assert b"\x00 not a record" in broken.read_bytes()  # the hand-made file is untouched
    assert "A note added by hand." in hand.read_text()
    status = git(store, "status", "--porcelain")
    assert hand.name in status and broken.name in status  # both still for the person to decide
    assert "AKIAZZZZ" not in "".join(p.read_text() for p in (store / "records").rglob("*.md"))


def test_export_json_prints_one_document_and_plain_export_stays_json_lines(
    store: Path, tmp_path: Path
) -> None:
    first = service.remember(store, "Deploys go out on Tuesdays", kind="rule").record
    service.remember(store, "The queue is Kafka")
    lines = _export()
    assert len(lines) == 2  # without --json: one record per line
    whole = run_cli("export", "--json")
    assert whole.exit_code == 0, whole.output
    doc = json.loads(whole.stdout)  # one JSON document, the `list` shape
    assert [r["id"] for r in doc["results"]] == [r["id"] for r in lines]
    assert first.id in {r["id"] for r in doc["results"]}
    dump = tmp_path / "out.jsonl"
    written = run_cli("export", "-o", str(dump), "--json")
    assert json.loads(written.stdout) == {"exported": 2, "path": str(dump)}
    assert [json.loads(line)["id"] for line in dump.read_text().splitlines()] == [
        r["id"] for r in lines
    ]


def test_an_import_into_a_store_never_corrected_runs_no_near_duplicate_search(
    store: Path, tmp_path: Path, monkeypatch: object
) -> None:
    """Only a superseded record can be restated: without one, no per-line BM25 search.

    (Those searches grew with the store and made a 10,000-record import 8× slower.) Paired
    with the same import once the store holds a superseded value: then it is searched for.
    """
    import pytest

    from memdir.kernel.storage import lifecycle

    assert isinstance(monkeypatch, pytest.MonkeyPatch)
    searched: list[str] = []
    real = lifecycle.find_similar

    def counting(index: object, text: str, *args: object) -> object:
        searched.append(text)
        return real(index, text, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(lifecycle, "find_similar", counting)
    source = tmp_path / "in.jsonl"
    lines = [
        {"id": f"f-01m8aaaaaaaa{n:02d}", "kind": "fact", "text": f"Fact {n}"} for n in range(5)
    ]
    source.write_text("".join(json.dumps(x) + "\n" for x in lines))
    done = run_cli("import", "--from", "jsonl", str(source))
    assert done.exit_code == 0, done.output
    assert "imported 5 records" in done.stdout
    assert searched == []

    old = service.remember(store, "The queue is RabbitMQ").record
    service.correct(store, old.id, "The queue is Kafka")
    searched.clear()
    source.write_text(
        json.dumps({"id": "f-01m8bbbbbbbbbb", "kind": "fact", "text": "Logs go to Loki"}) + "\n"
    )
    done = run_cli("import", "--from", "jsonl", str(source))
    assert done.exit_code == 0, done.output
    assert searched == ["Logs go to Loki"], done.stdout
