"""Creating a store: folders, manifest, its own git repository, the project's git exclude."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from memdir.kernel.base.atomic import write_text_atomic
from memdir.kernel.base.errors import MemdirError, UsageError
from memdir.kernel.index import INDEX_NAME, check_index_path
from memdir.kernel.storage import gitio, identity, manifest
from memdir.kernel.storage.lock import store_lock
from memdir.kernel.storage.paths import (
    MANIFEST_NAME,
    STORE_DIRNAME,
    StoreLayout,
    git_main_root,
    is_store,
)


@dataclass(frozen=True, slots=True)
class Initialised:
    """The outcome of ``memdir init``."""

    store: Path
    created: bool  # False when the store already existed (init is idempotent)
    scope: str
    excluded_in: Path | None  # the project's git exclude file that now names .memdir/

    def to_json(self) -> dict[str, object]:
        """Return the outcome as a JSON object."""
        return {
            "store": str(self.store),
            "created": self.created,
            "scope": self.scope,
            "excluded_in": str(self.excluded_in) if self.excluded_in else None,
        }


def exclude_from_project(project: Path) -> Path | None:
    """Add ``/.memdir/`` to the project's git exclude file (once); return that file.

    The file is the one git itself reads (``git rev-parse --git-path info/exclude``), so a
    project whose ``.git`` is a file (a submodule, a linked worktree, ``--separate-git-dir``)
    gets it in the right place. Returns ``None`` when ``project`` is not the root of a git
    working tree.

    Raises:
        GitError: git is missing.
    """
    if git_main_root(project) != project:
        return None
    done = gitio.run_git(project, "rev-parse", "--git-path", "info/exclude", check=False)
    found = done.stdout.decode("utf-8", "replace").strip()
    if done.returncode != 0 or not found:
        return None
    exclude = Path(found) if Path(found).is_absolute() else project / found
    line = f"/{STORE_DIRNAME}/"
    existing = exclude.read_text(encoding="utf-8") if exclude.exists() else ""
    if line not in existing.splitlines():
        exclude.parent.mkdir(parents=True, exist_ok=True)
        prefix = "" if not existing or existing.endswith("\n") else "\n"
        write_text_atomic(
            exclude, existing + prefix + f"# memdir store (its own git repository)\n{line}\n"
        )
    return exclude


def _refuse_project_tree(store: Path) -> None:
    """Refuse to make a project's working tree (or a folder it tracks) into a store (case B60).

    A store is a folder of its own with its own git repository; made in a project's working
    tree, every memdir write would commit into the project's history.

    Raises:
        UsageError: ``store`` is the top of a git working tree, or holds files a repository
            around it tracks.
    """
    if is_store(store) or not store.is_dir():
        return
    top = gitio.run_git(store, "rev-parse", "--show-toplevel", check=False, discover=True)
    root = top.stdout.decode("utf-8", "replace").strip()
    if top.returncode != 0 or not root:
        return
    advice = (
        "--store names the store folder itself, the .memdir folder of a project: run "
        f"`memdir init` in the project (it creates {Path(root) / STORE_DIRNAME}), or pass "
        f"--store {Path(root) / STORE_DIRNAME}"
    )
    if Path(root).resolve() == store.resolve():
        raise UsageError(
            f"refused: {store} is the working tree of a git repository (a project), not a store "
            f"folder; {advice}"
        )
    tracked = gitio.run_git(
        Path(root), "ls-files", "-z", "--", str(store.resolve()), check=False, discover=True
    )
    if tracked.returncode == 0 and tracked.stdout.strip(b"\0"):
        raise UsageError(
            f"refused: {store} holds files the git repository at {root} tracks; a store is a "
            f"folder of its own. {advice}"
        )


def init_store(
    store: Path,
    *,
    scope: str = "project",
    project: Path | None = None,
    trailers: gitio.Trailers = (),
) -> Initialised:
    """Create the store at ``store`` (idempotent) and return what was done.

    Args:
        store: The store folder to create (``<project>/.memdir`` or the user store).
        scope: ``project`` or ``user``.
        project: The project root, whose git exclude gets ``/.memdir/``.
        trailers: Who made the store, for its first commit (``Caller.trailers()``).

    Raises:
        MemdirError: ``store`` exists and is a file.
        UsageError: ``store`` is a project's working tree, or holds files a repository tracks.
        StorageError: the store's path is too long for its index (SQLite's path limit).
        GitError: git is missing or failed.
        OSError: the folder cannot be created.
    """
    if store.exists() and not store.is_dir():
        raise MemdirError(f"{store} exists and is not a folder")
    check_index_path(store.absolute() / INDEX_NAME)  # refused before anything is created (B53)
    created = not is_store(store)
    gitio.git_path()
    _refuse_project_tree(store)
    where = StoreLayout(store)
    for sub in (where.RECORDS, where.JOURNAL, where.ACTIONS, where.STATE):
        where.path(sub).mkdir(parents=True, exist_ok=True)
    with store_lock(store, "init"):
        if created:
            ident = identity.derive(project or identity.project_root(store))
            write_text_atomic(
                store / MANIFEST_NAME,
                manifest.render(scope, ident if scope == "project" else ""),
            )
            # The observer reads every journal file of a new store from its start; only a
            # store that already had history when the observer first ran starts at the tail.
            observer_state = where.state_path(where.OBSERVER)
            if not observer_state.exists():
                write_text_atomic(observer_state, '{"files": {}}\n')
        gitio.init_repo(store)
        if not gitio.log(store, limit=1):
            gitio.commit(
                store,
                [MANIFEST_NAME, ".gitignore"],
                f"init: memdir {scope} store",
                trailers=trailers,
            )
    excluded = exclude_from_project(project) if project is not None else None
    settings = manifest.load(store)
    return Initialised(store.resolve(), created, settings.scope, excluded)
