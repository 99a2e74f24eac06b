"""The Stop nudge for bugs: a session that fixed an error is asked once to log it (item 7)."""

from __future__ import annotations

from pathlib import Path

from tests.hooks.conftest import HookRun, run_hook

FAILED_RUN = (
    "Exit code 1\n============================= test session starts ==============================\n"
    "collected 3 items\n\ntests/test_cart.py ..F\n\n=================================== FAILURES "
    "===================================\n_______________________________ test_total "
    "_______________________________\n    def test_total():\n>       assert total([1, 2]) == 3\n"
    "E       assert 2 == 3\n=========================== short test summary info "
    "============================\nFAILED tests/test_cart.py::test_total - assert 2 == 3\n"
    "========================= 1 failed, 2 passed in 0.05s =========================="
)
PASSED_RUN = {
    "stdout": "collected 3 items\n\ntests/test_cart.py ...\n\n3 passed in 0.04s\n",
    "stderr": "",
    "interrupted": False,
    "isImage": False,
}


def _hook(store: Path, event: str, session: str = "s1", **fields: object) -> HookRun:
    project = store.parent
    payload = {"session_id": session, "hook_event_name": event, "cwd": str(project), **fields}
    return run_hook(event, payload, cwd=project)


def _context(run: HookRun) -> str:
    value = run.json or {}
    return str(value.get("hookSpecificOutput", {}).get("additionalContext", ""))


def _pytest(store: Path, session: str, *, ok: bool) -> None:
    if ok:
        _hook(
            store,
            "PostToolUse",
            session,
            tool_name="Bash",
            tool_input={"command": "python -m pytest tests/test_cart.py"},
            tool_response=PASSED_RUN,
        )
    else:  # Claude Code reports a non-zero exit as a failed tool call
        _hook(
            store,
            "PostToolUseFailure",
            session,
            tool_name="Bash",
            tool_input={"command": "python -m pytest tests/test_cart.py"},
            error=FAILED_RUN,
        )


def _edit(store: Path, session: str) -> None:
    (store.parent / "cart.py").write_text("def total(xs):\n    return sum(xs)\n")
    _hook(
        store,
        "PostToolUse",
        session,
        tool_name="Edit",
        tool_input={"file_path": str(store.parent / "cart.py")},
        tool_response={"filePath": "cart.py"},
    )


def test_a_failing_command_passing_after_an_edit_suggests_bug_log_once(store: Path) -> None:
    _pytest(store, "fix", ok=False)
    _edit(store, "fix")
    _pytest(store, "fix", ok=True)
    _hook(store, "Stop", "fix", last_assistant_message="Fixed total().")
    nudge = _context(_hook(store, "UserPromptSubmit", "fix", prompt="great, thanks"))
    assert "memdir bug log" in nudge and "python -m pytest tests/test_cart.py" in nudge
    _hook(store, "Stop", "fix", last_assistant_message="ok")
    assert "memdir bug log" not in _context(_hook(store, "UserPromptSubmit", "fix", prompt="next"))


def test_no_bug_nudge_for_a_rerun_without_a_fix_or_when_a_bug_was_logged(store: Path) -> None:
    _pytest(store, "flaky", ok=False)
    _pytest(store, "flaky", ok=True)  # passed on a rerun: nothing was fixed
    _hook(store, "Stop", "flaky", last_assistant_message="It was flaky.")
    assert "memdir bug log" not in _context(_hook(store, "UserPromptSubmit", "flaky", prompt="hm"))
    _pytest(store, "logged", ok=False)
    _edit(store, "logged")
    _pytest(store, "logged", ok=True)
    _hook(
        store,
        "PostToolUse",
        "logged",
        tool_name="Bash",
        tool_input={"command": 'memdir bug log --error "total off by one" --fix "sum()"'},
        tool_response={"stdout": "b-1", "stderr": "", "interrupted": False},
    )
    _hook(store, "Stop", "logged", last_assistant_message="Logged it.")
    assert "memdir bug log" not in _context(_hook(store, "UserPromptSubmit", "logged", prompt="ok"))


def test_an_error_pasted_in_a_prompt_then_an_edit_suggests_bug_log(store: Path) -> None:
    pasted = (
        'I get this:\nTraceback (most recent call last):\n  File "cart.py", line 2\n'
        "TypeError: unsupported operand type(s) for +: 'int' and 'str'"
    )
    _hook(store, "UserPromptSubmit", "paste", prompt=pasted)
    _edit(store, "paste")
    _hook(store, "Stop", "paste", last_assistant_message="Converted the strings.")
    assert "memdir bug log" in _context(_hook(store, "UserPromptSubmit", "paste", prompt="ok"))
