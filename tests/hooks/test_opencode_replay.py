"""Replay the payloads memdir's plugin sent from OpenCode 1.18.33 (tests/hosts/fixtures/opencode-1.18.33/).

Each fixture is one payload the plugin (``src/memdir/hosts/assets/opencode-plugin.js``) handed
``memdir hook EVENT --host opencode`` in the conformance session (tests/hosts/conformance/
test_opencode.py), paths rewritten to ``/home/dev/project``. Here they are fed back, the project
path put back, to ``python -m memdir hook`` subprocesses in a fresh store.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.hooks.conftest import HookRun, run_hook

FIXTURES = Path(__file__).resolve().parent.parent / "hosts" / "fixtures" / "opencode-1.18.33"
RECORDED_PROJECT = "/home/dev/project"
FILES = {
    "README.md": "# demo project\n",
    "notes.txt": "alpha\nbeta\ngamma\n",
    "src/app.py": "".join(f"def step_{n}():\n    return {n}\n\n\n" for n in range(40)),
}


def _replay(name: str, project: Path) -> HookRun:
    text = (FIXTURES / f"{name}.json").read_text(encoding="utf-8")
    payload: dict[str, Any] = json.loads(text.replace(RECORDED_PROJECT, str(project)))
    return run_hook(payload["hook_event_name"], payload, cwd=project, host="opencode")


@pytest.fixture
def opencode_project(store: Path) -> Path:
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


@pytest.mark.slow
def test_every_recorded_payload_is_answered_cleanly(store: Path, opencode_project: Path) -> None:
    """Every fixture: exit 0, stdout empty or one Claude-shaped answer (what the plugin reads)."""
    names = sorted(p.stem for p in FIXTURES.glob("*.json"))
    assert len(names) >= 15, names
    for name in names:
        answer = _replay(name, opencode_project).json
        if answer is not None:
            assert set(answer) == {"hookSpecificOutput"}, (name, answer)
    assert not (store / "state" / "hook-errors.log").exists()


@pytest.mark.slow
def test_prompt_stores_the_belief_and_says_so(store: Path, opencode_project: Path) -> None:
    """The recorded "remember that …" prompt is stored as the owner's and the answer says so."""
    _replay("SessionStart-startup", opencode_project)
    answer = _replay("UserPromptSubmit", opencode_project).json or {}
    context = answer.get("hookSpecificOutput", {}).get("additionalContext", "")
    assert "memdir stored" in context and "<memdir-memory>" in context, answer
    records = [p.read_text() for p in (store / "records").rglob("*.md")]
    assert any("trunk-stable" in r and 'origin: "owner"' in r for r in records), records


@pytest.mark.slow
def test_second_full_read_is_refused_and_ranged_reads_pass(
    store: Path, opencode_project: Path
) -> None:
    """OpenCode's ``read`` (``filePath``) is gated like Claude Code's Read."""
    _replay("SessionStart-startup", opencode_project)
    assert _replay("PreToolUse-read", opencode_project).json is None
    _replay("PostToolUse-read", opencode_project)
    refused = (_replay("PreToolUse-read", opencode_project).json or {}).get("hookSpecificOutput")
    assert refused and refused["permissionDecision"] == "deny"
    assert "already read in full" in refused["permissionDecisionReason"]


@pytest.mark.slow
def test_bash_exit_code_marks_the_failing_command(store: Path, opencode_project: Path) -> None:
    """The plugin passes bash's ``metadata.exit`` as ``exit_code``: the failing row says so."""
    _replay("PostToolUse-bash", opencode_project)
    _replay("PostToolUse-bash-fail", opencode_project)
    rows = {r.get("command"): r for r in _rows(store, "actions")}
    assert rows["ls src"]["ok"] is True
    assert rows["cat no-such-file.txt"]["ok"] is False
    edited = [r for r in _rows(store, "actions") if r.get("tool") != "Bash"]
    assert edited == []  # only what was replayed
