"""Run `memdir hook` the way a host does: a real subprocess, JSON on stdin."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

Hook = Callable[..., "HookRun"]


class HookRun:
    """One finished hook process."""

    def __init__(self, done: subprocess.CompletedProcess[bytes]) -> None:
        self.code = done.returncode
        self.stdout = done.stdout
        self.stderr = done.stderr

    @property
    def json(self) -> dict[str, Any] | None:
        """The one JSON object on stdout, or None when stdout is empty."""
        text = self.stdout.decode("utf-8")
        if not text.strip():
            return None
        assert text.count("\n") == 1 and text.endswith("\n"), text
        value = json.loads(text)
        assert isinstance(value, dict)
        return value

    @property
    def context(self) -> str:
        """The additionalContext the host would inject ('' when none)."""
        value = self.json or {}
        return str(value.get("hookSpecificOutput", {}).get("additionalContext", ""))


HOST_VARIABLES = ("CLAUDE_PROJECT_DIR", "GEMINI_PROJECT_DIR", "CLAUDE_CODE_SESSION_ID")
"""Set by a host that runs these tests; a hook under test gets them only when a test says so."""


def _base_env() -> dict[str, str]:
    import os

    return {k: v for k, v in os.environ.items() if k not in HOST_VARIABLES}


def run_hook(
    event: str,
    payload: dict[str, Any] | bytes | str,
    *,
    cwd: Path,
    host: str | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 30,
    exit_codes: tuple[int, ...] = (0,),
) -> HookRun:
    """Run ``python -m memdir hook EVENT`` with ``payload`` on stdin.

    The exit code must be one of ``exit_codes`` (0: a hook never fails its host; Windsurf's
    refusal is 2).
    """
    if isinstance(payload, dict):
        data = json.dumps(payload).encode()
    elif isinstance(payload, str):
        data = payload.encode()
    else:
        data = payload
    args = [sys.executable, "-m", "memdir", "hook", event]
    if host:
        args += ["--host", host]

    done = subprocess.run(
        args,
        input=data,
        capture_output=True,
        cwd=cwd,
        timeout=timeout,
        env={**_base_env(), **(env or {})},
        check=False,
    )
    run = HookRun(done)
    assert run.code in exit_codes, run.stderr
    return run


@pytest.fixture
def hook(store: Path) -> Callable[..., HookRun]:
    """Call a hook in the store's project; payloads get session_id and cwd filled in."""
    project = store.parent

    def call(event: str, session: str = "s1", **fields: Any) -> HookRun:
        payload = {"session_id": session, "hook_event_name": event, "cwd": str(project), **fields}
        return run_hook(event, payload, cwd=project)

    return call
