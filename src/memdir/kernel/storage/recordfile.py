"""Record files as records: front matter values to a :class:`Record` and back.

:func:`build_record` turns key values (from canonical JSON lines or from YAML) into a record,
applying DESIGN §3's policy for what people write by hand: a missing ``id`` comes from the file
name, a missing ``kind`` from the folder, a missing ``text`` from ``title`` or the first body
line, bad numbers fall back to defaults. Each repair is a warning that ``memdir health``
shows; what cannot be repaired (no text, an unknown kind or status, a refused origin) raises
:class:`RecordParseError` and the file is quarantined, never dropped or rewritten.

:func:`read_canonical` reads memdir's own files with the standard library alone (the hook
path); :func:`dump` writes them. Imports: standard library only.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePath
from typing import Any

from memdir.kernel.base.clock import parse_instant
from memdir.kernel.base.errors import RecordParseError, UsageError
from memdir.kernel.base.ids import SAFE_ID
from memdir.kernel.base.model import (
    ACCEPTED_ORIGINS,
    DEFAULT_CONFIDENCE,
    DEFAULT_IMPORTANCE,
    FIELD_ORDER,
    KINDS,
    SCOPES,
    STATUSES,
    UNSET_OMITTED,
    Record,
)
from memdir.kernel.storage.frontmatter import (
    FENCE,
    dump_value,
    extra_problem,
    parse_json_value,
    segment,
    split,
)

_NULLS = {""}
"""Strings that mean "no value". YAML's bare ``null``/``~`` already arrive as ``None``."""
_LIST_KEYS = ("aliases", "tags", "links")
_OPTIONAL_TEXT_KEYS = ("supersedes", "superseded_by", "reason")
_TEXT_KEYS = ("created_at", "updated_at", "observed_at")


@dataclass(frozen=True, slots=True)
class Problem:
    """A finding about one record file, for ``memdir health``."""

    level: str  # "error" (quarantined) or "warning" (used, with a repair)
    code: str  # stable slug: "duplicate_key", "no_text", "bad_importance", …
    message: str


@dataclass(frozen=True, slots=True)
class Parsed:
    """A record read from a file, with the warnings its reading produced."""

    record: Record
    warnings: tuple[Problem, ...]
    canonical: bool  # the file is exactly what :func:`dump` would write


def _as_list(key: str, value: Any, warnings: list[Problem]) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        if value.strip() in _NULLS:
            return ()
        items: list[Any] = value.split(",")
        warnings.append(Problem("warning", f"bad_{key}", f"{key} is a string, read as a list"))
    elif isinstance(value, list | tuple):
        items = list(value)
    else:
        warnings.append(Problem("warning", f"bad_{key}", f"{key} is not a list; ignored"))
        return ()
    out: list[str] = []
    for item in items:
        if isinstance(item, list | dict) or item is None:
            continue
        text = str(item).strip()
        if key == "tags":
            text = text.lstrip("#").strip()
        if text and text not in out:
            out.append(text)
    return tuple(out)


def _as_int(value: Any, warnings: list[Problem]) -> int:
    try:
        number = int(str(value).strip())
    except (TypeError, ValueError):
        warnings.append(
            Problem("warning", "bad_importance", f"importance {value!r} is not 1..10; using 5")
        )
        return DEFAULT_IMPORTANCE
    if not 1 <= number <= 10:
        warnings.append(
            Problem("warning", "bad_importance", f"importance {number} clamped to 1..10")
        )
        return min(max(number, 1), 10)
    return number


def _as_confidence(value: Any, warnings: list[Problem]) -> float:
    try:
        number = float(str(value).strip())
    except (TypeError, ValueError):
        number = float("nan")
    if not 0.0 <= number <= 1.0:
        warnings.append(
            Problem("warning", "bad_confidence", f"confidence {value!r} is not 0..1; using 1.0")
        )
        return DEFAULT_CONFIDENCE
    return number


def _optional_text(value: Any) -> str | None:
    if value is None:
        return None
    text = str(value).strip() if not isinstance(value, str) else value
    return None if text.strip() in _NULLS else text


def _first_line(body: str) -> str:
    for line in body.splitlines():
        stripped = line.strip().lstrip("#").strip()
        if stripped:
            return stripped
    return ""


def _required_choice(key: str, value: Any, choices: tuple[str, ...], fallback: str | None) -> str:
    text = None if value is None else str(value).strip()
    if not text:
        if fallback is None:
            raise RecordParseError(f"missing {key}")
        return fallback
    if text not in choices:
        raise RecordParseError(f"{key} {text!r} is not one of {', '.join(choices)}")
    return text


def build_record(
    values: dict[str, Any],
    *,
    body: str,
    path: PurePath | None,
    extra: tuple[tuple[str, str], ...] = (),
    default_scope: str = "project",
    warnings: list[Problem] | None = None,
) -> Record:
    """Return the :class:`Record` that front matter ``values`` describe.

    Args:
        values: Key to value, values already decoded (JSON values, or strings and lists of
            strings from the tolerant YAML reader).
        body: The text after the closing fence.
        path: The file, for the id and kind fallbacks; ``None`` when there is no file.
        extra: Unknown keys with their raw text, kept for the rewrite.
        default_scope: The store's scope, for files that do not say.
        warnings: Receives a :class:`Problem` for every repair made.

    Raises:
        RecordParseError: the values cannot make a record (no text, bad id, unknown kind or
            status, refused or unknown origin). The message names the key.
    """
    problems = warnings if warnings is not None else []
    record_id = _optional_text(values.get("id"))
    if record_id is None and path is not None:
        record_id = path.stem
        problems.append(Problem("warning", "no_id", "no id; using the file name"))
    if record_id is None or not SAFE_ID.match(record_id.strip()):
        raise RecordParseError(f"id {record_id!r} is missing or not a valid record id")
    record_id = record_id.strip()
    if path is not None and path.stem != record_id:
        problems.append(
            Problem(
                "warning",
                "id_mismatch",
                f"the id {record_id} differs from the file name {path.name}; rename one of them",
            )
        )
    folder = path.parent.name if path is not None else None
    kind = _required_choice("kind", values.get("kind"), KINDS, folder if folder in KINDS else None)
    status = _required_choice("status", values.get("status"), STATUSES, "active")
    origin_value = values.get("origin")
    origin = _required_choice(
        "origin", origin_value, (*ACCEPTED_ORIGINS, "untrusted", "system"), "import"
    )
    if origin not in ACCEPTED_ORIGINS:
        raise RecordParseError(f"origin {origin!r} is refused by policy")
    text = values.get("text")
    if not isinstance(text, str) or not text.strip():
        fallback = values.get("title")
        text = fallback if isinstance(fallback, str) and fallback.strip() else _first_line(body)
        if not text:
            raise RecordParseError("missing text (no text, no title and an empty body)")
        problems.append(Problem("warning", "no_text", "no text key; using the title or first line"))
    scope_value = values.get("scope")
    scope = scope_value if scope_value in SCOPES else default_scope
    source = values.get("source")
    if not isinstance(source, dict):
        if source not in (None, "", "null"):
            problems.append(Problem("warning", "bad_source", "source is not a mapping; ignored"))
        source = {}
    for key in ("created_at", "updated_at", "observed_at", "valid_from", "valid_until"):
        stamp = _optional_text(values.get(key))
        if stamp and not _is_instant(stamp):
            problems.append(
                Problem(
                    "warning",
                    "bad_timestamp",
                    f"{key} {stamp[:40]!r} is not an ISO-8601 time; the record sorts as undated",
                )
            )
    return Record(
        id=record_id,
        kind=kind,
        text=text,
        status=status,
        origin=origin,
        importance=_as_int(values["importance"], problems)
        if values.get("importance") not in (None, "")
        else DEFAULT_IMPORTANCE,
        confidence=_as_confidence(values["confidence"], problems)
        if values.get("confidence") not in (None, "")
        else DEFAULT_CONFIDENCE,
        aliases=_as_list("aliases", values.get("aliases"), problems),
        tags=_as_list("tags", values.get("tags"), problems),
        links=_as_list("links", values.get("links"), problems),
        supersedes=_optional_text(values.get("supersedes")),
        superseded_by=_optional_text(values.get("superseded_by")),
        created_at=_optional_text(values.get("created_at")) or "",
        updated_at=_optional_text(values.get("updated_at")) or "",
        observed_at=_optional_text(values.get("observed_at")) or "",
        valid_from=_optional_text(values.get("valid_from")),
        valid_until=_optional_text(values.get("valid_until")),
        source=dict(source),
        scope=scope,
        project=_optional_text(values.get("project")),
        reason=_optional_text(values.get("reason")),
        body=body,
        extra=extra,
    )


ADVISORY = frozenset({"id_mismatch", "bad_timestamp"})
"""Problems of a record's meaning, not its bytes: a canonical file can have them, no rewrite
fixes them (only the person can), and ``memdir health`` names them."""


def _is_instant(text: str) -> bool:
    """Whether ``text`` is an ISO-8601 date or time (any offset, future allowed)."""
    try:
        parse_instant(text, allow_future=True)
    except UsageError:
        return False
    return True


def dump(record: Record) -> str:
    """Return the canonical file text of ``record`` (LF line ends, no BOM).

    Unknown keys kept in ``record.extra`` follow the known ones with their raw text unchanged.

    Raises:
        UsageError: a value cannot be written (a lone surrogate, a non-finite number), or an
            unknown key would add or override a field (:func:`extra_problem`).
    """
    lines = [FENCE]
    for key in FIELD_ORDER:
        value = getattr(record, key)
        if value is None and key in UNSET_OMITTED:
            continue
        lines.append(f"{key}: {dump_value(list(value) if isinstance(value, tuple) else value)}")
    for key, raw in record.extra:
        problem = extra_problem(key, raw) or ("a known key" if key in FIELD_ORDER else None)
        if problem:
            raise UsageError(f"{record.id}: {problem}")
        separator = "" if not raw or raw[0] in " \n" else " "
        lines.append(f"{key}:{separator}{raw}")
    lines.append(FENCE)
    body = record.body
    if body and not body.endswith("\n"):
        body += "\n"
    return "\n".join(lines) + "\n" + body


def read_canonical(
    text: str, path: PurePath | None, default_scope: str = "project"
) -> Parsed | None:
    """Read a record file exactly as :func:`dump` writes it; else return ``None``.

    Unknown keys are kept raw. Anything else (duplicate keys, a BOM, CRLF, a missing fence,
    YAML that is not one JSON value per line, a repair of any kind) returns ``None``, and the
    tolerant codec takes over.

    Raises:
        RecordParseError: the values are canonical but cannot make a record.
    """
    parts = split(text)
    if not parts.has_front or not parts.closed or parts.had_bom or parts.crlf:
        return None
    segments = segment(parts.front)
    if segments.duplicates:
        return None
    values: dict[str, Any] = {}
    extra: list[tuple[str, str]] = []
    for key in segments.order:
        raw = segments.entries[key].raw
        if key in FIELD_ORDER:
            ok, value = parse_json_value(raw)
            if not ok:
                return None
            values[key] = value
        else:
            extra.append((key, raw))
    warnings: list[Problem] = []
    record = build_record(
        values,
        body=parts.body,
        path=path,
        extra=tuple(extra),
        default_scope=default_scope,
        warnings=warnings,
    )
    if any(w.code not in ADVISORY for w in warnings) or dump(record) != text:
        return None  # anything short of memdir's own bytes goes to the tolerant reader
    return Parsed(record, tuple(warnings), canonical=True)
