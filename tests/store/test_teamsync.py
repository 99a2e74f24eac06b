"""Issue 14: a store shared through a real bare git remote on this machine (memdir sync).

Clones end equal with nothing lost; concurrent edits of one record resolve by supersession;
rejections win over a concurrent re-assertion; a hand edit on both sides stops the sync with
the store unchanged; a sync killed at any point, or a remote that vanishes, leaves both sides
usable and the next sync completes.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from memdir import service
from memdir.kernel.base.errors import GitError, UsageError
from memdir.kernel.base.model import Record
from memdir.kernel.storage.recordfile import dump
from memdir.service import memory
from memdir.service import project as project_service
from memdir.store import teamsync
from tests.conftest import git, run_cli


def _team(tmp_path: Path, count: int) -> tuple[Path, list[Path]]:
    """A bare remote and ``count`` project checkouts of it, each with an initialised store."""
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    first = tmp_path / "p0"
    first.mkdir()
    git(first, "init", "-q")
    (first / "README.md").write_text("# team project\n")
    git(first, "add", "README.md")
    git(first, "commit", "-qm", "initial")
    git(first, "remote", "add", "origin", str(remote))
    git(first, "push", "-q", "origin", "HEAD:refs/heads/main")
    stores = []
    for number in range(count):
        root = first if number == 0 else tmp_path / f"p{number}"
        if number:
            git(tmp_path, "clone", "-q", "-b", "main", str(remote), str(root))
        made = service.init(root).store
        manifest = made / "memdir.toml"
        manifest.write_text(
            manifest.read_text().replace("observe_every_seconds = 300", "observe_every_seconds = 0")
        )
        git(made, "commit", "-qam", "tests: no background observer")
        stores.append(made)
    return remote, stores


def _sync(store: Path, **options: Any) -> teamsync.Synced:
    return project_service.sync(store, share=True, **options)


def _diverged(tmp_path: Path, first: str, second: str) -> tuple[Path, Path]:
    """Two clones in step, then ``first`` remembered and synced on one, ``second`` on the other
    (not synced): the second is behind the remote and ahead of it at once."""
    _, (a, b) = _team(tmp_path, 2)
    _sync(a)
    _sync(b)
    service.remember(a, first)
    _sync(a)
    service.remember(b, second)
    return a, b


def _texts(store: Path) -> dict[str, str]:
    return {r.id: f"{r.status} {r.text}" for r in service.list_records(store)}


def _tree(store: Path) -> str:
    return git(store, "rev-parse", "HEAD^{tree}").strip()


def _records_tree(store: Path) -> str:
    return git(store, "rev-parse", "HEAD:records").strip()


def test_two_clones_share_through_the_projects_origin_on_an_orphan_branch(tmp_path: Path) -> None:
    remote, (a, b) = _team(tmp_path, 2)
    first = service.remember(a, "The API listens on port 8443").record
    second = service.remember(b, "Tests run with pytest -q").record
    assert _sync(a).pushed
    done = _sync(b)
    assert done.pulled == "merged" and done.pushed
    assert _sync(a).pulled == "fast-forward"
    assert set(_texts(a)) == set(_texts(b)) == {first.id, second.id}
    assert _tree(a) == _tree(b)
    branch = git(remote, "ls-tree", "-r", "--name-only", "memdir").split()
    assert f"records/fact/{first.id}.md" in branch and "README.md" not in branch  # orphan
    unrelated = subprocess.run(
        ["git", "-C", str(remote), "merge-base", "main", "memdir"], check=False
    )
    assert unrelated.returncode == 1  # no history in common with the project's code
    assert teamsync.where(a).to_json() == {
        "remote": "origin",
        "branch": "memdir",
        "url": str(remote),
        "configured": False,
    }
    # recall on the other machine finds what arrived (the index was brought up to date)
    assert [h.doc["id"] for h in service.recall(b, "port 8443").hits] == [first.id]


def test_journals_are_per_machine_once_shared_and_readers_read_both(tmp_path: Path) -> None:
    _, (a, b) = _team(tmp_path, 2)
    old = a / "journal" / "2026-12-01.jsonl"
    old.write_text(
        json.dumps({"at": "2026-12-01T10:00:00.000Z", "who": "user", "text": "old zebra turn"})
        + "\n"
    )
    _sync(a)
    _sync(b)  # shared from here on: each machine appends to its own files
    service.journal_append(a, "user", "new walrus turn from a")
    service.journal_append(b, "user", "new walrus turn from b")
    _sync(b)
    _sync(a)
    _sync(b)
    names_a = sorted(p.name for p in (a / "journal").iterdir())
    names_b = sorted(p.name for p in (b / "journal").iterdir())
    assert names_a == names_b and len(names_a) == 3
    assert "2026-12-01.jsonl" in names_a
    machines = {(s / "state" / "machine").read_text().strip() for s in (a, b)}
    assert len(machines) == 2
    assert all(any(m in n for n in names_a) for m in machines)
    for store in (a, b):
        found = json.dumps(service.search(store, "walrus").to_json())
        assert "turn from a" in found and "turn from b" in found
        assert "zebra" in json.dumps(service.search(store, "zebra").to_json())


def test_a_rejection_wins_over_a_concurrent_edit_and_review_lists_the_resolution(
    tmp_path: Path,
) -> None:
    _, (a, b) = _team(tmp_path, 2)
    belief = service.remember(a, "Deploys go through the staging cluster").record
    _sync(a)
    _sync(b)
    service.reject(a, belief.id, "we deploy straight to production now")
    corrected = service.correct(b, belief.id, "Deploys go through the blue staging cluster").record
    _sync(a)
    done = _sync(b)
    assert [r["record"] for r in done.resolved] == [belief.id]
    _sync(a)
    assert _tree(a) == _tree(b)
    for store in (a, b):
        records = {r.id: r for r in service.list_records(store)}
        assert records[belief.id].status == "rejected"  # the rejection won
        assert records[corrected.id].status == "active"  # the correction is a new belief
        kept = [r for r in records.values() if (r.reason or "").startswith("sync merge:")]
        assert len(kept) == 1 and kept[0].status == "superseded"  # b's version, kept
        assert kept[0].text == belief.text and kept[0].superseded_by == corrected.id
    listed = memory.sync_resolutions(a)
    assert [d["id"] for d in listed] == [kept[0].id]
    shown = run_cli("review", "--store", str(b), "--json")
    assert [d["id"] for d in json.loads(shown.output)["sync_resolutions"]] == [kept[0].id]
    text = run_cli("review", "--store", str(b)).output
    assert kept[0].id in text and "resolved automatically by `memdir sync`" in text
    assert [h.doc["id"] for h in service.recall(a, "staging cluster").hits] == [corrected.id]


@pytest.mark.slow
def test_two_corrections_of_one_record_leave_one_active_belief_the_later(tmp_path: Path) -> None:
    """Two machines correct one record at once: after sync one belief is active, on both."""
    _, (a, b) = _team(tmp_path, 2)
    belief = service.remember(a, "The build uses make").record
    _sync(a)
    _sync(b)
    one = service.correct(a, belief.id, "The build uses ninja").record
    time.sleep(1.1)  # the later edit is later by the records' own clock (whole seconds)
    two = service.correct(b, belief.id, "The build uses bazel").record
    _sync(a)
    shown = run_cli("sync", "--store", str(b))
    assert shown.exit_code == 0, shown.output
    assert f"{two.id} changed on two machines" in shown.output
    _sync(a)
    assert _tree(a) == _tree(b)
    for store in (a, b):
        records = {r.id: r for r in service.list_records(store)}
        assert records[two.id].status == "active"  # the later correction is current
        assert records[one.id].status == "superseded"  # the earlier one is kept, not lost
        assert records[one.id].superseded_by == two.id
        assert (records[one.id].reason or "").startswith("sync merge:")
        assert records[belief.id].status == "superseded"
        assert records[belief.id].superseded_by == two.id
        active = [r for r in records.values() if r.status == "active"]
        assert [r.id for r in active] == [two.id]  # one belief about the build, not two
        assert [h.doc["id"] for h in service.recall(store, "build uses").hits] == [two.id]
        assert service.health(store).ok
    review = json.loads(run_cli("review", "--store", str(a), "--json").output)
    assert [d["id"] for d in review["sync_resolutions"]] == [one.id]
    refused = run_cli("correct", "--store", str(a), one.id, "--text", "The build uses cmake")
    assert refused.exit_code != 0 and two.id in refused.output  # points at the live belief


def test_two_corrections_on_one_machine_stay_a_chain_through_a_sync(tmp_path: Path) -> None:
    """The same data without a concurrent correction: nothing is settled, the chain holds."""
    _, (a, b) = _team(tmp_path, 2)
    belief = service.remember(a, "The build uses make").record
    _sync(a)
    _sync(b)
    one = service.correct(a, belief.id, "The build uses ninja").record
    two = service.correct(a, one.id, "The build uses bazel").record
    service.remember(b, "The docs build with mkdocs")
    _sync(a)
    done = _sync(b)
    assert done.resolved == []
    records = {r.id: r for r in service.list_records(b)}
    assert records[two.id].status == "active" and records[one.id].superseded_by == two.id
    assert not (records[one.id].reason or "").startswith("sync merge:")


def test_a_tombstone_rejects_the_same_value_asserted_concurrently(tmp_path: Path) -> None:
    _, (a, b) = _team(tmp_path, 2)
    belief = service.remember(a, "Use npm for installs").record
    _sync(a)
    _sync(b)
    service.forget(b, belief.id, "not relevant")
    again = service.remember(b, "Use npm for installs").record  # asserted anew on b
    assert again.id != belief.id and again.status == "active"
    service.reject(a, belief.id, "we use pnpm")
    _sync(a)
    _sync(b)
    _sync(a)
    for store in (a, b):
        records = {r.id: r for r in service.list_records(store)}
        assert records[again.id].status == "rejected"
        assert records[belief.id].status in ("rejected", "forgotten")
        assert service.recall(store, "npm installs").hits == []
    # the right thing is there: an unrelated belief from b still arrives and is recalled
    other = service.remember(b, "Use pnpm for installs").record
    _sync(b)
    _sync(a)
    assert [h.doc["id"] for h in service.recall(a, "pnpm installs").hits] == [other.id]


@pytest.mark.slow
def test_a_hand_edit_on_both_sides_stops_the_sync_with_the_store_unchanged(
    tmp_path: Path,
) -> None:
    _, (a, b) = _team(tmp_path, 2)
    belief = service.remember(a, "Releases are cut on Tuesdays").record
    _sync(a)
    _sync(b)
    rel = f"records/fact/{belief.id}.md"
    for store, day in ((a, "Wednesdays"), (b, "Fridays")):
        path = store / rel
        path.write_text(path.read_text().replace("Tuesdays", day))
    _sync(a)
    files = (b / rel).read_text()
    with pytest.raises(teamsync.SyncConflictError, match=rel):
        _sync(b)
    head = git(b, "rev-parse", "HEAD")
    assert (b / rel).read_text() == files and "Fridays" in files
    assert git(b, "status", "--porcelain") == ""
    assert [r.text for r in service.list_records(b)] == ["Releases are cut on Fridays"]
    with pytest.raises(teamsync.SyncConflictError):
        _sync(b)  # again: still stopped, still nothing changed
    assert git(b, "rev-parse", "HEAD") == head
    report = service.health(b)
    named = [f for f in report.findings if f.code == "sync_conflict"]
    assert named and named[0].path == rel and not report.ok
    # the message is clear in the terminal too (exit 1, no traceback)
    cli = subprocess.run(
        [sys.executable, "-m", "memdir", "sync", "--store", str(b)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert cli.returncode == 1 and rel in cli.stdout + cli.stderr
    assert "Traceback" not in cli.stderr
    # making the two sides agree lets the next sync complete, and health is clean again
    (b / rel).write_text((a / rel).read_text())
    _sync(b)
    assert _records_tree(b) == _records_tree(a)
    assert not [f for f in service.health(b).findings if f.code == "sync_conflict"]


def test_remote_shows_and_sets_where_and_refuses_nonsense(tmp_path: Path) -> None:
    remote, (a,) = _team(tmp_path, 1)
    other = tmp_path / "other.git"
    git(tmp_path, "init", "-q", "--bare", str(other))
    assert teamsync.set_where(a, str(other), "team-memory").url == str(other)
    service.remember(a, "Logs go to journald")
    assert _sync(a).pushed
    assert git(other, "rev-parse", "team-memory").strip() == git(a, "rev-parse", "HEAD").strip()
    assert "memdir" not in git(remote, "branch", "--list")
    with pytest.raises(UsageError, match="no-such-remote"):
        teamsync.set_where(a, "no-such-remote", None)
    for bad in ("bad..name", "refs/heads/x", "HEAD", "-x", "a b", "x.lock", "@{-1}"):
        with pytest.raises(UsageError, match="branch"):
            teamsync.set_where(a, None, bad)
    assert teamsync.set_where(a, None, "team/日本").branch == "team/日本"  # git takes it
    assert teamsync.set_where(a, None, "team-memory").branch == "team-memory"
    cli = subprocess.run(
        [sys.executable, "-m", "memdir", "remote", "--store", str(a), "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(cli.stdout)["branch"] == "team-memory"


@pytest.mark.slow
def test_ten_clones_end_equal_with_nothing_lost(tmp_path: Path) -> None:
    _, stores = _team(tmp_path, 10)
    said: set[str] = set()
    for round_ in range(2):
        for number, store in enumerate(stores):
            text = f"Clone {number} learned fact {round_} about subsystem {number * 7 + round_}"
            written = service.remember(store, text).record
            said.add(text)
            if round_ == 1 and number % 2:
                new = f"Clone {number} corrected fact {round_} about subsystem {number}"
                service.correct(store, written.id, new)
                said.add(new)
            _sync(store)
    for store in stores:  # one more round brings every clone the last ones' changes
        _sync(store)
    trees = {_tree(s) for s in stores}
    assert len(trees) == 1
    texts = {r.text for r in service.list_records(stores[3])}
    assert said <= texts
    assert all(service.health(s).ok for s in stores[:2])


@pytest.mark.slow
def test_concurrent_writers_syncing_at_once_end_equal(tmp_path: Path) -> None:
    _, stores = _team(tmp_path, 3)
    errors: list[str] = []

    def work(number: int, store: Path) -> None:
        for round_ in range(2):
            text = f"writer {number} round {round_} belief about cache {number}{round_}"
            run = subprocess.run(
                [sys.executable, "-m", "memdir", "remember", text, "--store", str(store)],
                capture_output=True, text=True, check=False,
            )  # fmt: skip
            sync = subprocess.run(
                [sys.executable, "-m", "memdir", "sync", "--store", str(store)],
                capture_output=True, text=True, check=False,
            )  # fmt: skip
            if run.returncode or sync.returncode:
                errors.append(run.stderr + sync.stderr + sync.stdout)

    threads = [threading.Thread(target=work, args=(n, s)) for n, s in enumerate(stores)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    for store in stores:
        _sync(store)
    assert len({_tree(s) for s in stores}) == 1
    texts = {r.text for r in service.list_records(stores[0])}
    assert len([t for t in texts if t.startswith("writer ")]) == 6


def _many_records(store: Path, count: int, tag: str) -> None:
    folder = store / "records" / "fact"
    folder.mkdir(parents=True, exist_ok=True)
    for number in range(count):
        rid = f"f-{tag}-{number:06d}"
        record = Record(
            id=rid,
            kind="fact",
            text=f"bulk fact {tag} number {number} about module {number % 97}",
            created_at="2026-12-01T10:00:00Z",
            updated_at="2026-12-01T10:00:00Z",
            observed_at="2026-12-01",
            source={"channel": "cli", "session": None, "journal": None},
        )
        (folder / f"{rid}.md").write_text(dump(record))


def _group_commands(pgid: int) -> list[str]:
    """The command lines of the live processes in process group ``pgid``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            if int(stat.rsplit(")", 1)[1].split()[2]) != pgid:
                continue
            found.append((entry / "cmdline").read_bytes().replace(b"\0", b" ").decode())
        except (OSError, ValueError, IndexError):
            continue
    return found


KILL_POINTS = {
    "fetch": lambda pgid, store: any(
        " fetch " in c or "index-pack" in c for c in _group_commands(pgid)
    ),
    "merge": lambda pgid, store: any(
        "write-tree" in c or "commit-tree" in c for c in _group_commands(pgid)
    ),
    "apply": lambda pgid, store: (store / "state" / teamsync.PENDING).exists(),
    "push": lambda pgid, store: any(
        " push " in c or "receive-pack" in c or "pack-objects" in c for c in _group_commands(pgid)
    ),
}
"""When to kill ``memdir sync``: the moment its process group is seen doing this."""


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
def test_a_sync_killed_at_any_point_leaves_both_sides_usable(tmp_path: Path) -> None:
    _, (a, b) = _team(tmp_path, 2)
    _sync(b)
    killed: list[str] = []
    for attempt, (point, seen) in enumerate(KILL_POINTS.items()):
        _many_records(a, 600, f"{attempt}")
        _sync(a)
        service.remember(b, f"b learned thing {attempt} while a synced")  # so b must merge
        _many_records(b, 600, f"b{attempt}")  # and push a good many objects
        proc = subprocess.Popen(
            [sys.executable, "-m", "memdir", "sync", "--store", str(b)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        while proc.poll() is None:
            if seen(proc.pid, b):
                os.killpg(proc.pid, signal.SIGKILL)  # the sync and every git it started
                killed.append(point)
                break
            time.sleep(0.001)
        proc.wait()
        # usable right away: reads answer, a write goes through
        assert len(service.list_records(b)) > attempt
        service.remember(b, f"b wrote after kill {attempt}")
    assert len(killed) >= 3, killed  # the sync was caught mid-way at most of the points
    _sync(b)
    _sync(a)
    assert _tree(a) == _tree(b)
    texts = {r.text for r in service.list_records(a)}
    assert {f"b wrote after kill {n}" for n in range(4)} <= texts
    assert {f"b learned thing {n} while a synced" for n in range(4)} <= texts
    assert len([t for t in texts if t.startswith("bulk fact")]) == 4800
    assert not [f for f in service.health(b).findings if f.level == "error"]


FAKE_SSH = """#!/bin/sh
# A transport that reaches the bare repository on this machine, and drops the connection
# (as a network failure does) once the file named by $DROP exists.
shift
if [ -n "$DROP" ] && [ -e "$DROP" ]; then
    echo "ssh: connect to host team.example port 22: Network is unreachable" >&2
    exit 255
fi
exec sh -c "$*"
"""


@pytest.mark.slow
def test_a_remote_that_disappears_halfway_leaves_both_sides_usable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    remote, (a, b) = _team(tmp_path, 2)
    ssh = tmp_path / "fake-ssh"
    ssh.write_text(FAKE_SSH)
    ssh.chmod(0o755)
    drop = tmp_path / "network-down"
    monkeypatch.setenv("GIT_SSH_COMMAND", str(ssh))
    monkeypatch.setenv("DROP", str(drop))
    url = f"ssh://team.example{remote}"
    for store in (a, b):
        teamsync.set_where(store, url, None)
    service.remember(a, "The queue is RabbitMQ")
    _sync(a)
    service.remember(b, "The cache is Redis")
    head = git(b, "rev-parse", "HEAD")
    drop.touch()  # the network goes away before the fetch
    with pytest.raises(GitError, match="unreachable"):
        _sync(b)
    assert git(b, "rev-parse", "HEAD") == head  # nothing changed here
    assert {r.text for r in service.list_records(b)} == {"The cache is Redis"}
    drop.unlink()
    _sync(b, push=False)  # the merge arrives …
    drop.touch()  # … and the network goes away before the push
    with pytest.raises(GitError, match="unreachable"):
        _sync(b)
    texts = {r.text for r in service.list_records(b)}
    assert texts == {"The cache is Redis", "The queue is RabbitMQ"}
    drop.unlink()  # back: the next sync completes
    _sync(b)
    _sync(a)
    assert _tree(a) == _tree(b)


@pytest.mark.slow
def test_a_purge_is_never_undone_by_a_sync(tmp_path: Path) -> None:
    remote, (a, b) = _team(tmp_path, 2)
    secret = service.remember(a, "The staging password hint is larch").record
    kept = service.remember(a, "Staging runs on the blue cluster").record
    _sync(a)
    _sync(b)
    service.purge(a, secret.id, yes=True)
    with pytest.raises(teamsync.SyncConflictError, match="remote's history still holds it"):
        _sync(a)
    assert not list(a.glob(f"records/*/{secret.id}.md"))  # still gone here
    # as the message says: replace the remote branch, then purge on the other clone first
    git(a, "push", "-q", "--force", str(remote), "HEAD:refs/heads/memdir")
    with pytest.raises(teamsync.SyncConflictError, match=f"memdir purge {secret.id}"):
        _sync(b)
    assert list(b.glob(f"records/*/{secret.id}.md"))  # b unchanged until its owner acts
    service.purge(b, secret.id, yes=True)
    _sync(b)
    _sync(a)
    assert _tree(a) == _tree(b)
    for store in (a, b):
        assert {r.id for r in service.list_records(store)} == {kept.id}
        assert "larch" not in git(store, "log", "-p", "--all")
    assert "larch" not in git(remote, "log", "-p", "memdir")


def test_a_lock_file_a_killed_sync_left_never_blocks_the_next(tmp_path: Path) -> None:
    """A ``kill -9`` mid-merge leaves git's ``sync-index.lock``: the next sync removes it."""
    a, b = _diverged(tmp_path, "From the first machine", "From the second machine")
    stale = b / ".git" / "memdir" / "sync-index.lock"
    stale.parent.mkdir(exist_ok=True)
    stale.write_text("")
    old = time.time() - 60
    os.utime(stale, (old, old))
    done = run_cli("sync", "--store", str(b))
    assert done.exit_code == 0, done.output
    assert not stale.exists()
    _sync(a)
    assert _tree(a) == _tree(b)
    assert {r.text for r in service.list_records(a)} == {
        "From the first machine",
        "From the second machine",
    }


def test_a_hand_edit_of_the_manifest_is_shared_and_merged(tmp_path: Path) -> None:
    """``memdir.toml`` says "edit by hand": sync commits such an edit and merges both sides'."""
    _, (a, b) = _team(tmp_path, 2)
    _sync(a)
    _sync(b)
    ours, theirs = a / "memdir.toml", b / "memdir.toml"
    ours.write_text("# team note from the first machine\n" + ours.read_text())
    theirs.write_text(theirs.read_text() + "# a note from the second machine\n")
    first = run_cli("sync", "--store", str(a))
    assert first.exit_code == 0, first.output
    second = run_cli("sync", "--store", str(b))
    assert second.exit_code == 0, second.output
    _sync(a)
    assert _tree(a) == _tree(b)
    for store in (a, b):
        text = (store / "memdir.toml").read_text()
        assert "team note from the first machine" in text
        assert "a note from the second machine" in text
        assert git(store, "status", "--porcelain").strip() == ""
        assert service.health(store).ok


def test_a_pin_here_and_a_correction_there_pins_the_correction(tmp_path: Path) -> None:
    """The pin follows the belief: the correction made on the other machine is pinned."""
    _, (a, b) = _team(tmp_path, 2)
    belief = service.remember(a, "Always run migrations before tests").record
    _sync(a)
    _sync(b)
    assert run_cli("pin", "--store", str(a), belief.id).exit_code == 0
    new = service.correct(b, belief.id, "Always run migrations via make migrate before tests")
    _sync(a)
    _sync(b)
    _sync(a)
    assert _tree(a) == _tree(b)
    records = {r.id: r for r in service.list_records(a)}
    assert "pinned" in records[new.record.id].tags  # the pin reached the correction
    assert records[new.record.id].status == "active"
    assert records[belief.id].status == "superseded"
    assert [r.id for r in records.values() if r.status == "active"] == [new.record.id]
    assert not [r for r in records.values() if (r.reason or "").startswith("sync merge:")]
    assert service.health(a).ok


def test_a_branch_of_the_same_name_holding_code_is_refused_not_merged(tmp_path: Path) -> None:
    """The remote's ``memdir`` branch holds the project's code: nothing of it enters the store."""
    _, (a, b) = _team(tmp_path, 2)
    service.remember(a, "Kept in the store")
    _sync(a)
    _sync(b)
    project = a.parent
    (project / "app.py").write_text("print('code')\n")
    git(project, "add", "app.py")
    git(project, "commit", "-qm", "code")
    git(project, "push", "-qf", "origin", "HEAD:refs/heads/memdir")
    service.remember(b, "Written on the second machine")
    before = _tree(b)
    refused = run_cli("sync", "--store", str(b))
    assert refused.exit_code == 3, refused.output
    assert "not a memdir store" in refused.output and "app.py" in refused.output
    assert not (b / "app.py").exists() and _tree(b) == before
    # the same store syncing its own branch still works (the check refuses only a stranger)
    assert run_cli("remote", "--store", str(b), "--branch", "memdir-store").exit_code == 0
    assert run_cli("sync", "--store", str(b)).exit_code == 0
    texts = {r.text for r in service.list_records(b)}
    assert {"Kept in the store", "Written on the second machine"} <= texts


def test_a_push_that_could_not_happen_exits_1_saying_so(tmp_path: Path) -> None:
    """``sync --push`` while the remote has news this machine lacks: exit 1, pull advised."""
    _, b = _diverged(tmp_path, "First", "Second")
    refused = run_cli("sync", "--store", str(b), "--push")
    assert refused.exit_code == 1, refused.output
    assert "sync --pull first" in refused.output
    done = run_cli("sync", "--store", str(b))  # the whole sync then does both
    assert done.exit_code == 0, done.output
    assert "pushed" in done.output
