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

from memdir.kernel.jsonl import valid_unicode

TYPE_CHECKING = False  # the hook path never imports typing (start-up cost)
if TYPE_CHECKING:
    from typing import IO, Any

CANONICAL_EVENTS = (
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "PostToolBatch",
    "Stop",
    "PreCompact",
    "PostCompact",
    "SessionEnd",
)
"""memdir's hook events, named as Claude Code names them (DESIGN §7)."""

STDIN_LIMIT_BYTES = 4 * 1024 * 1024

"""Largest payload read. Tool responses can be big (a whole file); more than this is cut off."""


def read_payload(stream: IO[bytes], limit: int = STDIN_LIMIT_BYTES) -> tuple[dict[str, Any], str]:
    """Read the host's payload.

    Returns:
        ``(payload, problem)``: the JSON object (``{}`` when unusable) and ``""`` or a short
        description of what was wrong with the input, for the hook error log.
    """
    try:
        if hasattr(stream, "isatty") and stream.isatty():
            return {}, "no payload on stdin (a terminal)"
        data = stream.read(limit + 1)
    except (OSError, ValueError) as exc:
        return {}, f"stdin unreadable: {exc}"
    if not data:
        return {}, "empty payload"
    if len(data) > limit:
        return {}, f"payload larger than {limit} bytes"
    try:
        value = json.loads(data)
    except (ValueError, UnicodeDecodeError) as exc:
        return {}, f"payload is not JSON: {str(exc)[:120]}"
    except RecursionError:
        return {}, "payload is nested too deeply to read"
    if not isinstance(value, dict):
        return {}, f"payload is a JSON {type(value).__name__}, not an object"
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
