"""Speed at scale: stores of 1k, 10k and 100k records, a journal of 1M turns, side by side.

Usage::

    python benchmarks/scale.py                      # 1000,10000,100000 records; 1000000 turns
    python benchmarks/scale.py --records 1000 --turns 100000 --queries 100

Each size runs in its own subprocess (so peak memory is that size's own). For each store it
prints: bulk import throughput (one commit), reindex time, store and index size on disk, recall
p50/p95, remember p50/p95 (in process, with its git commit), and peak memory; beside memdir's
recall it times, on the same records and queries, a Talewell-style scan that re-reads and parses
every record file per query and a wolfmem-style brute-force scan over all rows in Python, and
prints the ratios. The journal run writes N turns, indexes them, and times journal search.
Record texts and queries come from the LoCoMo conversations in ``../shared/data`` (real
sentences), varied so that every record is distinct.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = next(
    (p / "shared" for p in ROOT.parents if (p / "shared" / "data" / "locomo").is_dir()),
    Path("/work/shared"),
)
LOCOMO = SHARED / "data" / "locomo" / "locomo7-dev.json"
sys.path.insert(0, str(ROOT / "src"))


def _sentences() -> tuple[list[str], list[str]]:
    data = json.loads(LOCOMO.read_text())
    turns, questions = [], []
    for sample in data:
        talk = sample["conversation"]
        for key, value in talk.items():
            if key.startswith("session_") and isinstance(value, list):
                turns += [t["text"] for t in value if len(t.get("text", "")) > 20]
        questions += [q["question"] for q in sample["qa"]]
    return turns, questions


def _blend(rng: random.Random, texts: list[str]) -> str:
    """Return a new sentence: the first half of one real turn and the second half of another.

    Real stores hold distinct beliefs (remember merges near-duplicates), so a benchmark store
    must not repeat the same few thousand sentences; blending keeps real words and lengths.
    """
    first, second = rng.choice(texts).split(), rng.choice(texts).split()
    return " ".join(first[: len(first) // 2] + second[len(second) // 2 :])


def _pcts(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]


def _du(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def _mb(n: float) -> str:
    return f"{n / 1e6:.1f} MB"


def run_records(count: int, queries: int, scans: int) -> dict[str, object]:
    """Build a store of ``count`` records and measure it (runs inside a subprocess)."""
    from memdir import service
    from memdir.kernel.index.recall import recall
    from memdir.kernel.lang.text import terms
    from memdir.kernel.storage import lifecycle
    from memdir.records import codec
    from memdir.store import bulk
    from memdir.store.scan import open_handle, reindex

    texts, questions = _sentences()
    rng = random.Random(count)
    kinds = ["fact", "preference", "rule", "decision", "procedure", "entity", "episode"]
    out: dict[str, object] = {"records": count}
    with tempfile.TemporaryDirectory(prefix="memdir-scale-") as tmp:
        project = Path(tmp) / "p"
        project.mkdir()
        subprocess.run(["git", "init", "-q"], cwd=project, check=True)
        store = service.init(project).store
        lines = []
        for n in range(count):
            record = {
                "id": f"f-{n:014d}",
                "kind": rng.choice(kinds),
                "text": _blend(rng, texts),
                "importance": rng.randint(1, 10),
                "created_at": "2026-01-01T00:00:00Z",
                "updated_at": "2026-06-01T00:00:00Z",
            }
            record["id"] = (
                f"{record['kind'][0] if record['kind'] != 'procedure' else 'pr'}-" + f"{n:014d}"
            )
            if record["kind"] == "episode":
                record["id"] = f"ep-{n:014d}"
            lines.append(json.dumps(record))
        handle = open_handle(store)
        started = time.perf_counter()
        done = bulk.import_lines(handle, lines)
        seconds = time.perf_counter() - started
        assert done.imported == count, done.to_json()
        out["import_s"] = round(seconds, 1)
        out["import_per_s"] = round(count / seconds)
        handle.index.close()
        del lines
        started = time.perf_counter()
        reindex(store)
        out["reindex_s"] = round(time.perf_counter() - started, 1)
        out["records_disk"] = _mb(_du(store / "records"))
        out["git_disk"] = _mb(_du(store / ".git"))
        out["index_disk"] = _mb((store / "index.sqlite").stat().st_size)
        handle = open_handle(store, scan=False)
        asked = [rng.choice(questions) for _ in range(queries)]
        for q in asked[:5]:
            recall(handle.index, q)  # warm the page cache
        times = []
        for q in asked:
            t0 = time.perf_counter()
            recall(handle.index, q, limit=10)
            times.append((time.perf_counter() - t0) * 1000)
        out["recall_p50_ms"], out["recall_p95_ms"] = (round(x, 2) for x in _pcts(times))
        # A Talewell-style scan: every record file read and parsed per query.
        files = sorted((store / "records").rglob("*.md"))
        scan_times = []
        for q in asked[:scans]:
            t0 = time.perf_counter()
            wanted = set(terms(q))
            scored = []
            for path in files:
                parsed = codec.read_file(path, path.relative_to(store).as_posix())
                overlap = len(wanted & set(terms(parsed.record.text)))
                if overlap:
                    scored.append((overlap, parsed.record.id))
            scored.sort(reverse=True)
            scan_times.append((time.perf_counter() - t0) * 1000)
        out["file_scan_p50_ms"] = round(statistics.median(scan_times), 1)
        # A wolfmem-style brute force: all rows from SQLite, scored in Python, per query.
        brute_times = []
        for q in asked[: max(scans * 4, 20)]:
            t0 = time.perf_counter()
            wanted = set(terms(q))
            rows = [(r[0], r[3]) for r in handle.index.record_texts(statuses=("active",))]
            scored = [(len(wanted & set(terms(text))), rid) for rid, text in rows]
            scored.sort(reverse=True)
            brute_times.append((time.perf_counter() - t0) * 1000)
        out["brute_force_p50_ms"] = round(statistics.median(brute_times), 1)
        out["file_scan_ratio"] = round(out["file_scan_p50_ms"] / max(out["recall_p50_ms"], 1e-6))  # type: ignore[operator]
        out["brute_force_ratio"] = round(
            out["brute_force_p50_ms"] / max(out["recall_p50_ms"], 1e-6)
        )  # type: ignore[operator]
        remember_times = []
        for n in range(30):
            t0 = time.perf_counter()
            lifecycle.remember(
                handle, f"Benchmark belief {n}: the build cache lives in .cache/b{n}"
            )
            remember_times.append((time.perf_counter() - t0) * 1000)
        out["remember_p50_ms"], out["remember_p95_ms"] = (
            round(x, 1) for x in _pcts(remember_times)
        )
        handle.index.close()
        # The path `memdir recall`, `memdir remember` and MCP take: the store opened (and
        # checked for hand edits) on every call, the answer's files checked (issue 16).
        service.recall(store, asked[0], include_user=False)  # the first open's full pass
        times = []
        for q in asked:
            t0 = time.perf_counter()
            service.recall(store, q, limit=10, include_user=False)
            times.append((time.perf_counter() - t0) * 1000)
        out["service_recall_p50_ms"], out["service_recall_p95_ms"] = (
            round(x, 2) for x in _pcts(times)
        )
        out["service_recall_ratio"] = round(
            out["service_recall_p50_ms"] / max(out["recall_p50_ms"], 1e-6),
            2,  # type: ignore[operator]
        )
        remember_times = []
        for n in range(30):
            t0 = time.perf_counter()
            service.remember(store, f"Service belief {n}: the deploy key rotates on day {n}")
            remember_times.append((time.perf_counter() - t0) * 1000)
        out["service_remember_p50_ms"], out["service_remember_p95_ms"] = (
            round(x, 1) for x in _pcts(remember_times)
        )
    out["peak_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    return out


def run_turns(count: int, queries: int) -> dict[str, object]:
    """Write a journal of ``count`` turns, index it, and time journal search (in a subprocess)."""
    from memdir import service
    from memdir.kernel.index import Index
    from memdir.kernel.index.recall import search_turns
    from memdir.kernel.storage import journal

    texts, questions = _sentences()
    rng = random.Random(count)
    out: dict[str, object] = {"turns": count}
    with tempfile.TemporaryDirectory(prefix="memdir-scale-") as tmp:
        project = Path(tmp) / "p"
        project.mkdir()
        subprocess.run(["git", "init", "-q"], cwd=project, check=True)
        store = service.init(project).store
        (store / "journal").mkdir(exist_ok=True)
        per_day = 20_000
        started = time.perf_counter()
        for day in range(0, count, per_day):
            name = (
                f"2025-{1 + (day // per_day) // 28 % 12:02d}-{1 + (day // per_day) % 28:02d}.jsonl"
            )
            with (store / "journal" / name).open("a", encoding="utf-8") as fh:
                for n in range(day, min(day + per_day, count)):
                    row = {
                        "at": f"{name[:10]}T10:00:00.000Z",
                        "who": rng.choice(["user", "assistant"]),
                        "text": _blend(rng, texts),
                        "session": f"s{n // 40}",
                    }
                    fh.write(json.dumps(row) + "\n")
        out["write_s"] = round(time.perf_counter() - started, 1)
        index = Index(store)
        started = time.perf_counter()
        journal.sync_journal(index, store)
        seconds = time.perf_counter() - started
        out["index_s"] = round(seconds, 1)
        out["index_per_s"] = round(count / seconds)
        out["journal_disk"] = _mb(_du(store / "journal"))
        out["index_disk"] = _mb((store / "index.sqlite").stat().st_size)
        asked = [rng.choice(questions) for _ in range(queries)]
        for q in asked[:5]:
            search_turns(index, q)
        times = []
        for q in asked:
            t0 = time.perf_counter()
            search_turns(index, q, limit=10)
            times.append((time.perf_counter() - t0) * 1000)
        out["search_p50_ms"], out["search_p95_ms"] = (round(x, 2) for x in _pcts(times))
        index.close()
    out["peak_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    return out


def _startup(runs: int) -> dict[str, float]:
    samples: dict[str, list[float]] = {"python -c pass": [], "memdir --version": []}
    for _ in range(runs):
        for name, args in (
            ("python -c pass", ["-c", "pass"]),
            ("memdir --version", ["-m", "memdir", "--version"]),
        ):
            t0 = time.perf_counter()
            subprocess.run([sys.executable, *args], capture_output=True, check=True)
            samples[name].append((time.perf_counter() - t0) * 1000)
    return {name: round(statistics.median(v), 1) for name, v in samples.items()}


def main() -> None:
    """Run every size in its own process and print the tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", default="1000,10000,100000")
    parser.add_argument("--turns", default="1000000")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--scans", type=int, default=5, help="queries for the slow scans")
    parser.add_argument("--child", default="", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.child:
        kind, size = options.child.split(":")
        result = (
            run_records(int(size), options.queries, options.scans)
            if kind == "records"
            else run_turns(int(size), options.queries)
        )
        print(json.dumps(result))
        return
    print("startup (median of 10):", _startup(10))
    for size in [int(s) for s in options.records.split(",") if s]:
        done = subprocess.run(
            [
                sys.executable,
                __file__,
                "--child",
                f"records:{size}",
                "--queries",
                str(options.queries),
                "--scans",
                str(options.scans),
            ],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
        )
        print(json.dumps(json.loads(done.stdout.splitlines()[-1])))
    for size in [int(s) for s in options.turns.split(",") if s]:
        done = subprocess.run(
            [
                sys.executable,
                __file__,
                "--child",
                f"turns:{size}",
                "--queries",
                str(options.queries),
            ],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
        )
        print(json.dumps(json.loads(done.stdout.splitlines()[-1])))


if __name__ == "__main__":
    main()
