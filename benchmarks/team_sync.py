"""A team's scale for `memdir sync` through a bare git remote on this machine (issue 14).

Usage: python benchmarks/team_sync.py [--records N] [--turns N] [--writers N] [--rounds N]
                                      [--skip-large] [--skip-writers]

1. **Two clones, a large store.** Machine A holds ``--records`` records (default 10,000) and
   ``--turns`` journal turns (default 1,000,000, A's own per-machine files over 250 days),
   generated into a throwaway folder, and pushes them (``memdir sync``). Machine B, a fresh
   checkout of the project with a fresh store, syncs: its *first sync* fetches, merges and
   writes everything and brings its record index up to date. Then A adds 1% more (records and
   turns) and B's *incremental sync* is timed. The first search on B that indexes the arrived
   journal turns is timed apart (journal turns are indexed when first searched, not by sync).
2. **Ten writers.** ``--writers`` clones (default 10) take turns for ``--rounds`` rounds
   (default 300): in each round one clone remembers a belief, corrects a belief it learned
   from another clone (often one that clone, or a third, corrected meanwhile: a concurrent
   edit resolved by supersession), and syncs. At the end every clone syncs until all agree;
   the benchmark asserts every clone holds the same tree and every text any clone ever wrote
   is still there (current, or superseded beside its successor), that no record has two
   active corrections, and prints the figures.

Nothing is kept: every store and the remote live in a temporary folder removed at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from memdir import service  # noqa: E402
from memdir.kernel.base.model import Record  # noqa: E402
from memdir.kernel.storage.recordfile import dump  # noqa: E402
from memdir.service import project as project_service  # noqa: E402

WORDS = [
    "cache",
    "queue",
    "deploy",
    "build",
    "test",
    "lint",
    "schema",
    "index",
    "migration",
    "token",
    "retry",
    "timeout",
    "proxy",
    "bucket",
    "shard",
    "replica",
    "cluster",
    "worker",
    "cron",
    "backup",
    "restore",
    "auth",
    "session",
    "cookie",
    "header",
    "payload",
    "latency",
    "budget",
    "alert",
    "metric",
    "trace",
    "span",
    "log",
    "rotate",
    "archive",
    "vendor",
    "pin",
    "upgrade",
]


def git(cwd: Path, *args: str) -> str:
    """Run git in ``cwd``; return its stdout."""
    return subprocess.run(
        ["git", "-C", str(cwd), *args], check=True, capture_output=True, text=True
    ).stdout


def team(base: Path, count: int) -> tuple[Path, list[Path]]:
    """A bare remote and ``count`` project checkouts, each with a fresh store."""
    remote = base / "remote.git"
    git(base, "init", "-q", "--bare", str(remote))
    first = base / "c0"
    first.mkdir()
    git(first, "init", "-q")
    (first / "README.md").write_text("# team project\n")
    git(first, "add", "README.md")
    git(first, "commit", "-qm", "initial")
    git(first, "remote", "add", "origin", str(remote))
    git(first, "push", "-q", "origin", "HEAD:refs/heads/main")
    stores = []
    for number in range(count):
        root = first if number == 0 else base / f"c{number}"
        if number:
            git(base, "clone", "-q", "-b", "main", str(remote), str(root))
        made = service.init(root).store
        manifest = made / "memdir.toml"
        manifest.write_text(
            manifest.read_text().replace("observe_every_seconds = 300", "observe_every_seconds = 0")
        )
        git(made, "commit", "-qam", "no background observer")
        stores.append(made)
    return remote, stores


def sync(store: Path) -> tuple[float, object]:
    """Sync ``store`` with its remote; return the seconds taken and the outcome."""
    started = time.perf_counter()
    done = project_service.sync(store, share=True)
    return time.perf_counter() - started, done


def write_records(store: Path, start: int, count: int) -> None:
    """Write ``count`` canonical record files (as a bulk import leaves them)."""
    folder = store / "records" / "fact"
    folder.mkdir(parents=True, exist_ok=True)
    rng = random.Random(start)
    for number in range(start, start + count):
        rid = f"f-0{number:013d}"
        words = " ".join(rng.choice(WORDS) for _ in range(8))
        record = Record(
            id=rid,
            kind="fact",
            text=f"Fact {number}: {words}",
            created_at="2026-11-01T10:00:00Z",
            updated_at="2026-11-01T10:00:00Z",
            observed_at="2026-11-01",
            source={"channel": "import", "session": None, "journal": None},
            origin="import",
        )
        (folder / f"{rid}.md").write_text(dump(record), encoding="utf-8")


def write_turns(store: Path, machine: str, start: int, count: int, days: int) -> int:
    """Append ``count`` turns to ``machine``'s journal files over ``days`` days; return bytes."""
    folder = store / "journal"
    folder.mkdir(exist_ok=True)
    rng = random.Random(start)
    per_day = max(count // days, 1)
    written = 0
    number = start
    day = 0
    while number < start + count:
        name = f"2026-{1 + (day // 28) % 12:02d}-{1 + day % 28:02d}"
        lines = []
        for _ in range(min(per_day, start + count - number)):
            text = " ".join(rng.choice(WORDS) for _ in range(12))
            at = f"{name}T{(number // 3600) % 24:02d}:{(number // 60) % 60:02d}:{number % 60:02d}"
            row = {"at": f"{at}.000Z", "who": "user", "text": f"turn {number} {text}"}
            row["session"] = f"s{number // 50}"
            lines.append(json.dumps(row) + "\n")
            number += 1
        data = "".join(lines).encode()
        with (folder / f"{name}.{machine}.jsonl").open("ab") as out:
            out.write(data)
        written += len(data)
        day += 1
    return written


def large(records: int, turns: int) -> None:
    """Part 1: two clones, a first and an incremental sync of a large store."""
    with tempfile.TemporaryDirectory(prefix="memdir-team-") as folder:
        _, (a, b) = team(Path(folder), 2)
        sync(a)  # A is shared from here: its journal is per machine
        machine = (a / "state" / "machine").read_text().strip()
        started = time.perf_counter()
        write_records(a, 0, records)
        size = write_turns(a, machine, 0, turns, 250)
        made = time.perf_counter() - started
        push_s, _ = sync(a)
        first_s, first = sync(b)
        assert first.pulled in ("merged", "fast-forward"), first
        count = len(list((b / "records" / "fact").iterdir()))
        assert count == records, count
        search_started = time.perf_counter()
        hits = service.search(b, "turn cache replica", limit=5)
        search_s = time.perf_counter() - search_started
        extra_records, extra_turns = max(records // 100, 1), max(turns // 100, 1)
        write_records(a, records, extra_records)
        write_turns(a, machine, turns, extra_turns, 5)
        push2_s, _ = sync(a)
        incr_s, incr = sync(b)
        count = len(list((b / "records" / "fact").iterdir()))
        assert count == records + extra_records, count
        assert git(a, "rev-parse", "HEAD^{tree}") == git(b, "rev-parse", "HEAD^{tree}")
        print(f"large store: {records:,} records, {turns:,} journal turns ({size / 1e6:.0f} MB)")
        print(f"  generated in {made:.1f} s; A's commit and push: {push_s:.1f} s")
        print(
            f"  B first sync (fetch, merge, write {first.received:,} files, index records): "
            f"{first_s:.1f} s"
        )
        print(f"  B first search (indexes the {turns:,} turns that arrived): {search_s:.1f} s")
        print(
            f"  incremental (+{extra_records:,} records, +{extra_turns:,} turns): A commit and "
            f"push {push2_s:.1f} s, B sync {incr_s:.1f} s ({incr.received:,} files, "
            f"{incr.pulled})"
        )
        assert hits is not None


def writers(count: int, rounds: int, seed: int = 7) -> None:
    """Part 2: ``count`` clones remembering, correcting and syncing in turns."""
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory(prefix="memdir-writers-") as folder:
        _, stores = team(Path(folder), count)
        said: set[str] = set()
        times: list[float] = []
        merges = resolved = corrections = 0
        for round_ in range(rounds):
            store = stores[round_ % count]
            text = f"Round {round_} writer {round_ % count}: {' '.join(rng.sample(WORDS, 6))}"
            service.remember(store, text)
            said.add(text)
            active = [r for r in service.list_records(store) if r.status == "active"]
            if active:
                target = rng.choice(active)
                new = f"Corrected in round {round_}: {' '.join(rng.sample(WORDS, 6))}"
                service.correct(store, target.id, new)
                said.add(new)
                corrections += 1
            took, done = sync(store)
            times.append(took)
            merges += done.pulled == "merged"
            resolved += len(done.resolved)
        final_rounds = 0
        while True:
            final_rounds += 1
            for store in stores:
                took, done = sync(store)
                times.append(took)
                resolved += len(done.resolved)
            trees = {git(s, "rev-parse", "HEAD^{tree}") for s in stores}
            if len(trees) == 1 or final_rounds > 3:
                break
        assert len(trees) == 1, "clones differ"
        texts = [r.text for r in service.list_records(stores[0])]
        missing = said - set(texts)
        assert not missing, f"lost: {sorted(missing)[:3]}"
        live: dict[str, int] = {}
        for record in service.list_records(stores[0]):
            if record.status == "active" and record.supersedes:
                live[record.supersedes] = live.get(record.supersedes, 0) + 1
        forks = sorted(old for old, n in live.items() if n > 1)
        assert not forks, f"two active corrections of {forks[:3]}"
        statuses: dict[str, int] = {}
        for record in service.list_records(stores[-1]):
            statuses[record.status] = statuses.get(record.status, 0) + 1
        times.sort()
        print(
            f"{count} writers, {rounds} rounds ({rounds} remembered, {corrections} corrected): "
            f"all {count} clones equal after {final_rounds} final round(s), nothing lost "
            f"({len(said)} texts written, all present)"
        )
        print(
            f"  syncs: {len(times)}, median {statistics.median(times):.2f} s, "
            f"p95 {times[int(len(times) * 0.95)]:.2f} s; merges {merges}; concurrent edits "
            f"resolved by supersession or tombstone: {resolved}"
        )
        print(f"  final records by status: {json.dumps(statuses, sort_keys=True)}")


def main() -> None:
    """Run the parts asked for and print their figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--turns", type=int, default=1_000_000)
    parser.add_argument("--writers", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=300)
    parser.add_argument("--skip-large", action="store_true")
    parser.add_argument("--skip-writers", action="store_true")
    args = parser.parse_args()
    os.environ.setdefault("GIT_AUTHOR_NAME", "bench")
    os.environ.setdefault("GIT_AUTHOR_EMAIL", "bench@example.invalid")
    os.environ.setdefault("GIT_COMMITTER_NAME", "bench")
    os.environ.setdefault("GIT_COMMITTER_EMAIL", "bench@example.invalid")
    if not args.skip_large:
        large(args.records, args.turns)
    if not args.skip_writers:
        writers(args.writers, args.rounds)


if __name__ == "__main__":
    main()
