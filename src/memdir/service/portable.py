"""Use cases that move a memory out of memdir or between machines.

AMP export, bundles, and the Claude Code auto-memory mirror.
"""

from __future__ import annotations

from pathlib import Path

from memdir.kernel.base.caller import Caller
from memdir.kernel.storage import paths
from memdir.service import opened
from memdir.service.project import project_root, sync
from memdir.store import amp, bundle, mirror, setup


def export_amp(store: Path, directory: Path, statuses: list[str]) -> amp.Exported:
    """Write the store's records (of ``statuses``; default active) as an AMP repository.

    Raises:
        UsageError: ``directory`` is a file or a non-empty folder that is not an AMP repository.
    """
    with opened(store) as handle:
        return amp.export(handle, directory, statuses or ["active"])


def bundle_create(store: Path, file: Path, *, caller: Caller | None = None) -> bundle.Bundled:
    """Commit pending journal, action and hand-edited files, then bundle the store's history.

    Raises:
        UsageError: ``file`` is a folder or its folder is missing.
        RefusedError: the store has no branch checked out.
        GitError: git failed.
    """
    sync(store, caller=caller)
    return bundle.create(store, file)


def bundle_import(file: Path, store: Path | None, cwd: Path) -> bundle.Bundled:
    """Bring a bundled memory into ``store`` (default: this project's ``.memdir``), new or empty.

    The project's git is told to ignore the new store, and its index is built.

    Raises:
        UsageError: ``file`` is not a memdir bundle.
        RefusedError: the target already holds a store or other files.
        GitError: git failed.
    """
    project = None
    if store is None:
        project = paths.project_root_for(cwd)
        store = project / paths.STORE_DIRNAME
    done = bundle.clone(file, store)
    if project is not None:
        setup.exclude_from_project(project)
    with opened(store):
        pass  # builds the index from the records (a stat scan)
    return done


def mirror_claude(
    store: Path, *, off: bool = False, directory: Path | None = None
) -> mirror.Mirrored:
    """Turn on (and refresh) or turn off the Claude Code auto-memory mirror.

    Args:
        store: The project store.
        off: Remove memdir's mirror files and the flag instead.
        directory: The auto-memory folder (default: Claude Code's for this project).

    Raises:
        OSError: a mirror file could not be written.
    """
    if off:
        return mirror.disable(store)
    target = directory or mirror.claude_memory_dir(project_root(store))
    with opened(store) as handle:
        return mirror.refresh(handle.index, store, target)


def mirror_enabled(store: Path) -> bool:
    """Return whether the Claude Code auto-memory mirror is on for ``store``."""
    return mirror.enabled(store)
