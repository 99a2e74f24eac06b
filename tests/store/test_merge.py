"""B42: stores shared through git merge cleanly; a same-record conflict is flagged, not served."""

import subprocess
from pathlib import Path

from memdir import service
from memdir.kernel.storage.paths import is_store
from tests.conftest import git


def _clone(store: Path, where: Path) -> Path:
    git(where.parent, "clone", "-q", str(store), str(where))
    (where / "state").mkdir(exist_ok=True)
    assert is_store(where)
    return where


def test_independent_additions_on_two_branches_merge_without_conflict(
    store: Path, tmp_path: Path
) -> None:
    other = _clone(store, tmp_path / "other-clone")
    a = service.remember(store, "Branch A learned about caching").record
    b = service.remember(other, "Branch B learned about logging").record
    git(store, "pull", "-q", "--no-rebase", "--no-edit", str(other), "HEAD")
    assert git(store, "status", "--porcelain") == ""
    assert {r.id for r in service.list_records(store)} == {a.id, b.id}
    assert service.health(store).ok


def test_editing_one_record_on_both_sides_is_a_git_conflict_that_health_flags(
    store: Path, tmp_path: Path
) -> None:
    record = service.remember(store, "The service listens on port 8080").record
    other = _clone(store, tmp_path / "other-clone")
    service.reject(store, record.id, "we moved to 9090")
    service.forget(other, record.id, "service retired")
    merge = subprocess.run(
        ["git", "-C", str(store), "pull", "-q", "--no-rebase", "--no-edit", str(other), "HEAD"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert merge.returncode != 0  # a normal git conflict, never a silent loss
    report = service.health(store)
    flagged = [f for f in report.findings if f.path == f"records/fact/{record.id}.md"]
    assert flagged and flagged[0].level == "error"
    assert service.recall(store, "port 8080").hits == []
