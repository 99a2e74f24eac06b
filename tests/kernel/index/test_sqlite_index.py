"""The SQLite index's transactions: a failed COMMIT leaves nothing open; savepoints nest."""

import sqlite3
from pathlib import Path

import pytest

from memdir.kernel.base.model import Record
from memdir.kernel.index import FileStat, Index
from memdir.kernel.index import recall as R
from memdir.kernel.lang.text import fts_match, query_terms

STAT = FileStat(1, 1, 1)


def _record(n: int, text: str, body: str = "") -> Record:
    at = "2026-11-30T09:00:00Z"
    return Record(id=f"r{n}", kind="fact", text=text, body=body, created_at=at, updated_at=at)


def _ids_seen_by_another_connection(store: Path) -> list[str]:
    with sqlite3.connect(store / "index.sqlite") as other:
        return [row[0] for row in other.execute("SELECT id FROM records ORDER BY id")]


def _deferred_constraint(index: Index) -> None:
    """A table whose check runs at COMMIT: a dangling child row makes the COMMIT itself fail."""
    index._conn.execute("PRAGMA foreign_keys = ON")
    index._conn.execute("CREATE TABLE parent (id INTEGER PRIMARY KEY)")
    index._conn.execute(
        "CREATE TABLE child (p INTEGER REFERENCES parent (id) DEFERRABLE INITIALLY DEFERRED)"
    )


def test_a_failed_commit_is_rolled_back_and_the_next_write_commits(tmp_path: Path) -> None:
    with Index(tmp_path) as index:
        _deferred_constraint(index)

        def dangling() -> None:
            with index.write():
                index.upsert_record(_record(1, "lost"), "records/fact/r1.md", STAT, [])
                index._conn.execute("INSERT INTO child (p) VALUES (42)")  # no parent 42

        with pytest.raises(sqlite3.IntegrityError):
            dangling()
        assert not index.in_transaction  # nothing left open for the next write to join
        with index.write():
            index.upsert_record(_record(2, "committed"), "records/fact/r2.md", STAT, [])
        assert not index.in_transaction
        assert _ids_seen_by_another_connection(tmp_path) == ["r2"]


def test_a_failed_inner_write_undoes_only_its_own_changes(tmp_path: Path) -> None:
    with Index(tmp_path) as index:
        with index.write():
            index.upsert_record(_record(1, "outer"), "records/fact/r1.md", STAT, [])

            def inner() -> None:
                with index.write():
                    index.upsert_record(_record(2, "inner"), "records/fact/r2.md", STAT, [])
                    raise RuntimeError("inner step failed")

            with pytest.raises(RuntimeError):
                inner()
            assert index.in_transaction  # the outer transaction goes on
        assert _ids_seen_by_another_connection(tmp_path) == ["r1"]
        assert index.record_totals() == (1, 1)  # the inner row's statistics were undone too


def test_an_error_escaping_the_outer_write_undoes_every_step(tmp_path: Path) -> None:
    with Index(tmp_path) as index:

        def both() -> None:
            with index.write():
                index.upsert_record(_record(1, "outer"), "records/fact/r1.md", STAT, [])
                with index.write():
                    index.upsert_record(_record(2, "inner"), "records/fact/r2.md", STAT, [])
                raise RuntimeError("after both steps")

        with pytest.raises(RuntimeError):
            both()
        assert not index.in_transaction
        assert _ids_seen_by_another_connection(tmp_path) == []


def test_fts5_bm25_in_python_agrees_with_sqlite_s_bm25(tmp_path: Path) -> None:
    """A backend without FTS5 (PostgreSQL) picks its pool by :func:`recall.fts5_bm25`."""
    texts = [
        ("postgres is the team database", "we moved from mysql"),
        ("the cache is redis", "postgres holds the rest"),
        ("deploys run on fridays", ""),
        ("postgres postgres postgres", "database database"),
        ("lunch at noon", "the database team eats early"),
    ]
    with Index(tmp_path) as index:
        with index.write():
            for n, (text, body) in enumerate(texts):
                index.upsert_record(_record(n, text, body), f"records/fact/r{n}.md", STAT, [])
        terms = query_terms("postgres database")
        pool = index.record_pool(terms, [], ["active"], 10)
        expected = {
            row[0]: row[1]
            for row in index._conn.execute(
                "SELECT rowid, bm25(records_fts, 4, 3, 2, 1) FROM records_fts"
                " WHERE records_fts MATCH ?",
                (fts_match(terms),),
            )
        }
        freq = index.record_frequencies(terms)
        docs, total = index.record_totals()
        for row in pool:
            got = R.fts5_bm25(tuple(row[5:]), terms, freq, docs, total / docs, R.COLUMN_WEIGHTS)
            assert got == pytest.approx(expected[row[0]], rel=1e-9)
        assert len(pool) == 4  # "lunch at noon" has "database" in its body; fridays has none
