"""Append-only log files, and the rare rewrites of them that must not lose an append.

The journal, the action log, the anatomy spool and the hook error log are appended to by hooks
without the store lock (DESIGN §7: a hook never waits on a writer, and an action row is never
dropped). A few operations rewrite such a file: ``memdir purge`` drops the lines carrying erased
text, an anatomy update drains the spool, the error log is cut to its newer half. A rewrite
writes a replacement and renames it over the path; a line appended to the old inode between the
read and the rename would vanish with it. Both sides therefore meet on an ``flock`` of the log
file itself:

- :func:`append` opens the path, takes a *shared* lock (appenders never wait for each other),
  checks that the path still names the inode it opened (a rewrite may have replaced it during
  the wait; then it reopens), writes its bytes with one ``O_APPEND`` write and closes.
- :func:`rewrite` filters the bulk of the file with no lock held (appends carry on), writes the
  replacement, and takes the *exclusive* lock only for the short last step: filter the lines
  appended meanwhile, rename the replacement over the path, release. An appender that waited
  for it finds the new inode and appends there. :func:`take` (read everything and remove the
  file) uses the same lock.

An appender waits at most ``wait`` seconds (a hook has a deadline and a watchdog); then it
appends anyway, and the rewriter, after its rename and before releasing the lock, moves any
line that landed in the old file since its last read into the new one. The exclusive step
lasts milliseconds, so that fallback needs a rewriter stalled for longer than ``wait``.

Windows has no ``fcntl``: there the functions work without the lock (a concurrent append can
then be lost, as before this module existed). Imports: standard library only.
"""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path

from memdir.kernel.base.atomic import fsync_dir, temp_path_for
from memdir.kernel.base.errors import LockTimeoutError

try:
    from fcntl import LOCK_EX, LOCK_NB, LOCK_SH, flock
except ImportError:  # pragma: no cover - Windows: no fcntl, so no lock (see above)
    LOCKING = False
else:
    LOCKING = True

TYPE_CHECKING = False  # the hook path never imports typing (start-up cost)
if TYPE_CHECKING:
    from collections.abc import Callable

APPEND_WAIT_SECONDS = 0.5
"""Longest an appender waits for a rewrite before appending anyway; a hook's budget is 1-2 s."""
REWRITE_WAIT_SECONDS = 30.0
"""Longest a rewriter waits for appenders (each holds its shared lock for one write)."""
CATCH_UP_BYTES = 64 * 1024
"""The lock-free phase of a rewrite repeats until fewer new bytes than this arrived."""
_MAX_REOPENS = 8
_OPEN_FLAGS = getattr(os, "O_BINARY", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def _lock(fd: int, exclusive: bool, wait: float) -> bool:
    """Take an ``flock`` on ``fd``, polling until ``wait`` seconds passed; False on time-out."""
    if not LOCKING:  # pragma: no cover - Windows
        return True
    kind = (LOCK_EX if exclusive else LOCK_SH) | LOCK_NB
    deadline = time.monotonic() + wait
    pause = 0.001
    while True:
        try:
            flock(fd, kind)
            return True
        except BlockingIOError:
            pass
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        time.sleep(min(pause, left))
        pause = min(pause * 2, 0.02)


def _names(path: Path, fd: int) -> bool:
    """Whether ``path`` still names the file open as ``fd`` (not replaced, not removed)."""
    try:
        now = os.stat(path)
    except FileNotFoundError:
        return False
    opened = os.fstat(fd)
    return (now.st_ino, now.st_dev) == (opened.st_ino, opened.st_dev)


def append(path: Path, data: bytes, *, wait: float = APPEND_WAIT_SECONDS) -> int:
    """Append ``data`` (whole lines) to ``path`` with one write; create the file if missing.

    A torn last line left by a killed writer (no trailing newline) is first closed with a
    newline, in the same write, so the new line never merges into it.

    Args:
        path: The log file; its folder is created if missing.
        data: The bytes to append, ending with a newline.
        wait: Longest wait, in seconds, for a rewrite holding the file; then append anyway.

    Returns:
        The byte offset where ``data`` starts in the file.

    Raises:
        OSError: the folder cannot be written or the disk is full.
    """
    deadline = time.monotonic() + wait
    for _ in range(_MAX_REOPENS):
        fd = _open_for_append(path)
        try:
            _lock(fd, False, deadline - time.monotonic())  # timed out: append anyway
            if not LOCKING or _names(path, fd):
                return _write(fd, data, path)
            # replaced or drained while we waited: append to the file the path names now
        finally:
            os.close(fd)  # releases the lock
    fd = _open_for_append(path)
    try:
        return _write(fd, data, path)
    finally:
        os.close(fd)


def _open_for_append(path: Path) -> int:
    # Never through a symlink: it may lead out of the store (DESIGN §10.4).
    flags = os.O_RDWR | os.O_APPEND | os.O_CREAT | _OPEN_FLAGS | _NOFOLLOW
    try:
        try:
            return os.open(path, flags, 0o644)
        except FileNotFoundError:  # the folder does not exist yet
            path.parent.mkdir(parents=True, exist_ok=True)
            return os.open(path, flags, 0o644)
    except OSError as exc:
        if path.is_symlink():
            raise OSError(
                exc.errno, f"{path} is a symbolic link; memdir appends only to its own files"
            ) from exc
        exc.filename = exc.filename or str(path)
        raise


def _write(fd: int, data: bytes, path: Path) -> int:
    try:
        return _write_at_end(fd, data)
    except OSError as exc:
        exc.filename = exc.filename or str(path)  # "No space left on device: <the journal>"
        raise


def _write_at_end(fd: int, data: bytes) -> int:
    size = os.fstat(fd).st_size
    lead = b""
    if size:
        os.lseek(fd, size - 1, os.SEEK_SET)  # O_APPEND still sends the write to the end
        if os.read(fd, 1) != b"\n":
            lead = b"\n"
    view = memoryview(lead + data)
    while view:  # one write in practice; a short write only comes from a full disk
        view = view[os.write(fd, view) :]
    # With O_APPEND the descriptor's offset ends exactly where our own write ended, even when
    # other processes appended before or after it.
    return os.lseek(fd, 0, os.SEEK_CUR) - len(data)


class Rewritten:
    """What one :func:`rewrite` did (a plain class: the kernel stays light)."""

    __slots__ = ("dropped", "kept", "replaced")

    def __init__(self) -> None:
        self.kept = 0  # lines kept
        self.dropped = 0  # lines dropped
        self.replaced = False  # whether the file was replaced (only when a line was dropped)


def split_lines(data: bytes) -> list[bytes]:
    """Split ``data`` into lines, newline kept; a trailing fragment without one is a line too."""
    parts = data.split(b"\n")
    lines = [part + b"\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def _read_from(fd: int, offset: int) -> bytes:
    os.lseek(fd, offset, os.SEEK_SET)
    chunks: list[bytes] = []
    while True:
        chunk = os.read(fd, 1024 * 1024)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


class _Replacement:
    """The replacement file being written beside the log."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.tmp: Path | None = None
        self.fd = -1

    def write(self, data: bytes) -> None:
        if self.tmp is None:
            self.tmp = temp_path_for(self.path)
            self.fd = os.open(self.tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _OPEN_FLAGS, 0o644)
        view = memoryview(data)
        while view:
            view = view[os.write(self.fd, view) :]

    def flush(self) -> None:
        if self.fd >= 0:
            os.fsync(self.fd)

    def install(self, mode: int) -> None:
        """Rename the replacement over the log (an empty one when nothing was written)."""
        self.write(b"")
        self.flush()
        os.close(self.fd)
        self.fd = -1
        assert self.tmp is not None
        os.chmod(self.tmp, mode)
        os.replace(self.tmp, self.path)
        self.tmp = None
        fsync_dir(self.path.parent)

    def discard(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
        if self.tmp is not None:
            with contextlib.suppress(OSError):
                self.tmp.unlink()


def rewrite(
    path: Path, keep: Callable[[bytes], bool], *, wait: float = REWRITE_WAIT_SECONDS
) -> Rewritten:
    """Drop the lines of ``path`` for which ``keep`` is False, losing no concurrent append.

    ``keep`` sees every line once, in file order (newline included; a torn last fragment is a
    line too). The file is replaced (atomically, durably, mode kept) only when a line was
    dropped; otherwise it is left untouched. Callers serialise rewrites of one file (the store
    lock); appends need no coordination (see the module docstring).

    Raises:
        LockTimeoutError: an appender held the file for ``wait`` seconds.
        OSError: the file or its folder cannot be read or written; the file is then unchanged.
    """
    done = Rewritten()
    try:
        fd = os.open(path, os.O_RDONLY | _OPEN_FLAGS)
    except FileNotFoundError:
        return done
    out = _Replacement(path)
    try:
        kept: list[bytes] = []

        def sift(data: bytes) -> None:
            for line in split_lines(data):
                if keep(line):
                    kept.append(line)
                    done.kept += 1
                else:
                    done.dropped += 1

        # --- lock-free: the bulk, complete lines only, while appends carry on ---
        offset = 0
        while True:
            chunk = _read_from(fd, offset)
            complete = chunk[: chunk.rfind(b"\n") + 1]
            sift(complete)
            offset += len(complete)
            if len(complete) < CATCH_UP_BYTES:
                break
        if done.dropped:
            out.write(b"".join(kept))
            out.flush()  # the slow flush happens before appenders are held up
            kept.clear()
        # --- exclusive: the lines appended meanwhile, then the swap ---
        if not _lock(fd, True, wait):
            raise LockTimeoutError(f"{path} is held by an appender for more than {wait:g} s")
        if LOCKING and not _names(path, fd):
            raise LockTimeoutError(f"{path} was replaced during the rewrite; run it again")
        rest = _read_from(fd, offset)
        sift(rest)
        offset += len(rest)
        if not done.dropped:
            return done
        out.write(b"".join(kept))
        kept.clear()
        mode = os.fstat(fd).st_mode & 0o7777
        if not LOCKING:  # pragma: no cover - Windows cannot rename over a file held open
            os.close(fd)
            fd = -1
        out.install(mode)
        done.replaced = True
        if fd >= 0:
            # Appenders that gave up waiting wrote to the old file: carry their lines over.
            sift(_read_from(fd, offset))
            if kept:
                append(path, b"".join(kept))
        return done
    finally:
        out.discard()
        if fd >= 0:
            os.close(fd)  # releases the lock


def drop_head(path: Path, size: int, *, wait: float = REWRITE_WAIT_SECONDS) -> Rewritten:
    """Drop the lines within the first ``size`` bytes of ``path``; keep every later append.

    For consumers of a spool (drop what was merged) and for capping a log (drop the older
    half). A line that straddles ``size`` is kept.

    Raises:
        LockTimeoutError: an appender held the file for ``wait`` seconds, or another rewrite
            replaced the file first.
        OSError: the file or its folder cannot be read or written.
    """
    seen = 0

    def keep(line: bytes) -> bool:
        nonlocal seen
        seen += len(line)
        return seen > size

    return rewrite(path, keep, wait=wait)


def rotate(path: Path, target: Path, *, wait: float = APPEND_WAIT_SECONDS) -> bool:
    """Rename the log ``path`` to ``target`` without losing an append made meanwhile.

    The rename happens under the exclusive lock, so an appender that held the old file finishes
    its line in it first, and one that waited finds the path gone and creates a new file.

    Args:
        path: The log file.
        target: Its new name (same folder); replaced if it exists.
        wait: Longest wait, in seconds, for appenders; then nothing is renamed.

    Returns:
        Whether ``path`` was renamed (False: it did not exist, or appenders held it too long).

    Raises:
        OSError: the folder cannot be written.
    """
    try:
        fd = os.open(path, os.O_RDONLY | _OPEN_FLAGS | _NOFOLLOW)
    except FileNotFoundError:
        return False
    try:
        if not _lock(fd, True, wait) or (LOCKING and not _names(path, fd)):
            return False
        os.replace(path, target)
        return True
    finally:
        os.close(fd)
