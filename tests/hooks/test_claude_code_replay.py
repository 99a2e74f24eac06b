"""Claude Code 2.1.332's real hook payloads, replayed into ``python -m memdir hook`` subprocesses.

The payloads were recorded by the host conformance suite (tests/hosts/conformance/
test_claude_code.py, ``MEMDIR_RECORD_FIXTURES=1``) from the released binary, trimmed, with the
project at ``/home/dev/project``; here that path becomes the test's own project, which holds the
same files the recorded session worked on.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from memdir import service
from memdir.kernel.storage import session
from tests.hooks.conftest import HookRun, run_hook
from tests.hosts.conformance.conftest import PROJECT_FILES

if TYPE_CHECKING:
    from memdir.kernel.storage.session import SessionState

FIXTURES = Path(__file__).resolve().parents[1] / "hosts" / "fixtures" / "claude-code-2.1.332"


def payload(name: str, project: Path) -> dict[str, Any]:
    """The recorded payload ``name`` (file stem), pointed at ``project``."""
    text = (FIXTURES / f"{name}.json").read_text(encoding="utf-8")
    value = json.loads(text.replace("/home/dev/project", str(project)))
    assert isinstance(value, dict)
    return value


def replay(name: str, project: Path) -> HookRun:
    """Run the hook the recorded payload belongs to, the way Claude Code runs memdir's."""
    data = payload(name, project)
    return run_hook(data["hook_event_name"], data, cwd=project)


@pytest.fixture
def project(store: Path) -> Path:
    """The store's project, holding the files the recorded session read and changed."""
    root = store.parent
    for rel, text in PROJECT_FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def _session(project: Path) -> SessionState:
    sid = payload("SessionStart-startup", project)["session_id"]
    return session.load(project / ".memdir", sid)


def _actions(project: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for path in sorted((project / ".memdir" / "actions").glob("*.jsonl")):
        rows += [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return rows


def _journal(project: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for path in sorted((project / ".memdir" / "journal").glob("*.jsonl")):
        rows += [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return rows


def _decision(run: HookRun) -> str | None:
    return (run.json or {}).get("hookSpecificOutput", {}).get("permissionDecision")


def test_every_recorded_fixture_is_small_and_holds_no_machine_path() -> None:
    files = sorted(FIXTURES.iterdir())
    assert len(files) >= 20
    for path in files:
        text = path.read_text(encoding="utf-8")
        assert len(text.encode()) < 20_000, path.name
        assert "/tmp/" not in text and "/work/wt" not in text, path.name
        if path.suffix == ".json":
            assert json.loads(text)["hook_event_name"] in path.name


def test_session_start_gives_the_digest(project: Path) -> None:
    service.remember(project / ".memdir", "Never push directly to the main branch", kind="rule")
    run = replay("SessionStart-startup", project)
    assert run.json is not None
    assert run.json["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    assert "Never push directly to the main branch" in run.context
    assert _session(project)["source"] == "startup"


def test_a_remember_that_prompt_is_stored_as_the_owners_and_journaled(project: Path) -> None:
    run = replay("UserPromptSubmit", project)
    assert "memdir stored" in run.context
    found = [r for r in service.list_records(project / ".memdir") if "staging database" in r.text]
    assert [(r.text, r.origin) for r in found] == [
        ("The staging database is read-only on Fridays", "owner")
    ]
    turns = _journal(project)
    assert [t["who"] for t in turns] == ["user"]
    assert "<memdir-memory>" not in turns[0]["text"]


def test_a_second_full_read_is_refused_and_a_ranged_read_is_not(project: Path) -> None:
    assert _decision(replay("PreToolUse-Read", project)) is None
    replay("PostToolUse-Read", project)
    again = replay("PreToolUse-Read", project)
    assert _decision(again) == "deny"
    reason = again.json["hookSpecificOutput"]["permissionDecisionReason"]  # type: ignore[index]
    assert "src/app.py was already read in full" in reason
    assert _decision(replay("PreToolUse-Read-ranged", project)) is None
    replay("PostToolUse-Read-ranged", project)
    assert [(r["tool"], r["path"], r["ok"]) for r in _actions(project)] == [
        ("Read", "src/app.py", True),
        ("Read", "src/app.py", True),
    ]


def test_a_write_and_an_edit_leave_action_rows_and_update_the_file_map(project: Path) -> None:
    (project / "docs").mkdir()
    (project / "docs" / "plan.md").write_text("# Plan\n\nShip the release on Tuesday.\n")
    replay("PostToolUse-Write", project)
    app = project / "src" / "app.py"
    app.write_text(app.read_text().replace("def step_1():", "def step_one():"))
    replay("PostToolUse-Edit", project)
    assert [(r["tool"], r["path"], r["ok"]) for r in _actions(project)] == [
        ("Write", "docs/plan.md", True),
        ("Edit", "src/app.py", True),
    ]
    files = json.loads((project / ".memdir" / "anatomy.json").read_text())["files"]
    assert "docs/plan.md" in files
    assert "step_one" in json.dumps(files["src/app.py"])
    assert _session(project)["written"] == ["docs/plan.md", "src/app.py"]


def test_a_shell_command_leaves_an_action_row(project: Path) -> None:
    replay("PostToolUse-Bash", project)
    assert [(r["tool"], r["command"], r["ok"]) for r in _actions(project)] == [
        ("Bash", "git status --short", True)
    ]


def test_a_failed_shell_command_leaves_a_failed_action_row(project: Path) -> None:
    replay("PostToolUseFailure-Bash", project)
    assert [(r["tool"], r["command"], r["ok"]) for r in _actions(project)] == [
        ("Bash", "ls no-such-folder", False)
    ]


def test_a_save_through_the_mcp_tool_counts_as_a_belief(project: Path) -> None:
    replay("PostToolUse-memory_recall", project)
    assert _session(project)["beliefs"] == 0
    replay("PostToolUse-memory_remember", project)
    assert _session(project)["beliefs"] == 1


def test_stop_journals_the_assistants_answer(project: Path) -> None:
    replay("Stop", project)
    assert [(t["who"], t["text"]) for t in _journal(project)] == [("assistant", "Noted.")]


def test_one_compaction_in_claude_codes_order_is_one_checkpoint(project: Path) -> None:
    for name in ("PreCompact-manual", "SessionStart-compact", "PostCompact-manual"):
        replay(name, project)
    compactions = _session(project)["compactions"]
    assert [c["trigger"] for c in compactions] == ["manual"]


def test_a_compaction_evicts_earlier_reads(project: Path) -> None:
    replay("PostToolUse-Read", project)
    assert _decision(replay("PreToolUse-Read", project)) == "deny"
    for name in ("PreCompact-manual", "SessionStart-compact", "PostCompact-manual"):
        replay(name, project)
    assert _decision(replay("PreToolUse-Read", project)) is None
    assert _session(project)["compactions"][0]["trigger"] == "manual"


def test_resume_and_end_keep_the_session(project: Path) -> None:
    replay("SessionStart-startup", project)
    replay("PostToolUse-Read", project)
    replay("SessionEnd-other", project)
    replay("SessionStart-resume", project)
    state = _session(project)
    assert state["source"] == "resume" and state["starts"] == 2
    assert "src/app.py" in state["reads"]
    assert [e["reason"] for e in state["ends"]] == ["other"]


def test_resume_injects_only_what_the_session_was_not_shown(project: Path) -> None:
    store = project / ".memdir"
    service.remember(store, "Never push directly to the main branch", kind="rule")
    assert "Never push directly" in replay("SessionStart-startup", project).context
    # The resumed transcript still holds that digest: the same digest again is a duplicate.
    assert replay("SessionStart-resume", project).json is None
    service.remember(store, "Always run make check before a commit", kind="rule")
    context = replay("SessionStart-resume", project).context
    assert "Always run make check before a commit" in context
    assert "Never push directly" not in context


def test_a_compaction_injects_the_digest_again(project: Path) -> None:
    service.remember(project / ".memdir", "Never push directly to the main branch", kind="rule")
    replay("SessionStart-startup", project)
    replay("PreCompact-manual", project)
    context = replay("SessionStart-compact", project).context
    assert "Never push directly" in context and "Context was compacted" in context


def test_stop_with_only_the_common_fields_reads_the_answer_from_the_transcript(
    project: Path, tmp_path: Path
) -> None:
    transcript = tmp_path / "session.jsonl"
    transcript.write_text((FIXTURES / "transcript-tail.jsonl").read_text(encoding="utf-8"))
    data = payload("Stop", project)
    del data["last_assistant_message"]
    data["transcript_path"] = str(transcript)
    run_hook("Stop", data, cwd=project)
    assert [(t["who"], t["text"]) for t in _journal(project)] == [("assistant", "Welcome back.")]
