"""The read filter in the index query decides exactly as ``validity.served`` (issue 10).

Scope, project identity, valid time and tombstoned values are in the ``WHERE`` of both
backends (:func:`memdir.kernel.index.rows.served_where`); :func:`memdir.kernel.base.validity.
served` stays the one definition, and these tests prove the two agree on every combination of
a record's fields and a reader's filter, on SQLite and on a real PostgreSQL server. A pool is
then never thinned by what the filter leaves out.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memdir.kernel.base.model import Record
from memdir.kernel.base.validity import Served, served
from memdir.kernel.base.valuekey import value_key
from memdir.kernel.index import FileStat, Index
from memdir.kernel.index.interface import IndexBackend
from memdir.kernel.index.recall import recall

STAT = FileStat(1, 1, 1)
FROMS = (None, "2026-01-01", "2026-03-01T09:00:00+02:00", "not a date")
UNTILS = (None, "2026-02-01", "2026-06-01T00:00:00Z", "garbage")
OBSERVED = ("2025-12-01", "2026-04-01", "")
INSTANTS = (
    datetime(2025, 6, 1, tzinfo=UTC),
    datetime(2026, 1, 15, tzinfo=UTC),
    datetime(2026, 3, 1, 7, 0, tzinfo=UTC),  # the 09:00+02:00 start, exactly
    datetime(2026, 3, 1, 6, 59, 59, 999999, tzinfo=UTC),
    datetime(2026, 5, 1, tzinfo=UTC),
    datetime(2026, 6, 1, tzinfo=UTC),  # an end is exclusive
    datetime(2027, 1, 1, tzinfo=UTC),
)


def _records() -> list[Record]:
    combos = itertools.product(
        ("active", "candidate", "superseded", "rejected"),
        ("project", "user"),
        (None, "prj-aaaaaaaaaaaaaaaa", "prj-bbbbbbbbbbbbbbbb"),
        FROMS,
        UNTILS,
        OBSERVED,
        ("Alpha value is kept.", "Beta value is kept."),
    )
    out = []
    for n, (status, scope, project, start, end, seen, text) in enumerate(combos):
        if n % 5:  # every fifth combination: 461 records, every field value many times
            continue
        out.append(
            Record(
                id=f"f-{n:014d}",
                kind="fact",
                text=text,
                status=status,
                scope=scope,
                project=project,
                valid_from=start,
                valid_until=end,
                observed_at=seen,
                created_at="2026-01-01T00:00:00Z",
                updated_at="2026-01-01T00:00:00Z",
            )
        )
    return out


def _filters() -> Iterator[Served]:
    for scope, project, at, past, statuses, withheld, timed in itertools.product(
        (None, "project", "user"),
        (None, "", "prj-aaaaaaaaaaaaaaaa"),
        INSTANTS,
        (False, True),
        (("active",), ("active", "candidate")),
        (frozenset(), frozenset({value_key("alpha  VALUE is kept")})),
        (True, False),  # False: an export (every time)
    ):
        yield Served(
            scope=scope,
            project=project,
            at=at,
            past=past,
            statuses=statuses,
            withheld=withheld,
            timed=timed,
        )


def _fill(index: IndexBackend) -> list[dict[str, object]]:
    with index.write():
        for record in _records():
            index.upsert_record(record, f"records/fact/{record.id}.md", STAT, [])
    return index.list_docs()


def _agree(index: IndexBackend) -> int:
    docs = _fill(index)
    checked = 0
    for flt in _filters():
        wanted = {
            d["id"]
            for d in docs
            if served(
                d,
                scope=flt.scope,
                project=flt.project,
                at=flt.at,
                past=flt.past,
                statuses=flt.statuses,
                withheld=flt.withheld,
                timed=flt.timed,
            )
        }
        got = {d["id"] for d in index.list_docs(served=flt)}
        assert got == wanted, flt
        assert {d["id"] for d in index.list_docs(served=flt) if flt.admits(d)} == got
        checked += 1
    return checked


def test_sqlite_query_and_python_filter_agree_on_every_case(tmp_path: Path) -> None:
    with Index(tmp_path) as index:
        assert _agree(index) == 3 * 3 * len(INSTANTS) * 2 * 2 * 2 * 2


def test_postgres_query_and_python_filter_agree_on_every_case(tmp_path: Path, pg_uri: str) -> None:
    from memdir.pgindex import open_postgres

    index = open_postgres(tmp_path, pg_uri)
    try:
        assert _agree(index) == 3 * 3 * len(INSTANTS) * 2 * 2 * 2 * 2
    finally:
        index.close()


def _crowd(index: IndexBackend) -> None:
    """Sixty records of another project that match "gamma" far better than the one of ours."""
    with index.write():
        for n in range(60):
            theirs = Record(
                id=f"f-9{n:013d}",
                kind="fact",
                text=f"Gamma gamma gamma service {n} deploys gamma.",
                project="prj-bbbbbbbbbbbbbbbb",
                created_at="2026-01-01T00:00:00Z",
                updated_at="2026-01-01T00:00:00Z",
            )
            index.upsert_record(theirs, f"records/fact/{theirs.id}.md", STAT, [])
        ours = Record(
            id="f-00000000000001",
            kind="fact",
            text="The gamma release notes are written by hand and reviewed twice.",
            project="prj-aaaaaaaaaaaaaaaa",
            created_at="2026-01-01T00:00:00Z",
            updated_at="2026-01-01T00:00:00Z",
        )
        index.upsert_record(ours, f"records/fact/{ours.id}.md", STAT, [])


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_a_pool_is_never_thinned_by_what_the_filter_leaves_out(
    tmp_path: Path, backend: str, request: pytest.FixtureRequest
) -> None:
    if backend == "sqlite":
        index: IndexBackend = Index(tmp_path)
    else:
        from memdir.pgindex import open_postgres

        index = open_postgres(tmp_path, request.getfixturevalue("pg_uri"))
    try:
        _crowd(index)
        mine = Served(scope="project", project="prj-aaaaaaaaaaaaaaaa")
        found = [h.doc["id"] for h in recall(index, "gamma", limit=3, served=mine).hits]
        assert found == ["f-00000000000001"]
        # filtering above the query (as before) loses it: the pool held only the others
        above = [h.doc["id"] for h in recall(index, "gamma", limit=3).hits if mine.admits(h.doc)]
        assert above == []
        theirs = Served(scope="project", project="prj-bbbbbbbbbbbbbbbb")
        assert "f-00000000000001" not in {
            h.doc["id"] for h in recall(index, "gamma", limit=100, served=theirs).hits
        }
    finally:
        index.close()
