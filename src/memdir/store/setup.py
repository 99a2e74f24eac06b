"""Creating a store: folders, manifest, its own git repository, the project's git exclude."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from memdir.kernel import gitio, manifest
from memdir.kernel.atomic import write_text_atomic
from memdir.kernel.errors import MemdirError
from memdir.kernel.index import INDEX_NAME, check_index_path
from memdir.kernel.lock import store_lock
from memdir.kernel.paths import (
    MANIFEST_NAME,
    STATE_DIRNAME,
    STORE_DIRNAME,
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


def _git_common_dir(project: Path) -> Path | None:
    dot_git = project / ".git"
    if dot_git.is_dir():
        return dot_git
    return None


def exclude_from_project(project: Path) -> Path | None:
    """Add ``/.memdir/`` to the project's ``.git/info/exclude`` (once); return that file.

    Returns ``None`` when ``project`` is not the root of a git repository.
    """
    if git_main_root(project) != project:
        return None
    common = _git_common_dir(project)
    if common is None:
        return None
    exclude = common / "info" / "exclude"
    line = f"/{STORE_DIRNAME}/"
    existing = exclude.read_text(encoding="utf-8") if exclude.exists() else ""
    if line not in existing.splitlines():
        exclude.parent.mkdir(parents=True, exist_ok=True)
        prefix = "" if not existing or existing.endswith("\n") else "\n"
        write_text_atomic(
            exclude, existing + prefix + f"# memdir store (its own git repository)\n{line}\n"
        )
    return exclude


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
        StorageError: the store's path is too long for its index (SQLite's path limit).
        GitError: git is missing or failed.
        OSError: the folder cannot be created.
    """
    if store.exists() and not store.is_dir():
        raise MemdirError(f"{store} exists and is not a folder")
    check_index_path(store.absolute() / INDEX_NAME)  # refused before anything is created (B53)
    created = not is_store(store)
    gitio.git_path()
    for sub in ("records", "journal", "actions", "state"):
        (store / sub).mkdir(parents=True, exist_ok=True)
    with store_lock(store, "init"):
        if created:
            write_text_atomic(store / MANIFEST_NAME, manifest.render(scope))
            # The observer reads every journal file of a new store from its start; only a
            # store that already had history when the observer first ran starts at the tail.
            observer_state = store / STATE_DIRNAME / "observer.json"
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
