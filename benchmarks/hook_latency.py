"""Hook wall time per event beside the bare interpreter's start-up, measured in one run.

Usage: python benchmarks/hook_latency.py [--runs N] [--records N] [--files N]

Creates a throwaway git project of ``--files`` source files (mapped by ``memdir scan``) with a
store of ``--records`` records (bulk-imported), then runs each event's hook ``--runs`` times
as a host does (a new process, the payload on stdin) and prints the median and p95 wall time in
milliseconds next to ``python -c pass`` and ``python -m memdir --version`` measured in the same
run, interleaved, so a noisy machine affects every row alike, with the difference and the ratio
to the bare interpreter (issue 3's target: at most 2x for SessionStart, PreToolUse and
PostToolUse on 10,000 records and a 5,000-file anatomy). Run it with compiled bytecode
(``python -m compileall src``) for figures that match an installed memdir.
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


def _time(args: list[str], payload: bytes | None, cwd: Path) -> float:
    started = time.perf_counter()
    subprocess.run(args, input=payload, cwd=cwd, capture_output=True, check=True)
    return (time.perf_counter() - started) * 1000


def _payloads(project: Path) -> dict[str, dict[str, object]]:
    readme = str(project / "README.md")
    base = {"session_id": "bench", "cwd": str(project), "transcript_path": "/dev/null"}
    return {
        "SessionStart": {**base, "hook_event_name": "SessionStart", "source": "startup"},
        "UserPromptSubmit": {
            **base,
            "hook_event_name": "UserPromptSubmit",
            "prompt": "how does the deploy pipeline handle retries?",
        },
        "PreToolUse": {
            **base,
            "hook_event_name": "PreToolUse",
            "tool_name": "Read",
            "tool_input": {"file_path": readme},
        },
        "PostToolUse": {
            **base,
            "hook_event_name": "PostToolUse",
            "tool_name": "Read",
            "tool_input": {"file_path": readme, "offset": 1, "limit": 5},
            "tool_response": {"type": "text", "file": {"content": "x"}},
        },
        "PostToolBatch": {**base, "hook_event_name": "PostToolBatch", "tool_calls": []},
        "Stop": {
            **base,
            "hook_event_name": "Stop",
            "stop_hook_active": False,
            "last_assistant_message": "done",
        },
    }


def main() -> None:
    """Run the benchmark and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--records", type=int, default=200)
    parser.add_argument("--files", type=int, default=0, help="source files in the anatomy")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="memdir-hookbench-") as tmp:
        project = Path(tmp) / "project"
        project.mkdir()
        subprocess.run(["git", "init", "-q"], cwd=project, check=True)
        (project / "README.md").write_text("# bench\n")
        env = {**os.environ}
        sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
        from memdir import service

        store = service.init(project).store
        from memdir.kernel.storage import lifecycle
        from memdir.store import bulk
        from memdir.store.scan import open_handle

        handle = open_handle(store)
        for n in range(min(options.records, 200)):  # the last few written one by one
            lifecycle.remember(
                handle,
                f"Deploy rule {n}: pipeline stage {n} retries {n % 5} times",
                kind="rule" if n % 4 == 0 else "fact",
            )
        rows_in = [
            json.dumps(
                {"id": f"f-{n:014d}", "kind": "fact", "text": f"Service {n} listens on port {n}"}
            )
            for n in range(max(options.records - 200, 0))
        ]
        bulk.import_lines(handle, rows_in)
        handle.index.close()
        for n in range(options.files):
            folder = project / "src" / f"pkg{n // 100}"
            folder.mkdir(parents=True, exist_ok=True)
            (folder / f"mod{n}.py").write_text(
                f'"""Module {n}: handles part {n} of the pipeline."""\n\n'
                f"from pkg{(n + 1) // 100} import mod{n + 1}\n\n\n"
                f"def stage_{n}(value):\n    return mod{n + 1}.stage_{n + 1}(value)\n"
            )
        if options.files:
            from memdir.service import project as project_service

            project_service.scan(store)
        python = [sys.executable]
        rows: dict[str, list[float]] = {"python -c pass": [], "memdir --version": []}
        payloads = _payloads(project)
        rows.update({f"hook {event}": [] for event in payloads})
        for _ in range(options.runs):
            rows["python -c pass"].append(_time([*python, "-c", "pass"], None, project))
            rows["memdir --version"].append(
                _time([*python, "-m", "memdir", "--version"], None, project)
            )
            for event, payload in payloads.items():
                rows[f"hook {event}"].append(
                    _time(
                        [*python, "-m", "memdir", "hook", event],
                        json.dumps(payload).encode(),
                        project,
                    )
                )
        del env
        bare = statistics.median(rows["python -c pass"])
        print(
            f"{options.runs} runs each, store of {options.records} records, "
            f"{options.files} mapped files, interleaved"
        )
        print(f"{'command':<26}{'median ms':>10}{'p95 ms':>10}{'vs bare':>10}{'ratio':>8}")
        for name, samples in rows.items():
            samples.sort()
            median = statistics.median(samples)
            p95 = samples[min(len(samples) - 1, int(0.95 * len(samples)))]
            print(
                f"{name:<26}{median:>10.1f}{p95:>10.1f}{median - bare:>+10.1f}"
                f"{median / bare:>7.1f}x"
            )


if __name__ == "__main__":
    main()
