"""``memdir serve`` answering ``initialize`` and ``tools/list`` before the SDK is imported.

Importing the MCP SDK (and pydantic) takes most of a second, longer on a busy machine, and a
host may run the model's first turn before a slow server's tools are registered (issue 16).
:func:`serve` claims the wire at once and starts importing the SDK and building the server in a
thread, while this thread answers the handshake from a *snapshot*: the ``initialize`` and
``tools/list`` results the SDK itself sent on an earlier start, kept in
``state/mcp-start.json`` and keyed by what decides them (memdir's version, the server's source
files, the SDK's files, the interpreter). Answers are the SDK's own bytes' content, so the
tools a host registers are the same. The first line that needs the SDK (a tool call, a
resource, anything unusual), or any doubt, hands over: the SDK gets the client's
``initialize`` replayed under a private id (its answer is swallowed), the
``notifications/initialized``, and every line not answered yet, in order. Without a snapshot
(the first start after an install or upgrade) the SDK answers everything and the snapshot is
written from its answers.

Imports: the standard library and the kernel; the SDK only in the thread.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from pathlib import Path

from memdir.kernel.base.layout import StoreLayout, layout

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

SNAPSHOT = StoreLayout.MCP_START
REPLAY_ID = "memdir-replayed-initialize"
"""The id the client's ``initialize`` is replayed to the SDK under (its answer is dropped)."""
READ_BYTES = 1 << 16


def _key() -> str:
    """Return what the snapshot's answers depend on, as one string."""
    import importlib.util

    from memdir import __version__

    parts = [__version__, sys.version, sys.executable]
    here = Path(__file__).resolve().parent
    files = [here / name for name in ("server.py", "wire.py", "start.py")]
    for name in ("mcp", "mcp_types", "pydantic"):
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.origin:
            files.append(Path(spec.origin))
    for path in files:
        try:
            info = path.stat()
        except OSError:
            parts.append(f"{path}:-")
        else:
            parts.append(f"{path}:{info.st_mtime_ns}:{info.st_size}")
    return "\n".join(parts)


def _snapshot_path(store: Path) -> Path:

    return layout(store).in_state(SNAPSHOT)


def load_snapshot(store: Path, key: str) -> dict[str, Any] | None:
    """Return the stored answers when they were made by this very server, else ``None``."""
    try:
        data = json.loads(_snapshot_path(store).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("key") != key:
        return None
    init, tools = data.get("initialize"), data.get("tools/list")
    if not isinstance(init, dict) or not isinstance(tools, dict):
        return None
    return data


def save_snapshot(store: Path, key: str, captured: dict[str, Any]) -> None:
    """Keep the SDK's ``initialize`` and ``tools/list`` results for the next start."""
    import contextlib

    from memdir.kernel.base.atomic import write_text_atomic

    data = {"key": key, **captured}
    with contextlib.suppress(OSError):  # a read-only store starts the slow way each time
        write_text_atomic(_snapshot_path(store), json.dumps(data), durable=False)


class _Loader(threading.Thread):
    """Imports the SDK and builds the server (in the background)."""

    def __init__(self, store: Path) -> None:
        super().__init__(daemon=True, name="memdir-mcp-import")
        self.store = store
        self.server: Any = None
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            from memdir.mcp.server import build_server

            self.server = build_server(self.store)
        except BaseException as exc:  # noqa: BLE001 - re-raised in the main thread
            self.error = exc


def _reply(out: int, request_id: Any, result: dict[str, Any]) -> None:
    line = json.dumps({"jsonrpc": "2.0", "id": request_id, "result": result})
    data = (line + "\n").encode("utf-8")
    while data:
        data = data[os.write(out, data) :]


def _answer(line: str, snapshot: dict[str, Any], state: dict[str, Any], out: int) -> bool:
    """Answer ``line`` from the snapshot; return False when the SDK must take it."""
    try:
        message = json.loads(line)
    except (ValueError, RecursionError):
        return False
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        return False
    method, request_id = message.get("method"), message.get("id")
    has_id = isinstance(request_id, str | int) and not isinstance(request_id, bool)
    params = message.get("params")
    if method == "initialize" and has_id and "init" not in state:
        init = snapshot["initialize"]
        if not isinstance(params, dict) or params.get("protocolVersion") != init.get(
            "protocolVersion"
        ):
            return False
        state["init"] = {**message, "id": REPLAY_ID}
        _reply(out, request_id, init)
        return True
    if "init" not in state:
        return False
    if method == "notifications/initialized" and "id" not in message:
        state["initialized"] = line
        return True
    if (
        method == "tools/list"
        and has_id
        and not (isinstance(params, dict) and params.get("cursor"))
    ):
        _reply(out, request_id, snapshot["tools/list"])
        return True
    if method == "ping" and has_id:
        _reply(out, request_id, {})
        return True
    return False


def serve(store: Path) -> None:
    """Serve ``store`` over stdio, answering the handshake before the SDK is loaded.

    Raises:
        UsageError: stdin is a terminal (an MCP client must start this command).
    """
    from memdir.kernel.base.errors import UsageError

    if sys.stdin.isatty():
        raise UsageError("memdir serve speaks MCP on stdin/stdout; an MCP client starts it")
    sys.stdout.flush()
    wire_in = os.dup(0)
    wire_out = os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)  # whatever an import prints goes to stderr, never into the protocol (B33)
    loader = _Loader(store)
    interval = sys.getswitchinterval()
    sys.setswitchinterval(0.0005)  # the answers wait less for the importing thread
    loader.start()
    key = _key()
    snapshot = load_snapshot(store, key)
    state: dict[str, Any] = {}
    prelude: list[str] = []
    rest = b""
    ended = False
    if snapshot is not None:
        pending = b""
        while not prelude:
            chunk = os.read(wire_in, READ_BYTES)
            if not chunk:
                ended = True
                rest = pending
                break
            pending += chunk
            *lines, pending = pending.split(b"\n")
            for n, raw in enumerate(lines):
                text = raw.decode("utf-8", "replace") + "\n"
                if not text.strip():
                    continue
                if not _answer(text, snapshot, state, wire_out):
                    prelude = [r.decode("utf-8", "replace") + "\n" for r in lines[n:]]
                    break
            rest = pending
    if ended and not prelude and not rest.strip():
        return  # every request was answered; the client went away
    loader.join()
    sys.setswitchinterval(interval)
    if loader.error is not None:
        raise loader.error
    from memdir.mcp.wire import Handover, serve_stdio

    replay = []
    if "init" in state:
        replay.append(json.dumps(state["init"]) + "\n")
    if "initialized" in state:
        replay.append(state["initialized"])
    handover = Handover(replay + prelude, rest)
    if snapshot is None:
        handover.on_captured = lambda captured: save_snapshot(store, key, captured)
    import logging

    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    serve_stdio(loader.server, (wire_in, wire_out), handover)
