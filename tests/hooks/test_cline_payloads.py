"""Cline CLI 3.0.65's recorded payloads in canonical terms, and memdir's answers to it.

The payloads are the ones ``tests/hosts/conformance/test_cline.py`` recorded from the released
binary (``tests/hosts/fixtures/cline-3.0.65/``); the extension's documented ones
(``cline-docs/``) must keep their meaning.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from memdir.hooks import deferred
from memdir.hooks.payload import HookResult, normalise, render

FIXTURES = Path(__file__).resolve().parent.parent / "hosts" / "fixtures"


def _payload(folder: str, name: str) -> dict[str, Any]:
    value = json.loads((FIXTURES / folder / f"{name}.json").read_text(encoding="utf-8"))
    assert isinstance(value, dict)
    return value


@pytest.mark.parametrize(
    ("name", "event", "tool", "tool_input"),
    [
        ("TaskStart", "SessionStart", "", {}),
        ("PreToolUse-read_files", "PreToolUse", "Read", {"file_path": "/home/dev/proj/notes.txt"}),
        (
            "PreToolUse-read_files-ranged",
            "PreToolUse",
            "Read",
            {"file_path": "/home/dev/proj/src/app.py", "offset": 0, "limit": 4},
        ),
        ("PreToolUse-run_commands", "PreToolUse", "Bash", {"command": "echo shell-ok"}),
        (
            "PostToolUse-editor",
            "PostToolUse",
            "Edit",
            {"file_path": "/home/dev/proj/notes.txt", "old_string": "beta", "new_string": "BETA"},
        ),
    ],
)
def test_cline_cli_payloads_are_canonical(
    name: str, event: str, tool: str, tool_input: dict[str, Any]
) -> None:
    # the installed command names the event (`memdir hook PreToolUse --host cline`)
    hook = normalise("cline", name.split("-", 1)[0], _payload("cline-3.0.65", name))
    assert (hook.name, hook.tool, hook.tool_input) == (event, tool, tool_input)
    assert hook.session.startswith("conv_") and hook.cwd == "/home/dev/proj"
    assert hook.raw["cline_cli"] is True


def test_a_failing_command_is_a_failure_though_cline_says_success() -> None:
    payload = _payload("cline-3.0.65", "PostToolUse-run_commands-fail")
    assert payload["postToolUse"]["success"] is True  # what Cline CLI 3.0.65 sends
    hook = normalise("cline", "PostToolUse", payload)
    assert hook.tool_input == {"command": "ls no-such-file-here"}
    assert hook.tool_response["success"] is False


def test_task_complete_carries_the_answer() -> None:
    hook = normalise("cline", "TaskComplete", _payload("cline-3.0.65", "TaskComplete"))
    assert hook.name == "Stop" and hook.last_message.startswith("Done")


def test_the_event_comes_from_the_payload_when_the_command_names_none() -> None:
    hook = normalise("cline", "", _payload("cline-3.0.65", "PreToolUse-read_files"))
    assert hook.name == "PreToolUse" and hook.tool == "Read"


def test_a_refusal_never_cancels_a_cline_cli_task_but_does_the_extensions() -> None:
    cli = normalise("cline", "PreToolUse", _payload("cline-3.0.65", "PreToolUse-read_files"))
    answer = render("cline", cli, HookResult(deny_reason="memdir: already read in full"))
    assert answer == {"cancel": False, "contextModification": "memdir: already read in full"}
    docs = normalise("cline", "PreToolUse", _payload("cline-docs", "PreToolUse-read_file"))
    assert docs.tool == "Read" and docs.file_path == "notes.txt"
    answer = render("cline", docs, HookResult(deny_reason="memdir: already read in full"))
    assert answer == {"cancel": True, "errorMessage": "memdir: already read in full"}


def test_kept_context_is_handed_out_once(tmp_path: Path) -> None:
    store = tmp_path / ".memdir"
    store.mkdir()
    assert deferred.take(store, "conv_1") == ""
    deferred.keep(store, "conv_1", "digest")
    deferred.keep(store, "conv_1", "recall")
    deferred.keep(store, "conv_2", "other")
    assert deferred.take(store, "conv_1") == "digest\n\nrecall"
    assert deferred.take(store, "conv_1") == ""
    assert deferred.take(store, "conv_2") == "other"
