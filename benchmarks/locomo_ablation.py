"""Ablation and exploration of memdir's journal-search recipe on LoCoMo (lexical methods only).

Run from the repository root (about two and a half minutes)::

    python benchmarks/locomo_ablation.py [path/to/locomo7-dev.json]

It reuses :mod:`memdir.bench.locomo` to load the conversations and to score rankings (evidence
recall@k, recall_all@5, MRR) and :mod:`memdir.kernel.lang.text` for terms and stop words, but builds
its own in-memory SQLite FTS5 indexes so that every ingredient of the recipe can be varied. No
LLM, no network, no embeddings: SQLite FTS5 ``bm25()`` and the Python standard library. Every
step is deterministic (ties are broken by turn order, then by term).

**The current recipe** (``src/memdir/kernel/storage/journal.py`` and ``recall.py``): one FTS5 table
with two columns, ``text`` (terms of the speaker and the turn, image caption included) and
``context`` (terms of the previous and next turn of the same session); an any-term OR query of
the question's stemmed terms, stop words dropped; ranked by ``bm25(turns, 1.0, 0.3)``.

**1. Ablation**: each ingredient of the current recipe removed or changed alone:

- ``stop words``: kept in the query;
- ``Porter stemming``: none (NFKC + casefold words only) on either side;
- ``speaker name in text``: not indexed;
- ``image captions`` (``[shares a photo: …]``): not indexed;
- ``context column``: none at all; or its weight 0.1 / 0.5 / 1.0 instead of 0.3;
- ``window``: neighbours up to 2 or 3 turns away instead of 1 (same column, same weight).

**2. Explored ingredients**, each added alone to the current recipe:

- ``date column``: the turn's day as words ("8 May 2023") in a ``date`` column of the turn
  table, weight ``date``, so "When did … in June?" or "… on October 13, 2023" can match; or a
  separate per-session table of those words (``date table``), added as ``w × bm25``;
- ``session table``: one FTS row per session (the terms of all its turns); a turn's score
  gains ``w × bm25(its session's row)`` (topic continuity over a whole session);
- ``speaker boost``: when the query names exactly one speaker (a query term equal to a term of
  a speaker's name), that speaker's turns score ``× (1 + boost)``. A name is in nearly every row
  (``text`` or ``context``), so FTS5's idf (clamped at 1e-6 for terms in half the rows or
  more) gives it no weight at all;
- ``length prior``: score ``× characters(turn text) ^ γ``. BM25's length normalisation
  (b = 0.75, fixed in FTS5) penalises long turns, yet long turns hold most facts (on LoCoMo 5 %
  of turns under 10 terms are evidence, 59 % of those over 60);
- ``question penalty``: a turn whose text ends with "?" scores ``× p`` (10 % of such turns are
  evidence, 26 % of the others);
- ``question words``: QUESTION_WORDS ("kind", "type", "likely", "describe", …) also dropped from
  the query: they phrase a question rather than name its topic;
- ``bigram columns``: two more columns of the turn table hold the turn's word bigrams
  (``a_b`` of consecutive terms, stop words skipped; tokenizer ``tokenchars _``) and its
  neighbours' (weights ``w`` and ``w × context``); the query adds its own bigrams as OR terms,
  a cheap proximity signal. ``bigram table``: the same in a separate table, added as
  ``w × bm25``;
- ``split tables``: turn text and neighbour context in two FTS tables, so a term's idf is its
  rarity among turns alone (FTS5 counts a row as containing a term if any column does),
  combined as ``bm25(text) + w × bm25(context)`` or by reciprocal-rank fusion (``RRF``, k = 60);
- ``asymmetric``: previous and next neighbours in separate columns with their own weights;
- ``window ±3, decay``: one context column per distance, weight ``0.3 × 0.5^(distance − 1)``;
- ``smoothing``: a turn gains a share of its ±1 neighbours' scores (score propagation);
- ``PRF``: RM3-style pseudo-relevance feedback: the 5 best terms of the top 3 turns
  (tf/length × idf; query terms, names and stop words excluded) searched again, added with a
  small weight.

**3. Tuning**: coordinate ascent over GRID, starting from the current recipe, maximising the
mean of recall@5/10/25/50 on conversations 0-3 only (the *tune* split); a change is kept only
if it gains more than MIN_GAIN. Conversations 4-6 are the *held-out* split.

**4. Ablation of the tuned recipe**: each of its ingredients reset to the current value; and
the date words without the day of the month ("May 2023"), which keeps a number in a query
("timeout 30") from matching every turn written on the 30th.

**5. Side by side**: current, tuned and *proposed* (the tuned recipe rescoring only FTS5's own
top 200 rows by ``bm25()`` of the turn table, as memdir would, so that a query's cost stays
bounded in a large journal), per split and per question category, and the latency on the
conversations of 600 turns or more.

Latency is wall time per query (FTS5 queries and Python scoring) over every question of the
split; the LoCoMo conversations have 369-689 turns.
"""

from __future__ import annotations

import itertools
import math
import re
import sqlite3
import statistics
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

from memdir.bench.locomo import CATEGORIES, Conversation, Scores, load
from memdir.kernel.lang.text import STOP_WORDS, normalize, terms

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo" / "locomo7-dev.json"
KS = (5, 10, 25, 50)
TUNE = range(4)
"""Conversations parameters are chosen on; 4-6 are held out."""
TOKENIZER = "unicode61 remove_diacritics 0"
_CAPTION = re.compile(r" \[shares a photo: .*\]$", re.S)
_WORD = re.compile(r"[^\W_]+")

QUESTION_WORDS = (
    "kind",
    "type",
    "likely",
    "might",
    "many",
    "much",
    "describe",
    "mention",
    "mentioned",
    "say",
    "said",
    "think",
    "according",
)
"""Question phrasing words tried as extra query stop words."""
STOP_TERMS = frozenset(terms(" ".join(STOP_WORDS)))


@dataclass(frozen=True)
class Recipe:
    """One search recipe; the defaults are memdir's current one."""

    name: str = "current"
    stem: bool = True  # Porter stemming (memdir's terms()); else NFKC + casefold words
    stop: bool = True  # drop STOP_WORDS from the query
    question_words: bool = False  # also drop QUESTION_WORDS
    speaker: bool = True  # speaker's name in the text column
    captions: bool = True  # image captions in the text
    window: int = 1  # neighbours on each side in the context columns (0: none)
    context: float = 0.3  # bm25 weight of the context columns
    prev_next: tuple[float, float] | None = None  # distinct weights of the previous/next sides
    decay: float = 1.0  # context weight × decay^(distance - 1), one column per distance
    date: float = 0.0  # bm25 weight of the session-date column (0: no date column)
    date_day: bool = True  # the day of the month among the date words ("8 May 2023")
    date_table: float = 0.0  # weight of a per-session date table instead
    session: float = 0.0  # weight of the per-session text table
    speaker_boost: float = 0.0  # × (1 + boost) for the one speaker named in the query
    length_prior: float = 0.0  # × characters of the turn's text ^ γ
    question_penalty: float = 1.0  # × p for a turn ending with "?"
    bigrams: float = 0.0  # weight of the bigram columns (own; neighbours × context)
    bigram_table: bool = False  # bigrams in a separate table instead of the turn table
    pool: int = 0  # rescore only the best `pool` rows by bm25 of the turn table (0: all)
    split: str = ""  # "", "sum" or "rrf": text and context in separate tables
    smoothing: float = 0.0  # + s × the neighbours' (±1) scores
    prf: float = 0.0  # weight of the feedback query (top 3 turns, 5 terms)

    def index_key(self) -> tuple[Any, ...]:
        """Return what the turn index depends on (indexes are cached by it)."""
        return (
            self.stem,
            self.speaker,
            self.captions,
            self.window,
            self.date > 0,
            self.date_day,
            self.prev_next is not None,
            self.split != "",
            self.decay != 1.0,
            self.bigrams > 0 and not self.bigram_table,
        )

    def describe(self) -> str:
        """Return the fields that differ from the current recipe."""
        base = Recipe()
        return (
            ", ".join(
                f"{f.name}={getattr(self, f.name)}"
                for f in fields(self)
                if f.name != "name" and getattr(self, f.name) != getattr(base, f.name)
            )
            or "(current recipe)"
        )


CURRENT = Recipe()


def plain_terms(text: str) -> list[str]:
    """Return the NFKC-casefolded words of ``text`` (no stemming)."""
    return _WORD.findall(normalize(text))


def date_words(turn: dict[str, Any], day: bool = True) -> str:
    """Return a turn's day as words, "8 May 2023", or "May 2023" (memdir has ``turns.at``)."""
    at = turn["at"]
    return f"{at.day} {at.strftime('%B')} {at.year}" if day else f"{at.strftime('%B')} {at.year}"


def _bigrams(seq: Sequence[str]) -> list[str]:
    content = [t for t in seq if t not in STOP_TERMS]
    return [f"{a}_{b}" for a, b in itertools.pairwise(content)]


def _match(query: Iterable[str]) -> str:
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in query)


class Index:
    """One conversation's in-memory FTS5 tables for one index layout."""

    def __init__(self, conversation: Conversation, recipe: Recipe) -> None:
        """Index every turn; the layout follows ``recipe.index_key()``."""
        self.tok: Callable[[str], list[str]] = terms if recipe.stem else plain_terms
        turns = conversation.turns
        self.ids = [t["dia_id"] for t in turns]
        sessions: dict[str, int] = {}
        self.session_of = [sessions.setdefault(t["session"], len(sessions)) for t in turns]
        self.speaker_of = [t["speaker"] for t in turns]
        self.speakers = {term: t["speaker"] for t in turns for term in self.tok(t["speaker"])}
        texts = [t["text"] if recipe.captions else _CAPTION.sub("", t["text"]) for t in turns]
        self.own = [self.tok(text) for text in texts]
        self.chars = [max(len(text), 1) for text in texts]
        self.is_question = [text.rstrip().endswith("?") for text in texts]
        self.df = Counter(term for own in self.own for term in set(own))
        self.conn = sqlite3.connect(":memory:")
        self._turn_tables(recipe, turns)
        self._session_tables(turns)
        self._bigram_table(max(recipe.window, 1))

    def neighbours(self, i: int, distance: int, sides: tuple[int, ...] = (-1, 1)) -> list[int]:
        """Return the turns ``distance`` away from ``i`` in its session, on ``sides``."""
        n = len(self.own)
        return [
            j
            for j in (i + s * distance for s in sides)
            if 0 <= j < n and self.session_of[j] == self.session_of[i]
        ]

    def context(
        self, i: int, window: int, sides: tuple[int, ...] = (-1, 1), min_distance: int = 1
    ) -> str:
        """Return the space-joined terms of the neighbours of ``i`` within ``window``."""
        return " ".join(
            term
            for d in range(min_distance, window + 1)
            for j in self.neighbours(i, d, sides)
            for term in self.own[j]
        )

    def _turn_tables(self, recipe: Recipe, turns: list[dict[str, Any]]) -> None:
        text = [
            " ".join((self.tok(t["speaker"]) if recipe.speaker else []) + own)
            for t, own in zip(turns, self.own, strict=True)
        ]
        dates = [
            " ".join(self.tok(date_words(t, recipe.date_day))) if recipe.date else "" for t in turns
        ]
        if recipe.decay != 1.0:
            ctx = [
                tuple(self.context(i, d, min_distance=d) for d in range(1, recipe.window + 1))
                for i in range(len(turns))
            ]
        elif recipe.prev_next is not None:
            ctx = [
                (self.context(i, recipe.window, (-1,)), self.context(i, recipe.window, (1,)))
                for i in range(len(turns))
            ]
        else:
            ctx = [(self.context(i, recipe.window),) for i in range(len(turns))]
        if recipe.split:  # text and context in separate tables
            self._table("turns", ["text", "date"], list(zip(text, dates, strict=True)))
            self._table("neighbours", ["context"], [c[:1] for c in ctx])
        else:
            names = ["text", "date", *(f"context{k}" for k in range(len(ctx[0])))]
            rows = [(a, b, *c) for a, b, c in zip(text, dates, ctx, strict=True)]
            if recipe.bigrams and not recipe.bigram_table:
                names += ["bigrams", "near_bigrams"]
                pairs = self.bigram_rows(recipe.window)
                rows = [(*r, *g) for r, g in zip(rows, pairs, strict=True)]
            self._table("turns", names, rows, tokenchars="_")

    def _session_tables(self, turns: list[dict[str, Any]]) -> None:
        body: dict[int, list[str]] = defaultdict(list)
        day: dict[int, str] = {}
        for i, turn in enumerate(turns):
            body[self.session_of[i]] += self.own[i]
            day.setdefault(self.session_of[i], " ".join(self.tok(date_words(turn))))
        self._table("sessions", ["body"], [(" ".join(body[s]),) for s in sorted(body)])
        self._table("days", ["body"], [(day[s],) for s in sorted(day)])

    def bigram_rows(self, window: int) -> list[tuple[str, str]]:
        """Return each turn's bigrams and its neighbours' (within ``window``)."""
        rows = []
        for i in range(len(self.own)):
            near = [
                b
                for d in range(1, window + 1)
                for j in self.neighbours(i, d)
                for b in _bigrams(self.own[j])
            ]
            rows.append((" ".join(_bigrams(self.own[i])), " ".join(near)))
        return rows

    def _bigram_table(self, window: int) -> None:
        self._table("bigrams", ["own", "near"], self.bigram_rows(window), tokenchars="_")

    def _table(
        self, name: str, columns: list[str], rows: list[tuple[str, ...]], tokenchars: str = ""
    ) -> None:
        tokenize = TOKENIZER + (f" tokenchars {tokenchars}" if tokenchars else "")
        self.conn.execute(
            f"CREATE VIRTUAL TABLE {name} USING fts5({', '.join(columns)}, tokenize='{tokenize}')"
        )
        marks = ", ".join("?" * (len(columns) + 1))
        self.conn.executemany(
            f"INSERT INTO {name} (rowid, {', '.join(columns)}) VALUES ({marks})",
            [(i, *row) for i, row in enumerate(rows)],
        )

    def bm25(
        self, table: str, query: Iterable[str], weights: Sequence[float] = (), limit: int = 0
    ) -> dict[int, float]:
        """Return {rowid: -bm25} of the rows of ``table`` matching any of ``query``.

        With ``limit``, only that many best rows (FTS5's own top-k).
        """
        match = _match(query)
        if not match:
            return {}
        args = "".join(f", {w}" for w in weights)
        sql = f"SELECT rowid, bm25({table}{args}) AS r FROM {table} WHERE {table} MATCH ?"
        if limit:
            sql += f" ORDER BY r LIMIT {int(limit)}"
        return {rowid: -score for rowid, score in self.conn.execute(sql, (match,))}


def query_terms(question: str, recipe: Recipe) -> list[str]:
    """Return the distinct query terms, stop words (and question words) dropped."""
    stop = (STOP_WORDS if recipe.stop else frozenset()) | (
        frozenset(QUESTION_WORDS) if recipe.question_words else frozenset()
    )
    kept: dict[str, None] = {}
    every: dict[str, None] = {}
    for word in _WORD.findall(normalize(question)):
        term = terms(word)[0] if recipe.stem else word
        every.setdefault(term, None)
        if word not in stop:
            kept.setdefault(term, None)
    return list(kept or every)


def query_bigrams(question: str, recipe: Recipe) -> list[str]:
    """Return the question's bigrams of consecutive non-stop terms."""
    seq = [terms(w)[0] if recipe.stem else w for w in _WORD.findall(normalize(question))]
    return list(dict.fromkeys(_bigrams(seq)))


def _ranks(scores: dict[int, float]) -> dict[int, int]:
    return {d: r for r, d in enumerate(sorted(scores, key=lambda d: (-scores[d], d)), 1)}


def turn_scores(
    ix: Index, recipe: Recipe, query: list[str], bigrams: Sequence[str] = ()
) -> dict[int, float]:
    """Return the BM25 part of the score (turn table, context, session, date tables)."""
    if recipe.split:
        text = ix.bm25("turns", query, (1.0, recipe.date))
        ctx = ix.bm25("neighbours", query)
        if recipe.split == "rrf":
            rt, rc = _ranks(text), _ranks(ctx)
            scores = {
                d: (1 / (60 + rt[d]) if d in rt else 0.0)
                + recipe.context * (1 / (60 + rc[d]) if d in rc else 0.0)
                for d in set(rt) | set(rc)
            }
        else:
            scores = dict(text)
            for d, s in ctx.items():
                scores[d] = scores.get(d, 0.0) + recipe.context * s
    else:
        if recipe.decay != 1.0:
            ctx_weights = tuple(recipe.context * recipe.decay**d for d in range(recipe.window))
        else:
            ctx_weights = recipe.prev_next or (recipe.context,)
        if recipe.bigrams and not recipe.bigram_table:
            pair_weights = (recipe.bigrams, recipe.bigrams * recipe.context)
            weights = (1.0, recipe.date, *ctx_weights, *pair_weights)
            scores = ix.bm25("turns", [*query, *bigrams], weights, recipe.pool)
        else:
            scores = ix.bm25("turns", query, (1.0, recipe.date, *ctx_weights), recipe.pool)
    for table, weight in (("sessions", recipe.session), ("days", recipe.date_table)):
        if weight and scores:
            by_session = ix.bm25(table, query)
            for d in scores:
                scores[d] += weight * by_session.get(ix.session_of[d], 0.0)
    return scores


def search(ix: Index, recipe: Recipe, question: str, k: int) -> list[str]:
    """Return the ids of the ``k`` best turns for ``question`` under ``recipe``."""
    query = query_terms(question, recipe)
    pairs = query_bigrams(question, recipe) if recipe.bigrams and not recipe.bigram_table else ()
    scores = turn_scores(ix, recipe, query, pairs)
    if recipe.bigrams and recipe.bigram_table and scores:
        near = ix.bm25("bigrams", query_bigrams(question, recipe), (1.0, recipe.context))
        for d, s in near.items():
            if d in scores:
                scores[d] += recipe.bigrams * s
    if recipe.prf and scores:
        _feedback(ix, recipe, query, scores)
    if recipe.smoothing and scores:
        base = dict(scores)
        for d in base:
            scores[d] += recipe.smoothing * sum(base.get(j, 0.0) for j in ix.neighbours(d, 1))
    named = {ix.speakers[t] for t in query if t in ix.speakers}
    boost = recipe.speaker_boost if len(named) == 1 else 0.0
    if boost or recipe.length_prior or recipe.question_penalty != 1.0:
        for d in scores:
            if boost and ix.speaker_of[d] in named:
                scores[d] *= 1.0 + boost
            if recipe.length_prior:
                scores[d] *= ix.chars[d] ** recipe.length_prior
            if ix.is_question[d]:
                scores[d] *= recipe.question_penalty
    ranked = sorted(scores, key=lambda d: (-scores[d], d))[:k]
    return [ix.ids[d] for d in ranked]


def _feedback(ix: Index, recipe: Recipe, query: list[str], scores: dict[int, float]) -> None:
    """RM3-style expansion: add the best 5 terms of the top 3 turns as a weighted query."""
    n = len(ix.own)
    weight: Counter[str] = Counter()
    for d in sorted(scores, key=lambda d: (-scores[d], d))[:3]:
        counts = Counter(ix.own[d])
        length = sum(counts.values()) or 1
        for term, c in counts.items():
            if term in query or term in STOP_TERMS or term in ix.speakers or len(term) < 3:
                continue
            weight[term] += c / length * math.log(1 + (n - ix.df[term] + 0.5) / (ix.df[term] + 0.5))
    expansion = [t for t, _ in sorted(weight.items(), key=lambda x: (-x[1], x[0]))[:5]]
    for d, s in turn_scores(ix, recipe, expansion).items():
        if d in scores:
            scores[d] += recipe.prf * s


# --- evaluation -------------------------------------------------------------------------------


@dataclass
class Result:
    """Scores of one recipe on the tune split, the held-out split and all conversations."""

    recipe: Recipe
    tune: Scores
    held: Scores
    all: Scores

    def objective(self) -> float:
        """Return the tuning objective: mean recall@5/10/25/50 on the tune split."""
        return _mean_recall(self.tune.summary())


class Bench:
    """Conversations, cached indexes, and recipe evaluation."""

    def __init__(self, conversations: list[Conversation]) -> None:
        """Keep the conversations; indexes are built on demand."""
        self.conversations = conversations
        self._indexes: dict[tuple[Any, ...], Index] = {}

    def index(self, number: int, recipe: Recipe) -> Index:
        """Return the (cached) index of conversation ``number`` for ``recipe``."""
        key = (number, recipe.index_key())
        if key not in self._indexes:
            self._indexes[key] = Index(self.conversations[number], recipe)
        return self._indexes[key]

    def run(self, recipe: Recipe, numbers: Iterable[int] | None = None) -> Result:
        """Score ``recipe`` on the given conversations (all by default)."""
        result = Result(recipe, Scores(KS), Scores(KS), Scores(KS))
        for number in range(len(self.conversations)) if numbers is None else numbers:
            ix = self.index(number, recipe)
            for question in self.conversations[number].questions:
                started = time.perf_counter()
                ranked = search(ix, recipe, question.text, max(KS))
                took = (time.perf_counter() - started) * 1000
                result.all.add(question, ranked, took)
                (result.tune if number in TUNE else result.held).add(question, ranked, took)
        return result


HEADER = (
    f"{'variant':44s} {'R@5':>5} {'R@10':>5} {'R@25':>5} {'R@50':>5} {'Rall5':>5} {'MRR':>5}"
    f" {'p50ms':>5} {'p95ms':>5} | {'tuneR5':>6} {'heldR5':>6} {'tuneM':>5} {'heldM':>5}"
)
"""The last columns: R@5 and the mean of R@5/10/25/50 on the tune and held-out splits."""


def line(name: str, result: Result) -> str:
    """Return one table row: all-conversation figures, then R@5 per split."""
    s, t, h = result.all.summary(), result.tune.summary(), result.held.summary()
    return (
        f"{name:44s} {s['recall@5']:5.1f} {s['recall@10']:5.1f} {s['recall@25']:5.1f}"
        f" {s['recall@50']:5.1f} {s['recall_all@5']:5.1f} {s['mrr']:5.3f}"
        f" {s['p50_ms']:5.2f} {s['p95_ms']:5.2f} | {t['recall@5']:6.1f} {h['recall@5']:6.1f}"
        f" {_mean_recall(t):5.1f} {_mean_recall(h):5.1f}"
    )


def _mean_recall(summary: dict[str, Any]) -> float:
    return statistics.fmean(summary[f"recall@{k}"] for k in KS)


def table(bench: Bench, title: str, recipes: list[Recipe]) -> list[Result]:
    """Run and print a table of recipes."""
    print(f"\n{title}\n{HEADER}")
    results = []
    for recipe in recipes:
        result = bench.run(recipe)
        print(line(recipe.name, result), flush=True)
        results.append(result)
    return results


def ablation() -> list[Recipe]:
    """Section 1: each ingredient of the current recipe removed or changed alone."""
    return [
        CURRENT,
        replace(CURRENT, name="- stop words (kept in the query)", stop=False),
        replace(CURRENT, name="- Porter stemming", stem=False),
        replace(CURRENT, name="- speaker name in text", speaker=False),
        replace(CURRENT, name="- image captions", captions=False),
        replace(CURRENT, name="- context column", window=0),
        replace(CURRENT, name="context weight 0.1", context=0.1),
        replace(CURRENT, name="context weight 0.5", context=0.5),
        replace(CURRENT, name="context weight 1.0", context=1.0),
        replace(CURRENT, name="window ±2", window=2),
        replace(CURRENT, name="window ±3", window=3),
    ]


def exploration() -> list[Recipe]:
    """Section 2: each explored ingredient added alone to the current recipe."""
    c = CURRENT
    return [
        replace(c, name="+ date column (weight 1)", date=1.0),
        replace(c, name="+ date column (weight 0.3)", date=0.3),
        replace(c, name="+ date table (weight 1)", date_table=1.0),
        replace(c, name="+ session table (weight 0.3)", session=0.3),
        replace(c, name="+ speaker boost 0.3", speaker_boost=0.3),
        replace(c, name="+ length prior 0.3", length_prior=0.3),
        replace(c, name="+ question penalty 0.8", question_penalty=0.8),
        replace(c, name="+ question words", question_words=True),
        replace(c, name="+ bigram columns (weight 0.25)", bigrams=0.25),
        replace(c, name="+ bigram table (weight 0.5)", bigrams=0.5, bigram_table=True),
        replace(c, name="split tables, sum (ctx 0.3)", split="sum"),
        replace(c, name="split tables, sum (ctx 0.5)", split="sum", context=0.5),
        replace(c, name="split tables, RRF", split="rrf", context=1.0),
        replace(c, name="asymmetric prev 0.4 / next 0.2", prev_next=(0.4, 0.2)),
        replace(c, name="asymmetric prev 0.2 / next 0.4", prev_next=(0.2, 0.4)),
        replace(c, name="window ±3, weight × 0.5 per step", window=3, decay=0.5),
        replace(c, name="+ smoothing 0.1", smoothing=0.1),
        replace(c, name="+ PRF 0.2", prf=0.2),
    ]


GRID: dict[str, list[Any]] = {
    "window": [1, 2, 3],
    "context": [0.2, 0.3, 0.4, 0.5],
    "date": [0.0, 0.5, 1.0, 2.0],
    "date_table": [0.0, 0.5, 1.0],
    "session": [0.0, 0.2, 0.5],
    "speaker_boost": [0.0, 0.15, 0.3, 0.5],
    "length_prior": [0.0, 0.1, 0.2, 0.3],
    "question_penalty": [1.0, 0.9, 0.8],
    "question_words": [False, True],
    "bigrams": [0.0, 0.25, 0.5],
    "smoothing": [0.0, 0.1],
    "prf": [0.0, 0.1],
}
"""Values coordinate ascent tries, one parameter at a time."""
MIN_GAIN = 0.1
"""Objective points (mean recall, tune split) a change must gain to be kept: noise otherwise."""


def tune(bench: Bench, start: Recipe, passes: int = 3) -> Recipe:
    """Section 3: coordinate ascent on the tune split (conversations 0-3) only.

    For each parameter in turn, every value in GRID is tried with the others fixed; the best
    is kept if it beats the current value by MIN_GAIN. Passes repeat until nothing changes.
    """
    print("\n3. Coordinate ascent on the tune split (objective: mean R@5/10/25/50, tune)")
    best = start
    best_score = bench.run(best, TUNE).objective()
    print(f"   start {best_score:.2f}: {best.describe()}")
    for number in range(1, passes + 1):
        improved = False
        for name, values in GRID.items():
            tried = {
                value: bench.run(replace(best, **{name: value}), TUNE).objective()
                for value in values
                if value != getattr(best, name)
            }
            value, score = max(tried.items(), key=lambda item: item[1])
            cells = " ".join(f"{v}:{s:.2f}" for v, s in tried.items())
            if score > best_score + MIN_GAIN:
                best, best_score, improved = replace(best, **{name: value}), score, True
                print(f"   pass {number}: {name}={value} -> {score:.2f}   ({cells})", flush=True)
            else:
                kept = getattr(best, name)
                print(f"   pass {number}: {name} stays {kept}   ({cells})", flush=True)
        if not improved:
            break
    return replace(best, name="tuned")


def compare(bench: Bench, recipes: list[Recipe]) -> None:
    """Section 5: per-split, per-category and large-conversation figures side by side."""
    print("\n5. Side by side, per split")
    print(
        f"{'recipe':10s} {'split':5s} {'R@5':>5} {'R@10':>5} {'R@25':>5} {'R@50':>5}"
        f" {'Rall5':>5} {'MRR':>5} {'p50ms':>5} {'p95ms':>5}"
    )
    results = [bench.run(r) for r in recipes]
    for result in results:
        for split in ("tune", "held", "all"):
            s = getattr(result, split).summary()
            print(
                f"{result.recipe.name:10s} {split:5s} {s['recall@5']:5.1f} {s['recall@10']:5.1f}"
                f" {s['recall@25']:5.1f} {s['recall@50']:5.1f} {s['recall_all@5']:5.1f}"
                f" {s['mrr']:5.3f} {s['p50_ms']:5.2f} {s['p95_ms']:5.2f}"
            )
    print(
        "\n   per category, all conversations: R@5 R@10 R@50 of "
        + ", ".join(r.recipe.name for r in results)
    )
    for category, label in CATEGORIES.items():
        count = results[0].all.by_category[category].summary()["questions"]
        cells = []
        for result in results:
            s = result.all.by_category[category].summary()
            cells.append(f"{s['recall@5']:5.1f} {s['recall@10']:5.1f} {s['recall@50']:5.1f}")
        print(f"   {label:12s} ({count:3d})  " + "  |  ".join(cells))
    large = [n for n, c in enumerate(bench.conversations) if len(c.turns) >= 600]
    print(f"\n   latency on the conversations of 600+ turns ({len(large)}), ms per query:")
    for recipe in recipes:
        s = bench.run(recipe, large).all.summary()
        print(f"   {recipe.name:10s} p50 {s['p50_ms']:.2f}  p95 {s['p95_ms']:.2f}")


def final_ablation(best: Recipe) -> list[Recipe]:
    """Section 4: each ingredient of the tuned recipe reset to the current recipe's value."""
    out = [best]
    for f in fields(best):
        if f.name != "name" and getattr(best, f.name) != getattr(CURRENT, f.name):
            value = getattr(CURRENT, f.name)
            out.append(replace(best, name=f"tuned, {f.name}={value}", **{f.name: value}))
    if best.date:
        out.append(replace(best, name="tuned, date words without the day", date_day=False))
    return out


SHIPPED = Recipe(
    name="shipped",
    question_words=True,
    window=2,
    context=0.5,
    date=2.0,
    date_day=False,
    speaker_boost=0.3,
    length_prior=0.2,
    question_penalty=0.9,
    pool=200,
)
"""What memdir.kernel.storage.journal and memdir.kernel.index.recall implement: the proposed recipe
without the
bigram columns and the session table (each within noise on the held-out conversations) and
with the month instead of the day in the date column."""


def main(argv: list[str]) -> None:
    """Run every section and print the tables."""
    bench = Bench(load(Path(argv[0]) if argv else DATA))
    started = time.perf_counter()
    table(bench, "1. Ablation of the current recipe (all 7 conversations)", ablation())
    table(bench, "2. Ingredients added alone to the current recipe", exploration())
    best = tune(bench, CURRENT)
    print(f"\n   tuned recipe: {best.describe()}")
    table(bench, "4. Ablation of the tuned recipe", final_ablation(best))
    proposed = replace(best, name="proposed", pool=200)
    print(f"   proposed recipe: {proposed.describe()}")
    compare(bench, [CURRENT, best, proposed, SHIPPED])
    table(bench, "6. Ablation of the recipe memdir ships", final_ablation(SHIPPED))
    print(f"\n({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main(sys.argv[1:])
