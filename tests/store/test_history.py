"""History: one commit per operation, diff of a correction chain, rollback as a revert commit."""

import json
import subprocess
from pathlib import Path

import pytest

from memdir import service
from memdir.kernel.base.errors import GitError, NotFoundError, UsageError
from tests.conftest import git, run_cli


def test_rollback_of_a_correction_restores_the_old_belief_with_a_revert_commit(store: Path) -> None:
    old = service.remember(store, "The queue is RabbitMQ").record
    new = service.correct(store, old.id, "The queue is Kafka", reason="migrated").record
    head = git(store, "rev-parse", "HEAD").strip()
    done = service.rollback(store, head, yes=True)
    assert sorted(done.paths) == sorted([f"records/fact/{old.id}.md", f"records/fact/{new.id}.md"])
    assert service.get(store, old.id).status == "active"
    with pytest.raises(NotFoundError):
        service.get(store, new.id)
    assert [h.doc["id"] for h in service.recall(store, "queue").hits] == [old.id]
    subjects = git(store, "log", "--format=%s").splitlines()
    assert subjects[0].startswith(f"rollback {head[:12]}")
    assert subjects[1].startswith(f"correct {old.id}")  # history is kept, not reset


def test_rollback_needs_yes_and_an_existing_commit(store: Path) -> None:
    service.remember(store, "Anything")
    with pytest.raises(UsageError, match="--yes"):
        service.rollback(store, "HEAD", yes=False)
    with pytest.raises(NotFoundError):
        service.rollback(store, "0123456789abcdef", yes=True)
    first = git(store, "rev-list", "--max-parents=0", "HEAD").strip()
    with pytest.raises(UsageError, match="first commit"):
        service.rollback(store, first, yes=True)


def test_a_rollback_that_conflicts_changes_nothing(store: Path) -> None:
    record = service.remember(store, "Logs go to stdout").record
    first = git(store, "rev-parse", "HEAD").strip()
    service.correct(store, record.id, "Logs go to journald")
    before = git(store, "rev-parse", "HEAD").strip()
    with pytest.raises(GitError, match="later changes"):
        service.rollback(store, first, yes=True)
    assert git(store, "rev-parse", "HEAD").strip() == before
    assert git(store, "status", "--porcelain") == ""


def test_diff_shows_the_chain_oldest_first_and_each_files_patches(store: Path) -> None:
    a = service.remember(store, "Python 3.10 is the minimum").record
    b = service.correct(store, a.id, "Python 3.11 is the minimum").record
    c = service.correct(store, b.id, "Python 3.12 is the minimum").record
    found = service.diff(store, b.id)
    assert [d["id"] for d in found.chain] == [a.id, b.id, c.id]
    assert '-status: "active"' in found.patches[a.id]
    assert '+superseded_by: "' + b.id in found.patches[a.id]


def test_log_of_one_record_lists_only_its_commits(store: Path) -> None:
    a = service.remember(store, "Alpha").record
    service.remember(store, "Beta")
    service.forget(store, a.id, "done")
    subjects = [c.subject for c in service.log(store, a.id)]
    assert subjects == [f"forget {a.id}: done", f"remember {a.id}"]


def test_record_writes_are_plain_commits_that_leave_the_store_clean(store: Path) -> None:
    first = service.remember(store, "The staging database is called blue-heron").record.id
    service.remember(store, "Deploys go out on Tuesdays")
    service.correct(store, first, "The staging database is called grey-heron", reason="renamed")
    assert git(store, "status", "--porcelain") == ""
    subjects = git(store, "log", "--format=%s").splitlines()
    assert subjects[0].startswith(f"correct {first}") and subjects[2].startswith("remember")
    assert git(store, "rev-list", "--count", "HEAD").strip() == str(len(subjects))
    fsck = subprocess.run(["git", "-C", str(store), "fsck", "--strict"], capture_output=True)
    assert fsck.returncode == 0, fsck.stderr
    assert "commit: correct" in git(store, "reflog", "-n1")


def test_a_large_bulk_import_leaves_the_history_packed(store: Path, tmp_path: Path) -> None:
    rows = [
        json.dumps({"id": f"f-{n:014d}", "kind": "fact", "text": f"Imported fact number {n}"})
        for n in range(1100)
    ]
    source = tmp_path / "export.jsonl"
    source.write_text("\n".join(rows) + "\n")
    result = run_cli("import", "--from", "jsonl", str(source), "--json")
    assert result.exit_code == 0, result.output
    counts = dict(line.split(": ") for line in git(store, "count-objects", "-v").splitlines())
    assert int(counts["count"]) < 50 and int(counts["in-pack"]) > 1100
    assert run_cli("health").exit_code == 0
    assert service.recall(store, "imported fact number 1099").hits


def test_head_is_read_from_loose_and_packed_refs_as_git_reads_it(store: Path) -> None:
    from memdir.kernel.storage import gitio

    service.remember(store, "The staging database is called blue-heron")
    assert gitio.head_commit(store) == git(store, "rev-parse", "HEAD").strip()
    git(store, "pack-refs", "--all")  # the branch now lives only in packed-refs
    assert gitio.head_commit(store) == git(store, "rev-parse", "HEAD").strip()
    service.remember(store, "Deploys go out on Tuesdays")  # commits on top of a packed ref
    assert gitio.head_commit(store) == git(store, "rev-parse", "HEAD").strip()
    git(store, "checkout", "-q", "--detach")
    assert gitio.head_commit(store) == git(store, "rev-parse", "HEAD").strip()
    fresh = store.parent / "unborn"
    fresh.mkdir()
    git(fresh, "init", "-q")
    assert gitio.head_commit(fresh) == ""


def test_a_near_duplicate_that_changes_nothing_makes_no_commit(store: Path) -> None:
    first = service.remember(store, "The queue is Kafka").record
    count = git(store, "rev-list", "--count", "HEAD")
    for _ in range(3):  # same text, same second or not: never an empty commit
        again = service.remember(store, "the queue is kafka")
        assert again.record.id == first.id
    for commit in git(store, "rev-list", "HEAD").split():
        changed = git(store, "show", "--format=", "--name-only", commit).strip()
        assert changed, git(store, "show", "-s", "--format=%s", commit)  # no empty commit
    assert int(git(store, "rev-list", "--count", "HEAD")) <= int(count) + 3


def test_diff_prints_the_patch_on_its_own_lines(store: Path) -> None:
    old = service.remember(store, "The queue is RabbitMQ").record
    service.correct(store, old.id, "The queue is Kafka", reason="migrated")
    result = run_cli("diff", old.id)
    assert result.exit_code == 0
    assert "\\n" not in result.stdout
    assert any(line.startswith("+text:") for line in result.stdout.splitlines())


def _cli(memdir_exe: list[str], store: Path, *args: str, agent: bool = False) -> str:
    """Run the real CLI in a subprocess on ``store``; return stdout (exit 0 asserted)."""
    import os

    env = {**os.environ, "MEMDIR_STORE": str(store)}
    if agent:
        env["CLAUDECODE"] = "1"
    done = subprocess.run([*memdir_exe, *args], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.slow
def test_rollback_of_a_sync_undoes_the_hand_edit_and_keeps_every_journal_line(
    store: Path, memdir_exe: list[str]
) -> None:
    record = service.remember(store, "Use pnpm for installs").record
    path = store / f"records/fact/{record.id}.md"
    path.write_text(path.read_text().replace("pnpm for installs", "pnpm for every install"))
    for text in ("I prefer small pull requests.", "We decided to keep the CLI thin."):
        _cli(memdir_exe, store, "journal", "user", text, "--session", "s1")
    (journal,) = (store / "journal").glob("*.jsonl")
    lines = journal.read_text().splitlines()
    assert len(lines) == 2
    _cli(memdir_exe, store, "sync", agent=True)
    synced = git(store, "rev-parse", "HEAD").strip()
    assert journal.name in git(store, "show", "--stat", synced)
    out = _cli(memdir_exe, store, "rollback", synced, "--yes")
    kept = out.split("; kept ", 1)[1]  # the logs it kept: the journal, and the audit log
    assert f"journal/{journal.name}" in kept and "never removes log lines" in out
    assert service.get(store, record.id).text == "Use pnpm for installs"  # the edit is undone
    assert journal.read_text().splitlines() == lines  # every turn is still there
    assert git(store, "status", "--porcelain") == ""
    # Rolling back the rollback brings the edit back and still leaves the journal alone.
    _cli(memdir_exe, store, "rollback", "HEAD", "--yes")
    assert service.get(store, record.id).text == "Use pnpm for every install"
    assert journal.read_text().splitlines() == lines
