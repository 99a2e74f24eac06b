"""`memdir demo`: the main job end to end, on a copy of this repository."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path


def test_the_demo_replays_two_sessions_and_a_correction() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "memdir", "demo", "--json"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    steps = json.loads(done.stdout)["steps"]
    agent = [s for s in steps if s["who"] == "agent"]

    def answer(label_part: str) -> dict:
        return next(s["answer"] for s in agent if label_part in s["label"])

    refused = answer("(full) again")["hookSpecificOutput"]
    assert refused["permissionDecision"] == "deny"
    assert "offset/limit" in refused["permissionDecisionReason"]
    assert answer("lines 40-70") == {}  # the ranged read is allowed
    stored = answer("the person types")["hookSpecificOutput"]["additionalContext"]
    assert "memdir stored r-" in stored
    second = next(s for s in agent if s["payload"]["session_id"] == "demo-2")
    digest = second["answer"]["hookSpecificOutput"]["additionalContext"]
    assert "Run the test suite before every commit" in digest
    person = [s for s in steps if s["who"] == "person"]
    assert all(s["exit"] == 0 for s in person)
    corrected = next(s for s in person if s["command"].startswith("memdir correct"))
    assert "supersedes" in corrected["output"]
    recall = next(s for s in person if s["command"].startswith("memdir recall"))
    assert "linter" in recall["output"] and "r-" in recall["output"]


def test_the_demo_accepts_another_project(tmp_path: Path) -> None:
    other = tmp_path / "other"
    (other / "app").mkdir(parents=True)
    (other / "app" / "main.py").write_text('"""Main."""\nprint("hi")\n')
    done = subprocess.run(
        [sys.executable, "-m", "memdir", "demo", "--project", str(other), "--json"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["steps"]
    assert not any((tmp_path / "other").glob(".memdir"))  # the original is never touched
