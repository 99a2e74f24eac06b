"""Purge erases text from the working tree, index, journal, history and the index file's bytes."""

import json
import subprocess
from pathlib import Path

import pytest

from memdir import service
from memdir.kernel.base.errors import UsageError
from tests.conftest import git, run_cli

SECRET_WORDS = "zebrafish quantum marmalade sentinel"


def _all_git_objects(store: Path) -> bytes:
    listing = subprocess.run(
        ["git", "-C", str(store), "rev-list", "--all", "--objects"],
        capture_output=True,
        check=True,
    ).stdout
    ids = b"\n".join(line.split(b" ")[0] for line in listing.splitlines()) + b"\n"
    return subprocess.run(
        ["git", "-C", str(store), "cat-file", "--batch"], input=ids, capture_output=True, check=True
    ).stdout


def test_purge_erases_the_text_everywhere_and_reports_each_place(store: Path) -> None:
    keeper = service.remember(store, "The deploy script is deploy.sh").record
    service.journal_append(
        store, "user", f"remember that {SECRET_WORDS} runs at night", session="s"
    )
    service.journal_append(store, "user", "an unrelated turn", session="s")
    record = service.remember(store, SECRET_WORDS.title()).record
    git(store, "add", "journal")
    git(store, "commit", "-qm", "journal batch")
    service.search(store, "zebrafish")  # the journal is indexed
    report = service.purge(store, record.id, yes=True)
    places = {p["place"] for p in report.places}
    assert {"working tree", "index", "journal", "git history", "git objects"} <= places
    assert not (store / "records" / "fact" / f"{record.id}.md").exists()
    assert service.recall(store, "zebrafish marmalade").hits == []
    assert service.search(store, "zebrafish").hits == []
    assert [h.text for h in service.search(store, "unrelated").hits] == ["an unrelated turn"]
    for path in store.rglob("*"):
        if path.is_file() and ".git" not in path.parts:
            assert b"zebrafish" not in path.read_bytes().lower(), path
    assert b"zebrafish" not in _all_git_objects(store).lower()
    assert service.get(store, keeper.id).text == "The deploy script is deploy.sh"
    assert service.health(store).ok


def test_purge_needs_yes(store: Path) -> None:
    record = service.remember(store, "Something to keep").record
    with pytest.raises(UsageError, match="--yes"):
        service.purge(store, record.id, yes=False)
    assert service.get(store, record.id).text == "Something to keep"


def test_purging_a_linked_record_leaves_a_dangling_link_without_its_text(store: Path) -> None:
    target = service.remember(store, "Internal codename is Bluebird").record
    source = service.remember(store, "See the codename note", links=[target.id]).record
    service.purge(store, target.id, yes=True)
    graph = service.graph(store, source.id)
    node = next(n for n in graph.nodes if n["id"] == target.id)
    assert node == {"id": target.id, "status": "missing", "dangling": True}
    report = service.health(store)
    assert any(f.code == "dangling_link" for f in report.findings)


# --- B: purge touches only the purged record's own file, and the logs ---------------------------

HOST = "The staging database host is zorblax7"


def recall_texts(store: Path, query: str) -> list[str]:
    return [hit.doc["text"] for hit in service.recall(store, query).hits]


def _blob(store: Path, rev: str, rel: str) -> str:
    return git(store, "show", f"{rev}:{rel}")


def _rel(store: Path, record_id: str) -> str:
    return next(store.glob(f"records/*/{record_id}.md")).relative_to(store).as_posix()


def _corrected(store: Path) -> tuple[str, str]:
    old = service.remember(store, HOST, kind="procedure").record
    new = service.correct(store, old.id, "The staging database host is blorp9").record
    return old.id, new.id


def test_purge_leaves_other_records_and_their_history_as_they_were(store: Path) -> None:
    # B37-style repro: B corrected to B2; C repeats B's text. Purging B must not edit C or B2.
    b, b2 = _corrected(store)
    c = service.remember(store, f"Note: {HOST.lower()} per ops", kind="procedure").record.id
    c_rel, b2_rel = _rel(store, c), _rel(store, b2)
    before = {rel: _blob(store, "HEAD", rel) for rel in (c_rel, b2_rel)}
    b_rel = _rel(store, b)

    report = service.purge(store, b, yes=True)

    for rel, text in before.items():
        assert _blob(store, "HEAD", rel) == text == (store / rel).read_text()
    assert f'supersedes: "{b}"' in _blob(store, "HEAD", b2_rel)
    assert git(store, "log", "--all", "--format=%H", "--", b_rel) == ""
    assert git(store, "status", "--porcelain") == ""
    assert service.health(store).ok
    assert report.to_json()["still_held_by"] == [{"id": c, "path": c_rel, "in": "working tree"}]
    assert f"still holds the text: {c} — purge it too or correct it" in report.caveats
    assert service.get(store, b2).supersedes == b


def test_purge_drops_log_lines_with_the_text_and_keeps_lines_that_only_name_the_id(
    store: Path,
) -> None:
    b, _ = _corrected(store)
    service.journal_append(store, "user", f"remember that {HOST}", session="s")
    service.journal_append(store, "user", f"see {b} for the old host", session="s")
    git(store, "add", "journal")
    git(store, "commit", "-qm", "journal batch")

    report = service.purge(store, b, yes=True)

    lines = "".join(p.read_text() for p in (store / "journal").glob("*.jsonl"))
    assert "zorblax7" not in lines
    assert f"see {b} for the old host" in lines
    committed = git(store, "log", "--all", "-p", "--", "journal")
    assert "zorblax7" not in committed and f"see {b} for the old host" in committed
    journal_places = [p for p in report.places if p["place"] == "journal"]
    assert [p["count"] for p in journal_places] == [1]
    assert [h.text for h in service.search(store, "old host").hits] == [f"see {b} for the old host"]
    assert git(store, "status", "--porcelain") == ""


def test_purging_the_newer_end_of_a_correction_leaves_the_old_record_superseded(
    store: Path,
) -> None:
    b, b2 = _corrected(store)

    report = service.purge(store, b2, yes=True)

    old = service.get(store, b)
    assert (old.status, old.superseded_by) == ("superseded", b2)
    assert any(f"{b} stays superseded" in c for c in report.caveats)
    health = service.health(store)
    assert health.ok, [f.to_json() for f in health.findings]
    assert any(f.code == "broken_chain" and "was purged" in f.message for f in health.findings)
    chain = service.diff(store, b).to_json()["chain"]
    assert [(d["id"], d["status"], d["text"]) for d in chain] == [
        (b, "superseded", HOST),
        (b2, "purged", None),
    ]
    assert recall_texts(store, "staging database host") == []
    assert git(store, "status", "--porcelain") == ""


def test_purging_the_older_end_keeps_the_correction_active_and_its_chain_readable(
    store: Path,
) -> None:
    b, b2 = _corrected(store)

    service.purge(store, b, yes=True)

    chain = service.diff(store, b2).to_json()["chain"]
    assert [(d["id"], d["status"]) for d in chain] == [(b, "purged"), (b2, "active")]
    assert recall_texts(store, "staging database host") == ["The staging database host is blorp9"]
    assert service.health(store).ok


@pytest.mark.parametrize("command", ["get", "graph", "diff", "log"])
def test_commands_naming_a_purged_record_say_it_was_purged(store: Path, command: str) -> None:
    b, _ = _corrected(store)
    service.purge(store, b, yes=True)

    result = run_cli(command, b)
    as_json = run_cli(command, b, "--json")

    assert result.exit_code == 4
    assert f"record {b} was purged on " in result.output
    assert "Traceback" not in result.output
    assert json.loads(as_json.output)["error"]["code"] == "not_found"


def test_a_record_never_created_is_simply_not_found(store: Path) -> None:
    result = run_cli("get", "f-01m8aaaaaaaaaa")
    assert result.exit_code == 4
    assert "purged" not in result.output


def test_purge_erases_every_wording_the_record_ever_had(store: Path) -> None:
    record = service.remember(store, "Wifi password hint is tangerine").record
    rel = _rel(store, record.id)
    path = store / rel
    path.write_text(path.read_text().replace("tangerine", "kumquat"))  # a hand edit
    git(store, "commit", "-qam", "hand edit")
    service.journal_append(store, "user", "the wifi password hint is tangerine", session="s")

    service.purge(store, record.id, yes=True)

    logged = "".join(p.read_text() for p in (store / "journal").glob("*.jsonl"))
    assert "tangerine" not in logged
    assert b"tangerine" not in _all_git_objects(store)
    assert b"kumquat" not in _all_git_objects(store)


def test_a_reason_quoting_the_purged_text_is_removed_from_the_audit_log_and_its_history(
    store: Path,
) -> None:
    """A reject reason that quotes the belief kept the text through purge (a fresh user's trial).

    The event stays (who rejected what, when), its reason is removed, now and in every commit;
    the note no longer sends the user to purge an audit file. Paired: an unrelated reason stays.
    """
    other = service.remember(store, "The cache is Redis").record
    service.reject(store, other.id, "we moved to Valkey")
    record = service.remember(store, "Customer Acme pays 42000 per year").record
    service.reject(store, record.id, "Customer Acme pays 42000 per year is wrong")
    report = service.purge(store, record.id, yes=True)
    assert not any("audit/" in c for c in report.caveats), report.caveats
    for path in (store / "audit").glob("*.jsonl"):
        assert b"Acme" not in path.read_bytes(), path
    assert b"Acme" not in _all_git_objects(store)
    events = json.loads(run_cli("audit", "--json").stdout)["results"]
    rejects = {e["records"][0]["id"]: e["reason"] for e in events if e["op"] == "reject"}
    assert rejects == {
        other.id: "we moved to Valkey",
        record.id: "[reason removed by memdir purge]",
    }
    assert service.health(store).ok
