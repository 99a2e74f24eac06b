"""Store discovery (DESIGN §2): worktrees share one store; nested repositories use the outer one."""

import unicodedata
from pathlib import Path

import pytest

from memdir import service
from memdir.kernel.base.errors import StoreNotFoundError
from memdir.kernel.storage.paths import discover_store, is_within, project_root_for, resolve_store
from tests.conftest import git


def test_every_worktree_of_a_repository_shares_the_main_worktrees_store(
    store: Path, project: Path
) -> None:
    linked = project.parent / "linked-worktree"
    git(project, "worktree", "add", "-q", str(linked), "-b", "feature")
    (linked / "src").mkdir()
    assert discover_store(linked / "src") == store
    assert project_root_for(linked) == project


def test_init_inside_a_linked_worktree_creates_the_store_at_the_main_root(project: Path) -> None:
    linked = project.parent / "wt"
    git(project, "worktree", "add", "-q", str(linked), "-b", "topic")
    done = service.init(linked)
    assert done.store == (project / ".memdir").resolve()


# B18: a nested repository without a store of its own uses the enclosing project's store.
def test_a_nested_repository_without_a_store_uses_the_outer_store(
    store: Path, project: Path
) -> None:
    inner = project / "vendor" / "inner"
    inner.mkdir(parents=True)
    git(inner, "init", "-q")
    assert discover_store(inner) == store
    assert not (inner / ".memdir").exists()


def test_outside_git_the_nearest_ancestor_store_is_found(tmp_path: Path) -> None:
    root = tmp_path / "plain"
    deep = root / "a" / "b"
    deep.mkdir(parents=True)
    made = service.init(root, store=root / ".memdir").store
    assert discover_store(deep) == made


def test_no_store_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(StoreNotFoundError, match="memdir init"):
        resolve_store(None, cwd=tmp_path, env={})


# B04: non-ASCII paths, in NFC or NFD form, find the same store.
@pytest.mark.parametrize("name", ["тест/проекты/demo", "josé/código", "админ", "会议"])
def test_unicode_project_paths_find_their_store(tmp_path: Path, name: str) -> None:
    root = tmp_path / unicodedata.normalize("NFC", name)
    root.mkdir(parents=True)
    git(root, "init", "-q")
    made = service.init(root).store
    service.remember(made, "Memory under a unicode path")
    assert discover_store(root) == made
    assert [h.doc["text"] for h in service.recall(made, "unicode path").hits] == [
        "Memory under a unicode path"
    ]


def test_containment_resolves_symlinks(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (root / "inside.txt").write_text("x")
    (root / "escape").symlink_to(tmp_path)
    assert is_within(root, root / "inside.txt")
    assert not is_within(root, root / "escape" / "other")
    assert not is_within(root, root / ".." / "x")
