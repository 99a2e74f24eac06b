"""The append-only mutation audit log (issue 10, mark 5): who changed what, hashes only."""

import hashlib
import json
from pathlib import Path

import pytest

from memdir import service
from memdir.kernel.base.caller import Caller
from memdir.kernel.base.errors import AuthorityError
from memdir.kernel.storage import audit, gitio
from tests.conftest import git, run_cli

OWNER = Caller("owner", "cli")
TEXT = "The staging database lives on port 5433."


def _sha(path: Path) -> str:
    return "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()


def _audit_text(store: Path) -> str:
    return "".join(p.read_text() for p in sorted((store / "audit").glob("*.jsonl")))


def test_every_mutation_is_one_event_with_who_why_and_hashes_never_text(store: Path) -> None:
    first = service.remember(store, TEXT, kind="fact").record
    path = store / "records" / "fact" / f"{first.id}.md"
    remembered_hash = _sha(path)
    second = service.correct(store, first.id, "The staging database lives on port 6543.").record
    service.reject(store, second.id, "wrong port again")
    events = json.loads(run_cli("audit", "--json").stdout)["results"]
    assert [e["op"] for e in events] == ["remember", "correct", "reject"]
    remember, correct, reject = events
    assert remember["records"] == [{"id": first.id, "before": None, "after": remembered_hash}]
    assert {r["id"] for r in correct["records"]} == {first.id, second.id}
    assert reject["reason"] == "wrong port again"
    assert reject["records"][0]["after"] == _sha(store / "records" / "fact" / f"{second.id}.md")
    assert all(e["origin"] == "owner" and e["channel"] == "cli" for e in events)
    assert "5433" not in _audit_text(store) and "6543" not in _audit_text(store)
    # committed with the write it describes: the store is clean, and the commit holds it
    assert git(store, "status", "--porcelain") == ""
    assert "audit/" in git(store, "show", "--name-only", "--format=", "HEAD")
    # one record's events
    mine = json.loads(run_cli("audit", first.id, "--json").stdout)["results"]
    assert [e["op"] for e in mine] == ["remember", "correct"]


def test_the_agent_channel_is_named(store: Path) -> None:
    agent = Caller("agent", "mcp", host="codex", session="s-1")
    done = service.remember(store, TEXT, caller=agent).record
    (event,) = audit.read(store, done.id)
    assert (event["origin"], event["channel"], event["host"], event["session"]) == (
        "agent",
        "mcp",
        "codex",
        "s-1",
    )


def test_purge_keeps_the_audit_log_and_logs_itself_without_text(store: Path) -> None:
    gone = service.remember(store, TEXT).record
    kept = service.remember(store, "Use ruff for linting.").record
    service.forget(store, gone.id, "moved")
    service.purge(store, gone.id, yes=True, caller=OWNER)
    ops = [e["op"] for e in audit.read(store, gone.id)]
    assert ops == ["remember", "forget", "purge"]
    assert "5433" not in _audit_text(store)
    assert "staging" not in git(store, "log", "-p", "--all")  # history rewritten, audit kept
    # the right thing is there: the other record and its event
    assert [e["op"] for e in audit.read(store, kept.id)] == ["remember"]
    assert git(store, "status", "--porcelain") == ""


def test_rollback_adds_an_event_and_removes_none(store: Path) -> None:
    old = service.remember(store, TEXT).record
    service.correct(store, old.id, "The staging database lives on port 6543.")
    head = git(store, "rev-parse", "HEAD").strip()
    before = _audit_text(store)
    service.rollback(store, head, yes=True, caller=OWNER)
    after = _audit_text(store)
    assert after.startswith(before)  # append-only: nothing taken out
    assert [e["op"] for e in audit.read(store)][-1] == "rollback"
    assert service.get(store, old.id).status == "active"


def test_a_refused_purge_is_an_audit_event(store: Path) -> None:
    done = service.remember(store, TEXT).record
    with pytest.raises(AuthorityError):
        service.purge(store, done.id, yes=True, caller=Caller("agent", "mcp"))
    refused = [e for e in audit.read(store) if e["op"] == "refused"]
    assert refused and refused[0]["refused"] == "purge" and refused[0]["origin"] == "agent"
    assert service.get(store, done.id).status == "active"


def test_an_interrupted_write_completes_its_audit_event_once(
    store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = gitio.commit

    def killed(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt  # the process dies between the append and the commit

    monkeypatch.setattr(gitio, "commit", killed)
    with pytest.raises(KeyboardInterrupt):
        service.remember(store, TEXT)
    monkeypatch.setattr(gitio, "commit", real)
    other = service.remember(store, "Use ruff for linting.").record  # recovers first
    events = audit.read(store)
    assert [e["op"] for e in events] == ["remember", "remember"]
    assert len({e["id"] for e in events}) == 2
    assert events[1]["records"][0]["id"] == other.id
    assert git(store, "status", "--porcelain") == ""


def test_health_names_a_record_whose_content_has_no_audit_event(store: Path) -> None:
    edited = service.remember(store, TEXT).record
    fine = service.remember(store, "Use ruff for linting.").record
    assert not [f for f in service.health(store).findings if f.code == "unaudited_record"]
    path = store / "records" / "fact" / f"{edited.id}.md"
    path.write_text(path.read_text().replace("5433", "5434"))
    named = [f for f in service.health(store).findings if f.code == "unaudited_record"]
    assert [f.path for f in named] == [f"records/fact/{edited.id}.md"]
    # Information, not a fault: people may edit records by hand (README "Records").
    assert named[0].level == "info"
    assert fine.id not in " ".join(f.message for f in named)


def test_a_hand_edit_committed_by_sync_is_audited_and_health_stops_naming_it(
    store: Path,
) -> None:
    """The info line never cleared, and its suggested ``memdir audit ID`` changed nothing.

    ``memdir sync`` commits a hand edit with a ``hand_edit`` event (hashes before and after,
    who ran the sync); paired: a record edited after that is named again.
    """
    edited = service.remember(store, TEXT).record
    path = store / "records" / "fact" / f"{edited.id}.md"
    before = _sha(path)
    path.write_text(path.read_text().replace("5433", "5434"))
    assert [f.code for f in service.health(store).findings].count("unaudited_record") == 1
    done = run_cli("sync")
    assert done.exit_code == 0, done.output
    assert "unaudited_record" not in [f.code for f in service.health(store).findings]
    event = audit.read(store, edited.id)[-1]
    assert event["op"] == "hand_edit" and event["channel"] == "cli"
    assert event["records"] == [{"id": edited.id, "before": before, "after": _sha(path)}]
    assert git(store, "status", "--porcelain") == ""
    path.write_text(path.read_text().replace("5434", "5435"))
    named = [f for f in service.health(store).findings if f.code == "unaudited_record"]
    assert [f.path for f in named] == [f"records/fact/{edited.id}.md"]


@pytest.mark.slow
def test_concurrent_writers_each_get_one_whole_event(store: Path) -> None:
    import subprocess
    import sys
    from concurrent.futures import ThreadPoolExecutor

    def remember(n: int) -> str:
        text = f"Parallel belief {n} about topic{n}"
        done = subprocess.run(
            [sys.executable, "-m", "memdir", "remember", text, "--store", str(store), "--json"],
            capture_output=True,
            text=True,
            check=True,
        )
        return str(json.loads(done.stdout)["id"])

    with ThreadPoolExecutor(4) as pool:
        ids = list(pool.map(remember, range(12)))
    lines = _audit_text(store).splitlines()
    assert all(isinstance(json.loads(line), dict) for line in lines)  # no torn or merged line
    named = [r["id"] for e in audit.read(store) for r in e["records"]]
    assert sorted(named) == sorted(ids)
    assert not [f for f in service.health(store).findings if f.code == "unaudited_record"]
    assert git(store, "status", "--porcelain") == ""


def test_an_update_names_who_made_it_not_who_wrote_the_record(store: Path) -> None:
    """A bug the agent logged and the owner marked fixed was fixed by the owner (issue 10)."""
    from memdir.service import memory

    logged = memory.bug_log(
        store, "KeyError: 'id'", "check the key", None, caller=Caller("agent", "mcp")
    )
    assert logged.record.origin == "agent"
    fixed = memory.bug_fixed(store, logged.record.id, caller=Caller("owner", "cli"))
    assert "fixed" in fixed.record.tags
    event = audit.read(store, logged.record.id)[-1]
    assert (event["op"], event["origin"], event["channel"]) == ("bug fixed", "owner", "cli")
    message = git(store, "log", "-1", "--format=%B")
    assert "Memdir-Origin: owner" in message and "origin: agent" not in message


def test_a_full_audit_file_takes_no_more_events_and_the_log_reads_whole(
    store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A write commits only the month's newest audit file, never the whole month's log.

    (One file per month made each commit hash and compress it all: 300 ms more per write after
    a 100,000-record import.) Paired: ``memdir audit`` still reads every event, in order.
    """
    monkeypatch.setattr(audit, "SEGMENT_BYTES", 600)
    ids = [
        service.remember(store, f"Fact {n}: port {5000 + n}", kind="fact").record.id
        for n in range(6)
    ]
    files = sorted(p.name for p in (store / "audit").glob("*.jsonl"))
    month = files[0][:7]
    assert len(files) >= 3 and {f"{month}.jsonl", f"{month}.1.jsonl"} <= set(files)
    assert all((store / "audit" / f).stat().st_size < 600 + 1000 for f in files)  # one event over
    committed = git(store, "show", "--name-only", "--format=", "HEAD").split()
    newest = max(files, key=lambda f: int(f.split(".")[1]) if f.count(".") == 2 else 0)
    assert [p for p in committed if p.startswith("audit/")] == [f"audit/{newest}"]
    events = json.loads(run_cli("audit", "--json").stdout)["results"]
    assert [e["records"][0]["id"] for e in events] == ids
    assert audit.read(store, ids[0])[0]["op"] == "remember"
