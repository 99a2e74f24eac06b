"""What every index backend shares: a file's stat, a record's indexed document and columns.

A backend (SQLite here, PostgreSQL in :mod:`memdir.pgindex`) stores these values; computing
them in one place is what makes two backends index a store the same way.

Imports: standard library only.
"""

from __future__ import annotations

import re
from pathlib import Path

from memdir.kernel.lang.text import index_text

TYPE_CHECKING = False  # the hook path never imports typing or dataclasses (start-up cost)
if TYPE_CHECKING:
    from typing import Any

    from memdir.kernel.base.model import Record

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


POSTING_WEIGHTS = (4, 3, 2, 1)
"""Weights of the record columns in a posting's count (:data:`.recall.COLUMN_WEIGHTS`, as ints)."""


def record_postings(columns: tuple[str, ...]) -> dict[str, int]:
    """Return each term of a record's columns with its count weighted by column.

    Args:
        columns: The record's index terms per column (:func:`record_columns`).

    Returns:
        term → Σ weight × occurrences over the four columns: the ``f`` BM25 reads for that term
        (exactly what :func:`memdir.kernel.index.recall.score_records` counts from the columns).
    """
    found: dict[str, int] = {}
    for weight, column in zip(POSTING_WEIGHTS, columns, strict=True):
        for term in column.split():
            found[term] = found.get(term, 0) + weight
    return found


def record_links(record: Record) -> list[tuple[str, str]]:
    """Return ``(dst, via)`` for each link out of ``record``: front matter, then ``[[id]]``s."""
    targets = {(dst, "links") for dst in record.links}
    targets |= {(m.group(1), "body") for m in BODY_LINK.finditer(record.body)}
    return [(dst, via) for dst, via in sorted(targets) if dst != record.id]


def turn_terms(text: str, at: str) -> set[str]:
    """Return the distinct terms a turn adds to the journal's term frequencies (text and month)."""
    from memdir.kernel.lang.text import month_words, terms

    return {*terms(text), *terms(month_words(at))}
