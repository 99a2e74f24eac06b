"""`memdir health`: quarantine by name, warnings, safe repairs, the exit code."""

import dataclasses
import json
import os
import re
import time
from pathlib import Path

from memdir import service
from memdir.kernel.base.model import Record
from memdir.kernel.index import Index
from memdir.kernel.storage import txn
from memdir.kernel.storage.recordfile import dump
from tests.conftest import run_cli


def _codes(store: Path) -> list[str]:
    return [f.code for f in service.health(store).findings if f.level != "info"]


def test_a_healthy_store_passes(store: Path) -> None:
    service.remember(store, "All is well")
    result = run_cli("health")
    assert result.exit_code == 0, result.stdout
    assert "ok" in result.stdout.splitlines()[0]


def test_an_unreadable_file_is_quarantined_by_name_and_others_stay(store: Path) -> None:
    good = service.remember(store, "Good record stays").record
    broken = store / "records" / "fact" / "f-01broken00000.md"
    broken.write_bytes(b"\xff\xfe not utf-8 at all")
    no_front = store / "records" / "fact" / "notes.md"
    no_front.write_text("just some notes\n")
    result = run_cli("health", "--json")
    assert result.exit_code == 1
    report = json.loads(result.stdout)
    quarantined = {f["path"] for f in report["findings"] if f["level"] == "error"}
    assert quarantined == {"records/fact/f-01broken00000.md", "records/fact/notes.md"}
    assert broken.read_bytes() == b"\xff\xfe not utf-8 at all"  # never rewritten or moved
    assert [h.doc["id"] for h in service.recall(store, "good record").hits] == [good.id]


# B42: a file with merge conflict markers is flagged and not served as clean content.
def test_merge_conflict_markers_are_flagged_and_kept_out_of_recall(store: Path) -> None:
    record = service.remember(store, "The port is 8080").record
    path = store / "records" / "fact" / f"{record.id}.md"
    original = path.read_text()
    path.write_text(
        "<<<<<<< HEAD\n"
        + original
        + "=======\n"
        + original.replace("8080", "9090")
        + ">>>>>>> branch\n"
    )
    assert "unreadable" in _codes(store)
    assert service.recall(store, "port").hits == []


def test_duplicate_keys_are_a_warning_naming_file_and_key(store: Path) -> None:
    record = service.remember(store, "Cache settings").record
    path = store / "records" / "fact" / f"{record.id}.md"
    path.write_text(
        path.read_text().replace('status: "active"\n', 'status: "active"\nstatus: active\n')
    )
    report = service.health(store)
    finding = next(f for f in report.findings if f.code == "duplicate_key")
    assert finding.path == f"records/fact/{record.id}.md"
    assert "'status'" in finding.message
    assert not report.ok


def test_a_forgotten_link_target_is_reported_dangling(store: Path) -> None:
    target = service.remember(store, "Old policy").record
    service.remember(store, "Policy details", body=f"See [[{target.id}]].")
    service.forget(store, target.id, "retired")
    assert "dangling_link" in _codes(store)


def test_health_finishes_an_interrupted_write_and_removes_stale_temp_files(store: Path) -> None:
    record = service.remember(store, "Before the crash").record
    # Simulate a writer killed after its intent was saved but before anything was applied.
    crashed = Record(
        id="f-01crash0000000",
        kind="fact",
        text="Written by a killed process",
        created_at="2026-11-30T00:00:00Z",
        updated_at="2026-11-30T00:00:00Z",
    )
    intent = {
        "message": "remember f-01crash0000000",
        "files": {"records/fact/f-01crash0000000.md": dump(crashed)},
    }
    (store / "state" / txn.INTENT_NAME).write_text(json.dumps(intent))
    stale = store / "records" / "fact" / ".f-01x.md.123.abcd.tmp"
    stale.write_text("half")
    old = time.time() - 3600
    os.utime(stale, (old, old))
    report = service.health(store)
    codes = {f.code for f in report.findings}
    assert {"write_completed", "stale_temp_removed"} <= codes
    assert not stale.exists()
    assert service.get(store, "f-01crash0000000").text == "Written by a killed process"
    assert service.get(store, record.id).text == "Before the crash"
    assert report.ok


def test_uncommitted_hand_edits_are_reported(store: Path) -> None:
    record = service.remember(store, "Edited by hand later").record
    path = store / "records" / "fact" / f"{record.id}.md"
    path.write_text(path.read_text().replace("later", "now"))
    assert "uncommitted" in _codes(store)


def test_deleting_the_index_loses_nothing(store: Path) -> None:
    ids = {service.remember(store, f"Belief number {n}").record.id for n in range(5)}
    service.journal_append(store, "user", "a journal turn about beliefs")
    for name in ("index.sqlite", "index.sqlite-wal", "index.sqlite-shm"):
        (store / name).unlink(missing_ok=True)
    assert {r.id for r in service.list_records(store)} == ids
    assert len(service.recall(store, "belief number", limit=10).hits) == 5
    assert service.search(store, "journal turn").hits


def test_reindex_rebuilds_from_records_and_journal(store: Path) -> None:
    service.remember(store, "Rebuilt from files")
    service.journal_append(store, "user", "turn one")
    report = service.reindex(store)
    assert (report.indexed, report.turns) == (1, 1)
    assert [h.doc["text"] for h in service.recall(store, "rebuilt").hits] == ["Rebuilt from files"]


def test_a_corrupt_index_is_rebuilt_and_a_newer_one_refused(store: Path) -> None:
    service.remember(store, "Survives a corrupt index")
    (store / "index.sqlite").write_bytes(b"this is not a database" * 100)
    assert [h.doc["text"] for h in service.recall(store, "corrupt").hits] == [
        "Survives a corrupt index"
    ]
    with Index(store) as index:
        index._conn.execute("PRAGMA user_version = 99")
    result = run_cli("recall", "corrupt", "--json")
    assert result.exit_code == 1
    assert json.loads(result.stdout)["error"]["code"] == "index_format"
    assert run_cli("reindex").exit_code == 0
    assert run_cli("recall", "corrupt").exit_code == 0


def test_a_store_from_a_newer_format_is_refused_untouched(store: Path) -> None:
    manifest = store / "memdir.toml"
    manifest.write_text(manifest.read_text().replace("format = 1", "format = 7"))
    before = sorted(p.name for p in store.iterdir())
    result = run_cli("remember", "should not be written", "--json")
    assert result.exit_code == 1
    assert "newer" in json.loads(result.stdout)["error"]["message"]
    assert sorted(p.name for p in store.iterdir()) == before


def test_a_broken_manifest_is_an_error_naming_the_line(store: Path) -> None:
    (store / "memdir.toml").write_text("format = [unclosed\n")
    result = run_cli("list")
    assert result.exit_code == 1
    assert "memdir.toml" in result.stderr and "line 1" in result.stderr


def test_a_planted_intent_never_writes_outside_the_store(store: Path, tmp_path: Path) -> None:
    outside = tmp_path / "pwned.md"
    intent = store / "state" / "intent.json"
    intent.write_text(json.dumps({"message": "x", "files": {"../../pwned.md": "pwned"}}))
    assert run_cli("remember", "Written after a planted intent").exit_code == 0
    assert not outside.exists() and not (store.parent.parent / "pwned.md").exists()
    result = run_cli("health", "--json")
    codes = [f["code"] for f in json.loads(result.stdout)["findings"]]
    assert "intent_refused" in codes and result.exit_code == 1


def test_health_names_id_mismatches_bad_times_and_symlinks_leading_out(
    store: Path, tmp_path: Path
) -> None:
    original = service.remember(store, "Original record text").record
    source = (store / "records" / "fact" / f"{original.id}.md").read_text()
    folder = store / "records" / "fact"
    (folder / "f-00000000001111.md").write_text(
        source.replace(f"id: {original.id}", "id: f-00000000009999")
    )
    (folder / "f-00000000002222.md").write_text(
        re.sub(
            r"(?m)^created_at: .*$",
            "created_at: yesterday-ish",
            source.replace(f"id: {original.id}", "id: f-00000000002222"),
        )
    )
    outside = tmp_path / "outside.md"
    outside.write_text(source.replace("Original record text", "Text from outside the store"))
    (folder / "f-00000000003333.md").symlink_to(outside)
    result = run_cli("health", "--json")
    assert result.exit_code == 1
    found = {(f["code"], f.get("path")) for f in json.loads(result.stdout)["findings"]}
    assert ("id_mismatch", "records/fact/f-00000000001111.md") in found
    assert ("bad_timestamp", "records/fact/f-00000000002222.md") in found
    assert ("symlink", "records/fact/f-00000000003333.md") in found
    assert "Text from outside" not in run_cli("list").stdout


def test_two_active_corrections_of_one_record_are_a_forked_chain(store: Path) -> None:
    """A store an older sync left with two live corrections of one belief: health names both."""
    old = service.remember(store, "The build uses make").record
    one = service.correct(store, old.id, "The build uses ninja").record
    assert "forked_chain" not in _codes(store)  # one correction: a chain, no fork
    other = service.remember(store, "The build uses bazel").record
    path = store / "records" / "fact" / f"{other.id}.md"
    path.write_text(dump(dataclasses.replace(other, supersedes=old.id)))
    result = run_cli("health", "--json")
    assert result.exit_code == 1
    forks = [f for f in json.loads(result.stdout)["findings"] if f["code"] == "forked_chain"]
    assert len(forks) == 1
    assert one.id in forks[0]["message"] and other.id in forks[0]["message"]
    assert old.id in forks[0]["message"]
