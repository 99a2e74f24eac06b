"""What the candidate cap buys and costs: recall speed against agreement with exact ranking.

Usage::

    python benchmarks/recall_cap.py                 # a 100,000-record store (built in ~80 s)
    python benchmarks/recall_cap.py --records 20000

``CANDIDATE_CAP`` (``memdir.kernel.index.recall``) leaves a query's commonest words out of the FTS
search once the rarer ones match that many records. For each cap this prints recall's p50/p95
and, against an exhaustive ranking (no cap, a pool of 2,000), the share of the top 10 it keeps
(texts, so equal records count once) and how often the top result is the same. The pool is
memdir's (``POOL_FACTOR`` 5), and also 20 for comparison.
"""

from __future__ import annotations

import argparse
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import scale

from memdir import service
from memdir.kernel.index import recall as R
from memdir.store import bulk
from memdir.store.scan import open_handle


def _build(root: Path, count: int) -> Path:
    import json

    texts, _ = scale._sentences()
    rng = random.Random(count)
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    store = service.init(root).store
    lines = [
        json.dumps({"id": f"f-{n:014d}", "kind": "fact", "text": scale._blend(rng, texts)})
        for n in range(count)
    ]
    bulk.import_lines(open_handle(store), lines)
    return store


def _top(index: object, query: str, cap: int, pool: int) -> list[str]:
    R.CANDIDATE_CAP, R.POOL_FACTOR, R.POOL_MIN = cap, pool, pool * 10
    return [h.doc["text"] for h in R.recall(index, query, limit=10).hits]  # type: ignore[arg-type]


def main() -> None:
    """Build the store, then print one row per cap and pool."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=200)
    options = parser.parse_args()
    defaults = R.CANDIDATE_CAP, R.POOL_FACTOR, R.POOL_MIN
    with tempfile.TemporaryDirectory(prefix="memdir-cap-") as tmp:
        store = _build(Path(tmp), options.records)
        index = open_handle(store, scan=False).index
        _, questions = scale._sentences()
        rng = random.Random(7)
        asked = [rng.choice(questions) for _ in range(options.queries)]
        exact = {q: _top(index, q, 10**9, 200) for q in asked}
        print(f"{options.records} records, {len(asked)} LoCoMo questions")
        print("cap      pool  p50 ms  p95 ms  top-10 kept  same top result")
        for cap in (20_000, 10_000, 5_000, 2_000):
            for pool in (defaults[1], 20):
                times, kept, same = [], [], []
                for q in asked:
                    started = time.perf_counter()
                    got = _top(index, q, cap, pool)
                    times.append((time.perf_counter() - started) * 1000)
                    want = exact[q]
                    kept.append(len(set(got) & set(want)) / max(len(set(want)), 1))
                    same.append(got[:1] == want[:1])
                times.sort()
                p95 = times[int(0.95 * len(times))]
                print(
                    f"{cap:<8} x{pool:<4} {statistics.median(times):6.1f}  {p95:6.1f}"
                    f"  {statistics.mean(kept):11.3f}  {statistics.mean(same):15.3f}"
                )
    R.CANDIDATE_CAP, R.POOL_FACTOR, R.POOL_MIN = defaults


if __name__ == "__main__":
    main()
