"""Run the real ``memdir`` CLI with a deterministic SIGKILL point (test-only wrapper).

Usage::

    python tests/reliability/killpoint.py ARGS...        # exactly like ``memdir ARGS...``

Environment:

``MEMDIR_KILL_AT``
    ``EVENT#N[@WHEN]``: send this process SIGKILL at the N-th (1-based) occurrence of EVENT.
    WHEN is ``before`` (the default: the call never happens), ``after`` (the call completed),
    or ``torn`` (``write`` events only: half the bytes are written, then the kill).
``MEMDIR_KILL_TRACE``
    A file that receives every event name, one per line, in order (to list the kill points).

Events are the steps a writer takes that the crash-consistency suite cares about:

``replace:intent``, ``replace:record``, ``replace:backup``, ``replace:other``
    ``os.replace`` onto ``state/intent.json``, a record file, an index backup taken before a
    migration (``state/backups/``), or anything else.
``fsync``
    ``os.fsync`` of a file or a folder.
``write:journal``, ``write:record``, ``write:intent``
    ``os.write`` to a journal file, a record's temporary file, or the intent's.
``unlink:intent``, ``unlink:record``
    Removing the intent file or a record file.
``git:SUBCOMMAND``
    ``subprocess.run`` of git (``git:add``, ``git:commit``…).
``sqlite:commit``
    A SQLite ``COMMIT`` of the index.

The process kills itself with SIGKILL, so no ``finally`` block, ``atexit`` handler or buffered
write runs: the same as ``kill -9`` or a power cut after the page cache reached the disk.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
from typing import Any

_SPEC = os.environ.get("MEMDIR_KILL_AT", "")
_TRACE = os.environ.get("MEMDIR_KILL_TRACE", "")
_COUNTS: dict[str, int] = {}
_TARGET, _NTH, _WHEN = "", 0, "before"
if _SPEC:
    _event, _, _rest = _SPEC.partition("#")
    _n, _, _when = _rest.partition("@")
    _TARGET, _NTH, _WHEN = _event, int(_n), _when or "before"


def _die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def _hit(event: str) -> bool:
    """Count ``event``; return whether this occurrence is the kill point."""
    if _TRACE:
        with open(_TRACE, "a", encoding="utf-8") as fh:
            fh.write(event + "\n")
    _COUNTS[event] = _COUNTS.get(event, 0) + 1
    return event == _TARGET and _COUNTS[event] == _NTH


def _around(event: str, call: Any, *args: Any, **kwargs: Any) -> Any:
    hit = _hit(event)
    if hit and _WHEN == "before":
        _die()
    result = call(*args, **kwargs)
    if hit:
        _die()
    return result


def _classify(path: str) -> str:
    name = os.path.basename(path)
    if name == "intent.json" or name.startswith(".intent.json."):
        return "intent"
    if f"{os.sep}backups{os.sep}" in path:
        return "backup"
    if f"{os.sep}records{os.sep}" in path:
        return "record"
    if f"{os.sep}journal{os.sep}" in path:
        return "journal"
    return "other"


_replace, _fsync, _write, _unlink, _run = os.replace, os.fsync, os.write, os.unlink, subprocess.run
_connect = sqlite3.connect


def replace(src: Any, dst: Any, *args: Any, **kwargs: Any) -> None:
    _around(f"replace:{_classify(os.fspath(dst))}", _replace, src, dst, *args, **kwargs)


def fsync(fd: Any) -> None:
    _around("fsync", _fsync, fd)


def write(fd: int, data: Any) -> int:
    try:
        where = _classify(os.readlink(f"/proc/self/fd/{fd}"))
    except OSError:
        where = "other"
    if where == "other":
        return _write(fd, data)
    event = f"write:{where}"
    if _hit(event):
        if _WHEN == "torn":
            _write(fd, bytes(data)[: max(len(data) // 2, 1)])
        elif _WHEN == "after":
            _write(fd, data)
        _die()
    return _write(fd, data)


def unlink(path: Any, *args: Any, **kwargs: Any) -> None:
    where = _classify(os.fspath(path))
    if where == "other":
        _unlink(path, *args, **kwargs)
        return
    _around(f"unlink:{where}", _unlink, path, *args, **kwargs)


def run(argv: Any, *args: Any, **kwargs: Any) -> Any:
    words = [str(a) for a in argv] if isinstance(argv, list | tuple) else []
    if words and os.path.basename(words[0]) == "git":
        rest = words[1:]
        while rest and rest[0] == "-C":
            rest = rest[2:]
        return _around(f"git:{rest[0] if rest else '?'}", _run, argv, *args, **kwargs)
    return _run(argv, *args, **kwargs)


class _Connection(sqlite3.Connection):
    def execute(self, sql: str, *args: Any) -> sqlite3.Cursor:
        if sql.strip().upper() == "COMMIT":
            return _around("sqlite:commit", super().execute, sql, *args)  # type: ignore[no-any-return]
        return super().execute(sql, *args)

    def commit(self) -> None:
        _around("sqlite:commit", super().commit)


def connect(*args: Any, **kwargs: Any) -> sqlite3.Connection:
    kwargs.setdefault("factory", _Connection)
    return _connect(*args, **kwargs)


os.replace = replace
os.fsync = fsync
os.write = write
os.unlink = unlink
subprocess.run = run  # type: ignore[assignment]
sqlite3.connect = connect  # type: ignore[assignment]

if __name__ == "__main__":
    sys.path.pop(0)  # this folder is not part of memdir
    from memdir.__main__ import main

    main(sys.argv[1:])
