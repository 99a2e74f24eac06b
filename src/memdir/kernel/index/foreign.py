"""SQLite files that are not memdir's index: other tools' databases, a benchmark's baseline.

Other tools' databases are opened read-only; the baseline is a plain in-memory FTS5 table a
benchmark compares memdir's search with.

Importers read through :class:`ForeignDatabase` so that only the index package imports
``sqlite3`` (an import contract). Nothing here writes a file.

Imports: standard library only.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

ForeignError = sqlite3.Error
"""What opening or reading a foreign database raises (not a database, damaged, locked)."""


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


class ForeignDatabase:
    """Another tool's SQLite database, opened read-only. Use as a context manager.

    Raises:
        ForeignError: from the constructor when the file cannot be opened, and from any
            method when it is not a database or is damaged.
    """

    def __init__(self, path: Path) -> None:
        """Open ``path`` read-only (``mode=ro``); nothing is ever written to it."""
        self.path = path
        self._conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)

    def close(self) -> None:
        """Close the connection."""
        self._conn.close()

    def __enter__(self) -> ForeignDatabase:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def tables(self) -> list[str]:
        """Return the names of its tables (SQLite's own ``sqlite_*`` left out), sorted."""
        rows = self._conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' "
            "AND name NOT LIKE 'sqlite_%' ORDER BY name"
        )
        return [row[0] for row in rows]

    def columns(self, table: str) -> list[str]:
        """Return the column names of ``table``, in order."""
        return [row[1] for row in self._conn.execute(f"PRAGMA table_info({_quoted(table)})")]

    def rows(
        self, table: str, *, order_by: str | None = None, with_rowid: bool = False
    ) -> Iterator[dict[str, Any]]:
        """Yield each row of ``table`` as a dict (``rowid`` first when asked), streamed.

        ``order_by`` names one column to sort by; rows come in storage order otherwise.
        """
        sql = f"SELECT {'rowid, ' if with_rowid else ''}* FROM {_quoted(table)}"  # noqa: S608 - quoted names
        if order_by is not None:
            sql += f" ORDER BY {_quoted(order_by)}"
        cursor = self._conn.execute(sql)
        names = [d[0] for d in cursor.description]
        if with_rowid:  # SQLite may name the rowid after an INTEGER PRIMARY KEY column
            names = ["rowid", *self.columns(table)]
        for row in cursor:
            yield dict(zip(names, row, strict=False))


_WORD = re.compile(r"\w+")


class PlainTextSearch:
    """An in-memory FTS5 table (``unicode61``, no stemming): any-term BM25, nothing else.

    The baseline memdir's journal search is measured against (``memdir bench locomo``).
    """

    def __init__(self, texts: list[str]) -> None:
        """Index ``texts``; a hit is reported by its position in this list."""
        self._conn = sqlite3.connect(":memory:")
        self._conn.execute("CREATE VIRTUAL TABLE t USING fts5(text, tokenize='unicode61')")
        self._conn.executemany("INSERT INTO t (rowid, text) VALUES (?, ?)", list(enumerate(texts)))

    def search(self, words: list[str], k: int) -> list[int]:
        """Return the positions of the ``k`` best texts holding any of ``words`` (BM25)."""
        if not words:
            return []
        match = " OR ".join(_quoted(w) for w in words)
        rows = self._conn.execute(
            "SELECT rowid FROM t WHERE t MATCH ? ORDER BY bm25(t) LIMIT ?", (match, k)
        ).fetchall()
        return [int(r[0]) for r in rows]

    def scored(self, words: list[str], k: int) -> list[tuple[int, float]]:
        """Return the ``k`` best texts holding any of ``words`` as (position, ``-bm25()``).

        Used by ``memdir bench inject``, whose reference injects what passes a threshold.
        """
        if not words:
            return []
        match = " OR ".join(_quoted(w) for w in words)
        rows = self._conn.execute(
            "SELECT rowid, -bm25(t) FROM t WHERE t MATCH ? ORDER BY bm25(t) LIMIT ?", (match, k)
        ).fetchall()
        return [(int(r[0]), float(r[1])) for r in rows]

    def close(self) -> None:
        """Drop the table."""
        self._conn.close()
