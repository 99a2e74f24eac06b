r"""Record files as text: split off the front matter, segment it by key, write it canonically.

**Canonical form.** memdir writes every record as::

    ---
    id: "f-01jc9x2k7q4fz2"
    kind: "fact"
    importance: 7
    aliases: ["package manager", "pnpm"]
    source: {"channel": "cli", "session": null, "journal": null}
    ---
    body…

one ``key: value`` line per key in :data:`~memdir.kernel.base.model.FIELD_ORDER`, each value a
JSON value. JSON is a subset of YAML's flow syntax, so the file is ordinary YAML to any tool,
every string is double-quoted (no ``yes``/``null``/date/base-60 coercion, case B07/B09), and
strings round-trip byte for byte. The few characters YAML 1.1 reads differently from JSON
inside double quotes (NEL, LS, PS, BOM, C1 controls, U+FFFE/F) are written as ``\\uXXXX``.
Because canonical lines are JSON, the kernel reads memdir's own files without a YAML library;
anything else (hand edits, other tools) goes through :mod:`memdir.records.codec`.

**Tolerance.** :func:`split` survives a UTF-8 BOM, CRLF or CR line ends, a closing fence with
no newline, and a missing closing fence (the front matter then ends at the first line that
cannot be YAML front matter). :func:`segment` cuts the front matter into top-level entries
keeping each one's raw text, and reports duplicated keys; the last one wins (case B12).

Rewrites always use LF and never write a BOM (case B10). Imports: standard library only.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any

from memdir.kernel.base.errors import UsageError

FENCE = "---"
_KEY_LINE = re.compile(r"^([A-Za-z_][A-Za-z0-9_.-]*)[ \t]*:(?=[ \t]|$)(.*)$")
_CONTINUATION = re.compile(r"^(?:[ \t]+\S|-(?:[ \t]|$)|#)")
_YAML_ESCAPES = {
    ch: f"\\u{ord(ch):04x}"
    for ch in ["\u0085", "\u2028", "\u2029", "\ufeff", "\ufffe", "\uffff"]
    + [chr(code) for code in range(0x7F, 0xA0)]
}


@dataclass(frozen=True, slots=True)
class Split:
    """A record file cut into front matter lines and body."""

    front: list[str]  # front matter lines, without line ends
    body: str  # everything after the closing fence, LF line ends
    has_front: bool  # the file starts with a fence
    closed: bool  # a closing fence was found
    had_bom: bool
    crlf: bool


@dataclass(frozen=True, slots=True)
class Entry:
    """One top-level front matter key with its raw text."""

    key: str
    raw: str  # text after "key:", with continuation lines joined by "\n"
    line: int  # 1-based line number in the file


@dataclass(frozen=True, slots=True)
class Segments:
    """The front matter's entries, last value winning, and the keys that appeared twice."""

    entries: dict[str, Entry]
    order: list[str]  # keys in first-appearance order
    duplicates: list[str]  # keys that appeared more than once, in order


def split(text: str) -> Split:
    """Cut a record file's text into front matter and body (see the module docstring)."""
    had_bom = text.startswith("\ufeff")
    if had_bom:
        text = text[1:]
    crlf = "\r\n" in text[:4096]
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    lines = text.split("\n")
    if not lines or lines[0].rstrip() != FENCE:
        return Split([], text, has_front=False, closed=False, had_bom=had_bom, crlf=crlf)
    for number in range(1, len(lines)):
        if lines[number].rstrip() in (FENCE, "..."):
            body = "\n".join(lines[number + 1 :])
            return Split(lines[1:number], body, True, True, had_bom, crlf)
    # No closing fence: the front matter is the run of lines that can be YAML entries.
    end = 1
    last_content = 1
    while end < len(lines):
        line = lines[end]
        if line.strip() == "":
            end += 1
            continue
        if _KEY_LINE.match(line) or _CONTINUATION.match(line):
            end += 1
            last_content = end
            continue
        break
    body = "\n".join(lines[last_content:]).lstrip("\n")
    return Split(lines[1:last_content], body, True, False, had_bom, crlf)


def segment(front: list[str], first_line: int = 2) -> Segments:
    """Cut front matter lines into top-level entries; the last of a duplicated key wins.

    Lines before the first key and lines that are neither keys nor continuations are ignored
    by this function; the tolerant codec reports them.
    """
    entries: dict[str, Entry] = {}
    order: list[str] = []
    duplicates: list[str] = []
    key: str | None = None
    raw: list[str] = []
    start = 0

    def close() -> None:
        if key is None:
            return
        if key in entries and key not in duplicates:
            duplicates.append(key)
        if key not in entries:
            order.append(key)
        entries[key] = Entry(key, "\n".join(raw).rstrip(), start)

    for offset, line in enumerate(front):
        match = _KEY_LINE.match(line)
        if match:
            close()
            key, raw, start = match.group(1), [match.group(2)], first_line + offset
        elif key is not None:
            raw.append(line)
    close()
    return Segments(entries, order, duplicates)


_KEY_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*")


def extra_problem(key: str, raw: str) -> str | None:
    """Return why an unknown key and its raw YAML text cannot be written, or ``None``.

    Unknown keys are written back as they were read (case B09). Text from elsewhere (an
    import) must not use that to add or override a field: its key must be a plain name that is
    not a known key, and no line of its value may start another key or close the front matter.
    """
    if not _KEY_NAME.fullmatch(key):
        return f"extra key {key!r} is not a plain name"
    lines = raw.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    for line in lines[1:]:
        if _KEY_LINE.match(line) or line.rstrip() in (FENCE, "..."):
            return f"the value of extra key {key!r} would start another key or end the front matter"
    return None


def quote(value: str) -> str:
    """Return ``value`` as a double-quoted scalar that JSON and YAML read back identically."""
    encoded = json.dumps(value, ensure_ascii=False)
    if any(ch in _YAML_ESCAPES for ch in encoded):
        encoded = "".join(_YAML_ESCAPES.get(ch, ch) for ch in encoded)
    return encoded


def dump_value(value: Any) -> str:
    """Return the canonical one-line YAML (JSON) form of a front matter value.

    Raises:
        UsageError: a string is not valid Unicode text (a lone surrogate) or a number is not
            finite.
    """
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise UsageError("text is not valid UTF-8 (it holds a lone surrogate)") from exc
        return quote(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise UsageError(f"not a finite number: {value}")
        text = json.dumps(value)
        if "e" in text and "." not in text:
            # YAML 1.1 reads 1e-05 as a string; a float needs a dot: 1.0e-05 (same JSON value).
            mantissa, exponent = text.split("e")
            text = f"{mantissa}.0e{exponent}"
        return text
    if isinstance(value, list | tuple):
        return "[" + ", ".join(dump_value(item) for item in value) + "]"
    if isinstance(value, dict):
        pairs = (f"{quote(str(k))}: {dump_value(v)}" for k, v in value.items())
        return "{" + ", ".join(pairs) + "}"
    raise UsageError(f"cannot write a {type(value).__name__} into front matter")


MAX_VALUE_DEPTH = 32
"""Deepest nesting of lists and maps a front matter value may have; deeper reads as raw text."""


def nesting_depth(value: Any) -> int:
    """Return how deeply lists and maps nest in ``value`` (0 for a scalar), without recursion."""
    deepest = 0
    pending = [(value, 0)]
    while pending:
        item, depth = pending.pop()
        if isinstance(item, list | tuple | dict):
            depth += 1
            deepest = max(deepest, depth)
            if depth > MAX_VALUE_DEPTH:
                break
            children = item.values() if isinstance(item, dict) else item
            pending.extend((child, depth) for child in children)
    return deepest


def parse_json_value(raw: str) -> tuple[bool, Any]:
    """Return ``(True, value)`` when ``raw`` is one canonical JSON value, else ``(False, None)``.

    A value nested deeper than :data:`MAX_VALUE_DEPTH` (hand-written ``[[[[…``) is not one:
    it would exhaust the parser's or the writer's recursion.
    """
    stripped = raw.strip()
    if not stripped or "\n" in stripped:
        return False, None
    try:
        value = json.loads(stripped)
    except (ValueError, RecursionError):
        return False, None
    if nesting_depth(value) > MAX_VALUE_DEPTH:
        return False, None
    return True, value
