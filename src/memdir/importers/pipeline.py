"""The importers' shared steps: parse → map → plan. Writing is the store's (``store.bulk``).

Each source module turns another tool's files into a stream of :class:`Item` values, one per
thing it found: a mapped :class:`~memdir.kernel.base.model.Record` ready to write, a refusal (an
``untrusted`` origin, say) or a skip (something the reader did not understand). Items are
yielded one at a time so a large source is never held in memory.

Every mapped record has origin ``import``, ``source.channel: import``, ``source.format`` (the
``--from`` name), ``source.file`` (the path inside the imported folder) and the place in it
(``line``, ``row`` or ``key``). Its id is derived from the source and the belief (not minted
at random), so importing the same source twice finds the records already there and adds
nothing. The time part of the id is the observed date, so ids still sort by time.

Imports: standard library, PyYAML (lazily), and ``memdir.kernel`` / ``memdir.records``.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memdir.kernel.base.clock import now_iso, today_iso
from memdir.kernel.base.ids import CROCKFORD, KIND_PREFIX
from memdir.kernel.base.model import Record
from memdir.kernel.lang.redact import strip_private
from memdir.kernel.lang.text import needle_tags, normalized_text, truncate
from memdir.kernel.storage.lifecycle import MAX_TEXT_CHARS

DATE = re.compile(r"\b(\d{4}-\d{2}-\d{2})\b")
MAX_FILE_BYTES = 8 * 1024 * 1024
"""A single Markdown or JSON file larger than this is skipped, not read whole."""


@dataclass(frozen=True, slots=True)
class Item:
    """One thing a reader found: a record to write, or why nothing is written for it.

    ``record`` is ``None`` for a refusal (``skipped`` False: policy said no, e.g. an
    ``untrusted`` origin) or a skip (``skipped`` True: the reader did not understand it).
    ``evidence`` is set instead of ``record`` for what is evidence, not belief:
    ``{"log": "actions" | "journal", "day": "YYYY-MM-DD", "row": {...}}`` for a line of
    memdir's action log or journal, ``{"log": "anatomy", "row": {"path", "description"}}``
    for a file of the project's map.
    """

    place: str  # "cerebrum.md:12", "facts.db#row 4"
    record: Record | None = None
    why: str = ""
    skipped: bool = False
    evidence: dict[str, Any] | None = None


def refuse(place: str, why: str) -> Item:
    """Return an :class:`Item` refusing the thing at ``place`` for ``why``."""
    return Item(place, None, why)


def skip(place: str, why: str) -> Item:
    """Return an :class:`Item` saying the thing at ``place`` was not understood."""
    return Item(place, None, why, skipped=True)


def _encode(value: int, width: int) -> str:
    chars = []
    for _ in range(width):
        chars.append(CROCKFORD[value & 31])
        value >>= 5
    return "".join(reversed(chars))


def stable_id(kind: str, key: str, observed_at: str) -> str:
    """Return a memdir-shaped id for ``kind`` derived from ``key``, sortable by ``observed_at``.

    Args:
        kind: One of DESIGN §1's kinds.
        key: What identifies the belief in its source (format, file and text, or its id there).
        observed_at: A date or instant; its day sets the time part (today when unreadable).

    Returns:
        ``<prefix>-`` plus 14 Crockford characters, like :func:`memdir.kernel.base.ids.mint_id`.
    """
    day = DATE.search(observed_at or "")
    try:
        start = datetime.strptime(day.group(1) if day else today_iso(), "%Y-%m-%d")
    except ValueError:
        start = datetime.strptime(today_iso(), "%Y-%m-%d")
    digest = int.from_bytes(hashlib.sha256(key.encode("utf-8")).digest()[:8], "big")
    millis = int(start.replace(tzinfo=UTC).timestamp() * 1000) + digest % 86_400_000
    return f"{KIND_PREFIX[kind]}-{_encode(millis, 10)}{_encode(digest >> 40, 4)}"


def belief_key(fmt: str, kind: str, text: str) -> str:
    """Return the identity of a belief inside a source: format, kind and normalised text."""
    return f"{fmt}\n{kind}\n{normalized_text(text)}"


def observed_date(text: str) -> str | None:
    """Return the first ``YYYY-MM-DD`` in ``text`` that is a real date, or ``None``."""
    for match in DATE.finditer(text or ""):
        try:
            datetime.strptime(match.group(1), "%Y-%m-%d")
        except ValueError:
            continue
        return match.group(1)
    return None


def make_record(
    *,
    fmt: str,
    kind: str,
    text: str,
    key: str,
    file: str,
    place: dict[str, Any],
    status: str = "active",
    observed_at: str | None = None,
    importance: int = 5,
    aliases: Iterable[str] = (),
    tags: Iterable[str] = (),
    links: Iterable[str] = (),
    body: str = "",
    extra_source: dict[str, Any] | None = None,
    scope: str = "project",
    record_id: str | None = None,
    extra: tuple[tuple[str, str], ...] = (),
) -> Record | None:
    """Return the record an importer maps a belief to, or ``None`` when its text is empty.

    Private spans are dropped; a text longer than memdir's limit keeps its start as the text
    and the whole as the body. Secrets are not checked here: the write step refuses them.

    Args:
        fmt: The ``--from`` name.
        kind: The memdir kind.
        text: The belief.
        key: Its identity in the source (see :func:`stable_id`).
        file: The file it came from, relative to the imported folder.
        place: Where in the file: ``{"line": 12}``, ``{"row": 4}``, ``{"key": "f-1"}``.
        status: ``active`` or ``candidate``.
        observed_at: When it was observed; today when ``None``.
        importance: 1..10, clamped.
        aliases: Other words for it.
        tags: Labels; a needle tag the text starts with (``[决定] …``) is added.
        links: Ids of related records (already mapped).
        body: Longer prose.
        extra_source: More ``source`` keys (the id it had, its original origin).
        scope: The store's scope.
        record_id: The id to use; derived from ``key`` when ``None``.
        extra: Further front matter keys with raw YAML text (a bug's occurrences).
    """
    text = " ".join(strip_private(text).split())
    body = strip_private(body).strip()
    if not text:
        return None
    if len(text) > MAX_TEXT_CHARS:
        body = (text + "\n\n" + body).strip()
        text = truncate(text, 400)
    observed = observed_at or today_iso()
    now = now_iso()
    source: dict[str, Any] = {"channel": "import", "format": fmt, "file": file, **place}
    if extra_source:
        source.update(extra_source)
    source.setdefault("session", None)
    source.setdefault("journal", None)
    return Record(
        id=record_id or stable_id(kind, key, observed),
        kind=kind,
        text=text,
        status=status,
        origin="import",
        importance=max(1, min(10, int(importance))),
        aliases=_clean(aliases),
        tags=_clean((*tags, *needle_tags(text))),
        links=_clean(links),
        created_at=now,
        updated_at=now,
        observed_at=observed,
        source=source,
        scope=scope,
        body=body,
        extra=extra,
    )


def _clean(values: Iterable[str]) -> tuple[str, ...]:
    seen: dict[str, None] = {}
    for value in values:
        value = " ".join(strip_private(str(value)).split()).lstrip("#")
        if value and len(seen) < 64:
            seen.setdefault(value, None)
    return tuple(seen)


def read_text(path: Path) -> str | None:
    """Return a small text file's contents (BOM and CRLF tolerated), or ``None`` if too big."""
    if path.stat().st_size > MAX_FILE_BYTES:
        return None
    text = path.read_text(encoding="utf-8", errors="replace")
    return text.lstrip("\ufeff").replace("\r\n", "\n").replace("\r", "\n")


def front_matter(text: str) -> tuple[dict[str, Any], str, int]:
    """Return a Markdown file's front matter values, its body and the body's first line.

    Values are read as YAML one key at a time (a bad value keeps its raw text); dates stay
    strings. A file without front matter returns ``({}, text, 1)``.
    """
    import yaml

    from memdir.kernel.storage.frontmatter import segment, split

    parts = split(text)
    if not parts.has_front:
        return {}, text, 1
    values: dict[str, Any] = {}
    segments = segment(parts.front)
    for key in segments.order:
        raw = segments.entries[key].raw
        try:
            value = yaml.load(raw, Loader=_loader())  # noqa: S506 - strings-only safe loader
        except yaml.YAMLError:
            value = raw.strip()
        values[key] = value
    return values, parts.body, len(parts.front) + 3


_LOADER: Any = None


def _loader() -> Any:
    """Return a safe YAML loader that keeps dates and times as strings."""
    global _LOADER
    if _LOADER is None:
        import yaml

        class Loader(yaml.SafeLoader):
            pass

        Loader.add_constructor(
            "tag:yaml.org,2002:timestamp",
            lambda loader, node: str(node.value),
        )
        _LOADER = Loader
    return _LOADER


def as_list(value: Any) -> list[str]:
    """Return a front matter value as a list of strings (a comma list, a list, or nothing)."""
    if value is None or value == "":
        return []
    if isinstance(value, list):
        return [str(v) for v in value if v is not None and str(v).strip()]
    return [part.strip() for part in str(value).strip("[]").split(",") if part.strip()]


def as_importance(value: Any, default: int = 5) -> int:
    """Return ``value`` as an importance 1..10 (a 0..1 float is scaled), else ``default``."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return default
    if 0 < number <= 1 and not float(number).is_integer():
        number *= 10
    return max(1, min(10, round(number)))
