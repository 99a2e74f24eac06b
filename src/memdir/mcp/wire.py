"""The MCP stdio wire: every request answered, even a malformed one (JSON-RPC 2.0 §5.1).

The SDK's stdio transport drops a line it cannot validate without a reply, so a client that
sent a bad request waits for ever. :func:`serve_stdio` puts a checker in front of the SDK:

- a line that is not JSON (or nests too deeply to parse) gets ``-32700 Parse error``, id null;
- JSON that is not a request object gets ``-32600 Invalid Request`` (with its id when it has
  one; id null otherwise);
- a request whose params the SDK rejects gets ``-32602 Invalid params`` with its id;
- an invalid notification (no id) gets no reply, as the spec says, only a one-line log.

Valid lines pass through untouched. Replies are written through the same serialised writer as
the SDK's, one whole line at a time, so they never interleave. The descriptors are claimed as
the SDK claims them: while serving, fd 0 reads the null device and fd 1 points at stderr, so a
tool's child process or a stray ``print`` can never touch the wire (case B33).
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import AsyncIterator
from io import TextIOWrapper
from typing import TYPE_CHECKING, Any, cast

import anyio
import anyio.to_thread

from memdir.kernel.lang.redact import redact
from memdir.mcp.start import REPLAY_ID

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

log = logging.getLogger("memdir.mcp")

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602
"""JSON-RPC 2.0 error codes (https://www.jsonrpc.org/specification#error_object)."""

LOGGED_CHARS = 200
"""Most characters of a bad line repeated in the log (a 100 KB id must not flood stderr)."""


REQUEST_CANCELLED = -32800
"""The reply to a request its client cancelled before it ran (the code LSP gives it)."""

READ_BYTES = 1 << 16
"""Most bytes read from stdin at once."""

DRAIN_SECONDS = 60.0
"""Longest wait, after the client closes stdin, for the requests it sent to be answered."""


class SerialWriter:
    """A text sink whose ``write`` calls never overlap: one lock around each line.

    It also notes the id of every response written, so the reader can tell when every request
    it passed on has been answered (see :meth:`CheckedLines.__aiter__`).
    """

    def __init__(self, sink: anyio.AsyncFile[str], handover: Handover | None = None) -> None:
        self._sink = sink
        self._lock = anyio.Lock()
        self.answered: set[Any] = set()
        self.changed = anyio.Event()
        self.handover = handover

    async def write(self, text: str) -> None:
        """Write ``text`` (one whole JSON-RPC line) while holding the lock.

        The answer to a request replayed by a fast start (:class:`Handover`) is not written:
        the client had it already.
        """
        try:
            sent = json.loads(text)
        except ValueError:
            sent = None
        handover = self.handover
        swallowed = handover is not None and handover.take(sent)
        if not swallowed:
            async with self._lock:
                await self._sink.write(text)
                await self._sink.flush()
        if isinstance(sent, dict) and ("result" in sent or "error" in sent):
            self.answered.add(_key(sent.get("id")))
            self.changed.set()
            self.changed = anyio.Event()

    async def flush(self) -> None:
        """Flush (each write already has)."""
        await self._sink.flush()


def _error(request_id: Any, code: int, message: str) -> str:
    reply = {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}
    return json.dumps(reply, separators=(",", ":")) + "\n"


def check_line(line: str) -> tuple[bool, str | None]:
    """Decide what to do with one line from the client.

    Returns:
        ``(True, None)`` to pass the line to the SDK, or ``(False, reply)`` where ``reply`` is
        the error line to send (``None``: drop it silently, e.g. a blank line or a bad
        notification).
    """
    from mcp_types import jsonrpc_message_adapter
    from pydantic import ValidationError

    if not line.strip():
        return False, None
    try:
        value = json.loads(line)
    except (ValueError, RecursionError) as exc:
        shown = redact(line.strip()[: LOGGED_CHARS * 4])  # the log is a capture path too
        log.warning("not JSON, answered with a parse error: %.*s", LOGGED_CHARS, shown)
        return False, _error(None, PARSE_ERROR, f"Parse error: {str(exc)[:LOGGED_CHARS]}")
    if not isinstance(value, dict):
        return False, _error(None, INVALID_REQUEST, "Invalid Request: not a JSON object")
    request_id = value.get("id")
    if not isinstance(request_id, str | int) or isinstance(request_id, bool):
        request_id = None
    elif isinstance(request_id, str) and len(request_id) > LOGGED_CHARS:
        request_id = None  # an absurd id is not echoed back
    is_reply = "result" in value or "error" in value
    if not is_reply and not isinstance(value.get("method"), str):
        if "id" not in value:
            log.warning("a notification without a method was dropped")
            return False, None
        return False, _error(request_id, INVALID_REQUEST, "Invalid Request: no method")
    try:
        jsonrpc_message_adapter.validate_json(line, by_name=False)
    except (ValidationError, ValueError) as exc:
        if "id" not in value or is_reply:
            shown = redact(str(exc)[: LOGGED_CHARS * 4])
            log.warning("an invalid message without an id was dropped: %.*s", LOGGED_CHARS, shown)
            return False, None
        detail = str(exc).splitlines()[0][:LOGGED_CHARS]
        return False, _error(request_id, INVALID_PARAMS, f"Invalid params: {detail}")
    return True, None


class CheckedLines:
    """The client's lines, with malformed ones answered here instead of passed on.

    Lines are read in chunks straight from the descriptor, so every line the client has
    already sent is seen before any of them is passed on: a request followed at once by its
    ``notifications/cancelled`` (case B54) never reaches a tool. It is answered here with
    :data:`REQUEST_CANCELLED` and writes nothing. A cancel that arrives later is passed to the
    SDK, which stops the call if its tool has not started yet and never answers it; either way
    the end of input no longer waits for an answer that will not come.
    """

    def __init__(
        self, source: int, replies: SerialWriter, handover: Handover | None = None
    ) -> None:
        self._source = source
        self._replies = replies
        self._prelude = handover.prelude if handover else []
        self._rest = handover.rest if handover else b""
        self.cancelled: set[Any] = set()

    async def _chunks(self) -> AsyncIterator[list[str]]:
        """Yield the complete lines of each read from the descriptor (the rest at EOF).

        Lines a fast start already read (the prelude) come first.
        """
        if self._prelude:
            yield self._prelude
        pending = self._rest
        while True:
            chunk = await anyio.to_thread.run_sync(os.read, self._source, READ_BYTES)
            if not chunk:
                if pending:
                    yield [pending.decode("utf-8", "replace")]
                return
            pending += chunk
            if b"\n" not in chunk:
                continue
            whole, _, pending = pending.rpartition(b"\n")
            yield [line.decode("utf-8", "replace") + "\n" for line in whole.split(b"\n")]

    async def __aiter__(self) -> AsyncIterator[str]:
        """Yield each valid line; answer each malformed or already-cancelled request.

        When the client closes stdin (``echo … | memdir serve``), the SDK would end the session
        at once and drop the calls still running; instead the end is held back until every
        request passed on has its response (cancelled ones excepted), for at most
        :data:`DRAIN_SECONDS`.
        """
        asked: set[Any] = set()
        async for lines in self._chunks():
            checked = [(line, *check_line(line)) for line in lines]
            ahead = {
                _key(rid)
                for line, ok, _ in checked
                if ok and (rid := _cancelled_id(line)) is not None
            }
            for line, ok, reply in checked:
                if not ok:
                    if reply is not None:
                        await self._replies.write(reply)
                    continue
                request = json.loads(line)
                if isinstance(request, dict) and "method" in request and "id" in request:
                    key = _key(request["id"])
                    if key in ahead:  # cancelled before it could run: answered, never started
                        self.cancelled.add(key)
                        await self._replies.write(
                            _error(request["id"], REQUEST_CANCELLED, "Request cancelled")
                        )
                        continue
                    asked.add(key)
                cancelled = _cancelled_id(line)
                if cancelled is not None:
                    self.cancelled.add(_key(cancelled))
                    if _key(cancelled) in ahead and _key(cancelled) not in asked:
                        continue  # its request was answered here; the SDK never saw it
                yield line
        with anyio.move_on_after(DRAIN_SECONDS):
            while not asked - self.cancelled <= self._replies.answered:
                await self._replies.changed.wait()


def _cancelled_id(line: str) -> Any:
    """Return the request id a ``notifications/cancelled`` line names, else ``None``."""
    if "notifications/cancelled" not in line:
        return None
    message = json.loads(line)
    if not isinstance(message, dict) or message.get("method") != "notifications/cancelled":
        return None
    params = message.get("params")
    return params.get("requestId") if isinstance(params, dict) else None


def _key(request_id: Any) -> Any:
    """A hashable form of a JSON-RPC id (a string, a number or null)."""
    return (
        request_id
        if isinstance(request_id, str | int | float) or request_id is None
        else repr(request_id)
    )


class Handover:
    """What a fast start (:mod:`memdir.mcp.start`) hands the SDK, and what it wants back.

    ``prelude``: lines already read (the client's ``initialize`` replayed under
    :data:`REPLAY_ID`, its ``notifications/initialized``, then the lines not answered yet) and
    ``rest``, the bytes of a line not complete yet. The SDK's answer to the replayed
    ``initialize`` is swallowed. With ``capture``, the results of ``initialize`` and
    ``tools/list`` are passed to ``on_captured`` once both were sent (to write a snapshot).
    """

    REPLAY_ID = REPLAY_ID

    def __init__(self, prelude: list[str], rest: bytes = b"", on_captured: Any = None) -> None:
        self.prelude = prelude
        self.rest = rest
        self.captured: dict[str, Any] = {}
        self.on_captured = on_captured

    def take(self, sent: Any) -> bool:
        """Note an outgoing message; return True when it must not be written."""
        if not isinstance(sent, dict) or "id" not in sent:
            return False
        result = sent.get("result")
        if self.on_captured is not None and isinstance(result, dict):
            if "serverInfo" in result and "protocolVersion" in result:
                self.captured["initialize"] = result
            elif isinstance(result.get("tools"), list) and not result.get("nextCursor"):
                self.captured["tools/list"] = result
            if len(self.captured) == 2:
                done, self.on_captured = self.on_captured, None
                done(self.captured)
        return bool(sent["id"] == self.REPLAY_ID)


def claim_stdio() -> tuple[int, int]:
    """Take the wire: return (in, out) descriptors; fd 0 reads /dev/null, fd 1 is stderr."""
    wire_in, wire_out = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    return wire_in, wire_out


def serve_stdio(
    server: MCPServer,
    wires: tuple[int, int] | None = None,
    handover: Handover | None = None,
) -> None:
    """Serve ``server`` on this process's stdin and stdout until the client disconnects.

    ``wires``: descriptors :func:`claim_stdio` already took (else it is called here);
    ``handover``: what a fast start already read and answered.

    Raises:
        OSError: the standard descriptors cannot be duplicated.
    """
    wire_in, wire_out = wires or claim_stdio()
    try:
        anyio.run(_serve, server, wire_in, wire_out, handover)
    finally:
        os.dup2(wire_in, 0)
        os.dup2(wire_out, 1)


async def _serve(
    server: MCPServer, wire_in: int, wire_out: int, handover: Handover | None = None
) -> None:
    from mcp.server.stdio import stdio_server

    writer = TextIOWrapper(os.fdopen(wire_out, "wb", closefd=False), encoding="utf-8")
    replies = SerialWriter(anyio.wrap_file(writer), handover)
    lines = CheckedLines(wire_in, replies, handover)
    async with stdio_server(
        stdin=cast("anyio.AsyncFile[str]", lines), stdout=cast("anyio.AsyncFile[str]", replies)
    ) as (read_stream, write_stream):
        lowlevel = server._lowlevel_server
        await lowlevel.run(read_stream, write_stream, lowlevel.create_initialization_options())
