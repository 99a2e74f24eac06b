"""Format-keeping JSON edits: insert or remove one member or element, touch nothing else.

A host's settings file belongs to the user: its indentation, key order, spacing and final
newline are theirs. These functions change a JSON document's *text* at exactly the place a
member or element goes, so every other byte stays put, and :func:`remove` undoes
:func:`insert` byte for byte (an element appended after the last one is removed together with
the comma and line break written before it; a container memdir filled from empty goes back to
``{}``/``[]``).

Paths are tuples of object keys (str) and array indexes (int) from the root. Input is strict
JSON; :class:`ValueError` is raised for anything else (trailing commas, comments).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from json.decoder import scanstring as _scanstring  # type: ignore[attr-defined]
from typing import Any

_WS = re.compile(r"[ \t\n\r]*")
_SCALAR = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null")


@dataclass
class Node:
    """One JSON value's place in the text: ``text[start:end]``."""

    start: int
    end: int
    kind: str  # "object", "array" or "scalar"
    keys: list[str] = field(default_factory=list)  # object member keys, in order
    key_starts: list[int] = field(default_factory=list)  # where each member's key begins
    children: list[Node] = field(default_factory=list)


def parse(text: str) -> Node:
    """Return the position tree of a JSON document.

    Raises:
        ValueError: ``text`` is not strict JSON.
    """
    json.loads(text)  # strict validation first: the walker below trusts its input
    node, _ = _value(text, _WS.match(text, 0).end())  # type: ignore[union-attr]
    return node


def _value(text: str, pos: int) -> tuple[Node, int]:
    char = text[pos]
    if char == "{":
        node = Node(pos, pos, "object")
        pos = _skip(text, pos + 1)
        if text[pos] == "}":
            node.end = pos + 1
            return node, pos + 1
        while True:
            node.key_starts.append(pos)
            key, pos = _scanstring(text, pos + 1)
            pos = _skip(text, pos)  # at ":"
            pos = _skip(text, pos + 1)
            child, pos = _value(text, pos)
            node.keys.append(key)
            node.children.append(child)
            pos = _skip(text, pos)
            if text[pos] == "}":
                node.end = pos + 1
                return node, pos + 1
            pos = _skip(text, pos + 1)  # past ","
    if char == "[":
        node = Node(pos, pos, "array")
        pos = _skip(text, pos + 1)
        if text[pos] == "]":
            node.end = pos + 1
            return node, pos + 1
        while True:
            child, pos = _value(text, pos)
            node.children.append(child)
            pos = _skip(text, pos)
            if text[pos] == "]":
                node.end = pos + 1
                return node, pos + 1
            pos = _skip(text, pos + 1)
    if char == '"':
        _, end = _scanstring(text, pos + 1)
        return Node(pos, end, "scalar"), end
    match = _SCALAR.match(text, pos)
    if match is None:  # pragma: no cover - json.loads accepted it
        raise ValueError(f"unexpected character at {pos}")
    return Node(pos, match.end(), "scalar"), match.end()


def _skip(text: str, pos: int) -> int:
    return _WS.match(text, pos).end()  # type: ignore[union-attr]


def find(root: Node, path: tuple[str | int, ...]) -> Node | None:
    """Return the node at ``path``, or ``None`` when some step is missing."""
    node = root
    for step in path:
        if isinstance(step, str):
            if node.kind != "object" or step not in node.keys:
                return None
            node = node.children[len(node.keys) - 1 - node.keys[::-1].index(step)]
        else:
            if node.kind != "array" or not 0 <= step < len(node.children):
                return None
            node = node.children[step]
    return node


def _line_indent(text: str, pos: int) -> str:
    line_start = text.rfind("\n", 0, pos) + 1
    return _WS.match(text, line_start).group(0).replace("\n", "").replace("\r", "")  # type: ignore[union-attr]


def _unit(text: str, root: Node) -> str:
    """The document's indentation step (two spaces when it cannot be told)."""
    if root.kind == "object" and root.key_starts:
        first = root.key_starts[0]
    elif root.kind == "array" and root.children:
        first = root.children[0].start
    else:
        return "  "
    if "\n" not in text[root.start : first]:
        return "  "
    return _line_indent(text, first) or "  "


def _render(value: Any, indent: str, unit: str, multiline: bool) -> str:
    if not multiline:
        return json.dumps(value, ensure_ascii=False)
    dumped = json.dumps(value, indent=unit, ensure_ascii=False)
    return dumped.replace("\n", "\n" + indent)


def insert(text: str, path: tuple[str | int, ...], value: Any, key: str | None = None) -> str:
    """Add ``value`` at the end of the container at ``path`` (as member ``key`` in an object).

    Args:
        text: the document.
        path: the container (object or array) to add to.
        value: any JSON-serialisable value.
        key: the member name when the container is an object.

    Returns:
        The new document text; every byte outside the insertion is unchanged.

    Raises:
        ValueError: not strict JSON, or ``path`` is not a container of the right kind.
    """
    root = parse(text)
    node = find(root, path)
    if node is None or node.kind == "scalar" or (node.kind == "object") != (key is not None):
        raise ValueError(f"no container at {path!r}")
    unit = _unit(text, root)
    multiline = "\n" in text[root.start : root.end] or (root is node and not node.children)
    member = "" if key is None else json.dumps(key, ensure_ascii=False) + ": "
    if node.children:
        first = node.key_starts[0] if key is not None else node.children[0].start
        last_end = node.children[-1].end
        if "\n" in text[node.start : first]:
            indent = _line_indent(text, first)
            piece = ",\n" + indent + member + _render(value, indent, unit, True)
        else:
            piece = ", " + member + _render(value, "", unit, False)
        return text[:last_end] + piece + text[last_end:]
    outer = _line_indent(text, node.start)
    if multiline:
        indent = outer + unit
        inner = "\n" + indent + member + _render(value, indent, unit, True) + "\n" + outer
    else:
        inner = member + _render(value, "", unit, False)
    return text[: node.start + 1] + inner + text[node.end - 1 :]


def remove(text: str, path: tuple[str | int, ...]) -> str:
    """Remove the member or element at ``path`` (the inverse of :func:`insert`).

    Returns:
        The new document text.

    Raises:
        ValueError: not strict JSON, or nothing at ``path``.
    """
    root = parse(text)
    parent = find(root, path[:-1])
    step = path[-1]
    if parent is None or find(root, path) is None:
        raise ValueError(f"nothing at {path!r}")
    if isinstance(step, str):
        index = len(parent.keys) - 1 - parent.keys[::-1].index(step)
        starts = parent.key_starts
    else:
        index = step
        starts = [child.start for child in parent.children]
    child = parent.children[index]
    if len(parent.children) == 1:
        return text[: parent.start + 1] + text[parent.end - 1 :]
    if index > 0:
        return text[: parent.children[index - 1].end] + text[child.end :]
    return text[: starts[0]] + text[starts[1] :]
