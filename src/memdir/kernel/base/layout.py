"""Every store-relative name in one place: :class:`StoreLayout` (DESIGN §2, §10.4).

A store's folders and files (``records/``, ``journal/``, ``actions/``, ``audit/``,
``proposals/``, ``memdir.toml``, ``index.sqlite``, ``anatomy.json``) and its machine-local
``state/`` (sessions, spool, intent, lock, backups, caches) are named here once; code asks the
layout for a path instead of joining names itself, and every path it returns stays inside the
store (symlinks out of it and names that climb out with ``..`` are refused).

It sits in the kernel's lowest layer so that every layer (the index's backups, the digest's
flags, the path-scope cache, storage, the hooks) uses the same object;
:mod:`memdir.kernel.storage.paths` re-exports it with store discovery. A guard test
(``tests/contracts/test_store_layout.py``) fails on a ``store / "state"`` join anywhere else.

Imports: standard library only.
"""

from __future__ import annotations

import os
from pathlib import Path

from memdir.kernel.base.errors import StoreLayoutError

STORE_DIRNAME = ".memdir"
MANIFEST_NAME = "memdir.toml"
STATE_DIRNAME = "state"
HOOK_ERROR_LOG = "hook-errors.log"


STORE_ENTRIES = (
    "records",
    "journal",
    "actions",
    STATE_DIRNAME,
    MANIFEST_NAME,
    "index.sqlite",
    "anatomy.json",
    "anatomy.md",
)
"""The store's own folders and files: none may lead out of the store (DESIGN §10.4)."""


def check_layout(store: Path) -> None:
    """Refuse a store whose own folders or files are symlinks leading out of it.

    A store travels through git, and git checks out symlinks: a shared store may hold
    ``journal -> ~/elsewhere``. memdir would then read and write outside the store, so it stops
    instead. Costs a few ``lstat`` calls; hooks call it once per event.

    Raises:
        StoreLayoutError: the message names the entry and where it leads.
    """
    entries = [store / name for name in STORE_ENTRIES]
    records = store / "records"
    if records.is_dir() and not records.is_symlink():
        entries += [folder for folder in records.iterdir() if folder.is_symlink()]
    for entry in entries:
        if entry.is_symlink() and not is_within(store, entry):
            raise StoreLayoutError(
                f"{entry} is a symbolic link to {os.readlink(entry)}, outside the store; memdir "
                "reads and writes only inside the store and does not follow it. Replace the "
                "link with a real folder or file"
            )


def state_dir(store: Path) -> Path:
    """Return the store's machine-local ``state/`` folder, creating it if needed.

    Raises:
        StoreLayoutError: ``state/`` (or another store folder) is a symlink out of the store.
    """
    path = store / STATE_DIRNAME
    if path.is_symlink():
        check_layout(store)
    path.mkdir(parents=True, exist_ok=True)
    return path


class StoreLayout:
    """Every store-relative name in one place, with the symlink and containment checks.

    DESIGN §2's layout: the committed parts (``records/``, ``journal/``, ``actions/``,
    ``audit/``, ``memdir.toml``, ``anatomy.json``) and the machine-local ``state/`` (sessions,
    spool, intent, lock, backups, caches). Code asks the layout for a path instead of joining
    names itself, so a name is written once and every path it returns stays inside the store:
    :meth:`state` refuses a ``state/`` that is a symlink out of the store
    (:func:`check_layout`), and :meth:`state_path` and :meth:`path` refuse a name that is
    absolute or climbs out with ``..``.

    Nothing is created or checked until a method is called (the hook path builds one per event).
    """

    __slots__ = ("root",)

    RECORDS = "records"
    JOURNAL = "journal"
    ACTIONS = "actions"
    AUDIT = "audit"
    PROPOSALS = "proposals"
    STATE = STATE_DIRNAME
    MANIFEST = MANIFEST_NAME
    INDEX = "index.sqlite"
    ANATOMY = "anatomy.json"
    ANATOMY_MD = "anatomy.md"
    # inside state/
    SESSIONS = "sessions"
    SPOOL = "explicit-spool"
    INTENT = "intent.json"
    REFUSED_INTENT = "intent.refused.json"
    LOCK = "lock"
    BACKUPS = "backups"
    INSTALLS = "installs"
    HOOK_ERRORS = HOOK_ERROR_LOG
    OUTPUTS = "outputs"  # the command-output governor's saved outputs
    GOVERNOR_NOTED = "governor-noted"
    REINDEX_MARKER = "reindex-spawned"
    ANATOMY_SPOOL = "anatomy-spool.jsonl"
    OBSERVER = "observer.json"
    OBSERVER_LOCK = "observer.lock"
    IMPORTS = "imports.json"  # transcript imports' progress
    RECALL_HITS = "recall-hits.jsonl"
    RECALL_STATS = "recall-stats.json"
    MAINTAIN = "maintain.json"
    DEFERRED = "deferred"  # context a host dropped, kept for its next answer (Cline CLI)
    MAINTAIN_LOCK = "maintain.lock"
    MAINTAIN_PID = "maintain.pid"
    MAINTAIN_SPAWNED = "maintain.spawned"
    SAVES = "mcp-saves.jsonl"
    MACHINE = "machine"  # this machine's journal name (teams)
    MIRROR_FLAG = "mirror-claude.json"
    DEMOTED = "demoted.json"
    PATH_SCOPED = "path-scoped.json"
    SYNC_PENDING = "sync-merge.json"
    SYNC_CONFLICT = "sync-conflict.json"
    RECORDS_STAMP = "records-stamp.json"
    MCP_START = "mcp-start.json"
    DREAM = "dream.json"
    SESSION_ROOTS = "session-roots"  # the user store's: which project each session belongs to
    VECTORS = "vectors"  # an embedding model's vectors of journal turns (memdir.semantic)

    def __init__(self, store: Path) -> None:
        """Describe the store folder ``store`` (its ``.memdir``, or the user store)."""
        self.root = store

    def path(self, *parts: str) -> Path:
        """Return ``root/parts…``: a committed part of the store.

        Raises:
            StoreLayoutError: a part is absolute, empty or ``..``.
        """
        return self.root.joinpath(*_contained(parts))

    def state(self) -> Path:
        """Return ``state/``, created if needed (:func:`state_dir`'s checks)."""
        return state_dir(self.root)

    def state_path(self, *parts: str) -> Path:
        """Return ``state/parts…`` without creating anything (for reads and existence checks).

        Raises:
            StoreLayoutError: a part is absolute, empty or ``..``.
        """
        return self.root.joinpath(STATE_DIRNAME, *_contained(parts))

    def in_state(self, *parts: str) -> Path:
        """Return ``state/parts…`` with ``state/`` created and checked (for writes).

        Raises:
            StoreLayoutError: ``state/`` leads out of the store, or a part climbs out.
        """
        return self.state().joinpath(*_contained(parts))


def _contained(parts: tuple[str, ...]) -> tuple[str, ...]:
    for part in parts:
        pieces = part.replace("\\", "/").split("/")
        if not part or part.startswith(("/", "\\")) or ".." in pieces:
            raise StoreLayoutError(f"{part!r} is not a name inside the store")
    return parts


def layout(store: Path) -> StoreLayout:
    """Return the :class:`StoreLayout` of ``store``."""
    return StoreLayout(store)


def is_within(root: Path, path: Path) -> bool:
    """Return whether ``path``, with symlinks resolved, lies inside ``root`` (DESIGN §10.4)."""
    try:
        return path.resolve().is_relative_to(root.resolve())
    except (OSError, RuntimeError):  # a symlink loop resolves to nothing
        return False
