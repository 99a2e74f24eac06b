"""A whole memory as one file, with its history: ``memdir bundle`` and ``import --from bundle``.

``create`` writes a ``git bundle`` of the store's checked-out branch (every commit: records,
journal days, action logs, anatomy, manifest). The caller commits pending journal and action
lines first (``memdir sync``), so nothing appended since the last commit is left behind.
Machine-local files (``state/``, ``index.sqlite``) are not in git and not in the bundle; the
index is rebuilt on the other machine.

``clone`` brings a bundle onto another machine: only into a new or empty folder, where it
clones the bundle (so every commit, author and date is kept), drops the ``origin`` remote that
points at the bundle file and applies memdir's git settings. Into an existing store it refuses:
merging two histories of one memory is ``memdir sync``'s job (by supersession, never by loss),
and a bundle carries no base to merge against.

Every git call goes through :mod:`memdir.kernel.storage.gitio`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memdir.kernel.base.errors import GitError, RefusedError, UsageError
from memdir.kernel.storage import gitio


@dataclass(frozen=True, slots=True)
class Bundled:
    """What a bundle holds: its file, branch, tip commit and number of commits."""

    file: str
    branch: str
    head: str
    commits: int

    def to_json(self) -> dict[str, Any]:
        """Return the bundle's description as a JSON object."""
        return {
            "file": self.file,
            "branch": self.branch,
            "head": self.head,
            "commits": self.commits,
        }


def _branch(store: Path) -> str:
    done = gitio.run_git(store, "symbolic-ref", "-q", "--short", "HEAD", check=False)
    branch = done.stdout.decode("utf-8", "replace").strip()
    if done.returncode != 0 or not branch:
        raise RefusedError(
            f"the store {store} has no branch checked out (an old commit?); "
            "check out its branch before bundling"
        )
    return branch


def create(store: Path, file: Path) -> Bundled:
    """Write the store's branch and its whole history into the bundle ``file``.

    The file is written beside its final name and renamed into place, so a failure leaves no
    half-written bundle.

    Args:
        store: The store folder (its own git repository).
        file: Where to write the bundle; its folder must exist.

    Returns:
        The bundle's file, branch, tip and commit count.

    Raises:
        UsageError: ``file`` is a folder or its folder does not exist.
        RefusedError: the store has no branch checked out.
        GitError: git failed.
    """
    file = file.absolute()
    if file.is_dir():
        raise UsageError(f"{file} is a folder; give a file name for the bundle")
    if not file.parent.is_dir():
        raise UsageError(f"the folder {file.parent} does not exist")
    branch = _branch(store)
    head = gitio.head_commit(store)
    count = gitio.run_git(store, "rev-list", "--count", "HEAD").stdout.decode().strip()
    temp = file.with_name(f".{file.name}.{os.getpid()}.tmp")
    try:
        gitio.run_git(store, "bundle", "create", "-q", str(temp), "HEAD", branch)
        os.replace(temp, file)
    finally:
        temp.unlink(missing_ok=True)
    return Bundled(str(file), branch, head, int(count or 0))


def _heads(file: Path, where: Path) -> dict[str, str]:
    done = gitio.run_git(where, "bundle", "list-heads", str(file), check=False)
    if done.returncode != 0:
        detail = done.stderr.decode("utf-8", "replace").strip()
        raise UsageError(f"{file} is not a git bundle memdir can read ({detail})")
    heads: dict[str, str] = {}
    for line in done.stdout.decode("utf-8", "replace").splitlines():
        sha, _, ref = line.partition(" ")
        if ref:
            heads[ref.strip()] = sha
    return heads


def clone(file: Path, store: Path) -> Bundled:
    """Make ``store`` a copy of the bundled memory, history included.

    Args:
        file: A bundle ``memdir bundle`` wrote.
        store: The store folder to create; it must not exist or be empty.

    Returns:
        The new store's branch, tip and commit count (``file`` as given).

    Raises:
        UsageError: ``file`` is not a readable bundle, or holds no memdir store.
        RefusedError: ``store`` exists and is not empty (nothing is changed).
        GitError: git failed; the half-made store is removed.
    """
    file = file.absolute()
    if not file.is_file():
        raise UsageError(f"{file} is not a file")
    if store.exists() and (not store.is_dir() or any(store.iterdir())):
        raise RefusedError(
            f"{store} already holds a store (or other files); a bundle is brought only into a "
            "new or empty folder. Give another folder with --store, or move this one away; "
            "to merge two copies of one memory use `memdir sync`"
        )
    parent = store.absolute().parent
    parent.mkdir(parents=True, exist_ok=True)
    heads = _heads(file, parent)
    branches = [ref[len("refs/heads/") :] for ref in heads if ref.startswith("refs/heads/")]
    if not branches:
        raise UsageError(f"{file} holds no branch; it was not written by `memdir bundle`")
    created = not store.exists()
    try:
        gitio.run_git(
            parent, "clone", "-q", "--branch", branches[0], str(file), str(store.absolute())
        )
        if not (store / "memdir.toml").is_file():
            raise UsageError(f"{file} holds no memdir store (no memdir.toml at its top)")
        gitio.run_git(store, "remote", "remove", "origin", check=False)
        gitio.init_repo(store)
    except (GitError, UsageError):
        _remove(store, created)
        raise
    count = gitio.run_git(store, "rev-list", "--count", "HEAD").stdout.decode().strip()
    return Bundled(str(file), branches[0], gitio.head_commit(store), int(count or 0))


def _remove(store: Path, created: bool) -> None:
    import shutil

    if created:
        shutil.rmtree(store, ignore_errors=True)
    else:
        for child in store.iterdir():
            if child.is_dir() and not child.is_symlink():
                shutil.rmtree(child, ignore_errors=True)
            else:
                child.unlink(missing_ok=True)
