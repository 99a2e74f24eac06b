"""Pruned recall (:func:`~memdir.kernel.index.recall.top_records`) is exact, and really pruned.

The reference is :func:`~memdir.kernel.index.recall.score_records` over *every* record holding
any query term and passing the filters. Each check is paired: the hits (records, order, scores)
equal the reference's, and the pruned path was the one taken (it read the postings and scored
rows through ``record_rows``, never the FTS5 pool), reading fewer rows than there are
candidates where the store is large enough to prune. Stores are real SQLite index files;
the large one holds LoCoMo's own dialogue turns as records (``../shared/data/locomo``).
"""

from __future__ import annotations

import json
import random
import sqlite3
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from memdir import service
from memdir.kernel.base import clock
from memdir.kernel.base.model import Record
from memdir.kernel.base.validity import Served
from memdir.kernel.index import LATEST_VERSION, FileStat, Index
from memdir.kernel.index import recall as R
from memdir.kernel.index.rows import record_postings
from memdir.kernel.lang.text import query_terms
from memdir.store.scan import reindex
from tests.conftest import SHARED

LOCOMO = SHARED / "data" / "locomo" / "locomo7-dev.json"
KINDS = ("fact", "preference", "rule", "decision", "episode")


@pytest.fixture(autouse=True)
def frozen_clock() -> Any:
    """One instant for the pruned recall and its reference: recency is a function of "now"."""
    clock.freeze(datetime.now(UTC))
    yield
    clock.freeze(None)


def _at(days: float) -> str:
    return (datetime.now(UTC) - timedelta(days=days)).strftime("%Y-%m-%dT%H:%M:%SZ")


def _record(rid: str, text: str, **fields: Any) -> Record:
    days = fields.pop("days", 0.0)
    fields.setdefault("created_at", _at(days))
    fields.setdefault("updated_at", _at(days))
    return Record(id=rid, kind=fields.pop("kind", "fact"), text=text, **fields)


def _put(index: Index, *records: Record) -> None:
    with index.write():
        for n, record in enumerate(records):
            path = f"records/{record.kind}/{record.id}.md"
            index.upsert_record(record, path, FileStat(1, 1, n), [])


class Counting:
    """An index that counts what recall asks of it (the path taken, the rows scored)."""

    def __init__(self, index: Index) -> None:
        self.index = index
        self.pool_calls = 0
        self.postings_read = 0
        self.rows_scored = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.index, name)

    def record_pool(self, *args: Any, **options: Any) -> Any:
        self.pool_calls += 1
        return self.index.record_pool(*args, **options)

    def record_postings(self, *args: Any) -> Any:
        found = self.index.record_postings(*args)
        self.postings_read += len(found)
        return found

    def record_rows(self, rowids: list[int], *args: Any) -> Any:
        self.rows_scored += len(rowids)
        return self.index.record_rows(rowids, *args)


def _everything(
    index: Index,
    query: str,
    *,
    kinds: tuple[str, ...] = (),
    statuses: tuple[str, ...] = ("active",),
    limit: int = 10,
    decay: bool = False,
    min_score: float = 0.0,
    served: Served | None = None,
) -> tuple[list[R.Hit], int]:
    """The reference: every candidate scored. Returns the hits and how many candidates."""
    terms = query_terms(query)
    rows = index.record_pool(terms, list(kinds), list(statuses), 10**9, served=served)
    hits = R.score_records(
        rows,
        query,
        terms,
        index.record_frequencies(terms),
        index.record_totals(),
        limit=limit,
        decay=decay,
        min_score=min_score,
    )
    return hits, len(rows)


def _key(hits: list[R.Hit]) -> list[tuple[str, float, dict[str, float]]]:
    return [(h.doc["id"], h.score, h.factors) for h in hits]


def _pruned(index: Index, query: str, **options: Any) -> tuple[list[R.Hit], Counting, int]:
    """Recall through the pruned path; assert it equals the reference and was taken."""
    counting = Counting(index)
    got = R.recall(counting, query, **options).hits  # type: ignore[arg-type]
    want, candidates = _everything(index, query, **options)
    assert _key(got) == _key(want), query
    assert counting.pool_calls == 0 and counting.postings_read > 0, query
    return got, counting, candidates


def _expected_postings(index: Index) -> set[tuple[str, int, int, int, int]]:
    rows = index._conn.execute(
        "SELECT f.rowid, r.tokens, r.importance, f.text, f.aliases, f.tags, f.body"
        " FROM records_fts f JOIN records r ON r.rowid = f.rowid"
    )
    return {
        (term, rowid, tf, tokens, importance)
        for rowid, tokens, importance, *columns in rows
        for term, tf in record_postings(tuple(columns)).items()
    }


def _postings(index: Index) -> set[tuple[str, int, int, int, int]]:
    return set(index._conn.execute("SELECT term, doc, tf, len, imp FROM record_postings"))


# --- LoCoMo ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def locomo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Index, list[str]]]:
    """An index of LoCoMo's dialogue turns as records, and LoCoMo's questions about them.

    Conversations 0-2: every turn a record, with a kind, an importance 1..10 and an age up to
    two years at random; one in ten superseded. The questions are those conversations' own.
    """
    data = json.loads(LOCOMO.read_text(encoding="utf-8"))[:3]
    rng = random.Random(16)
    records: list[Record] = []
    questions: list[str] = []
    for sample in data:
        for key, turns in sample["conversation"].items():
            if key.startswith("session_") and isinstance(turns, list):
                for turn in turns:
                    records.append(
                        _record(
                            f"t-{len(records):06d}",
                            f"{turn['speaker']}: {turn['text']}",
                            kind=rng.choice(KINDS),
                            importance=rng.randint(1, 10),
                            status="superseded" if rng.random() < 0.1 else "active",
                            days=rng.uniform(0, 730),
                        )
                    )
        questions += [q["question"] for q in sample["qa"]]
    folder = tmp_path_factory.mktemp("locomo-index")
    with Index(folder) as index:
        _put(index, *records)
        yield index, rng.sample(questions, 120)


@pytest.mark.parametrize("long_postings", [R.LONG_POSTINGS, 0])
def test_locomo_questions_get_exactly_the_hits_of_scoring_every_candidate(
    locomo: tuple[Index, list[str]], long_postings: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # 0: try to stop before every term, as before the long lists of a large store.
    monkeypatch.setattr(R, "LONG_POSTINGS", long_postings)
    index, questions = locomo
    scored = candidates = pruned = stopped = 0
    for query in questions:
        _, counting, matched = _pruned(index, query, limit=10)
        scored += counting.rows_scored
        candidates += matched
        pruned += counting.rows_scored < matched
        every = sum(index.record_frequencies(query_terms(query)).values())
        stopped += counting.postings_read < every  # some common term never read in full
    # The pairing: the same answers, from a small share of the rows.
    assert pruned >= 0.9 * len(questions)
    assert scored < candidates / 5
    assert stopped >= 0.2 * len(questions)


@pytest.mark.parametrize("probe_cost", [0, R.PROBE_COST, 10**9])
def test_step_4_stays_exact_by_point_reads_and_by_reading_terms_whole(
    locomo: tuple[Index, list[str]], probe_cost: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Completing bounds by point reads only (0), as shipped, or by reading terms whole (10⁹)."""
    monkeypatch.setattr(R, "PROBE_COST", probe_cost)
    monkeypatch.setattr(R, "LONG_POSTINGS", 0)  # stop early, so step 4 has terms left to read
    index, questions = locomo
    whole: list[str] = []  # terms step 4 read whole
    read_whole, score_the_rest = R._MaxScore.read_whole, R._MaxScore.score_the_rest

    def in_step_4(self: R._MaxScore) -> None:
        self.step_4 = True  # type: ignore[attr-defined]
        score_the_rest(self)

    def counting(self: R._MaxScore, term: str) -> None:
        if getattr(self, "step_4", False):
            whole.append(term)
        read_whole(self, term)

    monkeypatch.setattr(R._MaxScore, "score_the_rest", in_step_4)
    monkeypatch.setattr(R._MaxScore, "read_whole", counting)
    for query in questions:
        _pruned(index, query, limit=10)  # asserts the hits equal scoring every candidate
    assert (len(whole) > 0) is (probe_cost > 0)


@pytest.mark.parametrize(
    "options",
    [
        {"limit": 1},
        {"limit": 3, "decay": True},
        {"limit": 50},
        {"limit": 10, "kinds": ("rule", "decision")},
        {"limit": 10, "statuses": ("superseded",)},
        {"limit": 10, "statuses": ("active", "superseded"), "decay": True},
    ],
    ids=["limit1", "decay", "limit50", "kinds", "superseded", "statuses+decay"],
)
def test_locomo_questions_stay_exact_under_every_option(
    locomo: tuple[Index, list[str]], options: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    index, questions = locomo
    for long_postings in (R.LONG_POSTINGS, 0):
        monkeypatch.setattr(R, "LONG_POSTINGS", long_postings)
        for query in questions[:40]:
            _pruned(index, query, **options)


def test_locomo_min_score_cuts_the_same_hits(locomo: tuple[Index, list[str]]) -> None:
    index, questions = locomo
    for query in questions[:30]:
        everything, _ = _everything(index, query, limit=10)
        if len(everything) < 4:
            continue
        cut = everything[3].score  # keeps exactly the hits scoring at least the fourth
        got, _, _ = _pruned(index, query, limit=10, min_score=cut)
        assert 1 <= len(got) <= 10 and all(h.score >= cut for h in got)


# --- edge cases -----------------------------------------------------------------------------


def test_ties_are_ordered_by_rowid_as_when_every_candidate_is_scored(tmp_path: Path) -> None:
    with Index(tmp_path) as index:
        same = [_record(f"r{n:02d}", "use ruff for linting", days=5) for n in range(30)]
        _put(index, *same, _record("other", "use black for formatting"))
        for limit in (1, 10, 29, 30, 31):
            got, _, _ = _pruned(index, "ruff linting", limit=limit)
            assert [h.doc["id"] for h in got] == [f"r{n:02d}" for n in range(min(limit, 30))]


def test_importance_1_and_10_and_decay_on_and_off(tmp_path: Path) -> None:
    with Index(tmp_path) as index:
        _put(
            index,
            *[_record(f"low{n}", f"deploy the api on friday {n}", importance=1) for n in range(8)],
            *[_record(f"high{n}", f"deploy the web app {n}", importance=10) for n in range(8)],
            # The best relevance, but old and unimportant: decay sinks it, recency barely.
            _record("old", "deploy api friday", importance=1, days=400),
            _record("older", "deploy api friday", importance=10, days=800),
            *[_record(f"filler{n}", f"lunch menu item {n}") for n in range(40)],
        )
        for decay in (False, True):
            for limit in (1, 3, 10, 20):
                got, _, _ = _pruned(index, "deploy api friday", limit=limit, decay=decay)
        with_decay = [h.doc["id"] for h in _pruned(index, "deploy api friday", decay=True)[0]]
        without = [h.doc["id"] for h in _pruned(index, "deploy api friday")[0]]
        # Without decay the old, important record is first (relevance; recency takes at most
        # 15 %); the forgetting curve sinks both old ones: pruning must get both right.
        assert without[0] == "older" and "older" not in with_decay[:3]
        assert "old" in without and "old" not in with_decay  # 400 days at a 30-day half-life
        assert got and {h.doc["importance"] for h in got} == {1, 10}


def test_filters_that_withhold_the_best_rows(tmp_path: Path) -> None:
    with Index(tmp_path) as index:
        _put(
            index,
            *[
                _record(f"best{n}", "postgres replica lag alert", status="superseded")
                for n in range(12)
            ],
            *[_record(f"rule{n}", "postgres replica lag alert", kind="rule") for n in range(12)],
            *[_record(f"weak{n}", f"postgres note {n}") for n in range(6)],
            *[_record(f"filler{n}", f"lunch menu item {n}") for n in range(30)],
        )
        got, _, _ = _pruned(index, "postgres replica lag", limit=5, kinds=("fact",))
        assert [h.doc["id"] for h in got] == [f"weak{n}" for n in range(5)]
        got, _, _ = _pruned(index, "postgres replica lag", statuses=("superseded",))
        assert {h.doc["id"] for h in got} == {f"best{n}" for n in range(10)}
        got, _, _ = _pruned(index, "postgres replica lag", kinds=("decision",))
        assert got == []


def test_min_score_limit_beyond_the_matches_and_a_term_in_every_record(tmp_path: Path) -> None:
    with Index(tmp_path) as index:
        _put(
            index,
            *[_record(f"r{n}", f"project note {n} about caching") for n in range(5)],
            *[_record(f"s{n}", f"project note {n}") for n in range(40)],
        )
        got, _, _ = _pruned(index, "caching", limit=100)
        assert len(got) == 5  # fewer matches than the limit: all of them
        got, _, _ = _pruned(index, "project", limit=10)  # in every record: idf near zero
        assert len(got) == 10
        got, _, _ = _pruned(index, "project caching", limit=100)
        assert len(got) == 45
        best = got[0].score
        assert _pruned(index, "project caching", min_score=best * 2)[0] == []
        assert len(_pruned(index, "project caching", min_score=best * 0.999)[0]) == 5


def test_a_query_term_no_record_holds_and_an_empty_store(tmp_path: Path) -> None:
    with Index(tmp_path) as index:
        assert R.recall(index, "anything at all").hits == []
        _put(index, _record("r1", "tabs not spaces"))
        got, _, _ = _pruned(index, "tabs zebra")
        assert [h.doc["id"] for h in got] == ["r1"] and got[0].matched == ("tabs",)


def test_a_single_cjk_character_falls_back_to_the_pool_and_bigrams_are_pruned(
    tmp_path: Path,
) -> None:
    with Index(tmp_path) as index:
        _put(
            index,
            _record("c1", "我们使用 PostgreSQL 数据库"),
            _record("c2", "数据库备份每天一次"),
            _record("c3", "周五部署"),
        )
        counting = Counting(index)
        got = R.recall(counting, "库").hits  # type: ignore[arg-type]
        assert counting.pool_calls == 1 and counting.postings_read == 0  # the fallback
        assert _key(got) == _key(_everything(index, "库")[0])
        assert {h.doc["id"] for h in got} == {"c1", "c2"}
        got, _, _ = _pruned(index, "数据库")  # bigrams: ordinary terms, pruned path
        assert {h.doc["id"] for h in got} == {"c1", "c2"}


def test_records_added_updated_and_removed_after_the_postings_were_built(tmp_path: Path) -> None:
    with Index(tmp_path) as index:
        _put(index, *[_record(f"r{n}", f"cache the build output {n}") for n in range(20)])
        _put(
            index,
            _record("r3", "the queue is kafka now", importance=9),  # same path: an update
            _record("new", "cache kafka offsets", aliases=("offset cache",), tags=("kafka",)),
        )
        with index.write():
            index.forget_path("records/fact/r5.md")
        assert _postings(index) == _expected_postings(index)
        got, _, _ = _pruned(index, "kafka cache", limit=30)
        ids = [h.doc["id"] for h in got]
        assert "r5" not in ids and {"new", "r3"} <= set(ids[:2])
        assert _pruned(index, "build output", limit=30)[0][-1].doc["id"] != "r3"


def test_a_failed_write_leaves_the_postings_as_they_were(tmp_path: Path) -> None:
    with Index(tmp_path) as index:
        _put(index, _record("r1", "tabs not spaces"))
        before = _postings(index)

        def fails() -> None:
            with index.write():
                index.upsert_record(_record("r2", "spaces win"), "records/fact/r2.md", STAT, [])
                index.forget_path("records/fact/r1.md")
                raise RuntimeError("killed half-way")

        with pytest.raises(RuntimeError):
            fails()
        assert _postings(index) == before == _expected_postings(index)


STAT = FileStat(1, 1, 1)


def test_an_index_without_postings_gets_them_on_open(tmp_path: Path) -> None:
    with Index(tmp_path) as index:
        _put(index, *[_record(f"r{n}", f"deploy note {n} friday") for n in range(30)])
    conn = sqlite3.connect(tmp_path / "index.sqlite")
    conn.execute("DROP TABLE record_postings")  # as an index written before format 4
    conn.execute("PRAGMA user_version = 3")
    conn.commit()
    conn.close()
    with Index(tmp_path) as index:
        assert index.user_version() == LATEST_VERSION == 4
        assert _postings(index) == _expected_postings(index) != set()
        _pruned(index, "friday deploy note 7")
    assert (tmp_path / "state" / "backups" / "index-v3.sqlite").is_file()


def test_remember_correct_forget_and_reindex_keep_the_postings_in_step(store: Path) -> None:
    first = service.remember(store, "The build uses pnpm workspaces").record
    service.remember(store, "Deploys go out on Tuesdays after the build")
    service.correct(store, first.id, "The build uses npm workspaces", reason="switched")
    gone = service.remember(store, "The staging database is MySQL").record
    service.forget(store, gone.id, "retired")
    with Index(store) as index:
        assert _postings(index) == _expected_postings(index)
        got, _, _ = _pruned(index, "build workspaces")
        assert got[0].doc["text"] == "The build uses npm workspaces"
        index._conn.execute("DELETE FROM record_postings")  # a damaged index
    reindex(store)
    with Index(store) as index:
        assert _postings(index) == _expected_postings(index) != set()
        assert _pruned(index, "staging database", statuses=("forgotten",))[0]


# --- the read filter (issue 10) --------------------------------------------------------------

OURS, THEIRS = "prj-aaaaaaaaaaaaaaaa", "prj-bbbbbbbbbbbbbbbb"


def test_the_pruned_path_never_brings_back_what_the_read_filter_withholds(tmp_path: Path) -> None:
    """Another project's, an expired and a tombstoned record outrank ours; none comes back.

    Each is paired with the reader it *is* served to, through the same pruned path, and every
    answer equals the reference: the FTS5 pool under the same filter, scored in full.
    """
    from memdir.kernel.base.valuekey import value_key

    tombstoned = "Gamma gamma deploys use the blue canary."
    with Index(tmp_path) as index:
        _put(
            index,
            *[
                _record(f"theirs{n}", f"Gamma gamma gamma canary {n}", project=THEIRS)
                for n in range(20)
            ],
            *[
                _record(f"expired{n}", f"Gamma gamma canary deploys {n}", valid_until="2026-01-01")
                for n in range(20)
            ],
            _record("tombstoned", tombstoned, project=OURS),
            _record("ours", "The gamma canary notes are reviewed twice.", project=OURS),
            *[_record(f"filler{n}", f"lunch menu item {n}") for n in range(40)],
        )
        unfiltered, _, _ = _pruned(index, "gamma canary deploys", limit=5)
        assert "ours" not in {h.doc["id"] for h in unfiltered}  # the withheld ones outrank it
        now = datetime(2026, 12, 4, tzinfo=UTC)
        mine = Served(
            scope="project", project=OURS, at=now, withheld=frozenset({value_key(tombstoned)})
        )
        got, counting, _ = _pruned(index, "gamma canary deploys", limit=5, served=mine)
        assert [h.doc["id"] for h in got] == ["ours"]  # and nothing withheld
        assert counting.rows_scored > 1  # the withheld rows were fetched through the filter
        # Paired: each withheld record is served to the reader it belongs to.
        theirs = Served(scope="project", project=THEIRS, at=now)
        got, _, _ = _pruned(index, "gamma canary", limit=30, served=theirs)
        assert {f"theirs{n}" for n in range(20)} <= {h.doc["id"] for h in got}
        assert not {"ours", "tombstoned"} & {h.doc["id"] for h in got}
        before = mine.but(at=datetime(2025, 12, 1, tzinfo=UTC), withheld=frozenset())
        got, _, _ = _pruned(index, "gamma canary deploys", limit=30, served=before)
        ids = {h.doc["id"] for h in got}
        assert {f"expired{n}" for n in range(20)} | {"tombstoned", "ours"} <= ids
        assert not any(i.startswith("theirs") for i in ids)
