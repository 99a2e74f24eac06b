"""The shell output governor on recorded real command outputs: tokens produced vs shown.

Usage: python benchmarks/governor.py [--fixtures FILE] [--json]

For each recorded output (``tests/seeds/fixtures/command_outputs.json``: pytest, npm install,
pip install, git log, find; real runs, the largest trimmed), a throwaway store is made and the
real hook is run the way Claude Code runs it: ``memdir hook PostToolUse`` (or
``PostToolUseFailure`` for a failed command) with the Claude Code payload on stdin. What reaches
the model is the hook's ``updatedToolOutput`` when it gives one, else the output as produced.
Tokens are ceil(UTF-8 bytes / 4), memdir's estimate. Codex and Gemini CLI cannot replace a shell
tool's output from a hook, so for them produced = reaching (they get only the note before).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "seeds" / "fixtures" / "command_outputs.json"


def tokens(text: str) -> int:
    """memdir's token estimate: ceil(UTF-8 bytes / 4)."""
    return -(-len(text.encode("utf-8")) // 4)


def run(fixture: dict[str, object], project: Path) -> tuple[int, int, bool]:
    """Run the PostToolUse hook on one recorded output; return (produced, reaching, shaped)."""
    stdout, stderr = str(fixture["stdout"]), str(fixture["stderr"])
    ok = fixture["exit_code"] == 0
    event = "PostToolUse" if ok else "PostToolUseFailure"
    payload: dict[str, object] = {
        "session_id": "bench",
        "hook_event_name": event,
        "cwd": str(project),
        "tool_name": "Bash",
        "tool_input": {"command": fixture["command"]},
    }
    if ok:
        payload["tool_response"] = {
            "stdout": stdout,
            "stderr": stderr,
            "interrupted": False,
            "isImage": False,
        }
    else:
        payload["error"] = f"Exit code {fixture['exit_code']}\n{stdout}{stderr}"
    done = subprocess.run(
        [sys.executable, "-m", "memdir", "hook", event],
        input=json.dumps(payload).encode(),
        capture_output=True,
        cwd=project,
        check=True,
    )
    produced = tokens(stdout) + tokens(stderr)
    answer = json.loads(done.stdout) if done.stdout.strip() else {}
    updated = answer.get("hookSpecificOutput", {}).get("updatedToolOutput")
    if not isinstance(updated, dict):
        return produced, produced, False
    reaching = tokens(str(updated.get("stdout", ""))) + tokens(str(updated.get("stderr", "")))
    return produced, reaching, True


def main() -> int:
    """Print one row per recorded output and the total reduction."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fixtures", type=Path, default=FIXTURES)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    fixtures = json.loads(args.fixtures.read_text(encoding="utf-8"))
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp) / "project"
        project.mkdir()
        subprocess.run(["git", "init", "-q", str(project)], check=True)
        env = {**os.environ, "MEMDIR_HOME": str(Path(tmp) / "home")}
        subprocess.run(
            [sys.executable, "-m", "memdir", "init"],
            cwd=project,
            check=True,
            env=env,
            capture_output=True,
        )
        os.environ["MEMDIR_HOME"] = env["MEMDIR_HOME"]
        for fixture in fixtures:
            produced, reaching, shaped = run(fixture, project)
            rows.append(
                {
                    "name": fixture["name"],
                    "command": fixture["command"],
                    "exit_code": fixture["exit_code"],
                    "produced": produced,
                    "reaching": reaching,
                    "shaped": shaped,
                }
            )
    produced = sum(r["produced"] for r in rows)
    reaching = sum(r["reaching"] for r in rows)
    if args.json:
        print(json.dumps({"rows": rows, "produced": produced, "reaching": reaching}, indent=1))
        return 0
    print(f"{'output':<22} {'exit':>4} {'produced':>9} {'reaching':>9} {'cut':>6}")
    for r in rows:
        cut = 1 - r["reaching"] / r["produced"] if r["produced"] else 0.0
        print(
            f"{r['name']:<22} {r['exit_code']:>4} {r['produced']:>9} {r['reaching']:>9} {cut:>6.0%}"
        )
    total = 1 - reaching / produced if produced else 0.0
    print(f"{'all (Claude Code)':<22} {'':>4} {produced:>9} {reaching:>9} {total:>6.0%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
