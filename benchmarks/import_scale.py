"""Time and peak memory of `memdir import --from openwolf` on a large generated cerebrum.md.

Usage: python benchmarks/import_scale.py [--bullets N] [--sizes N,N,...]

For each size (default 2,000, 5,000 and 20,000 bullets, spread over the four cerebrum
sections with dates), generates a throwaway git project with a ``.wolf/cerebrum.md``, runs the
import in a fresh process (``python -m memdir import --from openwolf .wolf --json``) and prints
the wall time, the records imported, and that process's peak resident set size (``ru_maxrss``
of the child). Memory is bounded when the peak grows far slower than the source: the importer
streams the file line by line and writes records in batches of 5,000 (``store.bulk.BATCH``);
what grows with the source is only the set of ids and text keys of the run.
A second run of the largest size is timed too: it must import nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SECTIONS = ("User Preferences", "Key Learnings", "Do-Not-Repeat", "Decision Log")
WORDS = [
    *("cache", "queue", "worker", "schema", "migration", "token", "router", "bundle"),
    *("lint", "deploy", "parser", "index", "session", "cursor", "retry", "timeout"),
    *("locale", "payload", "widget", "config", "build", "fixture", "release"),
]


def _cerebrum(path: Path, bullets: int) -> int:
    per = bullets // len(SECTIONS)
    with path.open("w", encoding="utf-8") as fh:
        fh.write("# Cerebrum\n\n")
        for s, section in enumerate(SECTIONS):
            fh.write(f"\n## {section}\n\n")
            for i in range(per):
                n = s * per + i
                words = " ".join(WORDS[(n >> k) % len(WORDS)] for k in range(0, 20, 3))
                day = f"2026-{1 + n % 12:02d}-{1 + n % 28:02d}"
                fh.write(f"- [{day}] Item {n}: the {words} rule number {n} applies here\n")
    return path.stat().st_size


def _run(project: Path, env: dict[str, str]) -> tuple[float, dict[str, object], int]:
    started = time.perf_counter()
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    done = subprocess.run(
        [sys.executable, "-m", "memdir", "import", "--from", "openwolf", ".wolf", "--json"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    seconds = time.perf_counter() - started
    peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return seconds, json.loads(done.stdout), max(peak_kib, before)


def main() -> None:
    """Print one row per size: bullets, source MB, seconds, records imported, peak RSS MB."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="2000,5000,20000")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    env = {**os.environ, "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "b@example.com"}
    print(f"{'bullets':>8} {'source MB':>9} {'seconds':>8} {'imported':>8} {'peak RSS MB':>11}")
    for size in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            project = Path(tmp) / "project"
            (project / ".wolf").mkdir(parents=True)
            subprocess.run(["git", "init", "-q"], cwd=project, check=True)
            subprocess.run(
                [sys.executable, "-m", "memdir", "init"],
                cwd=project,
                env=env,
                check=True,
                capture_output=True,
            )
            source = _cerebrum(project / ".wolf" / "cerebrum.md", size)
            # Each size runs in its own child: ru_maxrss of children is the largest so far,
            # so sizes run smallest first and each row's figure is that run's peak.
            seconds, report, peak_kib = _run(project, env)
            print(
                f"{size:>8} {source / 1e6:>9.2f} {seconds:>8.1f} {report['imported']:>8}"
                f" {peak_kib / 1024:>11.1f}"
            )
            if size == sizes[-1]:
                again_seconds, again, _ = _run(project, env)
                print(
                    f"second run of {size}: {again_seconds:.1f} s, imported {again['imported']},"
                    f" already there {again['existing']}"
                )


if __name__ == "__main__":
    main()
