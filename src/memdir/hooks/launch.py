"""The hook launcher: a resident helper when one is up, the hook in this process otherwise.

A host starts a new process for every hook event, and most of a hook's time was the
interpreter importing memdir. The installed command (:mod:`memdir.hookrun`) starts Python with
``-I -S`` and calls :func:`main`, which asks a *resident helper* to run the event: a process of
the same interpreter and the same memdir that imported the hook path once and forks a child per
event (a zygote). The client passes its standard input, output and error (``SCM_RIGHTS``), its
arguments, folder, environment and umask over a Unix socket; the child takes them over, runs
:func:`memdir.hooks.dispatch.run` exactly as the process would, and reports the exit status.
The client imports only ``_socket`` and what ``-I -S`` already loaded.

Robustness:

- *It is memdir's*: the socket lives in a folder only this user can enter (``0700``, owned by
  them, checked before use), both ends check the other's user id (``SO_PEERCRED``), and the
  helper answers only a request naming the same memdir (launcher path, interpreter, version).
- *Never stale*: before each event the helper checks that no memdir source file it loaded
  changed (an upgrade, an edit); if one did, it says so and exits, and the client runs the
  event itself.
- *Crashes and absence*: no helper, a dead one (its socket refuses), one that does not
  acknowledge within :data:`ACK_SECONDS`, or any error before the child acknowledged: the
  client runs the hook in this process (the fallback), then starts a helper in the background
  (one at a time: the helper holds an exclusive ``flock`` for its life, released by the
  system when it dies, so a crashed helper never blocks the next).
- *It goes away*: after :data:`IDLE_SECONDS` without an event (``MEMDIR_HOOK_HELPER_IDLE``),
  when its socket file is removed or replaced, or after :data:`MAX_AGE_SECONDS`.
- ``MEMDIR_HOOK_HELPER=0`` turns it off (every event then runs in its own process).

Only POSIX systems with ``fork`` use a helper; elsewhere the launcher always runs the hook
itself. Imports: nothing at module level beyond what ``python -I -S`` has loaded.
"""

from __future__ import annotations

import sys

PROTOCOL = b"memdir-hook-1"
ACK_SECONDS = 1.0
"""How long the client waits for the helper's child to acknowledge an event."""
IDLE_SECONDS = 900.0
"""A helper exits after this long without an event."""
MAX_AGE_SECONDS = 86400.0
"""A helper exits after this long in any case (a fresh one starts on the next event)."""
CHECK_SECONDS = 2.0
"""How often an idle helper checks its socket file and its age."""
HELPER_FLAG = "--memdir-helper"
"""The launcher's argument that starts a helper instead of running an event."""


def _fnv(text: str) -> str:
    """Return a 64-bit FNV-1a hash of ``text`` as 16 hex digits (no hashlib on this path)."""
    value = 0xCBF29CE484222325
    for byte in text.encode("utf-8", "surrogateescape"):
        value = ((value ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return f"{value:016x}"


def identity(launcher: str) -> str:
    """Return what names one memdir install: the launcher, the interpreter and the version."""
    from memdir import __version__

    return f"{launcher}\n{sys.executable}\n{__version__}"


def socket_dir() -> str | None:
    """Return the helper's folder (created ``0700``), or ``None`` when it is not safe to use.

    ``$XDG_RUNTIME_DIR/memdir`` when that is set, else ``/tmp/memdir-<uid>``. A folder not
    owned by this user, or open to others, is never used.
    """
    import posix

    uid = posix.getuid()
    runtime = posix.environ.get(b"XDG_RUNTIME_DIR", b"").decode("utf-8", "surrogateescape")
    folder = f"{runtime}/memdir" if runtime.startswith("/") else f"/tmp/memdir-{uid}"  # noqa: S108
    try:
        posix.mkdir(folder, 0o700)
    except FileExistsError:
        pass
    except OSError:
        return None
    try:
        info = posix.lstat(folder)
    except OSError:
        return None
    is_dir = (info.st_mode & 0o170000) == 0o040000
    if not is_dir or info.st_uid != uid or info.st_mode & 0o077:
        return None
    return folder


def socket_path(launcher: str) -> str | None:
    """Return the helper's socket path for this install, or ``None`` (see :func:`socket_dir`)."""
    folder = socket_dir()
    if folder is None:
        return None
    return f"{folder}/hook-{_fnv(identity(launcher))}.sock"


def _peer_uid(sock: object) -> int:
    """Return the user id of the process at the other end of a Unix socket (Linux)."""
    import _socket

    raw = sock.getsockopt(_socket.SOL_SOCKET, _socket.SO_PEERCRED, 12)  # type: ignore[attr-defined]
    return int.from_bytes(raw[4:8], sys.byteorder)


def _request(argv: list[str], launcher: str) -> bytes:
    """Return the request: what the child needs to stand in for this process."""
    import posix

    mask = posix.umask(0)
    posix.umask(mask)
    env = [k + b"=" + v for k, v in posix.environ.items()]
    fields = [
        PROTOCOL,
        identity(launcher).encode("utf-8", "surrogateescape"),
        posix.getcwdb(),
        str(mask).encode(),
        str(len(argv)).encode(),
        *(a.encode("utf-8", "surrogateescape") for a in argv),
        *env,
    ]
    body = b"\0".join(fields)
    return len(body).to_bytes(4, "big") + body


def via_helper(argv: list[str], launcher: str) -> tuple[int | None, bool]:
    """Run the event in the resident helper.

    Returns:
        ``(status, start)``: the exit status, or ``None`` when the helper did not take the
        event (then the caller runs it); ``start`` says a helper should be started.
    """
    import _socket

    path = socket_path(launcher)
    if path is None:
        return None, False
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        try:
            sock.connect(path)
        except OSError:
            return None, True  # none, or a dead one: run here, start one
        if _peer_uid(sock) != posix_uid():
            return None, False
        fds = (0).to_bytes(4, sys.byteorder) + (1).to_bytes(4, sys.byteorder)
        fds += (2).to_bytes(4, sys.byteorder)
        data = _request(argv, launcher)
        sent = sock.sendmsg([data[:4096]], [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, fds)])
        if sent < len(data):
            sock.sendall(data[sent:])
        sock.settimeout(ACK_SECONDS)
        ack = sock.recv(1)
        if ack != b"A":
            return None, False  # stale ("S"), busy or broken: run here
        sock.settimeout(None)
        status = sock.recv(1)
        return (status[0] if status else 0), False
    except OSError:
        return None, False
    finally:
        sock.close()


def posix_uid() -> int:
    """Return this process's user id."""
    import posix

    return posix.getuid()


def start_helper(launcher: str) -> None:
    """Start a helper in the background (detached, no inherited streams) unless one is starting.

    Never raises: a helper is an optimisation.
    """
    try:
        import fcntl
        import os

        path = socket_path(launcher)
        if path is None:
            return
        fd = os.open(path[: -len(".sock")] + ".lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return  # a helper holds it: up, or starting
        finally:
            os.close(fd)
        args = [sys.executable, "-I", "-S", "-X", "utf8", launcher, HELPER_FLAG]
        null = os.open(os.devnull, os.O_RDWR)
        actions = [(os.POSIX_SPAWN_DUP2, null, n) for n in (0, 1, 2)]
        os.posix_spawn(sys.executable, args, os.environ, file_actions=actions, setsid=True)
        os.close(null)
    except Exception:  # noqa: BLE001, S110 - the helper is optional; the hook already ran
        pass


def _helper_wanted() -> bool:
    import posix

    if sys.platform == "win32" or not hasattr(posix, "fork"):
        return False
    return posix.environ.get(b"MEMDIR_HOOK_HELPER", b"1") not in (b"0", b"off", b"false", b"no")


def main() -> None:
    """Run one hook event (the launcher's entry point); exits with the event's status."""
    argv = sys.argv[1:]
    launcher = sys.argv[0]
    if argv[:1] == [HELPER_FLAG]:
        from memdir.hooks.helper import serve

        serve(launcher)
        raise SystemExit(0)
    start = False
    if _helper_wanted() and "--preview" not in argv and "--help" not in argv:
        status, start = via_helper(argv, launcher)
        if status is not None:
            raise SystemExit(status)
    from memdir.hooks.dispatch import run

    status = run(argv)
    if start:
        sys.stdout.flush()
        start_helper(launcher)
    raise SystemExit(status)
