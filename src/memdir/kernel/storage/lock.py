"""The store lock: one writer at a time around every read-modify-write (DESIGN §3).

An exclusive ``flock`` (``msvcrt.locking`` on Windows) on ``state/lock``. The operating system
releases it when the holder exits, killed or not, so a dead process never leaves a stale lock.
The holder writes its pid, purpose and a nonce into the file for ``memdir health``. Waiting is a
poll with a short back-off until a deadline, then :class:`LockTimeoutError`. A CLI writer waits
in a *queue*: its deadline restarts whenever the lock changes hands, so two hundred writers that
keep the lock moving never time out, however slow the machine; only a holder that keeps the lock
for the whole timeout does. Hooks pass ``queue=False``: their wait is bounded by their budget.

:func:`quiesce` lets a process that is about to end abruptly (the hook watchdog) wait until it
holds no lock, so it never stops in the middle of a write made under one (a ``git commit`` child
left running would hold ``.git/index.lock`` against the next writer).

Imports: standard library only.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from memdir.kernel.base.errors import LockTimeoutError
from memdir.kernel.storage.paths import StoreLayout, layout

LOCK_NAME = StoreLayout.LOCK
DEFAULT_TIMEOUT_SECONDS = 60.0
"""CLI writers give up when one holder keeps the lock this long (the wait restarts while the
lock changes hands)."""

_POLL_START_SECONDS = 0.002
_POLL_MAX_SECONDS = 0.05

if sys.platform == "win32":  # pragma: no cover - Windows only
    import msvcrt

    def _try_lock(fd: int) -> bool:
        try:
            os.lseek(fd, 0, os.SEEK_SET)
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True

    def _unlock(fd: int) -> None:
        os.lseek(fd, 0, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)

else:
    import fcntl

    def _try_lock(fd: int) -> bool:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True

    def _unlock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_UN)


class LockState:
    """What ``memdir health`` reports about the lock (a plain class: the hook path is light)."""

    __slots__ = ("held", "holder")

    def __init__(self, held: bool, holder: str) -> None:
        self.held = held  # another process holds it right now
        self.holder = holder  # the last holder's "pid purpose" line; empty if never taken


@contextmanager
def store_lock(
    store: Path,
    purpose: str = "write",
    timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS,
    *,
    queue: bool = True,
) -> Iterator[None]:
    """Hold the store's exclusive lock for the ``with`` body.

    Re-entrant within one thread, so an operation may call another that locks too; other
    threads of the same process wait like other processes do.

    Args:
        store: The store folder.
        purpose: A word for ``health`` ("remember", "reindex", …).
        timeout_seconds: Longest wait for one holder, in seconds.
        queue: Restart the wait whenever the lock changes hands (see the module docstring);
            ``False`` makes ``timeout_seconds`` the longest wait in all.

    Raises:
        LockTimeoutError: one holder kept the lock for the whole wait (with ``queue=False``:
            the lock was not free in time); the message names the holder.
        OSError: the state folder cannot be created or opened.
    """
    key = str(store.resolve())
    path = layout(store).in_state(LOCK_NAME)
    with _GUARD:
        local = _LOCAL.setdefault(key, _Reentrant())
    wait = _Wait(path, timeout_seconds, queue)
    while not local.rlock.acquire(timeout=wait.left()):
        if wait.over():
            raise LockTimeoutError(
                f"the store lock is held by another thread ({_read_holder(path) or 'unknown'}) "
                f"for more than {timeout_seconds:g} s"
            )
    try:
        if local.depth:
            local.depth += 1  # this thread already holds the file lock: nest without re-locking
            try:
                yield
            finally:
                local.depth -= 1
            return
        local.depth = 1
        try:
            budget = timeout_seconds if queue else wait.left()
            with file_lock(path, purpose, budget, queue=queue):
                yield
        finally:
            local.depth = 0
    finally:
        local.rlock.release()


class _Reentrant:
    def __init__(self) -> None:
        self.rlock = threading.RLock()
        self.depth = 0


_GUARD = threading.Lock()
_LOCAL: dict[str, _Reentrant] = {}


class _Wait:
    """A deadline for one lock wait; with ``queue``, it restarts when the lock changes hands."""

    __slots__ = ("deadline", "path", "queue", "seen", "timeout")

    def __init__(self, path: Path, timeout_seconds: float, queue: bool) -> None:
        self.path = path
        self.timeout = timeout_seconds
        self.queue = queue
        self.deadline = time.monotonic() + timeout_seconds
        self.seen = _read_line(path) if queue else ""

    def left(self) -> float:
        """Seconds until the deadline (0 when it has passed)."""
        return max(self.deadline - time.monotonic(), 0.0)

    def over(self) -> bool:
        """Whether to give up: the deadline passed and (with ``queue``) the holder is the same.

        Every holder writes a fresh nonce, so a changed line means the lock changed hands.
        """
        now = time.monotonic()
        if now < self.deadline:
            return False
        if self.queue:
            line = _read_line(self.path)
            if line != self.seen:
                self.seen = line
                self.deadline = now + self.timeout
                return False
        return True


_HELD = threading.Condition()
_held = 0  # file locks this process holds right now
_frozen = False  # quiesce() ran: no thread of this process may take a lock again


def quiesce(timeout_seconds: float) -> bool:
    """Wait until this process holds no lock, then stop its threads from taking another.

    For a process about to end abruptly (the hook watchdog calls it before ``os._exit``), so it
    never stops in the middle of a write made under a lock. A thread that asks for a lock
    afterwards waits for good.

    Returns:
        Whether every lock was released in time.
    """
    global _frozen
    with _HELD:
        released = _HELD.wait_for(lambda: _held == 0, timeout_seconds)
        _frozen = True
        return released


def _try_take(fd: int) -> bool:
    global _held
    with _HELD:
        while _frozen:
            _HELD.wait()
        if not _try_lock(fd):
            return False
        _held += 1
        return True


def _release(fd: int) -> None:
    global _held
    with _HELD:
        _unlock(fd)
        _held -= 1
        _HELD.notify_all()


@contextmanager
def file_lock(
    path: Path, purpose: str, timeout_seconds: float, *, queue: bool = False
) -> Iterator[None]:
    """Hold an exclusive lock on ``path`` (created if missing) for the ``with`` body.

    Not re-entrant: for the store use :func:`store_lock`; this serves smaller locks such as
    one session's state file. ``queue`` is :func:`store_lock`'s.

    Raises:
        LockTimeoutError: another process held it for the whole wait.
        OSError: the file cannot be created.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)

    try:
        wait = _Wait(path, timeout_seconds, queue)
        pause = _POLL_START_SECONDS
        while not _try_take(fd):
            if wait.over():
                holder = _read_holder(path)
                raise LockTimeoutError(
                    f"the lock {path} is held by another process ({holder or 'unknown'}) "
                    f"for more than {timeout_seconds:g} s; try again, or see `memdir health`"
                )
            time.sleep(pause)
            pause = min(pause * 2, _POLL_MAX_SECONDS)
        try:
            os.ftruncate(fd, 0)
            os.lseek(fd, 0, os.SEEK_SET)
            os.write(fd, f"{os.getpid()} {purpose} #{time.time_ns()}\n".encode())
            yield
        finally:
            _release(fd)
    finally:
        os.close(fd)


def _read_line(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return ""


def _read_holder(path: Path) -> str:
    """The holder as people read it: ``"<pid> <purpose>"`` (the nonce left out)."""
    return _read_line(path).split(" #", 1)[0]


def inspect_lock(store: Path) -> LockState:
    """Return whether the lock is held right now, without waiting for it."""
    path = layout(store).state_path(LOCK_NAME)
    if not path.exists():
        return LockState(held=False, holder="")
    fd = os.open(path, os.O_RDWR)
    try:
        free = _try_lock(fd)
        if free:
            _unlock(fd)
    finally:
        os.close(fd)
    return LockState(held=not free, holder=_read_holder(path))
