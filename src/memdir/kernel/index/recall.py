"""Recall: ranked records for a query, and ranked journal turns, from the index alone.

**Records** (DESIGN §5). Candidates are the records whose text, aliases, tags or body contain
any query term (stop words dropped), and the ``limit`` best of them by the score below come
back: exactly those, found by :func:`top_records` from the SQLite index's postings without
scoring every candidate (max-score pruning; issue 16, item 6). A backend without postings
(PostgreSQL), or a query with a one-character CJK term (a prefix), takes the older way: FTS5's
``bm25()`` picks a pool of the ``max(5 × limit, 50)`` best, from the rarer terms when the
common ones match too many records (:data:`CANDIDATE_CAP`), and only those are scored. The
score, in Python::

    score = relevance × recency × importance [× decay]

- ``relevance``: BM25 as FTS5 defines it for a multi-column row (per term, the column
  weights 4 text, 3 aliases, 2 tags, 1 body multiply the term's counts, k1 = 1.2, b = 0.75,
  length = all the row's terms) but with Lucene's always-positive idf,
  ``ln(1 + (N − n + 0.5) / (n + 0.5))``. FTS5's own idf, ``ln((N − n + 0.5) / (n + 0.5))``, is
  clamped to 1e-6 for a term in half the records or more, which makes every score in a small
  store vanish; thresholds and ``--explain`` need a scale that means the same in a store of
  five records as in one of 100,000.
- ``recency = 0.85 + 0.15 × 0.5 ^ (age_days / 90)``: mild, between 0.85 and 1.0; the age
  counts from ``observed_at`` when that is an earlier day than ``updated_at``. A strong
  recency decay cost up to 20 points recall on LoCoMo (DESIGN §5), so it only breaks ties.
- ``importance = 0.75 + 0.05 × importance``: 0.8 for importance 1, 1.0 for the default 5,
  1.25 for 10.
- ``decay = 0.5 ^ (age_days / half_life)``, only when ``[recall] decay = true``: the forgetting
  curve, half-life 365 days for importance 7..10, 90 for 4..6, 30 for 1..3 (the tiers of
  wolfmem's curve, spread over memdir's 1..10 scale). Nothing is deleted.

Only ``active`` records come back unless other statuses are asked for (DESIGN §10.7).

**Journal turns.** The same terms, with the question-shaping words (:data:`QUESTION_WORDS`)
dropped too, over ``turns_fts``: each turn's own text with its speaker (weight 1), its month
("May 2023", weight 2, for "when…" questions) and the text of the two turns on each side in
the same session (weight 0.5). FTS5's ``bm25()`` picks a pool of ``max(200, 4 × limit)``
turns, then three priors re-rank it: × 1.3 for the one speaker the query names, × len(text) ^
0.2, × 0.9 for a turn that is a question. On LoCoMo (evidence recall@5, no LLM) the neighbour
column alone is worth about 9 points, widening it to ±2 another 4.6, the month 2, the priors
about 3; every constant was chosen on conversations 0-3 and checked on 4-6
(``benchmarks/locomo_ablation.py``, ``docs/benchmarks.md``).

**Rows in, ranking out.** Every function here but :func:`recall` and :func:`search_turns`
works on plain rows (:data:`~memdir.kernel.index.interface.RecordRow`, ``TurnRow``) and runs
no query; those two fetch the rows through the index interface
(:class:`~memdir.kernel.index.interface.IndexBackend`), so ranking is the same for every
backend and testable without a database (``tests/kernel/test_ranking.py``).

Imports: standard library only.
"""

from __future__ import annotations

import json
import math
import time
from bisect import insort
from collections import Counter
from collections.abc import Iterable
from operator import itemgetter

from memdir.kernel.base.clock import age_days, utc_now
from memdir.kernel.lang.text import QUESTION_WORDS, is_cjk, query_terms, term_words
from memdir.kernel.lang.text import terms as term_list

TYPE_CHECKING = False  # the hook path never imports typing or dataclasses (start-up cost)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from memdir.kernel.base.validity import Served
    from memdir.kernel.index.interface import IndexBackend, RecordRow, TurnRow

    Similarity = Callable[[str, list[str], list[list[str]], list[str]], list[float]]

COLUMN_WEIGHTS = (4.0, 3.0, 2.0, 1.0)
"""BM25 weights of records_fts columns: text, aliases, tags, body."""
BM25_K1 = 1.2
BM25_B = 0.75
RECENCY_FLOOR = 0.85
RECENCY_HALF_LIFE_DAYS = 90.0
IMPORTANCE_BASE = 0.75
IMPORTANCE_STEP = 0.05
POOL_MIN = 50
POOL_FACTOR = 5
TURN_WEIGHTS = (1.0, 2.0, 0.5)
"""BM25 weights of turns_fts columns: the turn (with its speaker), its month, its neighbours."""
TURN_CAP = 4000
"""Journal turns whose own text may hold the searched words before the search is limited: rarest
words first as for records (:func:`searchable`); when even the rarest is in more turns than this,
only the most recent matches are ranked (see :func:`search_turns`)."""
TURN_CONTEXT_SPREAD = 5
"""A word in a turn's text also matches the rows that have that turn as a neighbour (±2)."""
TURN_POOL = 200
"""Turns fetched by BM25 before the priors re-rank them."""
SPEAKER_BOOST = 1.3
"""× for a turn by the one speaker the query names ("what did Caroline…")."""
LENGTH_PRIOR = 0.2
"""× len(text) ^ 0.2: a longer turn carries more to find (a mild prior, 1.0 at one character)."""
QUESTION_PENALTY = 0.9
"""× for a turn that is itself a question: answers are what a search looks for."""
SEMANTIC_WEIGHT = 1.0
"""With an embedding model (optional): ``score / best score + w × cosine`` over the pool; w was
chosen on LoCoMo's tuning conversations (0.3, 0.6 and 1.0 tried; ``docs/benchmarks.md``). A
model may bring its own (``memdir.semantic``: ``minilm`` blends two cosines, w 2.0)."""
SEMANTIC_SPREAD = 2
"""Neighbours on each side (same session) the embedding of a turn takes in, as the index does."""


def half_life_days(importance: int) -> float:
    """Return the forgetting-curve half-life for an importance (see the module docstring)."""
    if importance >= 7:
        return 365.0
    if importance >= 4:
        return 90.0
    return 30.0


def recency_factor(age: float) -> float:
    """Return ``0.85 + 0.15 × 0.5^(age/90)`` for an age in days."""
    return RECENCY_FLOOR + (1.0 - RECENCY_FLOOR) * float(0.5 ** (age / RECENCY_HALF_LIFE_DAYS))


def importance_factor(importance: int) -> float:
    """Return ``0.75 + 0.05 × importance``."""
    return IMPORTANCE_BASE + IMPORTANCE_STEP * importance


def idf(docs: int, with_term: int) -> float:
    """Return Lucene's BM25 idf, ``ln(1 + (N − n + 0.5) / (n + 0.5))``: always positive."""
    return math.log(1.0 + (docs - with_term + 0.5) / (with_term + 0.5))


class Hit:
    """One recalled record with its score and every factor of it."""

    __slots__ = ("doc", "factors", "matched", "score")

    def __init__(
        self,
        doc: dict[str, Any],
        score: float,
        factors: dict[str, float],
        matched: tuple[str, ...] = (),
    ) -> None:
        self.doc = doc  # the record's JSON form (DESIGN §3 keys plus body)
        self.score = score
        self.factors = factors  # relevance, recency, importance, [decay], age_days
        self.matched = matched  # the query's words found in it

    def to_json(self, *, explain: bool = False) -> dict[str, Any]:
        """Return the record's JSON with ``score`` (and ``explain`` when asked)."""
        out = {k: v for k, v in self.doc.items() if k != "extra"}
        out["score"] = round(self.score, 6)
        if explain:
            out["explain"] = {"matched": list(self.matched), **self.factors}
        return out


class Recalled:
    """The answer to one recall."""

    __slots__ = ("hits", "query", "terms", "took_ms")

    def __init__(self, query: str, terms: tuple[str, ...], hits: list[Hit], took_ms: float) -> None:
        self.query = query
        self.terms = terms  # the query terms searched (stop words dropped, stemmed)
        self.hits = hits
        self.took_ms = took_ms


CANDIDATE_CAP = 20_000
"""Most rows a query may match before its commonest terms are left out of the FTS search.

In a store of 100,000 records or a journal of 1,000,000 turns a word like "like" is in a large
share of rows, and scoring them all costs tens to hundreds of milliseconds while moving the
ranking little: its idf is near zero. Terms are taken rarest first while the rows they match add
up to at most this; the rarest term is always kept. Record recall still counts every query term
when it scores the candidates."""


def searchable(terms: list[str], frequencies: dict[str, int], cap: int = 0) -> list[str]:
    """Return the terms to search for: rarest first while they match at most ``cap`` rows.

    ``cap`` defaults to :data:`CANDIDATE_CAP`; the rarest term is always kept.
    """
    cap = cap or CANDIDATE_CAP
    kept: set[str] = set()
    total = 0
    for term in sorted(terms, key=lambda t: frequencies.get(t, 0)):
        rows = frequencies.get(term, 0)
        if kept and total + rows > cap:
            continue
        kept.add(term)
        total += rows
    return [t for t in terms if t in kept]


def _term_counts(
    columns: tuple[str, ...], terms: list[str], weights: tuple[float, ...] = COLUMN_WEIGHTS
) -> dict[str, float]:
    """Return each term's weighted count over a row's columns (CJK 1-character terms: prefix)."""
    weighted: dict[str, float] = {}
    for weight, column in zip(weights, columns, strict=True):
        counts = Counter(column.split())
        for term in terms:
            if len(term) == 1 and is_cjk(term):
                hits = sum(n for token, n in counts.items() if token.startswith(term))
            else:
                hits = counts.get(term, 0)
            if hits:
                weighted[term] = weighted.get(term, 0.0) + weight * hits
    return weighted


def fts5_idf(docs: int, with_term: int) -> float:
    """Return FTS5's BM25 idf, ``ln((N − n + 0.5) / (n + 0.5))``, floored at 1e-6 as FTS5 does."""
    value = math.log((docs - with_term + 0.5) / (with_term + 0.5))
    return value if value > 0 else 1e-6


def fts5_bm25(
    columns: tuple[str, ...],
    terms: list[str],
    frequencies: dict[str, int],
    docs: int,
    average: float,
    weights: tuple[float, ...],
) -> float:
    """Return what FTS5's ``bm25()`` returns for one row: minus the BM25 sum, lower is better.

    For a backend without FTS5 (PostgreSQL) to pick the same pool as SQLite does.

    Args:
        columns: The row's index terms per column, space-separated.
        terms: The query terms (a 1-character CJK term counts as a prefix).
        frequencies: Rows holding each term (BM25's n).
        docs: Rows in the table (N).
        average: Mean terms per row (avgdl).
        weights: One weight per column.
    """
    length = sum(len(column.split()) for column in columns)
    norm = BM25_K1 * (1 - BM25_B + BM25_B * length / max(average, 1e-9))
    total = 0.0
    for term, hits in _term_counts(columns, terms, weights).items():
        total += fts5_idf(docs, frequencies.get(term, 0)) * hits * (BM25_K1 + 1) / (hits + norm)
    return -total


def score_records(
    rows: Iterable[RecordRow],
    query: str,
    terms: list[str],
    frequencies: dict[str, int],
    totals: tuple[int, int],
    *,
    limit: int,
    decay: bool = False,
    min_score: float = 0.0,
) -> list[Hit]:
    """Score candidate rows (module docstring) and return the ``limit`` best, best first.

    Args:
        rows: Candidates from :meth:`~memdir.kernel.index.interface.IndexBackend.record_pool`.
        query: The query as typed (to name the matched words as the user wrote them).
        terms: Its query terms.
        frequencies: Records holding each term.
        totals: ``(records, terms in all of them)``.
        limit: Most hits to return.
        decay: Apply the forgetting curve.
        min_score: Leave out hits scoring below this.

    Returns:
        Hits ordered by score, then by rowid (older first).
    """
    scored = _score_rows(rows, query, terms, frequencies, totals, decay=decay)
    scored.sort(key=lambda item: (-item[0], item[1]))
    return [hit for score, _, hit in scored[:limit] if score >= min_score]


def _score_rows(
    rows: Iterable[RecordRow],
    query: str,
    terms: list[str],
    frequencies: dict[str, int],
    totals: tuple[int, int],
    *,
    decay: bool,
) -> list[tuple[float, int, Hit]]:
    """Return ``(score, rowid, hit)`` for each row, unordered (see :func:`score_records`)."""
    docs, total = totals
    average = total / docs if docs else 1.0
    surface = term_words(query)
    weights = {term: idf(docs, frequencies.get(term, 0)) for term in terms}
    scored: list[tuple[float, int, Hit]] = []
    for rowid, doc_json, importance, updated_at, length, *columns in rows:
        counts = _term_counts(tuple(columns), terms)
        norm = BM25_K1 * (1 - BM25_B + BM25_B * length / max(average, 1e-9))
        relevance = sum(weights[t] * f * (BM25_K1 + 1) / (f + norm) for t, f in counts.items())
        doc = json.loads(doc_json)
        age = age_days(observed_since(doc.get("observed_at"), updated_at))
        factors = {
            "relevance": round(relevance, 6),
            "recency": round(recency_factor(age), 6),
            "importance": round(importance_factor(importance), 6),
            "age_days": round(age, 3),
        }
        score = relevance * recency_factor(age) * importance_factor(importance)
        if decay:
            factors["decay"] = round(0.5 ** (age / half_life_days(importance)), 6)
            factors["half_life_days"] = half_life_days(importance)
            score *= 0.5 ** (age / half_life_days(importance))
        matched = tuple(surface.get(t, t) for t in terms if t in counts)
        scored.append((score, rowid, Hit(doc, score, factors, matched)))
    return scored


IMPORTANCE_CEILING = 1.25
"""The largest importance factor (importance 10; the record reader clamps it to 1..10)."""
BOUND_SLACK = 1e-9
"""Relative margin on every upper bound, so float rounding never prunes a record that ties."""
LONG_POSTINGS = 256
"""A term in more records than this is worth trying to stop before (:func:`top_records`, 2)."""
FINISH_BATCH = 32
"""Records completed at once in step 4 (one point-read query per unread term)."""
PROBE_COST = 8
"""A point read of one posting costs about this many postings read in order (SQLite, measured
on the 100,000-record index of ``benchmarks/recall_exact.py``): past that, a term's postings
are read whole."""


def top_records(
    index: Any,
    query: str,
    terms: list[str],
    frequencies: dict[str, int],
    totals: tuple[int, int],
    *,
    kinds: list[str],
    statuses: list[str],
    limit: int,
    decay: bool = False,
    min_score: float = 0.0,
    served: Served | None = None,
) -> list[Hit]:
    """Return exactly the ``limit`` best records by :func:`score_records`, reading fewer rows.

    The same hits, in the same order, as scoring every record that holds any query term and
    passes the filters (``tests/kernel/index/test_top_records.py`` checks it on LoCoMo stores
    and on edge cases), found with max-score pruning (Turtle & Flood, 1995) over the index's
    postings (:meth:`~memdir.kernel.index.sqlite.Index.record_postings`). A record's score is
    ``Σ_t bm25_t × importance × recency [× decay]``, and recency and decay are at most 1, so
    ``Σ_t bm25_t × importance`` (its postings' values, summed) bounds it from above.

    1. Terms are read rarest first (largest idf first). Reading one adds ``bm25_t ×
       importance`` to the partial sum of every record holding it; a term not read yet can add
       at most ``idf × (k1 + 1) × 1.25`` (BM25's saturation, importance 10): its bound.
    2. Before a long posting list (over :data:`LONG_POSTINGS` records), the ``limit``
       unscored records with the best partial sums get the unread terms' exact values (point
       reads of their postings); when even at the lowest recency (0.85) they would clear the
       unread terms' bounds, they are scored exactly, their rows fetched through the filters
       (a record the filters withhold never counts): ``θ`` is the ``limit``-th best exact
       score so far.
    3. Once the unread terms' bounds add up to less than ``θ``, a record holding none of the
       terms read cannot enter the answer, and the rest of the terms (the common ones, with the
       longest postings) are never read in full.
    4. The records read whose ``partial + Σ unread bounds`` reaches ``θ`` get the unread
       terms' exact values too, which makes their bound their whole ``Σ_t bm25_t ×
       importance``. They are scored exactly in order of that bound, ``limit`` at a time,
       until it falls below ``θ``. Ties are ordered by rowid, as in :func:`score_records`;
       every comparison of a bound with ``θ`` keeps a relative margin of
       :data:`BOUND_SLACK`, so float rounding never prunes a record that ties.

    On LoCoMo questions over 100,000 records, a record holds few of a question's five to nine
    terms, so the bounds of the unread terms stay high until two or three are left: most
    posting lists are still read, and reading them (about 0.5 µs a posting, in Python) is the
    time left (``benchmarks/recall_exact.py``, ``docs/performance.md``).

    Args:
        index: An index with ``record_postings`` and ``record_rows``
            (:class:`~memdir.kernel.index.sqlite.Index`).
        query: The query as typed (to name the matched words as the user wrote them).
        terms: Its query terms (no 1-character CJK term: those match as prefixes, which the
            postings cannot answer; :func:`recall` ranks them from the pool).
        frequencies: Records holding each term.
        totals: ``(records, terms in all of them)``.
        kinds: Only these kinds (all when empty).
        statuses: Only these statuses (all when empty).
        limit: Most hits to return.
        decay: Apply the forgetting curve.
        min_score: Leave out hits scoring below this.
        served: The read filter (as :func:`recall`'s), in place of ``statuses``: applied
            where the rows are read (``record_rows``, the same ``WHERE`` as ``record_pool``),
            at one instant for the whole search.

    Returns:
        Hits ordered by score, then by rowid (older first).
    """
    if served is not None and served.timed and served.at is None:
        served = served.but(at=utc_now())  # every row read against the same "now"
    filters = (kinds, statuses, served)
    search = _MaxScore(index, query, terms, frequencies, totals, filters, decay, limit)
    search.read_terms()
    search.score_the_rest()
    ranked = sorted(search.exact.values(), key=lambda item: (-item[0], item[1]))
    return [hit for value, _, hit in ranked[:limit] if value >= min_score]


class _MaxScore:
    """The state of one :func:`top_records` search (its steps are that docstring's)."""

    def __init__(
        self,
        index: Any,
        query: str,
        terms: list[str],
        frequencies: dict[str, int],
        totals: tuple[int, int],
        filters: tuple[list[str], list[str], Served | None],
        decay: bool,
        limit: int,
    ) -> None:
        docs, total = totals
        average = total / docs if docs else 1.0
        wanted = [t for t in dict.fromkeys(terms) if frequencies.get(t, 0) > 0]
        self.weights = {t: idf(docs, frequencies[t]) for t in wanted}
        self.bounds = {t: self.weights[t] * (BM25_K1 + 1) * IMPORTANCE_CEILING for t in wanted}
        self.unread = sorted(wanted, key=lambda t: (-self.bounds[t], t))
        self.rest = sum(self.bounds.values())  # Σ bounds of the unread terms
        self.norm = (BM25_K1 * (1 - BM25_B), BM25_K1 * BM25_B / max(average, 1e-9))
        self.partial: dict[int, float] = {}  # rowid → Σ posting values of the terms read
        self.complete: set[int] = set()  # rowids whose partial counts the unread terms too
        self.exact: dict[int, tuple[float, int, Hit]] = {}
        self.seen: set[int] = set()  # scored exactly, or withheld by the filters
        self.best: list[float] = []  # the ``limit`` best exact scores, ascending: θ = best[0]
        self.limit = limit
        self.frequencies = frequencies
        self.scoring = (index, query, terms, frequencies, totals, filters, decay)

    def scale(self, term: str) -> tuple[float, float, float]:
        """The constants that make a posting's value ``bm25_t × importance factor``."""
        return self.weights[term] * (BM25_K1 + 1), IMPORTANCE_BASE, IMPORTANCE_STEP

    def beaten(self, bound: float) -> bool:
        """Whether a record whose score is at most ``bound`` cannot enter the answer."""
        return len(self.best) >= self.limit and bound * (1 + BOUND_SLACK) < self.best[0]

    def finish(self, rowids: list[int]) -> None:
        """Add the unread terms' values to these records' partial sums.

        By point reads of the ``(term, record)`` key; for a term whose postings are fewer than
        :data:`PROBE_COST` × the records asked, by reading its postings whole (a point read
        costs about as much as reading that many postings in order).
        """
        todo = [r for r in rowids if r not in self.complete]
        if not todo:
            return
        partial, index = self.partial, self.scoring[0]
        wanted = set(todo)
        for term in self.unread:
            if self.frequencies[term] < PROBE_COST * len(todo):
                for rowid, part in index.record_postings(term, self.scale(term), self.norm):
                    if rowid in wanted:
                        partial[rowid] += part
                continue
            for rowid, part in index.record_postings(term, self.scale(term), self.norm, todo):
                partial[rowid] += part
        self.complete.update(todo)

    def score(self, rowids: list[int]) -> None:
        """Score these records exactly (those the filters pass) and update ``θ``."""
        index, query, terms, frequencies, totals, (kinds, statuses, served), decay = self.scoring
        self.seen.update(rowids)
        rows = index.record_rows(rowids, kinds, statuses, served)
        best = self.best
        for item in _score_rows(rows, query, terms, frequencies, totals, decay=decay):
            self.exact[item[1]] = item
            if len(best) < self.limit:
                insort(best, item[0])
            elif item[0] > best[0]:
                insort(best, item[0])
                del best[0]

    def read_terms(self) -> None:
        """Steps 1-3: read postings rarest first until the unread terms cannot matter."""
        partial, limit = self.partial, self.limit
        while self.unread:
            self.read_whole(self.unread[0])
            if not self.unread or self.beaten(self.rest):
                return
            if len(partial) < limit or self.frequencies[self.unread[0]] <= LONG_POSTINGS:
                continue  # the next term's postings are short: reading them is cheaper
            self.try_to_stop()
            if self.beaten(self.rest):
                return

    def try_to_stop(self) -> None:
        """Score the best records so far, when that may raise ``θ`` over the unread bounds.

        Their bounds are completed first (point reads), so the test is on whole sums.
        """
        import heapq  # first needed here (a term in LONG_POSTINGS records): not at import time

        partial, limit, seen = self.partial, self.limit, self.seen
        best = heapq.nlargest(limit + len(seen), partial.items(), key=itemgetter(1))
        top = [rowid for rowid, _ in best if rowid not in seen][:limit]
        self.finish(top)
        if len(top) < limit or min(partial[r] for r in top) * RECENCY_FLOOR <= self.rest:
            return  # at the lowest recency their scores would not clear the unread bounds
        if not self.beaten(max(partial[r] for r in top)):
            self.score(top)

    def score_the_rest(self) -> None:
        """Step 4: complete the bounds of the records that may still enter, score the best.

        Records are completed lazily, best partial sum first, :data:`FINISH_BATCH` at a time,
        and scored as soon as their whole bound is at least every uncompleted record's
        (``partial + Σ unread bounds``): ``θ`` rises early, and the records it then beats are
        never completed. Once the records completed so far add up to more point reads than
        reading an unread term's postings whole would cost (:data:`PROBE_COST`), that term is
        read whole instead (at most about twice the cheaper of the two: the ski-rental rule).
        """
        import heapq  # not at import time (see try_to_stop)

        partial, seen, complete = self.partial, self.seen, self.complete
        floor = self.best[0] / (1 + BOUND_SLACK) if len(self.best) >= self.limit else -math.inf
        ready: list[tuple[float, int]] = []  # (−whole bound, rowid) of completed records
        todo: list[int] = []  # the others
        for rowid, part in partial.items():
            if rowid in seen:
                continue
            if rowid in complete or not self.unread:
                if part >= floor:
                    ready.append((-part, rowid))
            elif part + self.rest >= floor:
                todo.append(rowid)
        heapq.heapify(ready)
        todo.sort(key=partial.__getitem__, reverse=True)  # best first (ties in any order)
        start = probed = 0
        while True:
            ahead = partial[todo[start]] + self.rest if start < len(todo) else -math.inf
            if ready and -ready[0][0] >= ahead:  # no uncompleted record can beat these
                if self.beaten(-ready[0][0]):
                    return
                batch: list[int] = []
                while ready and len(batch) < self.limit and -ready[0][0] >= ahead:
                    batch.append(heapq.heappop(ready)[1])
                self.score(batch)
                continue
            if start >= len(todo) or self.beaten(ahead):
                return  # every record left is bounded by ``ahead`` or less
            cheapest = min(self.unread, key=lambda t: (self.frequencies[t], t))
            if self.frequencies[cheapest] <= PROBE_COST * probed:
                self.read_whole(cheapest)
                left = [r for r in todo[start:] if r not in complete]
                if not self.unread:  # every partial sum is whole now
                    for rowid in left:
                        heapq.heappush(ready, (-partial[rowid], rowid))
                    left = []
                todo, start = sorted(left, key=partial.__getitem__, reverse=True), 0
                continue
            batch = todo[start : start + FINISH_BATCH]
            start += FINISH_BATCH
            probed += len(batch)
            self.finish(batch)
            for rowid in batch:
                heapq.heappush(ready, (-partial[rowid], rowid))

    def read_whole(self, term: str) -> None:
        """Read an unread term's postings into the partial sums (records not yet complete)."""
        self.unread.remove(term)
        self.rest = sum(self.bounds[t] for t in self.unread)  # (not subtracted: rounding)
        partial, complete = self.partial, self.complete
        get = partial.get
        for rowid, part in self.scoring[0].record_postings(term, self.scale(term), self.norm):
            if rowid not in complete:
                partial[rowid] = get(rowid, 0.0) + part


def observed_since(observed_at: object, updated_at: str) -> str:
    """Return the instant recency counts from: ``observed_at`` when it is on an earlier day.

    A belief observed in March and written down in June is three months old (Talewell's
    ``observedAt``; ``memdir remember --observed-at``). A belief observed the day it was
    written counts from ``updated_at``, so a confirmation still refreshes it; so does one with
    no ``observed_at`` (a hand-written or imported file), which used to count as age 0.
    """
    if isinstance(observed_at, str) and observed_at and observed_at[:10] < updated_at[:10]:
        return observed_at
    return updated_at


def recall(
    index: IndexBackend,
    query: str,
    *,
    limit: int = 10,
    kinds: Iterable[str] = (),
    statuses: Iterable[str] = ("active",),
    decay: bool = False,
    min_score: float = 0.0,
    explain: bool = False,
    served: Served | None = None,
) -> Recalled:
    """Return the records of ``index`` most relevant to ``query``, best first.

    Args:
        index: An open index.
        query: Free text in any language.
        limit: Most hits to return.
        kinds: Only these kinds (all when empty).
        statuses: Only these statuses; ``("active",)`` unless candidates etc. are asked for.
        decay: Apply the forgetting curve.
        min_score: Leave out hits scoring below this.
        explain: Kept for symmetry with the CLI; hits always carry their factors.
        served: The read filter (:class:`memdir.kernel.base.validity.Served`: status, scope
            and project, valid time, tombstoned values), applied in the index query in place
            of ``statuses``; every serving surface passes its store's.

    Returns:
        A :class:`Recalled`; ``took_ms`` is wall time in milliseconds.
    """
    del explain
    started = time.perf_counter()
    terms = query_terms(query)
    if not terms or limit <= 0:
        return Recalled(query, tuple(terms), [], (time.perf_counter() - started) * 1000)
    frequencies = index.record_frequencies(terms)
    if hasattr(index, "record_postings") and not any(len(t) == 1 and is_cjk(t) for t in terms):
        hits = top_records(
            index,
            query,
            terms,
            frequencies,
            index.record_totals(),
            kinds=list(kinds),
            statuses=list(statuses),
            limit=limit,
            decay=decay,
            min_score=min_score,
            served=served,
        )
        return Recalled(query, tuple(terms), hits, (time.perf_counter() - started) * 1000)
    rows = index.record_pool(
        searchable(terms, frequencies),
        list(kinds),
        list(statuses),
        max(POOL_FACTOR * limit, POOL_MIN),
        served=served,
    )
    hits = score_records(
        rows,
        query,
        terms,
        frequencies,
        index.record_totals(),
        limit=limit,
        decay=decay,
        min_score=min_score,
    )
    return Recalled(query, tuple(terms), hits, (time.perf_counter() - started) * 1000)


class TurnHit:
    """One journal turn found by :func:`search_turns`."""

    __slots__ = ("at", "file", "line", "offset", "score", "session", "text", "who")

    def __init__(
        self,
        file: str,
        line: int,
        offset: int,
        session: str,
        at: str,
        who: str,
        text: str,
        score: float,
    ) -> None:
        self.file = file  # journal file name, e.g. 2026-11-30.jsonl
        self.line = line  # 1-based line number
        self.offset = offset  # byte offset of the line
        self.session = session
        self.at = at
        self.who = who
        self.text = text
        self.score = score

    def to_json(self) -> dict[str, Any]:
        """Return the turn reference as a JSON object."""
        return {
            "file": f"journal/{self.file}",
            "line": self.line,
            "offset": self.offset,
            "session": self.session,
            "at": self.at,
            "who": self.who,
            "text": self.text,
            "score": round(self.score, 6),
        }


def search_turns(
    index: IndexBackend,
    query: str,
    *,
    limit: int = 10,
    session: str | None = None,
    weights: tuple[float, float, float] = TURN_WEIGHTS,
    similarity: Similarity | None = None,
    semantic_weight: float = SEMANTIC_WEIGHT,
) -> tuple[tuple[str, ...], list[TurnHit]]:
    """Return the query terms and the journal turns most relevant to ``query``, best first.

    The recipe (module docstring): BM25 over the turn, its month and its ±2 neighbours, a pool
    of ``max(200, 4 × limit)`` rows re-ranked by the speaker, length and question priors.

    Args:
        index: An open index.
        query: Free text.
        limit: Most hits to return.
        session: Only this session's turns (all when ``None``).
        weights: BM25 weights of the turn, month and neighbour columns.
        similarity: Optional embedding model (``memdir.semantic``): given the query, the pool's
            texts, each one's neighbours (:data:`SEMANTIC_SPREAD` a side) and the speakers'
            names, the cosine of each text to the query. The whole pool is then re-ranked by
            :func:`fuse_turns`; it only re-orders the lexical pool (no turn without a query
            word is added).
        semantic_weight: ``w`` of :func:`fuse_turns`.
    """
    terms = query_terms(query, extra_stop_words=QUESTION_WORDS)
    if not terms or limit <= 0:
        return tuple(terms), []
    frequencies = index.turn_frequencies(terms)
    kept = searchable(terms, frequencies, TURN_CAP)
    common = sum(frequencies.get(t, 0) for t in kept) > TURN_CAP
    # Every query word in more than TURN_CAP turns: score only the most recent matches (FTS5
    # walks its rowids newest first and stops), instead of ranking hundreds of thousands.
    window = TURN_CAP * TURN_CONTEXT_SPREAD if common else 0  # 0: no limit
    rows = index.turn_pool(kept, weights, window, session, max(TURN_POOL, 4 * limit))
    if similarity is None or not rows:
        return tuple(terms), rank_turns(rows, terms, limit)
    near = index.turn_neighbours([row[0] for row in rows], SEMANTIC_SPREAD)
    speakers = sorted({row[6] for row in rows})
    cosines = similarity(
        query, [row[7] for row in rows], [near.get(row[0], []) for row in rows], speakers
    )
    by_key = {(row[1], row[3]): cosine for row, cosine in zip(rows, cosines, strict=True)}
    hits = rank_turns(rows, terms, len(rows))
    sims = [by_key[(hit.file, hit.offset)] for hit in hits]
    return tuple(terms), fuse_turns(hits, sims, semantic_weight)[:limit]


def fuse_turns(hits: list[TurnHit], cosines: list[float], weight: float) -> list[TurnHit]:
    """Re-rank lexically ranked hits by ``score / best score + weight × cosine``, best first.

    Args:
        hits: From :func:`rank_turns`, best first (scores positive).
        cosines: One embedding cosine (−1..1) to the query per hit, in the same order.
        weight: How much a cosine of 1 weighs against the best lexical score (1.0).

    Returns:
        The same hits, their ``score`` replaced by the fused one; ties keep the lexical order.
    """
    if not hits:
        return []
    top = hits[0].score or 1.0
    fused = []
    for order, (hit, cosine) in enumerate(zip(hits, cosines, strict=True)):
        hit.score = hit.score / top + weight * cosine
        fused.append((-hit.score, order, hit))
    fused.sort(key=lambda item: (item[0], item[1]))
    return [hit for _, _, hit in fused]


def rank_turns(rows: Iterable[TurnRow], terms: list[str], limit: int) -> list[TurnHit]:
    """Re-rank a pool of turns by the speaker, length and question priors; the best ``limit``.

    Args:
        rows: Turns with their FTS5 ``bm25()`` rank (lower is better), from
            :meth:`~memdir.kernel.index.interface.IndexBackend.turn_pool`.
        terms: The query terms (a speaker's name among them boosts that speaker's turns).
        limit: Most hits to return.

    Returns:
        Hits ordered by score, then by rowid.
    """
    rows = list(rows)
    wanted = set(terms)
    named = {row[6] for row in rows if wanted & set(term_list(row[6]))}
    scored = []
    for rowid, file, line, offset, sess, at, who, text, rank in rows:
        score = -rank
        if len(named) == 1 and who in named:
            score *= SPEAKER_BOOST
        score *= max(len(text), 1) ** LENGTH_PRIOR
        if text.rstrip().endswith("?"):
            score *= QUESTION_PENALTY
        scored.append((-score, rowid, TurnHit(file, line, offset, sess, at, who, text, score)))
    scored.sort(key=lambda item: (item[0], item[1]))
    return [hit for _, _, hit in scored[:limit]]
