"""Gemini CLI 0.61.0's real hook payloads, replayed through ``memdir hook --host gemini``.

The payloads were recorded by ``tests/hosts/conformance/test_gemini.py`` from the released
binary (``MEMDIR_RECORD_FIXTURES=1`` rewrites them) and trimmed; paths read ``/home/dev/proj``
and are pointed at each test's own project here. Each hook runs as a real subprocess, the way
Gemini runs it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from memdir import service
from memdir.kernel.storage import session
from tests.hooks.conftest import HookRun, run_hook

FIXTURES = Path(__file__).resolve().parent.parent / "hosts" / "fixtures" / "gemini-cli-0.61.0"
FIXTURE_PROJECT = "/home/dev/proj"


def payload(name: str, project: Path, **changes: Any) -> dict[str, Any]:
    """The recorded payload ``name`` with its project path pointed at ``project``."""
    text = (FIXTURES / f"{name}.json").read_text(encoding="utf-8")
    value: dict[str, Any] = json.loads(text.replace(FIXTURE_PROJECT, str(project)))
    value.update(changes)
    return value


def gemini(name: str, project: Path, **changes: Any) -> HookRun:
    """Run the hook for recorded payload ``name`` as Gemini CLI would."""
    data = payload(name, project, **changes)
    return run_hook(data["hook_event_name"], data, cwd=project, host="gemini")


def _actions(store: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for path in sorted((store / "actions").glob("*.jsonl")):
        rows += [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return rows


def _journal(store: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for path in sorted((store / "journal").glob("*.jsonl")):
        rows += [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return rows


def _session_id(project: Path) -> str:
    return str(payload("SessionStart-startup", project)["session_id"])


@pytest.fixture
def gemini_project(store: Path) -> Path:
    """The store's project with the files the recorded session touched."""
    project = store.parent
    (project / "notes.txt").write_text("alpha\nbeta\ngamma\n")
    (project / "src").mkdir()
    (project / "src" / "app.py").write_text(
        "".join(f"def step_{n}():\n    return {n}\n\n\n" for n in range(40))
    )
    (project / "docs").mkdir()
    return project


def test_fixtures_are_small_and_hold_no_machine_paths() -> None:
    files = sorted(FIXTURES.glob("*.json"))
    assert len(files) >= 20
    for path in files:
        text = path.read_text(encoding="utf-8")
        assert len(text.encode()) < 20_000, path.name
        assert not re.search(r"(?<![\w.])/(?:tmp|work|root|opt)/", text), path.name
        assert json.loads(text)["hook_event_name"] in path.name


@pytest.mark.slow
def test_session_start_answers_in_geminis_shape_with_the_digest(
    store: Path, gemini_project: Path
) -> None:
    service.remember(store, "Use pytest for tests, never unittest", kind="rule")
    gemini("SessionStart-startup", gemini_project)  # a first start builds the index
    run = gemini("SessionStart-startup", gemini_project)
    out = run.json
    assert out is not None, run.stderr
    specific = out["hookSpecificOutput"]
    assert specific["hookEventName"] == "SessionStart"
    assert "<memdir-memory>" in specific["additionalContext"]
    assert "Use pytest for tests, never unittest" in specific["additionalContext"]


@pytest.mark.slow
def test_a_second_full_read_file_is_refused_in_geminis_shape(gemini_project: Path) -> None:
    assert gemini("BeforeTool-read_file", gemini_project).json is None
    gemini("AfterTool-read_file", gemini_project)
    refused = gemini("BeforeTool-read_file", gemini_project).json
    assert refused is not None
    assert refused["decision"] == "deny"
    assert "notes.txt was already read in full" in refused["reason"]


@pytest.mark.slow
def test_a_ranged_read_file_leaves_the_full_read_allowed(gemini_project: Path) -> None:
    assert gemini("BeforeTool-read_file-ranged", gemini_project).json is None
    gemini("AfterTool-read_file-ranged", gemini_project)
    full = payload("BeforeTool-read_file", gemini_project)
    full["tool_input"] = {"file_path": "src/app.py"}
    assert run_hook("BeforeTool", full, cwd=gemini_project, host="gemini").json is None


@pytest.mark.slow
def test_shell_commands_get_action_rows_and_a_failed_one_is_marked_failed(
    store: Path, gemini_project: Path
) -> None:
    gemini("AfterTool-run_shell_command", gemini_project)
    gemini("AfterTool-run_shell_command-failed", gemini_project)
    rows = [(r["tool"], r["command"], r["ok"]) for r in _actions(store)]
    assert rows == [("Bash", "echo shell-ok", True), ("Bash", "ls no-such-file-here", False)]


@pytest.mark.slow
def test_write_file_and_replace_update_the_file_map(store: Path, gemini_project: Path) -> None:
    (gemini_project / "docs" / "todo.md").write_text("- tidy notes\n")
    gemini("AfterTool-write_file", gemini_project)
    (gemini_project / "notes.txt").write_text("alpha\nBETA\ngamma\n")
    gemini("AfterTool-replace", gemini_project)
    rows = [(r["tool"], r["path"], r["ok"]) for r in _actions(store)]
    assert rows == [("Write", "docs/todo.md", True), ("Edit", "notes.txt", True)]
    files = json.loads((store / "anatomy.json").read_text())["files"]
    assert files["docs/todo.md"]["size"] == len("- tidy notes\n")
    assert files["notes.txt"]["size"] == len("alpha\nBETA\ngamma\n")


@pytest.mark.slow
def test_the_digest_gemini_hands_back_in_the_prompt_is_not_journalled(
    store: Path, gemini_project: Path
) -> None:
    gemini("BeforeAgent", gemini_project)
    users = [t["text"] for t in _journal(store) if t["who"] == "user"]
    assert users == ["Tidy notes.txt and note a todo. How do we test?"]


@pytest.mark.slow
def test_remember_that_in_a_gemini_prompt_stores_an_owner_belief(
    store: Path, gemini_project: Path
) -> None:
    gemini("BeforeAgent-remember", gemini_project)
    found = service.recall(store, "staging database refreshed Sunday").to_json()["results"]
    texts = [(r["text"], r["origin"]) for r in found]
    assert ("The staging database is refreshed every Sunday at 02:00 UTC", "owner") in texts


@pytest.mark.slow
def test_an_mcp_save_under_geminis_tool_name_counts_as_saved_memory(
    store: Path, gemini_project: Path
) -> None:
    (gemini_project / "docs" / "todo.md").write_text("- tidy notes\n")
    gemini("AfterTool-write_file", gemini_project)
    gemini("AfterTool-mcp_memdir_memory_remember", gemini_project)
    gemini("AfterAgent", gemini_project)
    state = session.load(store, _session_id(gemini_project))
    assert state["written"] == ["docs/todo.md"]
    assert state["beliefs"] == 1 and state["reminders"] == []


@pytest.mark.slow
def test_after_agent_journals_the_answer(store: Path, gemini_project: Path) -> None:
    gemini("AfterAgent", gemini_project)
    answers = [t["text"] for t in _journal(store) if t["who"] == "assistant"]
    assert answers == ["Done: read, wrote, edited, ran and saved."]


def _transcript(folder: Path, prompt_tokens: int, model: str = "gemini-2.5-flash") -> Path:
    """A Gemini session transcript whose last model response had ``prompt_tokens``."""
    path = folder / "session.jsonl"
    lines = [
        {"sessionId": "s", "kind": "main"},
        {"id": "u1", "type": "user", "content": [{"text": "hello"}]},
        {
            "id": "g1",
            "type": "gemini",
            "content": "hi",
            "tokens": {"input": prompt_tokens, "output": 8, "cached": 0, "total": 9},
            "model": model,
        },
    ]
    path.write_text("".join(json.dumps(line, separators=(",", ":")) + "\n" for line in lines))
    return path


@pytest.mark.slow
def test_pre_compress_before_an_ordinary_request_is_no_compaction(
    store: Path, gemini_project: Path, tmp_path: Path
) -> None:
    transcript = _transcript(tmp_path, 120)
    for _ in range(3):  # Gemini fires it before every model request
        gemini("PreCompress", gemini_project, transcript_path=str(transcript))
    state = session.load(store, _session_id(gemini_project))
    assert state["compactions"] == [] and state["generation"] == 0


@pytest.mark.slow
def test_pre_compress_over_the_threshold_or_manual_is_one_checkpoint(
    store: Path, gemini_project: Path, tmp_path: Path
) -> None:
    transcript = _transcript(tmp_path, 700_000)  # over 0.5 of the 1,048,576-token window
    gemini("PreCompress", gemini_project, transcript_path=str(transcript))
    state = session.load(store, _session_id(gemini_project))
    assert [c["trigger"] for c in state["compactions"]] == ["auto"]
    other = payload("PreCompress", gemini_project, session_id="s2", trigger="manual")
    other["transcript_path"] = str(tmp_path / "missing.jsonl")
    run_hook("PreCompress", other, cwd=gemini_project, host="gemini")
    assert [c["trigger"] for c in session.load(store, "s2")["compactions"]] == ["manual"]


@pytest.mark.slow
def test_the_projects_compression_threshold_is_honoured(
    store: Path, gemini_project: Path, tmp_path: Path
) -> None:
    settings = gemini_project / ".gemini" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"model": {"compressionThreshold": 0.1}}))
    transcript = _transcript(tmp_path, 120_000)  # over 0.1 of the window, under 0.5
    gemini("PreCompress", gemini_project, transcript_path=str(transcript))
    assert len(session.load(store, _session_id(gemini_project))["compactions"]) == 1
