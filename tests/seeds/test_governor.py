"""The shell output governor on recorded real outputs (issue 11 item 1)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from tests.hooks.conftest import HookRun, run_hook

FIXTURES = {
    f["name"]: f
    for f in json.loads(
        (Path(__file__).parent / "fixtures" / "command_outputs.json").read_text(encoding="utf-8")
    )
}


def _post(store: Path, name: str, host: str | None = None, command: str | None = None) -> HookRun:
    fixture = FIXTURES[name]
    ok = fixture["exit_code"] == 0
    event = "PostToolUse" if ok else "PostToolUseFailure"
    payload: dict[str, Any] = {
        "session_id": "s1",
        "hook_event_name": event,
        "cwd": str(store.parent),
        "tool_name": "Bash" if host is None else "run_shell_command",
        "tool_input": {"command": command or fixture["command"]},
    }
    if ok:
        payload["tool_response"] = {
            "stdout": fixture["stdout"],
            "stderr": fixture["stderr"],
            "interrupted": False,
            "isImage": False,
        }
    else:
        payload["error"] = f"Exit code 1\n{fixture['stdout']}"
    return run_hook(event, payload, cwd=store.parent, host=host)


def _updated(run: HookRun) -> dict[str, Any] | None:
    value = (run.json or {}).get("hookSpecificOutput", {}).get("updatedToolOutput")
    return value if isinstance(value, dict) else None


def _pre(store: Path, command: str, session: str = "s1", host: str | None = None) -> str:
    payload = {
        "session_id": session,
        "hook_event_name": "PreToolUse",
        "cwd": str(store.parent),
        "tool_name": "Bash" if host != "gemini" else "run_shell_command",
        "tool_input": {"command": command},
    }
    run = run_hook("PreToolUse", payload, cwd=store.parent, host=host)
    return str((run.json or {}).get("hookSpecificOutput", {}).get("additionalContext", ""))


def test_a_long_successful_output_is_shortened_and_kept_whole_on_disk(store: Path) -> None:
    fixture = FIXTURES["git-log"]
    updated = _updated(_post(store, "git-log"))
    assert updated is not None
    lines = updated["stdout"].splitlines()
    original = fixture["stdout"].splitlines()
    assert lines[:15] == original[:15] and lines[-25:] == original[-25:]
    marker = lines[15]
    left = int(re.search(r"(\d+) lines left out", marker).group(1))  # type: ignore[union-attr]
    assert left == len(original) - 40
    saved = Path(re.search(r"whole output is in (\S+)\]", marker).group(1))  # type: ignore[union-attr]
    assert saved.read_text(encoding="utf-8") == fixture["stdout"]
    assert updated["interrupted"] is False  # the rest of the tool's output shape is kept
    rows = [
        json.loads(line)
        for f in (store / "actions").glob("*.jsonl")
        for line in f.read_text().splitlines()
    ]
    assert rows[-1]["out_tokens"] > rows[-1]["shown_tokens"] > 0


def test_a_failing_test_run_is_never_shortened(store: Path) -> None:
    assert _post(store, "pytest-failing").json is None  # the failed call: nothing replaced
    # Even when a runner exits 0 while its text reports failures, it stays whole.
    fixture = dict(FIXTURES["pytest-failing"])
    long_failure = fixture["stdout"] * 20
    payload = {
        "session_id": "s1",
        "hook_event_name": "PostToolUse",
        "cwd": str(store.parent),
        "tool_name": "Bash",
        "tool_input": {"command": "pytest"},
        "tool_response": {"stdout": long_failure, "stderr": "", "interrupted": False},
    }
    assert _updated(run_hook("PostToolUse", payload, cwd=store.parent)) is None
    # The same size of passing output is shortened: the rule is the failure, not the size.
    assert _updated(_post(store, "pytest-verbose")) is not None


def test_small_outputs_marked_commands_and_other_hosts_are_left_alone(store: Path) -> None:
    assert _updated(_post(store, "npm-install")) is None  # 7 tokens
    assert _updated(_post(store, "pip-install")) is None  # under min_tokens
    assert _updated(_post(store, "find", command="find src tests # memdir:full")) is None
    assert _updated(_post(store, "find", host="gemini")) is None  # Gemini CLI cannot replace
    manifest = store / "memdir.toml"
    manifest.write_text(manifest.read_text().replace("skip = []", 'skip = ["find src*"]'))
    assert _updated(_post(store, "find")) is None
    manifest.write_text(
        manifest.read_text()
        .replace('skip = ["find src*"]', "skip = []")
        .replace('mode = "shape"', 'mode = "off"')
    )
    assert _updated(_post(store, "find")) is None
    manifest.write_text(manifest.read_text().replace('mode = "off"', 'mode = "shape"'))
    assert _updated(_post(store, "find")) is not None


def test_an_unbounded_noisy_command_gets_a_bounded_form_once_per_kind(store: Path) -> None:
    note = _pre(store, "git log")
    assert "git log --oneline -n 20" in note
    assert _pre(store, "git log --stat") == ""  # once per kind in a session
    assert "git log --oneline" in _pre(store, "git log", session="s2")
    assert _pre(store, "git log -n 5", session="s3") == ""  # already bounded
    assert _pre(store, "npm install 2>&1 | tail -n 20", session="s3") == ""
    assert "pytest" in _pre(store, "cd app && python -m pytest tests", session="s3")
    assert _pre(store, "ls -la", session="s3") == ""  # not a noisy command
    assert _pre(store, "find . -name '*.py'  # memdir:full", session="s4") == ""
    assert "maxdepth" in _pre(store, "find . -name '*.py'", session="s4", host="codex")
    # Gemini CLI's BeforeTool cannot add context: the note comes with the result instead.
    after = _post(store, "find", host="gemini")
    note = (after.json or {}).get("hookSpecificOutput", {}).get("additionalContext", "")
    assert "maxdepth" in note and _updated(after) is None
