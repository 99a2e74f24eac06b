"""Crash consistency: a writer killed with SIGKILL at many points loses nothing (DESIGN §10.2).

Every test runs the real ``memdir`` CLI in a subprocess on a real store (real git, real SQLite)
and kills it at one point. Deterministic points come from ``killpoint.py``, which wraps the
steps a write takes (``os.write``, ``os.replace``, ``os.fsync``, ``os.unlink``, each git command,
each SQLite ``COMMIT``) and sends SIGKILL at the N-th occurrence of one of them, before or after
the call, or half-way through a write (a torn write). A few more kills are time-based, and take
the whole process group down (git included), as a host killing a hook does.

After each kill, as a person would: ``memdir health`` repairs and passes (exit 0), every record
file parses and is committed, every acknowledged write (the CLI printed its id and exited 0) is
there, the killed write is all or nothing, ``memdir reindex`` rebuilds the index, recall finds
every acknowledged record, and running the killed command again succeeds.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from memdir import service
from memdir.kernel.index import Index
from memdir.records.codec import read_file
from tests.conftest import git
from tests.reliability.runner import MEMDIR, memdir


@dataclass
class Ran:
    """A finished CLI run."""

    code: int
    out: str
    err: str

    def json(self) -> dict:
        return json.loads(self.out)


def cli(store: Path, *args: str, kill_at: str | None = None) -> Ran:
    """Run ``memdir ARGS --store STORE``; with ``kill_at``, through the kill-point wrapper."""
    done = memdir(store, *args, kill_at=kill_at)
    return Ran(done.returncode, done.stdout, done.stderr)


def killed(store: Path, kill_at: str, *args: str) -> None:
    """Run a command that must die at ``kill_at``: the point exists and was reached."""
    done = cli(store, *args, kill_at=kill_at)
    assert done.code == -signal.SIGKILL, f"{kill_at} never happened: {done}"


def acknowledged(ran: Ran) -> dict:
    """The record a finished write printed; it is acknowledged."""
    assert ran.code == 0, ran
    return ran.json()


def seed(store: Path) -> dict[str, dict]:
    """Two acknowledged records, one already corrected: id → expected (text, status)."""
    first = service.remember(store, "The build uses pnpm workspaces").record
    second = service.remember(store, "Deploys go out on Tuesdays", kind="decision").record
    third = service.correct(store, second.id, "Deploys go out on Thursdays").record
    return {
        first.id: {"text": first.text, "status": "active"},
        second.id: {"text": second.text, "status": "superseded"},
        third.id: {"text": third.text, "status": "active"},
    }


def on_disk(store: Path) -> dict[str, dict]:
    """Every record file, parsed: id → its front matter (each file must parse)."""
    found = {}
    for path in sorted((store / "records").rglob("*.md")):
        if path.name.startswith("."):
            continue  # a temporary file of an interrupted write, never a record
        rel = path.relative_to(store).as_posix()
        parsed = read_file(path, rel, "project")
        assert not [w for w in parsed.warnings if w.level == "error"], (rel, parsed.warnings)
        assert path.stem == parsed.record.id
        found[parsed.record.id] = parsed.record.to_json()
    return found


def assert_recovered(store: Path, expected: dict[str, dict], *, cli_health: bool = True) -> dict:
    """Health repairs and passes, nothing acknowledged is missing, the index rebuilds.

    Returns every record on disk (id → front matter). ``cli_health`` runs ``memdir health`` as a
    subprocess (its exit code is the contract); otherwise the same check runs in-process.
    """
    if cli_health:
        health = cli(store, "health", "--json")
        assert health.code == 0, health.out
        assert health.json()["ok"] is True
    else:
        report = service.health(store)
        assert report.ok, report.to_json()
    assert not (store / "state" / "intent.json").exists()
    records = on_disk(store)
    for record_id, want in expected.items():
        assert record_id in records, f"acknowledged {record_id} is missing"
        assert {k: records[record_id][k] for k in want} == want
    assert git(store, "status", "--porcelain", "--", "records") == ""
    rebuilt = service.reindex(store)
    assert (rebuilt.indexed, rebuilt.quarantined) == (len(records), 0)
    for record_id, want in expected.items():
        if want.get("status", "active") == "active":
            hits = [h.doc["id"] for h in service.recall(store, want["text"], limit=20).hits]
            assert record_id in hits, f"recall does not find {record_id}"
    return records


def assert_one_commit_per_correction(store: Path, records: dict[str, dict]) -> None:
    """The commit that added a correction also holds its superseded record (DESIGN §4)."""
    for record_id, doc in records.items():
        old = doc["supersedes"]
        if not old:
            continue
        new_path = f"records/{doc['kind']}/{record_id}.md"
        first = git(store, "log", "--format=%H", "--diff-filter=A", "--", new_path).split()[-1]
        changed = git(store, "show", "--name-only", "--format=", first).split()
        assert f"records/{doc['kind']}/{old}.md" in changed, (first, changed)


# --- remember --------------------------------------------------------------------------------

REMEMBER_POINTS = [
    "write:intent#1@torn",  # the intent half-written: nothing happened yet
    "replace:intent#1@after",  # the intent is saved, no record file yet
    "fsync#3",  # the record's temporary file written, not yet renamed into place
    "write:record#1@torn",
    "replace:record#1@after",  # the record file in place, not in git
    "git:update-index#1@after",  # staged, not committed
    "git:write-tree#1@after",  # the tree written, no commit yet
    "git:commit-tree#1@after",  # the commit made, HEAD not yet moved to it
    "git:update-ref#1@after",  # committed, not indexed
    "sqlite:commit#1@after",  # indexed, the intent not yet removed
    "unlink:intent#1@after",  # all done, but the id was never printed
]


@pytest.mark.parametrize("point", REMEMBER_POINTS)
def test_a_remember_killed_at_any_point_loses_nothing(store: Path, point: str) -> None:
    expected = seed(store)
    text = "The staging database is postgres 16"
    killed(store, point, "remember", text, "--json")

    records = assert_recovered(store, expected)
    landed = [doc for doc in records.values() if doc["text"] == text]
    assert len(landed) <= 1  # all or nothing, never twice
    if landed:  # it got as far as its intent: the repair completed it, whole and committed
        assert landed[0]["status"] == "active"
        assert git(store, "log", "--format=%s", "--", f"records/fact/{landed[0]['id']}.md")

    again = acknowledged(cli(store, "remember", text, "--json"))
    expected[again["id"]] = {"text": text, "status": "active"}
    if landed:
        assert again["id"] == landed[0]["id"]  # the retry confirms it, no duplicate
    assert_recovered(store, expected, cli_health=False)


# --- correct ---------------------------------------------------------------------------------

CORRECT_POINTS = [
    "replace:record#1@after",  # the new record is on disk, the old one not yet superseded
    "write:record#2@torn",
    "replace:record#2@after",  # both on disk, neither committed
    "git:commit-tree#1@after",
    "git:update-ref#1@after",
    "sqlite:commit#1",
]


@pytest.mark.parametrize("point", CORRECT_POINTS)
def test_a_correct_killed_at_any_point_is_all_or_nothing(store: Path, point: str) -> None:
    expected = seed(store)
    old_id = next(i for i, want in expected.items() if want["text"].startswith("The build"))
    text = "The build uses bun workspaces"
    killed(store, point, "correct", old_id, "--text", text, "--reason", "switched", "--json")

    records = assert_recovered(store, {k: v for k, v in expected.items() if k != old_id})
    successors = [doc for doc in records.values() if doc["supersedes"] == old_id]
    if successors:  # completed by the repair: both halves, in one commit
        (new,) = successors
        assert (new["text"], new["status"]) == (text, "active")
        assert records[old_id]["status"] == "superseded"
        assert records[old_id]["superseded_by"] == new["id"]
    else:  # never happened: the old belief is untouched
        assert records[old_id]["status"] == "active"
        assert records[old_id]["superseded_by"] is None
        done = acknowledged(cli(store, "correct", old_id, "--text", text, "--json"))
        records[done["id"]] = done
    expected[old_id] = {"status": "superseded"}
    recalled = [h.doc["text"] for h in service.recall(store, "build workspaces").hits]
    assert recalled == [text]  # never the superseded text
    assert_one_commit_per_correction(store, assert_recovered(store, expected, cli_health=False))


# --- forget ----------------------------------------------------------------------------------

FORGET_POINTS = ["replace:record#1@after", "git:update-ref#1@after", "unlink:intent#1"]


@pytest.mark.parametrize("point", FORGET_POINTS)
def test_a_forget_killed_at_any_point_is_all_or_nothing(store: Path, point: str) -> None:
    expected = seed(store)
    target = next(i for i, want in expected.items() if want["text"].startswith("The build"))
    killed(store, point, "forget", target, "--reason", "moved to bun", "--json")

    records = assert_recovered(store, {k: v for k, v in expected.items() if k != target})
    status = records[target]["status"]
    assert status in ("active", "forgotten")
    if status == "forgotten":
        assert records[target]["reason"] == "moved to bun"
    done = cli(store, "forget", target, "--reason", "moved to bun", "--json")
    assert done.code == 0, done
    expected[target] = {"status": "forgotten", "reason": "moved to bun"}
    assert_recovered(store, expected, cli_health=False)
    assert target not in [h.doc["id"] for h in service.recall(store, "build pnpm").hits]


# --- reindex ---------------------------------------------------------------------------------

REINDEX_POINTS = ["sqlite:commit#1", "sqlite:commit#1@after"]


@pytest.mark.parametrize("point", REINDEX_POINTS)
def test_a_killed_reindex_leaves_the_old_index_whole(store: Path, point: str) -> None:
    expected = seed(store)
    service.journal_append(store, "user", "we moved the queue to kafka last sprint")
    service.search(store, "kafka")  # the index holds the turn
    killed(store, point, "reindex")

    # Hooks read the index without scanning the records (DESIGN §5): what they see after the
    # kill must be the old index or the new one, never an empty one.
    with Index(store) as index:
        indexed = {doc["id"] for doc in index.list_docs()}
        turns = index._conn.execute("SELECT count(*) FROM turns").fetchone()[0]
    assert indexed == set(expected)
    assert turns == 1
    assert_recovered(store, expected)
    assert [h.text for h in service.search(store, "kafka").hits] == [
        "we moved the queue to kafka last sprint"
    ]
    with Index(store) as index:  # the turn is counted once however often it was reindexed
        assert index._conn.execute("SELECT rows FROM turn_df WHERE term = 'kafka'").fetchone() == (
            1,
        )


# --- journal ---------------------------------------------------------------------------------

JOURNAL_POINTS = ["write:journal#1@torn", "write:journal#1@after"]


@pytest.mark.parametrize("point", JOURNAL_POINTS)
def test_a_killed_journal_append_never_hides_an_acknowledged_turn(store: Path, point: str) -> None:
    service.journal_append(store, "user", "the cache lives in redis", session="s1")
    killed(store, point, "journal", "assistant", "noted, redis for the cache", "--session", "s1")
    after = cli(store, "journal", "user", "and the queue is kafka", "--session", "s1", "--json")
    assert after.code == 0, after

    assert_recovered(store, {})
    texts = [hit.text for hit in service.search(store, "redis kafka cache queue", limit=10).hits]
    assert "the cache lives in redis" in texts
    assert "and the queue is kafka" in texts
    assert not [t for t in texts if t.startswith("noted") and t != "noted, redis for the cache"]
    # Every line the journal holds is either a whole turn or the torn remains of the killed
    # one, on a line of its own: an acknowledged turn never merges into garbage.
    (day,) = (store / "journal").glob("*.jsonl")
    lines = day.read_bytes().split(b"\n")
    assert lines[-1] == b""
    whole = [json.loads(line) for line in lines if line.startswith(b"{") and line.endswith(b"}")]
    assert [t["text"] for t in whole if t["who"] == "user"] == [
        "the cache lives in redis",
        "and the queue is kafka",
    ]


# --- the whole process group, git included -----------------------------------------------


def test_a_kill_of_the_whole_process_group_inside_git_is_repaired(
    store: Path, tmp_path: Path
) -> None:
    """A host that kills a hook kills its process group: git dies holding ``.git/index.lock``.

    A ``git`` first on PATH takes the index lock as ``git update-index`` does, then kills its whole
    process group (memdir included) before it could finish, as SIGKILL leaves it.
    """
    expected = seed(store)
    real_git = shutil.which("git")
    fake = tmp_path / "bin" / "git"
    fake.parent.mkdir()
    fake.write_text(
        "#!/bin/sh\n"
        'if [ "$3" = update-index ]; then\n'
        '  : > "$2/.git/index.lock"\n'
        '  kill -9 -"$(ps -o pgid= $$ | tr -d " ")"\n'
        "fi\n"
        f'exec {real_git} "$@"\n'
    )
    fake.chmod(0o755)
    env = {**os.environ, "PATH": f"{fake.parent}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run(
        [*MEMDIR, "remember", "The cache is redis", "--store", str(store), "--json"],
        capture_output=True,
        start_new_session=True,
        env=env,
        check=False,
    )
    assert done.returncode == -signal.SIGKILL
    assert (store / ".git" / "index.lock").exists()

    assert_recovered(store, expected)
    again = acknowledged(cli(store, "remember", "The cache is redis", "--json"))
    expected[again["id"]] = {"text": "The cache is redis", "status": "active"}
    assert_recovered(store, expected, cli_health=False)


RANDOM_KILLS = [("remember", 11), ("remember", 12), ("correct", 13)]


@pytest.mark.parametrize(("operation", "seed_value"), RANDOM_KILLS)
def test_a_kill_at_a_random_instant_loses_nothing(
    store: Path, operation: str, seed_value: int
) -> None:
    """Wherever the kill lands (the delay is random), the invariants hold; no timing is asserted."""
    expected = seed(store)
    old_id = next(i for i, want in expected.items() if want["text"].startswith("The build"))
    args = (
        ["remember", "Lint runs with ruff"]
        if operation == "remember"
        else ["correct", old_id, "--text", "The build uses yarn workspaces"]
    )
    child = subprocess.Popen(
        [*MEMDIR, *args, "--store", str(store), "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    time.sleep(random.Random(seed_value).uniform(0.05, 0.6))
    with contextlib.suppress(ProcessLookupError):  # it may have finished and been reaped
        os.killpg(child.pid, signal.SIGKILL)
    out, _ = child.communicate()
    if child.returncode == 0:  # it finished before the kill: acknowledged
        doc = json.loads(out)
        expected[doc["id"]] = {"text": doc["text"], "status": "active"}
        if operation == "correct":
            expected[old_id] = {"status": "superseded"}
    records = assert_recovered(
        store, {k: v for k, v in expected.items() if operation != "correct" or k != old_id}
    )
    assert_one_commit_per_correction(store, records)
