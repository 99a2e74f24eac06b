"""What reading polarity costs a ``remember``: the near-duplicate pool with and without it.

Usage::

    python benchmarks/polarity.py [RECORDS]

Builds a throwaway store of RECORDS (default 1,000) short directives (bulk, one commit), then
for 200 new texts prints the median time of the pool compared by shingle similarity alone (the
check before polarity) and of the same pool also read for polarity (:func:`lifecycle.compare`,
cold stance cache each round), and their ratio. ``remember`` runs one such comparison, as it
did before: the records a new belief contradicts come out of the same pool.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from memdir import service
from memdir.kernel.lang import polarity
from memdir.kernel.lang.text import normalized_text, query_terms, similarity
from memdir.kernel.storage import lifecycle
from memdir.store import bulk
from memdir.store.scan import open_handle

TOOLS = ["npm", "bun", "pnpm", "yarn", "tabs", "spaces", "ruff", "black", "mypy", "pytest"]
PLACES = ["Makefiles", "the web app", "CI", "tests", "the API", "scripts", "docs", "the CLI"]
VERBS = ["Always use", "Never use", "Use", "Avoid", "Prefer"]


def _text(i: int) -> str:
    tool, other = TOOLS[i % len(TOOLS)], TOOLS[(i // 7) % len(TOOLS)]
    place = PLACES[(i // 3) % len(PLACES)]
    return f"{VERBS[i % len(VERBS)]} {tool}, not {other}, in {place} (rule {i})"


def _ms(fn: Callable[[], object], runs: list[float]) -> None:
    started = time.perf_counter()
    fn()
    runs.append((time.perf_counter() - started) * 1000)


def main() -> None:
    """Print the two medians (ms) and the ratio of polarity-aware to plain comparison."""
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp)
        subprocess.run(["git", "init", "-q", str(project)], check=True)
        store = service.init(project).store
        lines = [
            json.dumps({"id": f"r-{n:014d}", "kind": "rule", "text": _text(n)})
            for n in range(count)
        ]
        handle = open_handle(store)
        assert bulk.import_lines(handle, lines).imported == count
        plain: list[float] = []
        aware: list[float] = []
        for i in range(200):
            text = _text(count + i)

            def old(text: str = text) -> None:
                docs = handle.index.similar_candidates(
                    query_terms(text), text, ["active"], lifecycle.SIMILAR_POOL
                )
                key = normalized_text(text)
                for doc in docs:
                    if normalized_text(doc["text"]) != key:
                        similarity(text, doc["text"])

            polarity.stance.cache_clear()
            _ms(old, plain)
            polarity.stance.cache_clear()
            _ms(lambda text=text: lifecycle.compare(handle.index, text, ["active"]), aware)
        handle.index.close()
    p, a = (statistics.median(x) for x in (plain, aware))
    print(f"records {count}")
    print(f"pool, similarity only      {p:7.2f} ms")
    print(f"pool, similarity+polarity  {a:7.2f} ms   ratio {a / p:.2f}")


if __name__ == "__main__":
    main()
