"""Replay the hook-JSON hosts' payloads through ``memdir hook EVENT --host H``.

Two kinds of fixtures under ``tests/hosts/fixtures/``:

- recorded from the released binary by the conformance suite (``copilot-1.0.102/``,
  ``qwen-code-0.24.4/``; paths rewritten to ``/home/dev/proj``);
- taken from the host's own documentation where no binary runs here (``cursor-docs/``,
  ``windsurf-docs/``, ``cline-docs/``; each file names its source in ``_from``). These prove the
  adapter against the documented wire format only, not against the host.

Each host's fixtures are fed, with the project path put back, in session order to fresh
subprocesses in a fresh store; the answers are checked for the host's own shape (Copilot's flat
``permissionDecision``, Cursor's ``permission``/``additional_context``, Cline's ``cancel`` /
``contextModification``, Windsurf's exit code 2) and memdir's state afterwards.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.hooks.conftest import HookRun, run_hook

FIXTURES = Path(__file__).resolve().parent.parent / "hosts" / "fixtures"
RECORDED_PROJECT = "/home/dev/proj"
FILES = {
    "README.md": "# demo project\n",
    "notes.txt": "alpha\nbeta\ngamma\n",
    "src/app.py": "".join(f"def step_{n}():\n    return {n}\n\n\n" for n in range(40)),
    "docs/todo.md": "- tidy notes\n",
}
OWNER = "staging database is refreshed every Sunday"


def _project(store: Path) -> Path:
    root = store.parent
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def _replay(host: str, folder: str, name: str, project: Path) -> HookRun:
    text = (FIXTURES / folder / f"{name}.json").read_text(encoding="utf-8")
    payload: dict[str, Any] = json.loads(text.replace(RECORDED_PROJECT, str(project)))
    event = name.split("-", 1)[0]
    return run_hook(event, payload, cwd=project, host=host, exit_codes=(0, 2))


def _rows(store: Path, folder: str) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for path in sorted((store / folder).glob("*.jsonl")):
        rows += [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return rows


def _actions(store: Path) -> list[tuple[Any, Any, Any]]:
    return [
        (r.get("tool"), r.get("path") or r.get("command"), r.get("ok"))
        for r in _rows(store, "actions")
    ]


def _no_hook_errors(store: Path) -> None:
    log = store / "state" / "hook-errors.log"
    assert not log.exists(), log.read_text()


def _seed(project: Path) -> None:
    import subprocess
    import sys

    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "memdir",
            "remember",
            "Use pytest, never unittest",
            "--kind",
            "rule",
        ],
        cwd=project,
        capture_output=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr


@pytest.mark.slow
def test_copilot_recorded_payloads_get_flat_answers(store: Path) -> None:
    project = _project(store)
    _seed(project)
    folder = "copilot-1.0.102"
    start = _replay("copilot", folder, "sessionStart-new", project).json
    assert start is not None and set(start) == {"additionalContext"}
    assert "Use pytest" in start["additionalContext"]
    _replay("copilot", folder, "userPromptSubmitted", project)
    assert _replay("copilot", folder, "preToolUse-view", project).json is None
    _replay("copilot", folder, "postToolUse-view", project)
    refused = _replay("copilot", folder, "preToolUse-view", project).json
    assert refused is not None and refused["permissionDecision"] == "deny"
    assert "already read in full" in refused["permissionDecisionReason"]
    assert "hookSpecificOutput" not in refused  # Copilot ignores the nested shape
    for name in ("postToolUse-create", "postToolUse-edit", "postToolUse-bash"):
        _replay("copilot", folder, name, project)
    _replay("copilot", folder, "postToolUse-bash-fail", project)
    _replay("copilot", folder, "postToolUseFailure-view", project)
    remember = _replay("copilot", folder, "userPromptSubmitted-remember", project).json
    assert remember is not None and "memdir stored" in remember["additionalContext"]
    seen = _actions(store)
    assert ("Read", "notes.txt", True) in seen and ("Write", "docs/todo.md", True) in seen
    assert ("Edit", "notes.txt", True) in seen and ("Bash", "echo shell-ok", True) in seen
    assert ("Bash", "ls no-such-file-here", False) in seen  # "… with exit code 2>"
    assert ("Read", "missing.txt", False) in seen
    _no_hook_errors(store)


@pytest.mark.slow
def test_qwen_recorded_payloads_get_claude_style_answers(store: Path) -> None:
    project = _project(store)
    _seed(project)
    folder = "qwen-code-0.24.4"
    start = _replay("qwen", folder, "SessionStart-startup", project).json
    assert start is not None and "Use pytest" in start["hookSpecificOutput"]["additionalContext"]
    _replay("qwen", folder, "UserPromptSubmit", project)
    _replay("qwen", folder, "UserPromptSubmit-continuation", project)  # empty: a tool round
    _replay("qwen", folder, "PreToolUse-read_file", project)
    _replay("qwen", folder, "PostToolUse-read_file", project)
    refused = _replay("qwen", folder, "PreToolUse-read_file", project).json
    assert refused is not None
    assert refused["hookSpecificOutput"]["permissionDecision"] == "deny"
    for name in ("PostToolUse-write_file", "PostToolUse-edit", "PostToolUse-run_shell_command"):
        _replay("qwen", folder, name, project)
    _replay("qwen", folder, "PostToolUseFailure-run_shell_command-fail", project)
    seen = _actions(store)
    assert ("Bash", "echo shell-ok", True) in seen  # "Signal: (none)" is not a signal
    assert ("Bash", "ls no-such-file-here", False) in seen
    assert ("Write", "docs/todo.md", True) in seen and ("Edit", "notes.txt", True) in seen
    users = [t["text"] for t in _rows(store, "journal") if t.get("who") == "user"]
    assert users == ["Tidy notes.txt and note a todo. How do we test?"]
    _no_hook_errors(store)


@pytest.mark.slow
def test_cursor_documented_payloads(store: Path) -> None:
    project = _project(store)
    _seed(project)
    folder = "cursor-docs"
    start = _replay("cursor", folder, "sessionStart", project).json
    assert start is not None and set(start) == {"additional_context"}
    assert "Use pytest" in start["additional_context"]
    # beforeSubmitPrompt cannot carry context: the statement is stored, the answer is silent
    assert _replay("cursor", folder, "beforeSubmitPrompt-remember", project).json is None
    assert _replay("cursor", folder, "preToolUse-Read", project).json is None
    _replay("cursor", folder, "postToolUse-Read", project)
    refused = _replay("cursor", folder, "preToolUse-Read", project).json
    assert refused is not None and refused["permission"] == "deny"
    assert "already read in full" in refused["agent_message"]
    for name in ("postToolUse-Write", "postToolUse-Shell", "postToolUseFailure-Shell"):
        _replay("cursor", folder, name, project)
    _replay("cursor", folder, "afterAgentResponse", project)
    _replay("cursor", folder, "preCompact", project)
    _replay("cursor", folder, "sessionEnd", project)
    seen = _actions(store)
    assert ("Write", "docs/todo.md", True) in seen and ("Bash", "echo shell-ok", True) in seen
    assert ("Bash", "ls no-such-file-here", False) in seen
    records = list((store / "records").rglob("*.md"))
    assert any(OWNER in p.read_text() for p in records)
    answers = [t["text"] for t in _rows(store, "journal") if t.get("who") == "assistant"]
    assert answers == ["Done: read, wrote and ran."]
    _no_hook_errors(store)


@pytest.mark.slow
def test_windsurf_documented_payloads_refuse_by_exit_code(store: Path) -> None:
    project = _project(store)
    folder = "windsurf-docs"
    prompt = _replay("windsurf", folder, "pre_user_prompt", project)
    assert prompt.code == 0 and prompt.json is None  # Windsurf takes no context
    first = _replay("windsurf", folder, "pre_read_code", project)
    assert first.code == 0 and not first.stdout.strip()
    _replay("windsurf", folder, "post_read_code", project)
    again = _replay("windsurf", folder, "pre_read_code", project)
    assert again.code == 2 and not again.stdout.strip()
    assert b"already read in full" in again.stderr
    for name in ("post_write_code", "post_run_command", "post_cascade_response"):
        assert _replay("windsurf", folder, name, project).code == 0
    seen = _actions(store)
    assert ("Edit", "notes.txt", True) in seen and ("Bash", "echo shell-ok", True) in seen
    records = list((store / "records").rglob("*.md"))
    assert any(OWNER in p.read_text() for p in records)
    _no_hook_errors(store)


@pytest.mark.slow
def test_cline_documented_payloads_are_unnested(store: Path) -> None:
    project = _project(store)
    _seed(project)
    folder = "cline-docs"
    start = _replay("cline", folder, "TaskStart", project).json
    assert start is not None and start["cancel"] is False
    assert "Use pytest" in start["contextModification"]
    remember = _replay("cline", folder, "UserPromptSubmit-remember", project).json
    assert remember is not None and "memdir stored" in remember["contextModification"]
    assert _replay("cline", folder, "PreToolUse-read_file", project).json is None
    _replay("cline", folder, "PostToolUse-read_file", project)
    refused = _replay("cline", folder, "PreToolUse-read_file", project).json
    assert refused is not None and refused["cancel"] is True
    assert "already read in full" in refused["errorMessage"]
    for name in ("PostToolUse-replace_in_file", "PostToolUse-execute_command-fail"):
        _replay("cline", folder, name, project)
    _replay("cline", folder, "PreCompact", project)
    _replay("cline", folder, "TaskComplete", project)
    seen = _actions(store)
    assert ("Read", "notes.txt", True) in seen and ("Edit", "notes.txt", True) in seen
    assert ("Bash", "ls no-such-file-here", False) in seen
    _no_hook_errors(store)


@pytest.mark.slow
def test_cline_cli_payloads_keep_the_digest_for_a_tool_answer_and_never_cancel(
    store: Path,
) -> None:
    """Cline CLI 3.0.65's recorded payloads: snake-case names, stringified parameters, the
    TaskStart answer dropped (so the digest rides on the next tool answer), no ``cancel``."""
    project = _project(store)
    _seed(project)
    folder = "cline-3.0.65"
    assert _replay("cline", folder, "TaskStart", project).json is None  # never read: kept
    first = _replay("cline", folder, "PreToolUse-read_files", project).json
    assert first is not None and first["cancel"] is False
    assert "Use pytest" in first["contextModification"]
    _replay("cline", folder, "PostToolUse-read_files", project)
    refused = _replay("cline", folder, "PreToolUse-read_files", project).json
    assert refused is not None and refused["cancel"] is False  # cancel would end the task
    assert "already read in full" in refused["contextModification"]
    assert "Use pytest" not in refused["contextModification"]  # the digest was given once
    for name in (
        "PostToolUse-read_files-ranged",
        "PostToolUse-editor",
        "PostToolUse-editor-create",
        "PostToolUse-run_commands",
        "PostToolUse-run_commands-fail",
        "TaskComplete",
    ):
        _replay("cline", folder, name, project)
    seen = _actions(store)
    assert ("Read", "notes.txt", True) in seen and ("Edit", "notes.txt", True) in seen
    assert ("Edit", "docs/todo.md", True) in seen
    assert ("Bash", "echo shell-ok", True) in seen
    assert ("Bash", "ls no-such-file-here", False) in seen
    _no_hook_errors(store)


def test_copilot_transcript_never_gives_the_previous_turns_answer(tmp_path: Path) -> None:
    from memdir.hooks.stop import last_assistant_message

    events = tmp_path / "events.jsonl"
    rows = [
        {"type": "user.message", "data": {"content": "Tidy notes.txt"}},
        {"type": "assistant.message", "data": {"content": "Done."}},
        {"type": "assistant.turn_end", "data": {}},
        {"type": "user.message", "data": {"content": "Remember that …"}},
    ]
    events.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert last_assistant_message(str(events)) == ""  # agentStop came before the answer
    rows.append({"type": "assistant.message", "data": {"content": "Noted."}})
    events.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert last_assistant_message(str(events)) == "Noted."
