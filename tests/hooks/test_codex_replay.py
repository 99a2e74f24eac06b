"""Replay the payloads Codex 0.171.0 really sent (tests/hosts/fixtures/codex-0.171.0/).

Each fixture is one hook payload recorded by the Codex conformance session
(tests/hosts/conformance/test_codex.py), paths rewritten to ``/home/dev/project``. Here they are
fed, with the project path put back, to ``python -m memdir hook EVENT --host codex`` subprocesses
in a fresh store, in the order Codex sent them, and memdir's state is checked afterwards.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from memdir.kernel.storage import session as session_state
from tests.hooks.conftest import HookRun, run_hook

FIXTURES = Path(__file__).resolve().parent.parent / "hosts" / "fixtures" / "codex-0.171.0"
RECORDED_PROJECT = "/home/dev/project"
FILES = {
    "README.md": "# demo project\n",
    "notes.txt": "alpha\nbeta\ngamma\n",
    "src/app.py": "".join(f"def step_{n}():\n    return {n}\n\n\n" for n in range(40)),
}


def _payload(name: str, project: Path) -> dict[str, Any]:
    text = (FIXTURES / f"{name}.json").read_text(encoding="utf-8")
    value = json.loads(text.replace(RECORDED_PROJECT, str(project)))
    assert isinstance(value, dict)
    return value


def _replay(name: str, project: Path) -> HookRun:
    payload = _payload(name, project)
    return run_hook(payload["hook_event_name"], payload, cwd=project, host="codex")


@pytest.fixture
def codex_project(store: Path) -> Path:
    """The store's project, holding the files the recorded session worked on."""
    root = store.parent
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def _rows(store: Path, folder: str) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for path in sorted((store / folder).glob("*.jsonl")):
        rows += [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return rows


def _session(store: Path) -> dict[str, Any]:
    sid = _payload("SessionStart-startup", Path(RECORDED_PROJECT))["session_id"]
    return dict(session_state.load(store, sid))


def _no_hook_errors(store: Path) -> None:
    log = store / "state" / "hook-errors.log"
    assert not log.exists(), log.read_text()


@pytest.mark.slow
def test_every_recorded_payload_is_answered_cleanly(store: Path, codex_project: Path) -> None:
    """Every fixture: exit 0, stdout empty or one JSON object in Codex's shape, no hook error."""
    names = sorted(p.stem for p in FIXTURES.glob("*.json"))
    assert len(names) >= 12, names
    for name in names:
        run = _replay(name, codex_project)
        answer = run.json
        if answer is not None:
            assert set(answer) == {"hookSpecificOutput"}, (name, answer)
    _no_hook_errors(store)


def test_prompt_and_stop_journal_both_sides_and_store_the_belief(
    store: Path, codex_project: Path
) -> None:
    """UserPromptSubmit journals the user's words and stores "remember that …"; Stop the answer."""
    _replay("SessionStart-startup", codex_project)
    _replay("UserPromptSubmit", codex_project)
    _replay("Stop", codex_project)
    journal = _rows(store, "journal")
    assert [t["who"] for t in journal] == ["user", "assistant"]
    assert "trunk-stable" in journal[0]["text"] and "All done" in journal[1]["text"]
    records = [p.read_text() for p in (store / "records").rglob("*.md")]
    assert any("trunk-stable" in r and 'origin: "owner"' in r for r in records), records
    _no_hook_errors(store)


def test_shell_commands_leave_action_rows(store: Path, codex_project: Path) -> None:
    """Codex's shell tool arrives as ``Bash``: each command is an action row."""
    for name in ("PostToolUse-Bash-read", "PostToolUse-Bash-ranged", "PostToolUse-Bash"):
        _replay(name, codex_project)
    commands = [r.get("command") for r in _rows(store, "actions")]
    assert commands == ["cat notes.txt", "sed -n '2,4p' src/app.py", "ls src"]


def test_second_cat_of_an_unchanged_file_is_refused_once(store: Path, codex_project: Path) -> None:
    """The shell-read rule: ``cat FILE`` is a full read, and the same read again is refused."""
    _replay("SessionStart-startup", codex_project)
    assert _replay("PreToolUse-Bash-read", codex_project).json is None
    _replay("PostToolUse-Bash-read", codex_project)
    refused = _replay("PreToolUse-Bash-read", codex_project).json or {}
    decision = refused.get("hookSpecificOutput", {})
    assert decision.get("permissionDecision") == "deny", refused
    assert "notes.txt" in decision.get("permissionDecisionReason", "")
    assert _replay("PreToolUse-Bash-ranged", codex_project).json is None  # ranged reads pass


def test_apply_patch_sections_become_one_row_per_file(store: Path, codex_project: Path) -> None:
    """Add, Update, Move and Delete sections each leave a row naming the file."""
    _replay("SessionStart-startup", codex_project)
    _replay("PostToolUse-apply_patch", codex_project)
    rows = json.dumps(_rows(store, "actions"))
    for name in ("added.txt", "notes.txt", "src/moved.py", "README.md"):
        assert name in rows, rows
    written = json.dumps(_session(store).get("written"))
    assert "added.txt" in written and "src/moved.py" in written, written


def test_codex_compaction_order_is_one_checkpoint(store: Path, codex_project: Path) -> None:
    """Codex's order on ``exec resume`` (PreCompact, PostCompact, SessionStart resume, then
    compact) records one checkpoint and starts exactly one new read generation."""
    _replay("SessionStart-startup", codex_project)
    for name in ("PreCompact", "PostCompact", "SessionStart-resume", "SessionStart-compact"):
        _replay(name, codex_project)
    state = _session(store)
    assert len(state["compactions"]) == 1, state["compactions"]
    assert state["generation"] == 1, state


def test_mcp_save_is_recognised(store: Path, codex_project: Path) -> None:
    """A ``mcp__memdir__memory_remember`` call counts as a saved belief for the session."""
    _replay("SessionStart-startup", codex_project)
    before = int(_session(store).get("beliefs", 0))
    _replay("PostToolUse-mcp__memdir__memory_remember", codex_project)
    assert int(_session(store).get("beliefs", 0)) == before + 1
