"""History: one commit per operation, diff of a correction chain, rollback as a revert commit."""

from pathlib import Path

import pytest

from memdir import service
from memdir.kernel.errors import GitError, NotFoundError, UsageError
from tests.conftest import git


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
