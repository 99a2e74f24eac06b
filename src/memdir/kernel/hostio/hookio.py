"""The hook wire format: bounded JSON in on stdin, at most one JSON object out on stdout.

A host hands a hook its payload as one JSON object on stdin and reads stdout as the hook's
answer (DESIGN §7). Input is read up to :data:`STDIN_LIMIT_BYTES`; anything that is not one
JSON object (empty, truncated, not JSON, an array, huge) reads as ``{}`` and the hook stays
silent. Output is exactly one compact JSON object, or nothing.

Imports: standard library only.
"""

from __future__ import annotations

import json
import os
import re

from memdir.kernel.base.jsonl import valid_unicode

TYPE_CHECKING = False  # the hook path never imports typing (start-up cost)
if TYPE_CHECKING:
    from typing import IO, Any


STDIN_LIMIT_BYTES = 32 * 1024 * 1024
"""Largest payload parsed whole. Stdin is always read to its end (a host whose write blocks or
fails with EPIPE is a broken host session); past this size only its head and tail are kept, and
the event is salvaged from them (:func:`_salvage`)."""
SALVAGE_BYTES = 256 * 1024
"""Bytes kept from each end of a payload over :data:`STDIN_LIMIT_BYTES`."""
FIELD_LIMIT_CHARS = 32 * 1024
"""A string field longer than this is cut to its head and tail (:func:`cut_big_fields`), so the
work a hook does on a huge prompt or tool response stays bounded by its deadline."""
CHUNK_BYTES = 1024 * 1024
PATCH_MARK = "*** Begin Patch"
"""An ``apply_patch`` body: a cut keeps its ``*** …`` header lines, which name the files."""


def _cut_text(text: str, limit: int = FIELD_LIMIT_CHARS) -> str:
    """Return ``text`` whole, or its head and tail around a note of how much was cut."""
    if len(text) <= limit:
        return text
    if PATCH_MARK in text[:4096]:
        headers = [line for line in text.splitlines() if line.startswith("*** ")]
        kept = "\n".join(headers)
        if len(kept) <= limit:
            return kept + "\n"
    half = limit // 2
    cut = len(text) - 2 * half
    return f"{text[:half]}\n[… {cut} characters cut by memdir …]\n{text[-half:]}"


def cut_big_fields(value: Any, limit: int = FIELD_LIMIT_CHARS) -> Any:
    """Return ``value`` with every string longer than ``limit`` cut to its head and tail.

    Args:
        value: A decoded JSON value (dicts and lists are rebuilt, other values returned as is).
        limit: Most characters a string keeps (plus a one-line note of what was cut).

    Returns:
        The same shape; an ``apply_patch`` body keeps its file header lines instead.
    """
    if isinstance(value, str):
        return _cut_text(value, limit)
    if isinstance(value, dict):
        return {key: cut_big_fields(item, limit) for key, item in value.items()}
    if isinstance(value, list):
        return [cut_big_fields(item, limit) for item in value]
    return value


def _read_all(stream: IO[bytes], limit: int) -> tuple[bytes, bytes, int]:
    """Read ``stream`` to its end; return ``(head, tail, total)``.

    ``head`` holds the whole input when it is at most ``limit`` bytes (``tail`` is then empty);
    otherwise the first and last :data:`SALVAGE_BYTES` bytes. Memory stays bounded.
    """
    head = bytearray()
    tail = b""
    total = 0
    while True:
        chunk = stream.read(CHUNK_BYTES)
        if not chunk:
            break
        total += len(chunk)
        if len(head) + len(chunk) <= limit and not tail:
            head += chunk
            continue
        if not tail:  # just went over: keep the start as the head, the rest becomes the tail
            whole = bytes(head) + chunk
            head = bytearray(whole[:SALVAGE_BYTES])
            tail = whole[SALVAGE_BYTES:][-SALVAGE_BYTES:]
        else:
            tail = (tail + chunk)[-SALVAGE_BYTES:]
    return bytes(head), tail, total


_SMALL_FIELDS = (
    "hook_event_name",
    "hookEventName",
    "session_id",
    "sessionId",
    "cwd",
    "transcript_path",
    "tool_name",
    "toolName",
    "source",
    "trigger",
    "file_path",
    "path",
    "notebook_path",
)
_STRING_AT = r'"((?:[^"\\]|\\.){0,4096})"'


def _unquote(body: str) -> str:
    try:
        value = json.loads(f'"{body}"')
    except ValueError:
        return ""
    return value if isinstance(value, str) else ""


def _decode_from(body: str, *, end: bool) -> str:
    """Decode a piece of a JSON string body cut at one end (a cut escape is dropped)."""
    for trim in range(7):
        piece = body[trim:] if end else body[: len(body) - trim]
        decoded = _unquote(piece)
        if decoded or not piece:
            return decoded
    return ""


def _salvage(head: bytes, tail: bytes, total: int) -> dict[str, Any]:
    """Return what can be recovered from the two ends of a payload too big to parse.

    The small identifying fields (event, session, cwd, tool, file path…) are taken from the
    head, where hosts put them; a ``prompt`` that starts in the head keeps its start and,
    when it is the payload's last field (as Claude Code and Gemini CLI send it), its end.
    """
    text_head = head.decode("utf-8", "ignore")
    text_tail = tail.decode("utf-8", "ignore")
    value: dict[str, Any] = {}
    tool_input: dict[str, Any] = {}
    for key in _SMALL_FIELDS:
        found = re.search(rf'"{key}"\s*:\s*{_STRING_AT}', text_head)
        if found:
            target = tool_input if key in ("file_path", "path", "notebook_path") else value
            target.setdefault(key, _unquote(found.group(1)))
    if tool_input:
        value["tool_input"] = tool_input
    start = re.search(r'"prompt"\s*:\s*"', text_head)
    if start:
        half = FIELD_LIMIT_CHARS // 2
        window = text_head[start.end() : start.end() + half * 2]
        body = re.match(r'(?:[^"\\]|\\.)*', window)
        first = _decode_from(body.group(0) if body else "", end=False)
        ending = text_tail.rstrip().removesuffix("}").rstrip()
        last = _decode_from(ending[:-1], end=True) if ending.endswith('"') else ""
        cut = f"\n[… about {total} bytes cut by memdir …]\n"
        value["prompt"] = f"{first[:half]}{cut}{last[-half:]}"
    return value


def read_payload(stream: IO[bytes], limit: int = STDIN_LIMIT_BYTES) -> tuple[dict[str, Any], str]:
    """Read the host's payload, always to the end of stdin.

    Args:
        stream: The hook's stdin (binary).
        limit: Largest payload parsed whole; a bigger one is salvaged from its two ends.

    Returns:
        ``(payload, problem)``: the JSON object (``{}`` when unusable) and ``""`` or a short
        description of what was wrong with the input, for the hook error log. String fields
        longer than :data:`FIELD_LIMIT_CHARS` come back cut (:func:`cut_big_fields`); an
        oversized payload is not a problem, it keeps its event with the big fields cut.
    """
    try:
        if hasattr(stream, "isatty") and stream.isatty():
            return {}, "no payload on stdin (a terminal)"
        data, tail, total = _read_all(stream, limit)
    except (OSError, ValueError) as exc:
        return {}, f"stdin unreadable: {exc}"
    if not total:
        return {}, "empty payload"
    if total > limit:
        salvaged = _salvage(data, tail, total)
        if not salvaged:
            return {}, f"payload of {total} bytes, over {limit}, and nothing recognisable in it"
        return valid_unicode(salvaged), ""
    try:
        value = json.loads(data)
    except (ValueError, UnicodeDecodeError) as exc:
        return {}, f"payload is not JSON: {str(exc)[:120]}"
    except RecursionError:
        return {}, "payload is nested too deeply to read"
    if not isinstance(value, dict):
        return {}, f"payload is a JSON {type(value).__name__}, not an object"
    if total > FIELD_LIMIT_CHARS:
        value = cut_big_fields(value)
    if _SURROGATE_HINT.search(data):
        try:
            value = valid_unicode(value)
        except RecursionError:
            return {}, "payload is nested too deeply to read"
    return value, ""


_SURROGATE_HINT = re.compile(rb"\\u[dD][89a-fA-F]|\xed[\xa0-\xbf]")
"""Bytes that can decode to a lone surrogate: a ``\\uD83E`` escape, or CESU-8."""


def encode_response(response: dict[str, Any]) -> bytes:
    """Return ``response`` as one line of compact JSON (UTF-8, newline-terminated)."""
    return (json.dumps(response, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")


def write_response(fd: int, response: dict[str, Any]) -> None:
    """Write ``response`` to file descriptor ``fd`` in one go (stdout is 1)."""
    data = encode_response(response)
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def text_field(payload: dict[str, Any], *keys: str) -> str:
    """Return the first of ``keys`` whose value is a string, else ``""``."""
    for key in keys:
        value = payload.get(key)
        if isinstance(value, str):
            return value
    return ""


def dict_field(payload: dict[str, Any], key: str) -> dict[str, Any]:
    """Return ``payload[key]`` when it is an object, else ``{}``."""
    value = payload.get(key)
    return value if isinstance(value, dict) else {}
