"""Append-only JSON Lines files: the journal and the action log.

Writers append whole lines with a single ``write`` on an ``O_APPEND`` file, so concurrent
processes never interleave bytes within a line (POSIX appends of one ``write`` are atomic with
respect to the file offset; lines are capped at :data:`MAX_LINE_BYTES`); a rewrite (purge)
never loses one (:mod:`memdir.kernel.base.appendlog`). Readers keep a byte
offset per file and only ever consume complete lines, so a line another process is still
writing, or one a killed writer left without its newline, waits and is never half-read.
Imports: standard library only.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from memdir.kernel.base import appendlog
from memdir.kernel.base.errors import JournalOffsetError, UsageError

TYPE_CHECKING = False  # the hook path never imports typing (start-up cost)
if TYPE_CHECKING:
    from typing import Any

MAX_LINE_BYTES = 256 * 1024
"""Longest line :func:`append_line` accepts, newline included. Readers rely on it."""


_SURROGATE = re.compile("[\ud800-\udfff]")


def valid_unicode(value: Any) -> Any:
    r"""Return ``value`` (text, or JSON lists and objects of it) with lone surrogates as U+FFFD.

    Lone surrogates cannot be written as UTF-8. They arrive from a JavaScript host that cut a
    string inside an emoji and sent half of it as a ``\uD83E`` escape (case B02), and from
    command-line arguments that were not UTF-8 (Python decodes those bytes to surrogates).

    Raises:
        RecursionError: ``value`` nests deeper than the interpreter's recursion limit.
    """
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [valid_unicode(item) for item in value]
    if isinstance(value, dict):
        return {valid_unicode(k): valid_unicode(v) for k, v in value.items()}
    return value


def encode_line(obj: dict[str, Any]) -> bytes:
    """Return ``obj`` as one compact JSON line (UTF-8, newline-terminated).

    Text that cannot be UTF-8 (a lone surrogate) is written with U+FFFD in its place.

    Raises:
        UsageError: the line would exceed :data:`MAX_LINE_BYTES`.
    """
    text = json.dumps(obj, ensure_ascii=False, separators=(",", ":")) + "\n"
    try:
        line = text.encode("utf-8")
    except UnicodeEncodeError:
        line = _SURROGATE.sub("\ufffd", text).encode("utf-8")
    if len(line) > MAX_LINE_BYTES:
        raise UsageError(f"entry is {len(line)} bytes; the limit is {MAX_LINE_BYTES}")
    return line


def append_line(
    path: Path, obj: dict[str, Any], *, wait: float = appendlog.APPEND_WAIT_SECONDS
) -> tuple[int, int]:
    """Append ``obj`` as one line to ``path`` (created with its folder if missing).

    A torn last line left by a killed writer (no trailing newline) is first closed with a
    newline, so the new line never merges into it. A rewrite of the file in progress (purge)
    is waited for, at most ``wait`` seconds, and never loses the line
    (:mod:`memdir.kernel.base.appendlog`).

    Returns:
        ``(offset, length)``: the byte offset where the line starts and its length in bytes.

    Raises:
        UsageError: the line is too long.
        OSError: the folder cannot be written or the disk is full; nothing, or a torn line
            that no reader returns, was appended.
    """
    line = encode_line(obj)
    return appendlog.append(path, line, wait=wait), len(line)


class Line:
    """One complete line read from a JSONL file (plain classes here: the hook path is light)."""

    __slots__ = ("length", "offset", "value")

    def __init__(self, offset: int, length: int, value: dict[str, Any] | None) -> None:
        self.offset = offset  # byte offset of the line's first byte
        self.length = length  # bytes, newline included
        self.value = value  # the parsed object; None when the line is not a JSON object


class Tail:
    """What one :func:`read_tail` call consumed."""

    __slots__ = ("lines", "next_offset", "skipped")

    def __init__(self, lines: list[Line], next_offset: int, skipped: int) -> None:
        self.lines = lines  # complete lines in file order, blank lines left out
        self.next_offset = next_offset  # bytes; pass to the next read_tail call
        self.skipped = skipped  # complete non-blank lines that were not a JSON object


def read_tail(path: Path, offset: int, *, max_bytes: int = 8 * 1024 * 1024) -> Tail:
    """Read the complete lines appended to ``path`` since byte ``offset``.

    Args:
        path: A ``journal/*.jsonl`` or ``actions/*.jsonl`` file.
        offset: Byte position from the previous call's ``next_offset``; 0 for a new file.
        max_bytes: Most bytes consumed by this call; at least :data:`MAX_LINE_BYTES` so one
            call always gets past one line.

    Returns:
        A :class:`Tail`. ``next_offset`` only advances past a newline. A missing file reads as
        empty with ``next_offset == offset``.

    Raises:
        ValueError: ``offset`` is negative or ``max_bytes`` is below :data:`MAX_LINE_BYTES`.
        JournalOffsetError: ``offset`` is past the end of the file (truncated or replaced).
        OSError: the file exists but cannot be read.
    """
    if offset < 0 or max_bytes < MAX_LINE_BYTES:
        raise ValueError(f"bad read window: offset={offset}, max_bytes={max_bytes}")
    try:
        with path.open("rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            if offset > size:
                raise JournalOffsetError(
                    f"{path}: saved offset {offset} is past the end of the file ({size} bytes)"
                )
            fh.seek(offset)
            chunk = fh.read(max_bytes)
    except FileNotFoundError:
        return Tail(lines=[], next_offset=offset, skipped=0)
    end = chunk.rfind(b"\n") + 1
    if end == 0 and len(chunk) >= MAX_LINE_BYTES and len(chunk) == max_bytes:
        end = len(chunk)  # an over-long line with no newline: consume it as one bad line
    lines: list[Line] = []
    skipped = 0
    position = offset
    for raw in chunk[:end].split(b"\n")[:-1] if end else []:
        length = len(raw) + 1
        stripped = raw.strip()
        if stripped:
            value: Any
            try:
                value = json.loads(stripped)
            except (ValueError, RecursionError):  # not JSON, not UTF-8, or nested too deeply
                value = None
            if not isinstance(value, dict):
                skipped += 1
                value = None
            lines.append(Line(offset=position, length=length, value=value))
        position += length
    return Tail(lines=lines, next_offset=offset + end, skipped=skipped)
