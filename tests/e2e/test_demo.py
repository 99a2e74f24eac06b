"""`memdir demo`: the main job end to end, on a copy of this repository."""

from __future__ import annotations

import json
import os
import site
import subprocess
import sys
from pathlib import Path

import pytest


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
    stats = next(s for s in person if s["command"] == "memdir stats")["output"]
    balance = next(line for line in stats.splitlines() if line.startswith("balance:"))
    saved = int(balance.split("saved ")[1].split(",")[0])
    assert saved > 0  # the refusal saved the file less the 30 lines then read by range
    assert "no price" not in balance  # said once, on the prices line


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


@pytest.mark.slow
def test_the_demo_leaves_the_persons_home_byte_for_byte(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    config = home / ".claude.json"
    original = b'{\n  "numStartups": 3,\n  "projects": {"/elsewhere": {"mcpServers": {}}}\n}\n'
    config.write_bytes(original)
    env = {k: v for k, v in os.environ.items() if k not in ("CLAUDE_CONFIG_DIR", "MEMDIR_HOME")}
    env.update(HOME=str(home), PYTHONUSERBASE=site.getuserbase())
    done = subprocess.run(
        [sys.executable, "-m", "memdir", "demo"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    assert config.read_bytes() == original  # the local MCP entry went into the demo's own home
    assert sorted(p.name for p in home.iterdir()) == [".claude.json"]
    # and the demo still did its job: stored, recalled, corrected and showed the history
    out = done.stdout
    assert "memdir stored r-" in out
    assert "$ memdir install --host claude-code" in out and ".claude.json: MCP server" in out
    assert "$ memdir correct r-" in out and "supersedes" in out
    assert "$ memdir recall 'before committing'" in out and "linter" in out
    assert "$ memdir log -n 5" in out and "$ memdir diff r-" in out
