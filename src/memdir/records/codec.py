"""The tolerant record reader: whatever people and other tools write, read as well as it can be.

memdir's own files are canonical and read by :func:`memdir.kernel.storage.recordfile.read_canonical`
without YAML. Everything else comes here (DESIGN §3):

1. The front matter is cut into top-level entries
(:func:`memdir.kernel.storage.frontmatter.segment`),
   which survives a BOM, CRLF, a missing closing fence and duplicated keys (the last wins; a
   ``duplicate_key`` warning names the key, and the next write rewrites the file canonically).
2. Each entry is read on its own: as a JSON value if it is one, else with a strict YAML loader
   in which *every* scalar is a string (no ``yes``→True, ``null``→None, ``2026-05-24``→date,
   ``10:00``→600; case B07/B09). An entry that is not valid YAML keeps its raw text as its value
   (a ``yaml_fallback`` warning), so one bad line never costs the others.
3. :func:`memdir.kernel.storage.recordfile.build_record` applies the schema; what it cannot repair
   raises :class:`RecordParseError` and the caller quarantines the file.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path, PurePath
from typing import Any

from memdir.kernel.base.errors import RecordParseError
from memdir.kernel.base.model import FIELD_ORDER
from memdir.kernel.storage.frontmatter import (
    MAX_VALUE_DEPTH,
    nesting_depth,
    parse_json_value,
    segment,
    split,
)
from memdir.kernel.storage.recordfile import Parsed, Problem, build_record, dump, read_canonical

_CONFLICT = re.compile(r"^(?:<{7}|>{7})(?: |$)", re.MULTILINE)


@cache
def _string_loader() -> type:
    """Return a safe YAML loader whose only implicit type is null: other scalars are strings.

    Built on first use, so commands that only meet memdir's canonical files never import YAML.
    """
    import yaml

    class StringLoader(yaml.SafeLoader):
        """A safe loader without implicit types except null."""

    StringLoader.yaml_implicit_resolvers = {}
    StringLoader.add_implicit_resolver(
        "tag:yaml.org,2002:null", re.compile(r"^(?:~|null|Null|NULL|)$"), ["~", "n", "N", ""]
    )
    return StringLoader


def _load_entry(key: str, raw: str) -> tuple[bool, Any]:
    ok, value = parse_json_value(raw)
    if ok:
        return True, value
    import yaml

    try:
        loaded = yaml.load(f"{key}:{raw}\n", Loader=_string_loader())  # noqa: S506 - a SafeLoader
    except (yaml.YAMLError, RecursionError):  # RecursionError: hand-written [[[[… (too deep)
        return False, raw.strip()
    if not isinstance(loaded, dict) or key not in loaded:
        return False, raw.strip()
    if nesting_depth(loaded[key]) > MAX_VALUE_DEPTH:
        return False, raw.strip()
    value = loaded[key]
    return True, "" if value is None else value


def parse(text: str, path: PurePath | None = None, default_scope: str = "project") -> Parsed:
    """Read one record file's text.

    Args:
        text: The whole file, decoded.
        path: Its store-relative path (``records/<kind>/<id>.md``) for the id/kind fallbacks.
        default_scope: The store's scope.

    Returns:
        :class:`Parsed` with the record and every warning (duplicate keys, repairs, fallbacks).

    Raises:
        RecordParseError: no front matter, or values that cannot make a record. The message
            says why; the caller quarantines the file.
    """
    fast = read_canonical(text, path, default_scope)
    if fast is not None:
        return fast
    parts = split(text)
    if not parts.has_front:
        raise RecordParseError("no front matter (the file must start with a --- line)")
    warnings: list[Problem] = []
    if not parts.closed:
        warnings.append(Problem("warning", "missing_fence", "front matter has no closing ---"))
    segments = segment(parts.front)
    for key in segments.duplicates:
        line = segments.entries[key].line
        warnings.append(
            Problem(
                "warning",
                "duplicate_key",
                f"key {key!r} appears more than once; the last one (line {line}) is used",
            )
        )
    values: dict[str, Any] = {}
    extra: list[tuple[str, str]] = []
    for key in segments.order:
        entry = segments.entries[key]
        if key not in FIELD_ORDER:
            extra.append((key, entry.raw))
            if key == "title":
                values["title"] = _load_entry(key, entry.raw)[1]
            continue
        ok, value = _load_entry(key, entry.raw)
        if not ok:
            warnings.append(
                Problem(
                    "warning",
                    "yaml_fallback",
                    f"key {key!r} is not valid YAML; its raw text is used",
                )
            )
        values[key] = value
    record = build_record(
        values,
        body=parts.body,
        path=path,
        extra=tuple(extra),
        default_scope=default_scope,
        warnings=warnings,
    )
    return Parsed(record, tuple(warnings), canonical=dump(record) == text)


def read_file(path: Path, rel: str, default_scope: str = "project") -> Parsed:
    """Read and :func:`parse` a record file.

    Raises:
        RecordParseError: the file is not UTF-8 text or cannot make a record.
        OSError: it cannot be read.
    """
    data = path.read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise RecordParseError(f"not UTF-8 text (byte {exc.start})") from exc
    if "\x00" in text:
        raise RecordParseError("binary content (NUL bytes)")
    if _CONFLICT.search(text):
        raise RecordParseError("unresolved git merge conflict markers (<<<<<<< / >>>>>>>)")
    return parse(text, PurePath(rel), default_scope)
