"""The same recall and lifecycle behaviour on both index backends, through the service.

Each test runs twice: on the local SQLite index and on a PostgreSQL index
(``[index] backend = "postgresql://…"`` in ``memdir.toml``; see ``conftest.py``). Every
"must not come back" assertion is paired with "the right thing is there" on the same data.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from memdir import service
from memdir.kernel.index import digest
from memdir.kernel.storage import journal, manifest
from memdir.store import scan


def _use(store: Path, backend: str) -> None:
    if backend != "sqlite":
        with (store / "memdir.toml").open("a", encoding="utf-8") as fh:
            fh.write(f'\n[index]\nbackend = "{backend}"\n')
    assert manifest.load(store).index_backend == ("" if backend == "sqlite" else backend)


def _ids(result: service.RecallResult) -> list[str]:
    return [hit.doc["id"] for hit in result.hits]


BELIEFS = [
    "the team database is PostgreSQL 15 on the staging host",
    "deploys go out on Tuesdays after the standup",
    "we lint Python with ruff and format with ruff format",
    "the cache is Redis; its keys expire after a day",
    "红色的按钮表示危险操作",
]


def _remember_all(store: Path) -> list[str]:
    return [service.remember(store, text).record.id for text in BELIEFS]


def test_recall_ranks_the_matching_belief_first(store: Path, backend: str) -> None:
    _use(store, backend)
    ids = _remember_all(store)
    assert _ids(service.recall(store, "which database do we use", include_user=False))[0] == ids[0]
    assert _ids(service.recall(store, "ruff", include_user=False)) == [ids[2]]
    assert _ids(service.recall(store, "红色", include_user=False)) == [ids[4]]
    assert _ids(service.recall(store, "红", include_user=False)) == [ids[4]]  # a CJK prefix
    assert _ids(service.recall(store, "kubernetes", include_user=False)) == []


def test_a_correction_hides_the_old_value_and_shows_the_new(store: Path, backend: str) -> None:
    _use(store, backend)
    old = service.remember(store, "deploys go out on Fridays").record
    new = service.correct(store, old.id, "deploys go out on Tuesdays").record
    found = _ids(service.recall(store, "when do deploys go out", include_user=False))
    assert new.id in found
    assert old.id not in found
    assert service.get(store, old.id).status == "superseded"


def test_rejected_and_forgotten_beliefs_never_come_back(store: Path, backend: str) -> None:
    _use(store, backend)
    kept = service.remember(store, "the staging cluster runs in eu-west").record
    rejected = service.remember(store, "the staging cluster runs in us-east").record
    forgotten = service.remember(store, "the staging cluster has nine nodes").record
    service.reject(store, rejected.id, "wrong region")
    service.forget(store, forgotten.id)
    found = _ids(service.recall(store, "staging cluster", include_user=False))
    assert found == [kept.id]
    listed = {d.id for d in service.catalogue(store)}
    assert kept.id in listed and not {rejected.id, forgotten.id} & listed


def test_journal_search_finds_the_turn_and_not_the_others(store: Path, backend: str) -> None:
    _use(store, backend)
    service.journal_append(store, "user", "Caroline moved to Berlin in May", session="s1")
    service.journal_append(store, "assistant", "Noted: Berlin.", session="s1")
    service.journal_append(store, "user", "Melanie paints landscapes", session="s2")
    hits = service.search(store, "where did Caroline move", limit=5).hits
    assert hits[0].text == "Caroline moved to Berlin in May"
    assert all("Melanie" not in h.text for h in hits)
    only_s2 = service.search(store, "paints", session="s2").hits
    assert [h.text for h in only_s2] == ["Melanie paints landscapes"]


def test_the_digest_and_prompt_recall_read_the_backend(store: Path, backend: str) -> None:
    _use(store, backend)
    rule = service.remember(store, "always run the tests before pushing", kind="rule").record
    fact = service.remember(store, "the release branch is called trunk").record
    gone = service.remember(store, "the release branch is called main").record
    service.reject(store, gone.id, "wrong")
    index = scan.open_backend(store, manifest.load(store).index_backend)
    try:
        made = digest.session_digest(index, project=store.parent)
        assert rule.id in made.ids and gone.id not in made.ids
        prompt = digest.prompt_recall(index, "what is the release branch called", min_score=0.0)
        assert prompt.ids[0] == fact.id and gone.id not in prompt.ids
    finally:
        index.close()


def test_the_journal_index_keeps_up_with_appended_turns(store: Path, backend: str) -> None:
    _use(store, backend)
    for n in range(7):
        service.journal_append(store, "user", f"turn {n} mentions kafka", session="s")
    assert [h.text for h in service.search(store, "kafka", limit=3).hits]
    service.journal_append(store, "user", "a late turn about zookeeper", session="s")
    hits = service.search(store, "zookeeper").hits
    assert hits[0].text == "a late turn about zookeeper"
    # Its two predecessors hold it in their context column (±2 neighbours): they rank below.
    assert {h.text for h in hits[1:]} == {"turn 5 mentions kafka", "turn 6 mentions kafka"}
    assert hits[0].score > hits[1].score
    index = scan.open_backend(store, manifest.load(store).index_backend)
    try:
        assert index.turn_count() == 8
        assert journal.sync_journal(index, store) == 0  # nothing new: idempotent
    finally:
        index.close()


@pytest.mark.parametrize("backend", ["sqlite"], indirect=False)
def test_sqlite_is_the_default_backend(store: Path, backend: str) -> None:
    assert manifest.load(store).index_backend == ""
    index = scan.open_backend(store, "")
    try:
        assert type(index).__name__ == "Index"
    finally:
        index.close()


def test_reindex_rebuilds_the_configured_backend_from_the_records(
    store: Path, backend: str
) -> None:
    _use(store, backend)
    ids = _remember_all(store)
    service.journal_append(store, "user", "the deploy broke on Friday", session="s")
    index = scan.open_backend(store, manifest.load(store).index_backend)
    try:
        with index.write():
            index.clear()
        assert index.is_empty()
    finally:
        index.close()
    report = service.reindex(store)
    assert (report.indexed, report.turns) == (len(ids), 1)
    assert _ids(service.recall(store, "ruff", include_user=False)) == [ids[2]]


@pytest.mark.slow
def test_purge_erases_the_text_from_the_backend_and_the_local_index(
    store: Path, backend: str
) -> None:
    _use(store, backend)
    keeper = service.remember(store, "the deploy script is deploy.sh").record
    secret = service.remember(store, "Zebrafish quantum marmalade sentinel").record
    assert _ids(service.recall(store, "zebrafish", include_user=False)) == [secret.id]
    local = scan.open_handle(store, backend="sqlite")  # what a hook's scan leaves locally
    local.index.close()
    assert b"zebrafish" in (store / "index.sqlite").read_bytes().lower() + (
        (store / "index.sqlite-wal").read_bytes().lower()
        if (store / "index.sqlite-wal").exists()
        else b""
    )
    service.purge(store, secret.id, yes=True)
    assert _ids(service.recall(store, "zebrafish", include_user=False)) == []
    assert _ids(service.recall(store, "deploy script", include_user=False)) == [keeper.id]
    for name in ("index.sqlite", "index.sqlite-wal"):
        if (store / name).exists():
            assert b"zebrafish" not in (store / name).read_bytes().lower()
    if backend != "sqlite":
        import psycopg

        from memdir.pgindex import split_dsn

        dsn, schema = split_dsn(backend)
        with psycopg.connect(dsn) as conn:
            for table, column in (("records", "doc"), ("record_df", "term"), ("files", "path")):
                row = conn.execute(
                    f"SELECT count(*) FROM {schema}.{table} WHERE {column} ILIKE %s"
                    f" OR {column} ILIKE %s",
                    ("%zebrafish%", f"%{secret.id}%"),
                ).fetchone()
                assert row == (0,), table


def test_recall_is_exact_on_both_backends_pruned_or_pooled(store: Path, backend: str) -> None:
    """SQLite ranks from its postings (pruned), PostgreSQL from its pool: both exactly."""
    from datetime import UTC, datetime

    from memdir.kernel.base import clock
    from memdir.kernel.index import recall as R
    from memdir.kernel.lang.text import query_terms

    _use(store, backend)
    _remember_all(store)
    for n in range(12):
        service.remember(store, f"deploy note {n}: the staging database restarts on Tuesdays")
    handle = scan.open_handle(store)
    clock.freeze(datetime.now(UTC))
    try:
        index = handle.index
        assert hasattr(index, "record_postings") == (backend == "sqlite")  # the path taken
        for query in ("staging database", "deploys on Tuesdays", "ruff format", "红色", "红"):
            terms = query_terms(query)
            every = index.record_pool(terms, [], ["active"], 10**9)
            want = R.score_records(
                every,
                query,
                terms,
                index.record_frequencies(terms),
                index.record_totals(),
                limit=5,
            )
            got = R.recall(index, query, limit=5).hits
            assert [(h.doc["id"], h.score) for h in got] == [(h.doc["id"], h.score) for h in want]
            assert got, query
    finally:
        clock.freeze(None)
        handle.index.close()
