"""The resident hook helper: imports the hook path once, forks a child per event.

Started by :func:`memdir.hooks.launch.start_helper` (see that module for the protocol and what
makes it safe). The helper is single-threaded and opens nothing of any store: each event runs in
a fresh child that takes over the client's standard streams, folder, environment and umask, so
it behaves as the hook process itself would (locks, watchdog, exit 0), and the system reaps it.

Imports: standard library and the kernel only.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import sys
import time

from memdir.hooks import launch

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

MAX_REQUEST_BYTES = 4 * 1024 * 1024


def _preload() -> None:
    """Import everything an event may use, so no child pays for it."""
    import importlib
    import pkgutil

    import memdir.hooks
    import memdir.kernel

    for package in (memdir.kernel, memdir.hooks):
        for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            if info.name.endswith((".launch", ".helper")):
                continue
            try:
                importlib.import_module(info.name)
            except Exception:  # noqa: BLE001, S112 - a module that cannot load is loaded by the child
                continue


def _sources() -> dict[str, tuple[int, int]]:
    """Return memdir's loaded source files and their (mtime, size)."""
    found = {}
    for module in list(sys.modules.values()):
        name = getattr(module, "__name__", "")
        path = getattr(module, "__file__", None)
        if not path or not (name == "memdir" or name.startswith("memdir.")):
            continue
        try:
            info = os.stat(path)
        except OSError:
            found[path] = (-1, -1)
        else:
            found[path] = (info.st_mtime_ns, info.st_size)
    return found


def _changed(sources: dict[str, tuple[int, int]]) -> bool:
    for path, seen in sources.items():
        try:
            info = os.stat(path)
        except OSError:
            return True
        if (info.st_mtime_ns, info.st_size) != seen:
            return True
    return False


def _read_request(conn: socket.socket) -> tuple[list[bytes], list[int]]:
    """Return the request's fields and the file descriptors passed with it."""
    conn.settimeout(launch.ACK_SECONDS)
    fds: list[int] = []
    data, ancillary, _, _ = conn.recvmsg(4096, socket.CMSG_SPACE(3 * 4))
    for level, kind, payload in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            usable = len(payload) - len(payload) % 4
            fds += [int.from_bytes(payload[i : i + 4], sys.byteorder) for i in range(0, usable, 4)]
    if len(data) < 4:
        raise OSError("short request")
    size = int.from_bytes(data[:4], "big")
    if size > MAX_REQUEST_BYTES:
        raise OSError("request too large")
    body = bytearray(data[4:])
    while len(body) < size:
        more = conn.recv(size - len(body))
        if not more:
            raise OSError("request cut short")
        body += more
    return bytes(body).split(b"\0"), fds


def _run_child(conn: socket.socket, fields: list[bytes], fds: list[int]) -> None:
    """In the forked child: become the client's process, run the event, report, exit."""
    status = 0
    try:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)  # the event's own children are waited for
        for target, fd in enumerate(fds[:3]):
            os.dup2(fd, target)
        for fd in fds:
            if fd > 2:
                os.close(fd)
        cwd, mask, count = fields[2], int(fields[3]), int(fields[4])
        argv = [a.decode("utf-8", "surrogateescape") for a in fields[5 : 5 + count]]
        env = dict(_pairs(fields[5 + count :]))
        os.environb.clear()
        os.environb.update(env)
        time.tzset()
        os.umask(mask)
        os.chdir(cwd)
        sys.argv = ["memdir", "hook", *argv]
        conn.settimeout(None)
        conn.sendall(b"A")
        from memdir.hooks.dispatch import run

        status = run(argv)
    except SystemExit as stop:
        status = stop.code if isinstance(stop.code, int) else 0
    except BaseException:  # noqa: BLE001 - fail open, as the hook process does
        status = 0
    finally:
        try:
            sys.stdout.flush()
            conn.sendall(bytes([status & 0xFF]))
        except BaseException:  # noqa: BLE001, S110 - the client may be gone
            pass
        os._exit(status & 0xFF)


def _pairs(items: list[bytes]) -> Iterator[tuple[bytes, bytes]]:
    for item in items:
        key, sep, value = item.partition(b"=")
        if sep and key:
            yield key, value


def serve(launcher: str) -> None:
    """Run the helper for the install ``launcher`` names until idle, replaced or stale.

    Returns at once when another helper holds the lock or the socket folder is not safe.
    """
    import fcntl

    path = launch.socket_path(launcher)
    if path is None:
        return
    lock = os.open(path[: -len(".sock")] + ".lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return
    os.chdir("/")
    _preload()
    sources = _sources()
    expected = launch.identity(launcher).encode("utf-8", "surrogateescape")
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)  # a dead helper's socket: the lock says nobody serves it
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    os.chmod(path, 0o600)
    server.listen(128)
    mine = os.stat(path).st_ino
    _inherited[:] = [lock, server.fileno()]
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children are reaped by the system
    idle = float(os.environ.get("MEMDIR_HOOK_HELPER_IDLE") or launch.IDLE_SECONDS)
    started = last = time.monotonic()
    server.settimeout(launch.CHECK_SECONDS)
    uid = os.getuid()
    try:
        while True:
            try:
                conn, _ = server.accept()
            except TimeoutError:
                now = time.monotonic()
                if now - last > idle or now - started > launch.MAX_AGE_SECONDS:
                    return
                try:
                    if os.stat(path).st_ino != mine:
                        return  # replaced: another helper serves it now
                except OSError:
                    return  # removed
                continue
            last = time.monotonic()
            with conn:
                _serve_one(conn, uid, expected, sources)
            if _stale[0]:
                return
    finally:
        try:
            if os.stat(path).st_ino == mine:
                os.unlink(path)
        except OSError:
            pass
        server.close()


_stale = [False]
_inherited: list[int] = []
"""The helper's own descriptors (socket, lock), closed in each child."""


def _serve_one(
    conn: socket.socket, uid: int, expected: bytes, sources: dict[str, tuple[int, int]]
) -> None:
    """Check and fork one event; the parent keeps nothing of it."""
    fds: list[int] = []
    try:
        creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12)
        if int.from_bytes(creds[4:8], sys.byteorder) != uid:
            return
        fields, fds = _read_request(conn)
        if len(fields) < 5 or fields[0] != launch.PROTOCOL or fields[1] != expected:
            conn.sendall(b"S")
            return
        if _changed(sources):
            _stale[0] = True
            conn.sendall(b"S")
            return
        if len(fds) < 3:
            conn.sendall(b"S")
            return
        if os.fork() == 0:
            for fd in _inherited:
                os.close(fd)
            _run_child(conn, fields, fds)
    except (OSError, ValueError):
        return
    finally:
        for fd in fds:
            with contextlib.suppress(OSError):
                os.close(fd)
