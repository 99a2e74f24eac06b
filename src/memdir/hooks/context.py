"""What a hook handler works with: the store, the project, a deadline, lazily opened parts.

Everything slow is opened on first use and bounded by the deadline: the index waits for other
writers only as long as the hook has left, and so do the store and session locks.

Imports: standard library and the kernel only.
"""

from __future__ import annotations

import time
from pathlib import Path

from memdir.kernel.base.errors import MemdirError
from memdir.kernel.base.layout import StoreLayout, layout
from memdir.kernel.storage import manifest
from memdir.kernel.storage.paths import project_relative

TYPE_CHECKING = False  # the hook path never imports typing (start-up cost)
if TYPE_CHECKING:
    from collections.abc import Callable

    from memdir.kernel.base.validity import Served
    from memdir.kernel.index import Index
    from memdir.kernel.storage.lifecycle import Handle
    from memdir.kernel.storage.manifest import Manifest

MIN_WAIT_SECONDS = 0.05
REINDEX_MARKER = StoreLayout.REINDEX_MARKER
REINDEX_RESPAWN_SECONDS = 120.0
"""A cold index gets at most one background ``memdir reindex`` per this many seconds."""


class IndexColdError(MemdirError):
    """The index holds no records while record files exist; a rebuild is under way."""

    code = "index_cold"


def _is_cold(index: Index, store: Path) -> bool:
    """Whether ``index`` has never read ``records/`` although it has record files.

    An index that knows any file, even only quarantined ones (every record unreadable, or
    conflict-marked mid-merge), has been built: it is not cold, so a store of unreadable
    files does not start a reindex and refuse every prompt forever.
    """
    if not index.is_empty():
        return False
    import os

    try:
        kinds = [entry.path for entry in os.scandir(store / "records") if entry.is_dir()]
        return any(e.name.endswith(".md") for kind in kinds for e in os.scandir(kind))
    except OSError:
        return False


def _rebuild_in_background(store: Path) -> None:
    """Start a detached ``memdir reindex`` unless one was started recently."""
    import subprocess
    import sys

    marker = layout(store).in_state(REINDEX_MARKER)
    try:
        if time.time() - marker.stat().st_mtime < REINDEX_RESPAWN_SECONDS:
            return
    except OSError:
        pass
    try:
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.touch()
        subprocess.Popen(
            [sys.executable, "-m", "memdir", "reindex", "--store", str(store)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
    except OSError:
        pass  # the next CLI command rebuilds it anyway (it scans the records)


class Context:
    """One hook invocation's view of the store (SQLite and the lifecycle load on first use)."""

    def __init__(
        self,
        store: Path,
        project: Path,
        deadline: float,
        kept: Callable[[], None] | None = None,
    ) -> None:
        self.store = store
        self.project = project
        self.deadline = deadline  # time.monotonic() value past which the hook gives up
        self._kept = kept
        self._index: Index | None = None
        self._user_index: Index | None = None
        self._user_store: Path | None = None
        self._user_looked = False
        self._manifest: Manifest | None = None
        self.cold = False  # set when the index is opened: see :attr:`index`
        self.read_only = False  # a preview: start nothing in the background

    def kept(self) -> None:
        """Say that the event's must-keep row (journal turn, action row) is written.

        Until then the watchdog does not end an overrun hook (see ``memdir.hooks.dispatch``).
        """
        if self._kept is not None:
            self._kept()

    def remaining(self) -> float:
        """Return the seconds left before the deadline (at least a token wait)."""
        return max(self.deadline - time.monotonic(), MIN_WAIT_SECONDS)

    def expired(self) -> bool:
        """Return whether the deadline has passed."""
        return time.monotonic() >= self.deadline

    @property
    def settings(self) -> Manifest:
        """The store's manifest, read once."""
        if self._manifest is None:
            self._manifest = manifest.load(self.store)
        return self._manifest

    @property
    def index(self) -> Index:
        """The store's index, opened once with a busy timeout bounded by the deadline.

        Hooks never scan the records (that is the CLI's job). An index that holds no record
        while record files exist (deleted by hand, or lost with a disk) is *cold*: it is rebuilt
        by a detached ``memdir reindex``, and until then :meth:`handle` refuses to write,
        because the checks a write makes (near-duplicates, rejected beliefs) need the index.
        """
        if self._index is None:
            from memdir.kernel.index import Index

            self._index = Index(self.store, busy_timeout_seconds=self.remaining())
            self.cold = _is_cold(self._index, self.store)
            if self.cold and not self.read_only:
                _rebuild_in_background(self.store)
        return self._index

    @property
    def user_index(self) -> Index | None:
        """The user store's index, read-only, when a user store other than this one exists.

        It carries the person's cross-project rules and preferences to the digest and to
        per-prompt recall (issue 10, mark 4). Opened once; ``None`` when there is no user
        store, it has no index yet, or it cannot be read in time (the hook goes on without it).
        """
        if not self._user_looked:
            self._user_looked = True
            from memdir.kernel.storage.paths import is_store, user_store_dir

            user = user_store_dir()
            try:
                if is_store(user) and user.resolve() != self.store.resolve():
                    from memdir.kernel.index import INDEX_NAME, Index

                    if (user / INDEX_NAME).is_file():
                        self._user_index = Index(
                            user, busy_timeout_seconds=self.remaining(), read_only=True
                        )
                        self._user_store = user
            except (MemdirError, OSError, ValueError):
                self._user_index = None
            except Exception as exc:  # sqlite3 errors: the hook path does not import sqlite3
                if type(exc).__module__ != "sqlite3":
                    raise
                self._user_index = None
        return self._user_index

    @property
    def served(self) -> Served:
        """The store's read filter: its scope and project identity, its tombstoned values.

        Every digest and injection query puts it in its ``WHERE`` (issue 10, marks 3 and 4;
        :func:`memdir.kernel.storage.identity.read_filter`).
        """
        from memdir.kernel.storage import identity

        return identity.read_filter(self.store, self.settings)

    @property
    def user_served(self) -> Served | None:
        """The user store's read filter (``None`` when :attr:`user_index` is ``None``)."""
        index = self.user_index
        if index is None or self._user_store is None:
            return None
        from memdir.kernel.base.validity import Served
        from memdir.kernel.storage import audit

        withheld = frozenset(audit.tombstones(self._user_store))
        return Served(scope="user", withheld=withheld)

    def handle(self) -> Handle:
        """Return a lifecycle handle (canonical files only: hooks never parse hand edits).

        Raises:
            IndexColdError: the index is being rebuilt; nothing may be written through it.
        """
        from memdir.kernel.storage.lifecycle import Handle

        index = self.index
        if self.cold:
            raise IndexColdError(
                "the memory index is being rebuilt from the records; say it again in a "
                "moment (this prompt is kept in the journal)"
            )
        return Handle(self.store, index, self.settings, None, self.remaining(), lock_queue=False)

    def relative(self, path: str) -> str | None:
        """Return ``path`` relative to the project, or ``None`` when it must not be recorded.

        ``None`` for paths outside the project (symlinks resolved, DESIGN §10.4), inside the
        store, and for secret files (DESIGN §10.5). A path that is absolute or climbs out on
        Windows (a drive letter, a UNC share, ``..`` between backslashes) is outside on every
        platform (case B05), and a path no file can have (a NUL byte) names nothing.
        """
        return project_relative(self.project, path, store_name=self.store.name)

    def close(self) -> None:
        """Close what was opened."""
        if self._index is not None:
            self._index.close()
            self._index = None
        if self._user_index is not None:
            self._user_index.close()
        self._user_index, self._user_store, self._user_looked = None, None, False
