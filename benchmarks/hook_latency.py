"""Hook time per event beside the bare interpreter's start-up, measured in one run.

Usage: python benchmarks/hook_latency.py [--runs N] [--records N] [--files N] [--project DIR]

Creates a throwaway git project of ``--files`` source files (mapped by ``memdir scan``) with a
store of ``--records`` records (bulk-imported), installs memdir into it for Claude Code
(``memdir install --host claude-code``, with a throwaway ``HOME``), then runs each event's
*installed command exactly as the host runs it* (``/bin/sh -c COMMAND``, the payload on stdin,
``CLAUDE_PROJECT_DIR`` set, in the project) ``--runs`` times, interleaved with
``sh -c 'python -c pass'`` of the same interpreter, so a noisy machine affects every row alike.
PostToolUse runs twice: after a Read and after an Edit of a mapped source file (the anatomy
update; the file is changed before each run). For each row it prints the median and p95 wall
time and the median CPU time (user +
system of the processes, which a busy machine inflates far less than wall time), with the
ratio of each median to the bare interpreter's (issue 16's targets: PreToolUse and PostToolUse
at most 1.5x, SessionStart and UserPromptSubmit at most 2x, on 10,000 records and a 5,000-file
map). ``--project DIR`` keeps the built project in ``DIR`` and reuses it on the next run.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EDITED = "src/pkg0/mod1.py"


def _time(
    command: str, payload: bytes | None, cwd: Path, env: dict[str, str]
) -> tuple[float, float]:
    """Run ``command`` through ``/bin/sh -c`` as a host does; return (wall ms, CPU ms)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(
        ["/bin/sh", "-c", command], input=payload, cwd=cwd, env=env, capture_output=True, check=True
    )
    wall = (time.perf_counter() - started) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000
    return wall, cpu


def _payloads(project: Path) -> dict[str, tuple[str, dict[str, object]]]:
    """Return row name → (host event, payload)."""
    readme = str(project / "README.md")
    edited = str(project / EDITED)
    base = {"session_id": "bench", "cwd": str(project), "transcript_path": "/dev/null"}
    return {
        "SessionStart": (
            "SessionStart",
            {**base, "hook_event_name": "SessionStart", "source": "startup"},
        ),
        "UserPromptSubmit": (
            "UserPromptSubmit",
            {
                **base,
                "hook_event_name": "UserPromptSubmit",
                "prompt": "how does the deploy pipeline handle retries?",
            },
        ),
        "PreToolUse": (
            "PreToolUse",
            {
                **base,
                "hook_event_name": "PreToolUse",
                "tool_name": "Read",
                "tool_input": {"file_path": readme},
            },
        ),
        "PostToolUse (Read)": (
            "PostToolUse",
            {
                **base,
                "hook_event_name": "PostToolUse",
                "tool_name": "Read",
                "tool_input": {"file_path": readme, "offset": 1, "limit": 5},
                "tool_response": {"type": "text", "file": {"content": "x"}},
            },
        ),
        "PostToolUse (Edit)": (
            "PostToolUse",
            {
                **base,
                "hook_event_name": "PostToolUse",
                "tool_name": "Edit",
                "tool_input": {"file_path": edited, "old_string": "value", "new_string": "value"},
                "tool_response": {"filePath": edited, "structuredPatch": []},
            },
        ),
        "PostToolBatch": (
            "PostToolBatch",
            {**base, "hook_event_name": "PostToolBatch", "tool_calls": []},
        ),
        "Stop": (
            "Stop",
            {
                **base,
                "hook_event_name": "Stop",
                "stop_hook_active": False,
                "last_assistant_message": "done",
            },
        ),
    }


def _build(project: Path, records: int, files: int) -> None:
    """Make the git project, its store, its records and its file map."""
    project.mkdir(parents=True)
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    (project / "README.md").write_text("# bench\n")
    sys.path.insert(0, str(ROOT / "src"))
    from memdir import service
    from memdir.kernel.storage import lifecycle
    from memdir.store import bulk
    from memdir.store.scan import open_handle

    store = service.init(project).store
    handle = open_handle(store)
    for n in range(min(records, 200)):  # the last few written one by one
        lifecycle.remember(
            handle,
            f"Deploy rule {n}: pipeline stage {n} retries {n % 5} times",
            kind="rule" if n % 4 == 0 else "fact",
        )
    rows_in = [
        json.dumps(
            {"id": f"f-{n:014d}", "kind": "fact", "text": f"Service {n} listens on port {n}"}
        )
        for n in range(max(records - 200, 0))
    ]
    bulk.import_lines(handle, rows_in)
    handle.index.close()
    for n in range(max(files, 2)):
        folder = project / "src" / f"pkg{n // 100}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"mod{n}.py").write_text(
            f'"""Module {n}: handles part {n} of the pipeline."""\n\n'
            f"from pkg{(n + 1) // 100} import mod{n + 1}\n\n\n"
            f"def stage_{n}(value):\n    return mod{n + 1}.stage_{n + 1}(value)\n"
        )
    from memdir.service import project as project_service

    project_service.scan(store)


def _install(project: Path, home: Path) -> dict[str, str]:
    """Install memdir for Claude Code; return host event → the installed command."""
    home.mkdir(exist_ok=True)
    subprocess.run(
        [sys.executable, "-m", "memdir", "install", "--host", "claude-code", "--dir", str(project)],
        cwd=project,
        env={**os.environ, "HOME": str(home)},
        capture_output=True,
        check=True,
    )
    settings = json.loads((project / ".claude" / "settings.local.json").read_text())
    commands = {}
    for event, groups in settings["hooks"].items():
        for group in groups:
            for handler in group["hooks"]:
                if "memdir" in handler["command"]:
                    commands[event] = handler["command"]
    return commands


def main() -> None:
    """Run the benchmark and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--records", type=int, default=200)
    parser.add_argument("--files", type=int, default=0, help="source files in the anatomy")
    parser.add_argument("--project", type=Path, help="keep (and reuse) the project here")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="memdir-hookbench-") as tmp:
        project = options.project.resolve() if options.project else Path(tmp) / "project"
        if not (project / ".memdir").is_dir():
            _build(project, options.records, options.files)
        home = Path(tmp) / "home"
        commands = _install(project, home)
        env = {**os.environ, "HOME": str(home), "CLAUDE_PROJECT_DIR": str(project)}
        bare = shlex.join([sys.executable, "-c", "pass"])
        rows: dict[str, list[tuple[float, float]]] = {
            "python -c pass": [],
            "python -I -S -c pass": [],
        }
        payloads = _payloads(project)
        rows.update({f"hook {name}": [] for name in payloads})
        for _ in range(options.runs):
            rows["python -c pass"].append(_time(bare, None, project, env))
            rows["python -I -S -c pass"].append(
                _time(shlex.join([sys.executable, "-I", "-S", "-c", "pass"]), None, project, env)
            )
            for name, (event, payload) in payloads.items():
                if name == "PostToolUse (Edit)":  # a real edit: the file changed on disk
                    edited = project / EDITED
                    text = edited.read_text()
                    edited.write_text(text + "# edited\n" if len(text) < 400 else text[:200])
                data = json.dumps(payload).encode()
                rows[f"hook {name}"].append(_time(commands[event], data, project, env))
        base_wall = statistics.median(w for w, _ in rows["python -c pass"])
        base_cpu = statistics.median(c for _, c in rows["python -c pass"])
        print(
            f"{options.runs} runs each, store of {options.records} records, "
            f"{options.files} mapped files, interleaved; load average "
            f"{os.getloadavg()[0]:.1f} at the end"
        )
        print(f"installed command: {commands['PreToolUse']}")
        print(
            f"{'command':<28}{'wall p50':>9}{'p95':>8}{'ratio':>7}{'cpu p50':>9}{'ratio':>7}   (ms)"
        )
        for name, samples in rows.items():
            walls = sorted(w for w, _ in samples)
            wall = statistics.median(walls)
            p95 = walls[min(len(walls) - 1, int(0.95 * len(walls)))]
            cpu = statistics.median(c for _, c in samples)
            print(
                f"{name:<28}{wall:>9.1f}{p95:>8.1f}{wall / base_wall:>6.2f}x"
                f"{cpu:>9.1f}{cpu / base_cpu:>6.2f}x"
            )


if __name__ == "__main__":
    main()
