"""How soon ``memdir serve`` answers ``initialize`` and ``tools/list`` after being spawned.

Usage: python benchmarks/mcp_start.py [--runs N] [--records N]

Spawns the MCP server command ``memdir install`` writes for Claude Code (this interpreter,
``-m memdir serve``) in a project with a store of ``--records`` records, sends ``initialize``,
``notifications/initialized`` and ``tools/list`` at once (as a host does), and times, from the
spawn, the arrival of each answer; then the first ``memory_recall`` call. Interleaved with it,
the bare interpreter answering one line (``python -c`` echoing a line back) is timed the same
way. The first start (before the handshake snapshot exists) is printed on its own. Prints
medians and p95s in milliseconds (issue 16's target: both answers within 500 ms).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "bench", "version": "0"},
    },
}
LINES = [
    INITIALIZE,
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    {
        "jsonrpc": "2.0",
        "id": 3,
        "method": "tools/call",
        "params": {"name": "memory_recall", "arguments": {"query": "deploy retries"}},
    },
]


def _answers(
    args: list[str], cwd: Path, lines: list[dict[str, object]], wanted: int
) -> list[float]:
    """Spawn ``args``, send ``lines``, return ms from the spawn to each of ``wanted`` answers."""
    started = time.perf_counter()
    child = subprocess.Popen(
        args, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    assert child.stdin is not None
    assert child.stdout is not None
    child.stdin.write("".join(json.dumps(line) + "\n" for line in lines).encode())
    child.stdin.flush()
    times = []
    for _ in range(wanted):
        line = child.stdout.readline()
        if not line:
            break
        times.append((time.perf_counter() - started) * 1000)
    child.stdin.close()
    child.wait(timeout=60)
    return times


def main() -> None:
    """Run the benchmark and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--records", type=int, default=1000)
    options = parser.parse_args()
    sys.path.insert(0, str(ROOT / "src"))
    from memdir import service
    from memdir.store import bulk
    from memdir.store.scan import open_handle

    with tempfile.TemporaryDirectory(prefix="memdir-mcpbench-") as tmp:
        project = Path(tmp)
        subprocess.run(["git", "init", "-q"], cwd=project, check=True)
        store = service.init(project).store
        rows = [
            json.dumps({"id": f"f-{n:014d}", "kind": "fact", "text": f"Deploy stage {n} retries"})
            for n in range(options.records)
        ]
        bulk.import_lines(open_handle(store), rows)
        serve = [sys.executable, "-m", "memdir", "serve"]
        echo = [sys.executable, "-c", "import sys; sys.stdout.write(sys.stdin.readline())"]
        first = _answers(serve, project, LINES, 3)  # no snapshot yet: the SDK answers all
        rows_ms: dict[str, list[float]] = {
            "bare python, one line": [],
            "initialize": [],
            "tools/list": [],
            "first memory_recall": [],
        }
        for _ in range(options.runs):
            rows_ms["bare python, one line"] += _answers(echo, project, LINES[:1], 1)
            got = _answers(serve, project, LINES, 3)
            for name, value in zip(
                ["initialize", "tools/list", "first memory_recall"], got, strict=False
            ):
                rows_ms[name].append(value)
        print(
            f"{options.runs} runs, store of {options.records} records, load average "
            f"{os.getloadavg()[0]:.1f}; ms from spawn to the answer"
        )
        print(
            "first start (no snapshot: the SDK answers): "
            + ", ".join(f"{v:.0f}" for v in first)
            + " ms to initialize, tools/list, memory_recall"
        )
        print(f"{'answer':<26}{'p50':>8}{'p95':>8}")
        for name, samples in rows_ms.items():
            samples.sort()
            p95 = samples[min(len(samples) - 1, int(0.95 * len(samples)))]
            print(f"{name:<26}{statistics.median(samples):>8.1f}{p95:>8.1f}")


if __name__ == "__main__":
    main()
