"""The store lock: one writer at a time around every read-modify-write (DESIGN §3).

An exclusive ``flock`` (``msvcrt.locking`` on Windows) on ``state/lock``. The operating system
releases it when the holder exits, killed or not, so a dead process never leaves a stale lock.
The holder writes its pid and purpose into the file for ``memdir health``. Waiting is a poll
with a short back-off until a deadline, then :class:`LockTimeoutError`.

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

from memdir.kernel.errors import LockTimeoutError
from memdir.kernel.paths import state_dir

LOCK_NAME = "lock"
DEFAULT_TIMEOUT_SECONDS = 60.0
"""CLI writers wait this long; two hundred queued writers at ~25 ms each fit well inside it."""

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
    store: Path, purpose: str = "write", timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS
) -> Iterator[None]:
    """Hold the store's exclusive lock for the ``with`` body.

    Re-entrant within one thread, so an operation may call another that locks too; other
    threads of the same process wait like other processes do.

    Args:
        store: The store folder.
        purpose: A word for ``health`` ("remember", "reindex", …).
        timeout_seconds: Longest wait for another holder, in seconds.

    Raises:
        LockTimeoutError: another process held the lock for the whole wait; the message
            names it.
        OSError: the state folder cannot be created or opened.
    """
    key = str(store.resolve())
    with _GUARD:
        local = _LOCAL.setdefault(key, _Reentrant())
    if not local.rlock.acquire(timeout=timeout_seconds):
        raise LockTimeoutError(
            f"the store lock is held by another thread for {timeout_seconds:g} s"
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
            with file_lock(state_dir(store) / LOCK_NAME, purpose, timeout_seconds):
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


@contextmanager
def file_lock(path: Path, purpose: str, timeout_seconds: float) -> Iterator[None]:
    """Hold an exclusive lock on ``path`` (created if missing) for the ``with`` body.

    Not re-entrant: for the store use :func:`store_lock`; this serves smaller locks such as
    one session's state file.

    Raises:
        LockTimeoutError: another process held it for the whole wait.
        OSError: the file cannot be created.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)

    try:
        deadline = time.monotonic() + timeout_seconds
        pause = _POLL_START_SECONDS
        while not _try_lock(fd):
            if time.monotonic() >= deadline:
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
            os.write(fd, f"{os.getpid()} {purpose}\n".encode())
            yield
        finally:
            _unlock(fd)
    finally:
        os.close(fd)


def _read_holder(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return ""


def inspect_lock(store: Path) -> LockState:
    """Return whether the lock is held right now, without waiting for it."""
    path = store / "state" / LOCK_NAME
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
