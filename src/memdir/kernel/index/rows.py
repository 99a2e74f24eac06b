"""What every index backend shares: a file's stat, a record's indexed document and columns.

A backend (SQLite here, PostgreSQL in :mod:`memdir.pgindex`) stores these values; computing
them in one place is what makes two backends index a store the same way.

Imports: standard library only.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from memdir.kernel.lang.text import index_text

TYPE_CHECKING = False  # the hook path never imports typing or dataclasses (start-up cost)
if TYPE_CHECKING:
    from typing import Any

    from memdir.kernel.base.model import Record
    from memdir.kernel.base.validity import Served

BODY_LINK = re.compile(r"\[\[([A-Za-z0-9][A-Za-z0-9._-]{0,127})\]\]")
"""A ``[[id]]`` link in a record's body."""
RECORD_COLUMNS = ("text", "aliases", "tags", "body")
"""A record's full-text columns, in the order of :data:`.recall.COLUMN_WEIGHTS`."""
TURN_COLUMNS = ("text", "date", "context")
"""The full-text columns of a journal turn (its words and speaker, its month, its neighbours)."""


class FileStat:
    """What the index remembers of a record file's stat, to notice changes."""

    __slots__ = ("ino", "mtime_ns", "size")

    def __init__(self, mtime_ns: int, size: int, ino: int) -> None:
        self.mtime_ns = mtime_ns
        self.size = size
        self.ino = ino

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FileStat) and (self.mtime_ns, self.size, self.ino) == (
            other.mtime_ns,
            other.size,
            other.ino,
        )

    def __hash__(self) -> int:
        return hash((self.mtime_ns, self.size, self.ino))

    @classmethod
    def of(cls, path: Path) -> FileStat:
        """Return the stat of ``path``."""
        st = path.stat()
        return cls(st.st_mtime_ns, st.st_size, st.st_ino)


def record_doc(record: Record) -> dict[str, Any]:
    """Return the JSON document the index keeps for a record (its ``--json`` form plus extras)."""
    doc = record.to_json()
    if record.extra:
        doc["extra"] = [list(pair) for pair in record.extra]
    return doc


def doc_record(doc: dict[str, Any]) -> Record:
    """Rebuild a :class:`Record` from :func:`record_doc` output."""
    from memdir.kernel.base.model import Record  # only callers above the hook path build records

    fields = {k: v for k, v in doc.items() if k not in {"extra"}}
    for key in ("aliases", "tags", "links"):
        fields[key] = tuple(fields.get(key) or ())
    fields["extra"] = tuple(tuple(pair) for pair in doc.get("extra", ()))
    return Record(**fields)


def record_columns(record: Record) -> tuple[str, str, str, str]:
    """Return a record's index terms per full-text column (:data:`RECORD_COLUMNS`).

    Each is a space-separated string of terms already normalised and stemmed
    (:func:`memdir.kernel.lang.text.index_text`); its length is BM25's |D|.
    """
    return (
        index_text(record.text),
        index_text(*record.aliases),
        index_text(*record.tags),
        index_text(record.body),
    )


def record_links(record: Record) -> list[tuple[str, str]]:
    """Return ``(dst, via)`` for each link out of ``record``: front matter, then ``[[id]]``s."""
    targets = {(dst, "links") for dst in record.links}
    targets |= {(m.group(1), "body") for m in BODY_LINK.finditer(record.body)}
    return [(dst, via) for dst, via in sorted(targets) if dst != record.id]


def turn_terms(text: str, at: str) -> set[str]:
    """Return the distinct terms a turn adds to the journal's term frequencies (text and month)."""
    from memdir.kernel.lang.text import month_words, terms

    return {*terms(text), *terms(month_words(at))}


SERVED_COLUMNS = ("project", "valid_start", "valid_end", "by_time", "value_key")
"""The record columns the read filter's ``WHERE`` reads (:func:`served_where`), beside
``status`` and ``scope``."""


def served_columns(doc: dict[str, Any]) -> tuple[str | None, str | None, str | None, int, str]:
    """Return a record document's :data:`SERVED_COLUMNS` values.

    Each is derived from the one read filter's own functions in
    :mod:`memdir.kernel.base.validity` (``scope_columns``, ``bounds``, ``by_time``) and the
    tombstone key (:func:`memdir.kernel.base.valuekey.value_key`), so the query and
    :func:`~memdir.kernel.base.validity.served` decide alike.
    """
    from memdir.kernel.base import validity
    from memdir.kernel.base.valuekey import value_key

    start, end = validity.bounds(doc)
    return (
        validity.scope_columns(doc)[1],
        validity.bound_text(start),
        validity.bound_text(end),
        int(validity.by_time(doc)),
        value_key(str(doc.get("text") or "")),
    )


def served_where(
    served: Served, *, table: str = "", mark: str = "?", keys_in: str = ""
) -> tuple[str, list[Any]]:
    """Return ``(" AND …", params)``: the read filter ``served`` as a query's conditions.

    The same decision as :func:`memdir.kernel.base.validity.served`, on the columns
    :func:`served_columns` fills: the status (or retired by time, when asking about the past),
    the scope, the project (a record naming none belongs to the store), the valid time
    (``valid_start <= at < valid_end``, open ends pass; unless ``served.timed`` is false) and
    no tombstoned value.

    Args:
        served: The filter.
        table: Prefix for the column names (``"r."``).
        mark: The backend's placeholder (``?`` for SQLite, ``%s`` for PostgreSQL).
        keys_in: How the backend tests a value against the list of tombstoned keys, with
            ``{col}`` and ``{mark}`` in it (default: SQLite's ``json_each`` over one JSON
            array parameter).
    """
    from memdir.kernel.base.clock import utc_now
    from memdir.kernel.base.validity import bound_text

    t = table
    statuses = list(served.statuses)
    status = f"{t}status IN ({','.join([mark] * len(statuses))})" if statuses else "0 = 1"
    if served.past:
        status = f"({status} OR {t}by_time = 1)"
    where = f" AND {status}"
    params: list[Any] = list(statuses)
    if served.scope is not None:
        where += f" AND {t}scope = {mark}"
        params.append(served.scope)
    if served.project is not None:
        where += f" AND ({t}project IS NULL OR {t}project = {mark})"
        params.append(served.project)
    if served.timed:
        at = bound_text(served.at or utc_now())
        where += f" AND ({t}valid_start IS NULL OR {t}valid_start <= {mark})"
        where += f" AND ({t}valid_end IS NULL OR {mark} < {t}valid_end)"
        params += [at, at]
    if served.withheld:
        template = keys_in or "{col} NOT IN (SELECT value FROM json_each({mark}))"
        where += " AND " + template.format(col=f"{t}value_key", mark=mark)
        keys = sorted(served.withheld)
        params.append(json.dumps(keys) if not keys_in else keys)
    return where, params
