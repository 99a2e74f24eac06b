"""Running the real ``memdir`` CLI in a subprocess, optionally through the kill-point wrapper."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

KILLPOINT = Path(__file__).with_name("killpoint.py")
MEMDIR = [sys.executable, "-m", "memdir"]


def memdir(store: Path, *args: str, kill_at: str | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``memdir ARGS --store STORE``; with ``kill_at``, SIGKILLed at that point.

    Asserts that no traceback reached stderr, whatever happened.
    """
    env = dict(os.environ)
    command = [*MEMDIR, *args, "--store", str(store)]
    if kill_at is not None:
        env["MEMDIR_KILL_AT"] = kill_at
        command = [sys.executable, str(KILLPOINT), *args, "--store", str(store)]
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    assert "Traceback" not in done.stderr, done.stderr
    return done


def git_objects(repo: Path) -> bytes:
    """Every object in ``repo``'s git database, unreachable ones too (``cat-file --batch``)."""
    if not (repo / ".git").exists():
        return b""
    return subprocess.run(
        ["git", "-C", str(repo), "cat-file", "--batch-all-objects", "--batch"],
        capture_output=True,
        check=True,
    ).stdout
