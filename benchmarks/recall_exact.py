"""Exact recall at scale: the pruned ranking against the capped pool and against scoring everything.

Usage::

    python benchmarks/recall_exact.py                        # 100,000 records, 200 questions
    python benchmarks/recall_exact.py --records 10000 --queries 100
    python benchmarks/recall_exact.py --keep /tmp/idx.sqlite  # build once, reuse on later runs

Builds an index of ``--records`` records (the texts of ``benchmarks/scale.py``: halves of two real
LoCoMo turns, kinds and importance 1..10 at random, ``updated_at`` spread over the last two
years so recency differs) straight into SQLite, without record files or git: recall reads only
the index. Then, for LoCoMo questions, alternating in one run on the same index:

- ``pool``: the ranking memdir 0.x used before issue 16 item 6 (and still uses for a backend
  without postings, PostgreSQL): FTS5's ``bm25()`` picks a pool of ``max(5 × limit, 50)``
  records from the terms that ``CANDIDATE_CAP`` keeps, then those are scored;
- ``pruned``: :func:`memdir.kernel.index.recall.top_records`, max-score pruning over the postings;
- ``exhaustive``: every record holding any query term scored (:func:`score_records`).

Prints p50/p95 wall milliseconds of each (and the process's CPU milliseconds, which a busy
machine inflates less), how often each returns exactly the exhaustive top 10
(same records, same order, same scores), the records the pruned path scored per query against
the candidates, and the load average before and after (the machine may be shared).
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import scale

from memdir.kernel.base import clock
from memdir.kernel.base.model import Record
from memdir.kernel.index import recall as R
from memdir.kernel.index.rows import FileStat
from memdir.kernel.index.sqlite import Index
from memdir.kernel.lang.text import query_terms

KINDS = ("fact", "preference", "rule", "decision", "procedure", "entity", "episode")


def build(path: Path, count: int) -> None:
    """Write an index of ``count`` records to ``path`` (one transaction)."""
    texts, _ = scale._sentences()
    rng = random.Random(count)
    now = time.time()
    with Index(path.parent, path=path) as index, index.write():
        for n in range(count):
            at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now - rng.uniform(0, 730) * 86400))
            record = Record(
                id=f"f-{n:014d}",
                kind=rng.choice(KINDS),
                text=scale._blend(rng, texts),
                importance=rng.randint(1, 10),
                created_at=at,
                updated_at=at,
            )
            index.upsert_record(record, f"records/fact/{record.id}.md", FileStat(0, 0, n), [])


class PoolOnly:
    """The index without its postings: :func:`recall` then ranks as before (the FTS5 pool)."""

    def __init__(self, index: Index) -> None:
        self._index = index

    def __getattr__(self, name: str) -> object:
        if name in ("record_postings", "record_rows"):
            raise AttributeError(name)
        return getattr(self._index, name)


class Counting(PoolOnly):
    """The index, counting the rows the pruned path fetches to score."""

    def __init__(self, index: Index) -> None:
        super().__init__(index)
        self.rows = 0

    def record_postings(self, *args: object) -> object:
        return self._index.record_postings(*args)  # type: ignore[arg-type]

    def record_rows(self, rowids: list[int], *args: object) -> object:
        self.rows += len(rowids)
        return self._index.record_rows(rowids, *args)  # type: ignore[arg-type]


def exhaustive(index: Index, query: str, limit: int) -> tuple[list[R.Hit], int]:
    """Return the top ``limit`` of every active record holding a query term scored; how many."""
    terms = query_terms(query)
    frequencies = index.record_frequencies(terms)
    rows = index.record_pool(terms, [], ["active"], 10**9)
    hits = R.score_records(rows, query, terms, frequencies, index.record_totals(), limit=limit)
    return hits, len(rows)


def _key(hits: list[R.Hit]) -> list[tuple[str, float]]:
    return [(h.doc["id"], h.score) for h in hits]


def _pcts(samples: list[float]) -> str:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
    return f"{statistics.median(ordered):7.2f} {p95:7.2f}"


def main() -> None:
    """Build (or reuse) the index, then print one line per ranking."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--limit", type=int, default=10)
    parser.add_argument("--keep", type=Path, help="index file to reuse (built when missing)")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="memdir-exact-") as tmp:
        path = options.keep or Path(tmp) / "index.sqlite"
        if not path.exists():
            started = time.perf_counter()
            build(path, options.records)
            print(f"built {options.records} records in {time.perf_counter() - started:.0f} s")
        index = Index(path.parent, path=path)
        clock.freeze(clock.utc_now())  # one "now" for every ranking, so their scores compare
        _, questions = scale._sentences()
        rng = random.Random(7)
        asked = [rng.choice(questions) for _ in range(options.queries)]
        pool = PoolOnly(index)
        for q in asked[:10]:  # warm the page cache
            R.recall(index, q, limit=options.limit)
            R.recall(pool, q, limit=options.limit)  # type: ignore[arg-type]
        load = os.getloadavg()
        times: dict[str, list[float]] = {"pool": [], "pruned": [], "exhaustive": []}
        cpu: dict[str, list[float]] = {"pool": [], "pruned": []}
        same = {"pool": 0, "pruned": 0}
        scored, candidates = [], []
        for n, q in enumerate(asked):
            runs = [("pool", pool), ("pruned", index)]
            for name, backend in runs if n % 2 else runs[::-1]:
                started, used = time.perf_counter(), time.process_time()
                got = R.recall(backend, q, limit=options.limit).hits  # type: ignore[arg-type]
                times[name].append((time.perf_counter() - started) * 1000)
                cpu[name].append((time.process_time() - used) * 1000)
                if name == "pool":
                    pooled = got
                else:
                    pruned = got
            started = time.perf_counter()
            want, matched = exhaustive(index, q, options.limit)
            times["exhaustive"].append((time.perf_counter() - started) * 1000)
            same["pool"] += _key(pooled) == _key(want)
            same["pruned"] += _key(pruned) == _key(want)
            counting = Counting(index)
            R.recall(counting, q, limit=options.limit)  # type: ignore[arg-type]
            scored.append(counting.rows)
            candidates.append(matched)
        after = os.getloadavg()
        print(
            f"{index.record_totals()[0]} records, {len(asked)} LoCoMo questions, limit "
            f"{options.limit}; load average {load[0]:.2f} before, {after[0]:.2f} after (1 min)"
        )
        print("ranking      wall p50/p95 ms  CPU p50/p95 ms  same top 10 as exhaustive")
        for name in ("pool", "pruned", "exhaustive"):
            agree = f"{same[name] / len(asked):.3f}" if name in same else "(reference)"
            used = _pcts(cpu[name]) if name in cpu else " " * 15
            print(f"{name:<11} {_pcts(times[name])}  {used}  {agree}")
        ratio = statistics.median(times["pruned"]) / statistics.median(times["pool"])
        print(f"pruned / pool p50: {ratio:.2f}")
        print(
            f"pruned path scored {statistics.mean(scored):.1f} rows per query (p95 "
            f"{sorted(scored)[int(0.95 * len(scored))]}), of {statistics.mean(candidates):.0f} "
            "candidates (records holding a query term)"
        )
        index.close()


if __name__ == "__main__":
    main()
