"""The index interface: every query memdir makes of its index, as one typing Protocol.

:class:`memdir.kernel.index.Index` (SQLite, the default, local to each machine) and
:class:`memdir.pgindex.PostgresIndex` (a team's shared PostgreSQL) implement it; nothing
outside an index backend runs SQL against the index. Ranking (:mod:`memdir.kernel.index.recall`)
works on the plain rows these methods return, so it is the same for every backend.

The index is derived data: records and the journal are the truth, and any machine rebuilds
its index from them (``memdir reindex``).

Rows:

- :data:`RecordRow` ``(rowid, doc_json, importance, updated_at, tokens, text, aliases, tags,
  body)``: the four last are the record's index terms per column (space-separated, already
  normalised and stemmed, :func:`memdir.kernel.index.rows.record_columns`); ``tokens`` is the
  number of terms in all four; ``rowid`` orders ties (older rows first).
- :data:`TurnRow` ``(rowid, file, line, offset, session, at, who, text, rank)``: ``rank`` is
  FTS5's ``bm25()`` over the turn's three columns (lower is better; negative).

Imported only for type checking by the kernel (the hook path never imports ``typing``).
"""

from __future__ import annotations

from collections.abc import Iterable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, Protocol

from memdir.kernel.base.model import Record
from memdir.kernel.base.validity import Served
from memdir.kernel.index.rows import FileStat

RecordRow = tuple[int, str, int, str, int, str, str, str, str]
TurnRow = tuple[int, str, int, int, str, str, str, str, float]
Problems = list[dict[str, str]]


class IndexBackend(Protocol):
    """Every query memdir makes of its index (see the module docstring for the row shapes)."""

    store: Path
    read_only: bool

    def close(self) -> None:
        """Release the connection."""

    def write(self) -> AbstractContextManager[None]:
        """Run the body in one transaction (a savepoint when one is open); roll back on error.

        A failed ``COMMIT`` is rolled back too: no transaction is left open for the next write.
        """

    # --- records: writes (inside write()) ------------------------------------------------

    def upsert_record(self, record: Record, path: str, stat: FileStat, problems: Problems) -> None:
        """Index ``record`` read from ``path``; a second file with the same id is quarantined."""

    def quarantine(self, path: str, stat: FileStat, problems: Problems) -> None:
        """Mark ``path`` unreadable: out of recall, listed by ``health``."""

    def forget_path(self, path: str) -> None:
        """Drop everything indexed from ``path``."""

    def clear(self) -> None:
        """Empty every table (``reindex`` fills them again in the same transaction)."""

    def scrub(self) -> None:
        """Physically remove deleted text from the backend's files (``purge``)."""

    # --- records: reads ------------------------------------------------------------------

    def file_stats(self) -> dict[str, tuple[FileStat, str]]:
        """Return every known record file's last stat and state (``ok``/``quarantined``)."""

    def file_problems(self) -> list[tuple[str, str, Problems]]:
        """Return ``(path, state, problems)`` for every file that has any problem."""

    def is_empty(self) -> bool:
        """Whether the index knows no record and no record file (never built)."""

    def get_doc(self, record_id: str) -> dict[str, Any] | None:
        """Return the indexed document of ``record_id``, or ``None``."""

    def get_path(self, record_id: str) -> str | None:
        """Return the store-relative file of ``record_id``, or ``None``."""

    def list_docs(
        self,
        *,
        kinds: Iterable[str] = (),
        statuses: Iterable[str] = (),
        limit: int | None = None,
        newest_first: bool = True,
        served: Served | None = None,
    ) -> list[dict[str, Any]]:
        """Return records filtered by kind and status, by ``updated_at`` then id.

        ``served``: only what that read filter serves, decided in the query (in place of
        ``statuses``): :func:`memdir.kernel.index.rows.served_where`.
        """

    def count_by(self, column: str, *, status: str | None = None) -> dict[str, int]:
        """Return record counts grouped by ``kind``, ``status`` or ``origin``."""

    def links_of(self, record_id: str) -> list[tuple[str, str, str]]:
        """Return ``(src, dst, via)`` for every link into or out of ``record_id``."""

    def all_links(self) -> list[tuple[str, str, str]]:
        """Return every link as ``(src, dst, via)``."""

    def record_statuses(self) -> dict[str, str]:
        """Return id → status for every indexed record."""

    def record_texts(self, *, statuses: Iterable[str] = ()) -> list[tuple[str, str, str, str]]:
        """Return ``(id, kind, status, text)`` of every record (of these statuses), by rowid."""

    def record_frequencies(self, terms: list[str]) -> dict[str, int]:
        """Return how many records hold each term (a 1-character CJK term: as a prefix)."""

    def record_totals(self) -> tuple[int, int]:
        """Return ``(records, terms in all of them)``: BM25's N and N × avgdl."""

    def record_pool(
        self,
        terms: list[str],
        kinds: list[str],
        statuses: list[str],
        size: int,
        served: Served | None = None,
    ) -> list[RecordRow]:
        """Return the ``size`` records of these kinds and statuses holding any term, best first.

        Best by FTS5's ``bm25()`` with column weights 4, 3, 2, 1 (ties: rowid). ``served`` puts
        the read filter in the query (in place of ``statuses``), so nothing it leaves out takes
        a place in the pool.
        """

    def similar_candidates(
        self, terms: list[str], text: str, statuses: list[str], size: int
    ) -> list[dict[str, Any]]:
        """Return the documents a near-duplicate check compares ``text`` with.

        With terms, the ``size`` best matches by BM25; without (emoji, symbols), the records
        whose text is exactly ``text``.
        """

    # --- journal ------------------------------------------------------------------------

    def journal_position(self, name: str) -> tuple[int, int, int] | None:
        """Return ``(offset, inode, lines)`` indexed so far of ``journal/<name>``, or ``None``."""

    def set_journal_position(self, name: str, offset: int, ino: int, lines: int) -> None:
        """Record how far ``journal/<name>`` is indexed (inside write())."""

    def drop_journal_file(self, name: str) -> None:
        """Forget every turn of ``journal/<name>`` and its term counts (inside write())."""

    def recent_turns(self, session: str, count: int) -> list[tuple[int, str]]:
        """Return the last ``count`` turns of ``session`` as ``(rowid, text)``, oldest first."""

    def add_turn(
        self,
        file: str,
        line: int,
        offset: int,
        length: int,
        session: str,
        at: str,
        who: str,
        text: str,
        ref: str | None,
    ) -> int:
        """Store one journal turn's row (inside write()); return its rowid."""

    def add_turn_terms(
        self,
        inserts: list[tuple[int, str, str, str]],
        updates: list[tuple[str, int]],
        frequencies: dict[str, int],
    ) -> None:
        """Index turns' full-text columns (inside write()).

        ``inserts``: ``(rowid, text, date, context)``; ``updates``: ``(context, rowid)`` of
        earlier turns that gained neighbours; ``frequencies``: term → turns added holding it.
        """

    def turn_frequencies(self, terms: list[str]) -> dict[str, int]:
        """Return how many journal turns hold each term in their text or month."""

    def turn_pool(
        self,
        terms: list[str],
        weights: tuple[float, float, float],
        window: int,
        session: str | None,
        size: int,
    ) -> list[TurnRow]:
        """Return the ``size`` turns holding any term with the best ``bm25()``.

        ``window`` > 0 ranks only the ``window`` newest matching turns; ``session`` filters.
        """

    def turn_neighbours(self, rowids: list[int], spread: int) -> dict[int, list[str]]:
        """Return the texts of the ``spread`` turns on each side of each turn, same session.

        Keys are the given rowids (unknown ones left out); values the neighbours' texts,
        earlier turns first. For an optional semantic re-rank (:func:`~memdir.kernel.index.
        recall.search_turns`).
        """

    def has_turn_ref(self, ref: str) -> bool:
        """Whether an imported turn with this source id is indexed."""

    def turn_count(self) -> int:
        """Return how many journal turns are indexed."""

    def unanswered_turns(
        self, agents: tuple[str, ...]
    ) -> list[tuple[str, str, str, str, str, int]]:
        """Return, per session, its last non-agent turn that no agent turn followed.

        Rows ``(session, at, who, text, file, line)``, newest ``at`` first.
        """

    # --- settings ----------------------------------------------------------------------

    def get_meta(self, key: str) -> str | None:
        """Return a meta value, or ``None``."""

    def set_meta(self, key: str, value: str) -> None:
        """Set a meta value."""
