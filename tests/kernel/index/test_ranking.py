"""Ranking is math over plain rows: these tests build rows by hand and never open a database.

Each row is what an index backend's ``record_pool`` returns (``RecordRow``): rowid, the
record's JSON, importance, updated_at, |D| and the four columns' index terms.
"""

import json
import math
from datetime import UTC, datetime, timedelta

import pytest

from memdir.kernel.index import recall as R
from memdir.kernel.lang.text import index_text, query_terms


def _row(rowid: int, text: str, *, body: str = "", importance: int = 5, days: float = 0.0):
    at = (datetime.now(UTC) - timedelta(days=days)).strftime("%Y-%m-%dT%H:%M:%SZ")
    columns = (index_text(text), "", "", index_text(body))
    doc = {"id": f"r{rowid}", "kind": "fact", "origin": "owner", "text": text}
    tokens = sum(len(c.split()) for c in columns)
    return (rowid, json.dumps(doc), importance, at, tokens, *columns)


def _rank(rows, query: str, **options):
    terms = query_terms(query)
    freq = {t: sum(1 for r in rows if t in " ".join(r[5:]).split()) for t in terms}
    totals = (len(rows), sum(r[4] for r in rows))
    return R.score_records(rows, query, terms, freq, totals, limit=10, **options)


def test_the_belief_s_own_text_outranks_a_mention_in_a_body() -> None:
    rows = [
        _row(1, "deploys run on Fridays", body="the database uses postgres"),
        _row(2, "the database is postgres"),
    ]
    hits = _rank(rows, "postgres database")
    assert [h.doc["id"] for h in hits] == ["r2", "r1"]
    assert hits[0].matched == ("postgres", "database")
    assert hits[0].factors["relevance"] > hits[1].factors["relevance"] > 0


def test_importance_and_recency_break_ties_between_equal_texts() -> None:
    rows = [
        _row(1, "use ruff for linting", importance=1),
        _row(2, "use ruff for linting", importance=10),
        _row(3, "use ruff for linting", days=400),
    ]
    order = [h.doc["id"] for h in _rank(rows, "ruff linting")]
    # 1.25 for importance 10; recency never drops below 0.85, above importance 1's 0.8.
    assert order == ["r2", "r3", "r1"]
    # The same relevance for all three: only the two mild factors differ.
    assert len({h.factors["relevance"] for h in _rank(rows, "ruff linting")}) == 1


def test_min_score_drops_weak_hits_and_limit_cuts() -> None:
    rows = [_row(7, "tabs not spaces"), _row(3, "tabs not spaces")]
    best = _rank(rows, "tabs")[0].score
    assert _rank(rows, "tabs", min_score=best * 2) == []
    assert len(_rank(rows, "tabs", min_score=best / 2)) == 2
    terms = query_terms("tabs")
    one = R.score_records(rows, "tabs", terms, {"tab": 2}, (2, 6), limit=1)
    assert len(one) == 1


def test_decay_halves_a_score_after_a_half_life() -> None:
    rows = [_row(1, "old fact about caching", importance=5, days=90)]
    plain = _rank(rows, "caching")[0]
    decayed = _rank(rows, "caching", decay=True)[0]
    assert decayed.factors["decay"] == pytest.approx(0.5, abs=1e-3)
    assert decayed.score == pytest.approx(plain.score * 0.5, rel=1e-3)


def test_a_single_cjk_character_matches_the_bigrams_it_starts() -> None:
    rows = [_row(1, "红色的按钮"), _row(2, "蓝色的按钮")]
    hits = _rank(rows, "红")
    assert hits[0].doc["id"] == "r1" and hits[0].factors["relevance"] > 0
    assert hits[1].factors["relevance"] == 0  # 蓝色 starts no bigram with 红


def test_turns_are_re_ranked_by_speaker_length_and_question_priors() -> None:
    rows = [  # (rowid, file, line, offset, session, at, who, text, rank): rank < 0, lower = better
        (1, "d.jsonl", 1, 0, "s", "2026-01-01T00:00:00Z", "bob", "I moved to Berlin", -2.0),
        (2, "d.jsonl", 2, 9, "s", "2026-01-01T00:01:00Z", "alice", "I moved to Berlin", -2.0),
        (
            3,
            "d.jsonl",
            3,
            19,
            "s",
            "2026-01-01T00:02:00Z",
            "alice",
            "Did you move to Berlin?",
            -2.0,
        ),
    ]
    hits = R.rank_turns(rows, query_terms("where did alice move"), 10)
    assert [h.line for h in hits] == [
        2,
        3,
        1,
    ]  # alice named: her turns first, a question last of hers
    assert hits[0].score == pytest.approx(2.0 * R.SPEAKER_BOOST * len(rows[1][7]) ** R.LENGTH_PRIOR)


def test_fts5_bm25_is_minus_the_weighted_bm25_sum() -> None:
    columns = ("red button", "", "", "red")
    # One term in 1 of 10 rows: idf = ln(9.5 / 1.5); weighted count 4 + 1 = 5; |D| = 3, avgdl 3.
    expected = -math.log(9.5 / 1.5) * 5 * (R.BM25_K1 + 1) / (5 + R.BM25_K1)
    got = R.fts5_bm25(columns, ["red"], {"red": 1}, 10, 3.0, R.COLUMN_WEIGHTS)
    assert got == pytest.approx(expected)
    # A term in most rows: FTS5 floors its idf at 1e-6 instead of going negative.
    assert R.fts5_bm25(columns, ["red"], {"red": 9}, 10, 3.0, R.COLUMN_WEIGHTS) > -1e-5


def test_an_empty_observed_at_ages_the_record_from_updated_at() -> None:
    # A hand-written or imported record file may have no observed_at: it is not "day zero".
    assert R.observed_since("", "2025-01-02T00:00:00Z") == "2025-01-02T00:00:00Z"
    assert R.observed_since(None, "2025-01-02T00:00:00Z") == "2025-01-02T00:00:00Z"
    assert R.observed_since("2024-12-01", "2025-01-02T00:00:00Z") == "2024-12-01"
    assert R.observed_since("2025-01-02", "2025-01-02T09:00:00Z") == "2025-01-02T09:00:00Z"
