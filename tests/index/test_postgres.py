"""What only the PostgreSQL index has to prove: the same answers as SQLite on the same store,
a shared index that two machines keep without re-reading each other's files, its transactions,
and ``memdir index --backend``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memdir import service
from memdir.kernel.index import FileStat, Index
from memdir.kernel.index.recall import recall, search_turns
from memdir.kernel.storage import journal, manifest
from memdir.kernel.storage.lifecycle import Handle
from memdir.pgindex import PostgresIndex, open_postgres, split_dsn
from memdir.store import scan
from tests.conftest import run_cli as cli

QUERIES = [
    "which database do we use",
    "redis cache",
    "when are deploys",
    "lint python",
    "红",
    "按钮",
    "kubernetes",
    "the",
]


@pytest.fixture
def filled(store: Path) -> Path:
    texts = [
        "the team database is PostgreSQL 15 on the staging host",
        "deploys go out on Tuesdays after the standup",
        "we lint Python with ruff and format with ruff format",
        "the cache is Redis; its keys expire after a day",
        "红色的按钮表示危险操作",
        "the staging database is restored from backups every night",
        "deploy freezes happen the week before a release",
    ]
    for text in texts:
        service.remember(store, text)
    service.correct(
        store,
        service.recall(store, "redis", include_user=False).hits[0].doc["id"],
        "the cache is Redis; keys expire after an hour",
    )
    for n, text in enumerate(["Caroline moved to Berlin", "Melanie paints", "Berlin is cold"]):
        service.journal_append(store, "user" if n % 2 == 0 else "assistant", text, session="s")
    return store


def _pairs(index: object, query: str) -> list[tuple[str, float]]:
    return [(h.doc["id"], h.score) for h in recall(index, query, limit=10).hits]  # type: ignore[arg-type]


def _same(a: list[tuple[str, float]], b: list[tuple[str, float]]) -> bool:
    """Same ids in the same order, scores equal but for the clock (recency reads the time)."""
    return [x for x, _ in a] == [x for x, _ in b] and all(
        y == pytest.approx(z, rel=1e-6) for (_, y), (_, z) in zip(a, b, strict=True)
    )


def test_postgres_answers_exactly_as_sqlite_on_the_same_store(filled: Path, pg_uri: str) -> None:
    with open_postgres(filled, pg_uri) as built:
        scan.fill(built, filled, manifest.load(filled))
    sqlite = Index(filled)
    journal.sync_journal(sqlite, filled)
    pg = open_postgres(filled, pg_uri)
    try:
        for query in QUERIES:
            assert _same(_pairs(pg, query), _pairs(sqlite, query)), query
        assert _pairs(pg, "database")  # not vacuous: the store answers
        for query in ("Berlin", "where did Caroline move", "paints"):
            a = [(h.text, h.score) for h in search_turns(sqlite, query)[1]]
            b = [(h.text, h.score) for h in search_turns(pg, query)[1]]
            assert a and _same(a, b), query
        assert pg.count_by("status") == sqlite.count_by("status")
        assert pg.list_docs(statuses=("active",)) == sqlite.list_docs(statuses=("active",))
        assert sorted(pg.all_links()) == sorted(sqlite.all_links())
    finally:
        pg.close()
        sqlite.close()


def test_a_second_machine_reads_the_records_once_then_only_changes(
    filled: Path, pg_uri: str
) -> None:
    settings = manifest.load(filled)

    def scan_as(host: str) -> int:
        dsn, schema = split_dsn(pg_uri)
        with PostgresIndex(filled, dsn, schema=schema, host=host) as index:
            return scan.scan_records(
                Handle(filled, index, settings, read=scan.tolerant_reader("project"))
            ).indexed  # type: ignore[arg-type]

    records = len(list((filled / "records").rglob("*.md")))
    assert scan_as("laptop") == records
    assert scan_as("laptop") == 0
    assert scan_as("desktop") == records  # its own stats: one full read
    assert scan_as("desktop") == 0
    assert scan_as("laptop") == 0  # no thrashing between the two


def test_a_failed_commit_leaves_no_transaction_open(filled: Path, pg_uri: str) -> None:
    import psycopg

    with open_postgres(filled, pg_uri) as pg:
        pg._run(f"CREATE TABLE {pg.schema}.parent (id int PRIMARY KEY)")
        pg._run(
            f"CREATE TABLE {pg.schema}.child (p int REFERENCES {pg.schema}.parent"
            " DEFERRABLE INITIALLY DEFERRED)"
        )

        def dangling() -> None:
            with pg.write():
                pg.set_meta("lost", "with the failed commit")
                pg._run(f"INSERT INTO {pg.schema}.child VALUES (42)")

        with pytest.raises(psycopg.errors.ForeignKeyViolation):
            dangling()
        assert not pg.in_transaction
        with pg.write():
            pg.set_meta("kept", "yes")
        assert pg.get_meta("lost") is None
        assert pg.get_meta("kept") == "yes"


def test_a_failed_inner_write_undoes_only_its_own_changes(filled: Path, pg_uri: str) -> None:
    with open_postgres(filled, pg_uri) as pg:

        def inner() -> None:
            with pg.write():
                pg.set_meta("inner", "1")
                raise RuntimeError("inner step failed")

        with pg.write():
            pg.set_meta("outer", "1")
            with pytest.raises(RuntimeError):
                inner()
        assert (pg.get_meta("outer"), pg.get_meta("inner")) == ("1", None)


def test_memdir_index_backend_builds_and_reads_postgres(filled: Path, pg_uri: str) -> None:
    result = cli("index", "--backend", pg_uri, "--json", "--store", str(filled))
    assert result.exit_code == 0, result.output
    out = json.loads(result.output)
    assert out["built"]["backend"] == "postgres"
    assert out["built"]["records"] == len(list((filled / "records").rglob("*.md")))
    assert out["built"]["turns"] == 3
    assert "pgvector" in out["built"]["server"]
    texts = {r["text"] for r in out["results"]}
    assert "the cache is Redis; keys expire after an hour" in texts
    assert "the cache is Redis; its keys expire after a day" not in texts  # superseded


def test_a_bad_backend_is_a_usage_error(filled: Path) -> None:
    result = cli("index", "--backend", "mysql://x", "--store", str(filled))
    assert result.exit_code == 2
    assert "postgres://" in result.output
    (filled / "memdir.toml").write_text(
        (filled / "memdir.toml").read_text() + '\n[index]\nbackend = "mysql://x"\n'
    )
    result = cli("recall", "x", "--store", str(filled))
    assert result.exit_code != 0 and "backend" in result.output


def test_an_unreachable_server_is_a_clear_error(filled: Path) -> None:
    uri = "postgresql:///postgres?host=/nonexistent-memdir-socket&port=1"
    result = cli("index", "--backend", uri, "--store", str(filled))
    assert result.exit_code == 1
    assert "cannot connect to the PostgreSQL index" in result.output
    assert "Traceback" not in result.output
    with Index(filled) as local:
        assert local.record_totals()[0] > 0  # the local index is untouched
    before = sorted((filled / "records").rglob("*.md"))
    with (filled / "memdir.toml").open("a", encoding="utf-8") as fh:
        fh.write(f'\n[index]\nbackend = "{uri}"\n')
    result = cli("remember", "a belief while the server is away", "--store", str(filled))
    assert result.exit_code == 1 and "cannot connect" in result.output
    assert sorted((filled / "records").rglob("*.md")) == before  # nothing was written


def test_upsert_keeps_first_holder_of_an_id(filled: Path, pg_uri: str) -> None:
    with open_postgres(filled, pg_uri) as pg:
        record = service.get(
            filled, service.recall(filled, "ruff", include_user=False).hits[0].doc["id"]
        )
        with pg.write():
            pg.upsert_record(record, "records/fact/a.md", FileStat(1, 1, 1), [])
            pg.upsert_record(record, "records/fact/b.md", FileStat(1, 1, 2), [])
        assert pg.get_path(record.id) == "records/fact/a.md"
        assert [p for p, state, _ in pg.file_problems() if state == "quarantined"] == [
            "records/fact/b.md"
        ]


def test_the_schema_parameter_is_memdirs_own_and_never_reaches_libpq() -> None:
    assert split_dsn("postgresql:///postgres?host=/run/pg&port=5432&schema=team_a") == (
        "postgresql:///postgres?host=%2Frun%2Fpg&port=5432",
        "team_a",
    )
    assert split_dsn("postgres://db.example/memdir") == ("postgres://db.example/memdir", "memdir")


def test_query_terms_are_literal_lexemes_never_tsquery_syntax() -> None:
    from memdir.pgindex import tsquery

    assert tsquery(["red", "红"]) == "'red' | '红':*"
    assert tsquery(["it's", "a\\b", "x & !y"]) == "'it''s' | 'a\\\\b' | 'x & !y'"


def test_a_schema_name_that_is_not_an_identifier_is_refused(filled: Path) -> None:
    from memdir.kernel.base.errors import UsageError

    with pytest.raises(UsageError, match="schema"):
        PostgresIndex(filled, "postgresql:///x", schema="a; DROP TABLE records")
