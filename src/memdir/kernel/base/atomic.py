"""Atomic file replacement: a reader sees the old bytes or the new ones, never a mix.

The new content goes to a unique dot-prefixed temporary file in the same folder, is flushed
and fsynced, then renamed over the target with ``os.replace``; the folder is fsynced so the
rename survives a power cut. Dot-prefixed files are never records (DESIGN §3) and
``memdir health`` removes stale ones left by a killed writer. An existing file's permission
bits are kept. Imports: standard library only.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

TEMP_SUFFIX = ".tmp"


def temp_path_for(path: Path) -> Path:
    """Return a fresh, unique temporary path beside ``path`` (dot-prefixed, ``.tmp`` suffix)."""
    return path.with_name(f".{path.name}.{os.getpid()}.{os.urandom(4).hex()}{TEMP_SUFFIX}")


def fsync_dir(directory: Path) -> None:
    """Flush a folder's entries to disk; a no-op where folders cannot be opened (Windows)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:  # pragma: no cover - Windows cannot open folders
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover - some file systems refuse fsync on folders
        pass
    finally:
        os.close(fd)


def write_atomic(path: Path, data: bytes, *, mode: int | None = None, durable: bool = True) -> None:
    """Replace ``path`` with ``data`` atomically, creating parent folders as needed.

    Args:
        path: The file to write.
        data: Its complete new content.
        mode: Permission bits for a new file; an existing file keeps its own.
        durable: fsync the file and its folder, so the change survives a power cut. Machine-local
            state that is cheap to lose (per-session hook state) passes ``False``: the rename is
            still atomic for every process, and the hook path saves two disk flushes.

    Raises:
        OSError: the folder cannot be written or the disk is full. The target is then
            unchanged and the temporary file is removed.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = temp_path_for(path)
    existing_mode: int | None
    try:
        existing_mode = path.stat().st_mode & 0o7777
    except OSError:
        existing_mode = mode
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644 if mode is None else mode)
        try:
            view = memoryview(data)
            while view:
                written = os.write(fd, view)
                view = view[written:]
            if durable:
                os.fsync(fd)
        finally:
            os.close(fd)
        if existing_mode is not None:
            os.chmod(tmp, existing_mode)
        os.replace(tmp, path)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        if isinstance(exc, OSError) and exc.filename is None:
            exc.filename = str(path)  # "No space left on device: <the file>"
        raise
    if durable:
        fsync_dir(path.parent)


def write_text_atomic(
    path: Path, text: str, *, mode: int | None = None, durable: bool = True
) -> None:
    """Encode ``text`` as UTF-8 and :func:`write_atomic` it."""
    write_atomic(path, text.encode("utf-8"), mode=mode, durable=durable)
