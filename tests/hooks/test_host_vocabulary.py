"""Hosts' own vocabulary on the hook path, with real subprocesses over real pipes.

Codex edits through ``apply_patch`` and reads through its shell (B51); Gemini CLI hands injected
context back inside the next prompt; MCP saves are named differently by every host; Claude Code
fires PostToolUseFailure, NotebookEdit and compaction events in its own order, and may send a
Stop without ``last_assistant_message``.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from memdir import service
from memdir.kernel.storage import session
from tests.conftest import SHARED
from tests.hooks.conftest import HookRun, _base_env, run_hook
from tests.mcp.test_server import INITIALIZE

PAYLOADS = SHARED / "data" / "host-payloads"
TRANSCRIPTS = SHARED / "data" / "claude-code-transcripts"


def _call(store: Path, event: str, host: str | None = None, **fields: Any) -> HookRun:
    payload = {"session_id": "s1", "hook_event_name": event, "cwd": str(store.parent), **fields}
    return run_hook(event, payload, cwd=store.parent, host=host)


def _actions(store: Path) -> list[dict[str, Any]]:
    rows = []
    for day in sorted((store / "actions").glob("*.jsonl")):
        rows += [json.loads(line) for line in day.read_text().splitlines()]
    return rows


def _journal(store: Path) -> list[dict[str, Any]]:
    rows = []
    for day in sorted((store / "journal").glob("*.jsonl")):
        rows += [json.loads(line) for line in day.read_text().splitlines()]
    return rows


def _anatomy(store: Path) -> dict[str, Any]:
    files = json.loads((store / "anatomy.json").read_text())["files"]
    assert isinstance(files, dict)
    return files


def _denied(run: HookRun) -> bool:
    return (run.json or {}).get("hookSpecificOutput", {}).get("permissionDecision") == "deny"


# --- Codex apply_patch (B51) -----------------------------------------------------------------

PATCH = """*** Begin Patch
*** Add File: notes/new.txt
+hello from codex
*** Update File: src/old_name.py
*** Move to: src/new_name.py
@@
-x = 1
+x = 2
*** Delete File: gone.txt
*** Update File: README.md
@@
-# demo project
+# demo project, patched
*** End Patch
"""


def _apply_patch_on_disk(project: Path) -> None:
    """What Codex did before firing PostToolUse."""
    (project / "notes").mkdir()
    (project / "notes" / "new.txt").write_text("hello from codex\n")
    (project / "src" / "old_name.py").unlink()
    (project / "src" / "new_name.py").write_text("x = 2\n")
    (project / "gone.txt").unlink()
    (project / "README.md").write_text("# demo project, patched\n")


def test_codex_apply_patch_is_one_write_per_file_with_map_and_state(store: Path) -> None:
    project = store.parent
    (project / "src").mkdir()
    (project / "src" / "old_name.py").write_text("x = 1\n")
    (project / "gone.txt").write_text("bye\n")
    for rel in ("src/old_name.py", "gone.txt"):  # the file map knew the old files
        _call(
            store,
            "PostToolUse",
            tool_name="Write",
            tool_input={"file_path": str(project / rel)},
            tool_response={"filePath": rel},
        )
    assert {"src/old_name.py", "gone.txt"} <= set(_anatomy(store))
    _apply_patch_on_disk(project)
    _call(
        store,
        "PostToolUse",
        "codex",
        tool_name="apply_patch",
        tool_input={"command": PATCH},
        tool_response="Exit code: 0\nSuccess. Updated the following files:\nA notes/new.txt\n",
    )
    rows = [r for r in _actions(store) if r.get("via") == "apply_patch"]
    assert [(r["tool"], r["path"], r.get("from")) for r in rows] == [
        ("Write", "notes/new.txt", None),
        ("Edit", "src/new_name.py", "src/old_name.py"),
        ("Delete", "gone.txt", None),
        ("Edit", "README.md", None),
    ]
    assert all(r["ok"] for r in rows)
    files = _anatomy(store)
    assert {"notes/new.txt", "src/new_name.py", "README.md"} <= set(files)
    assert "src/old_name.py" not in files and "gone.txt" not in files
    written = session.load(store, "s1")["written"]
    assert set(written) >= {"notes/new.txt", "src/new_name.py", "src/old_name.py", "gone.txt"}


def test_codex_patch_edits_bring_the_saved_no_memory_reminder(store: Path) -> None:
    (store.parent / "a.txt").write_text("a\n")
    patch = "*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n+b\n*** End Patch\n"
    for session_id in ("quiet", "saved"):
        payload = {"tool_name": "apply_patch", "tool_input": {"command": patch}}
        run_hook(
            "PostToolUse",
            {"session_id": session_id, "cwd": str(store.parent), **payload, "tool_response": ""},
            cwd=store.parent,
            host="codex",
        )
    run_hook(
        "PostToolUse",
        {
            "session_id": "saved",
            "cwd": str(store.parent),
            "tool_name": "Bash",
            "tool_input": {"command": 'memdir remember "a is b now"'},
            "tool_response": "Exit code: 0\n",
        },
        cwd=store.parent,
        host="codex",
    )
    for session_id in ("quiet", "saved"):
        stop = {"session_id": session_id, "cwd": str(store.parent), "stop_hook_active": False}
        run_hook(
            "Stop", {**stop, "last_assistant_message": "Done."}, cwd=store.parent, host="codex"
        )
    prompt = {"cwd": str(store.parent), "prompt": "next"}
    quiet = run_hook(
        "UserPromptSubmit", {"session_id": "quiet", **prompt}, cwd=store.parent, host="codex"
    )
    saved = run_hook(
        "UserPromptSubmit", {"session_id": "saved", **prompt}, cwd=store.parent, host="codex"
    )
    assert "saved no memory" in quiet.context and "a.txt" in quiet.context
    assert "saved no memory" not in saved.context


def test_a_failed_patch_changes_nothing_but_is_logged(store: Path) -> None:
    patch = "*** Begin Patch\n*** Add File: never.txt\n+x\n*** End Patch\n"
    _call(
        store,
        "PostToolUse",
        "codex",
        tool_name="apply_patch",
        tool_input={"command": patch},
        tool_response="Exit code: 1\nerror: patch did not apply",
    )
    rows = [r for r in _actions(store) if r.get("via") == "apply_patch"]
    assert [(r["path"], r["ok"]) for r in rows] == [("never.txt", False)]
    assert session.load(store, "s1")["written"] == []


# --- shell reads (the rule in memdir.hooks.tools) ---------------------------------------------


def _shell(store: Path, command: str, session_id: str = "s1") -> tuple[HookRun, HookRun | None]:
    fields = {"session_id": session_id, "cwd": str(store.parent), "tool_name": "Bash"}
    pre = run_hook(
        "PreToolUse",
        {**fields, "tool_input": {"command": command}},
        cwd=store.parent,
        host="codex",
    )
    if _denied(pre):
        return pre, None
    post = run_hook(
        "PostToolUse",
        {**fields, "tool_input": {"command": command}, "tool_response": "Exit code: 0\n"},
        cwd=store.parent,
        host="codex",
    )
    return pre, post


def test_a_plain_cat_rereading_an_unchanged_file_is_gated_like_read(store: Path) -> None:
    first, _ = _shell(store, "cat README.md")
    assert not _denied(first)
    again, _ = _shell(store, "cat README.md")
    assert _denied(again)
    reason = again.json["hookSpecificOutput"]["permissionDecisionReason"]  # type: ignore[index]
    assert "README.md" in reason and "sed -n" in reason
    retry, _ = _shell(store, "cat README.md")
    assert not _denied(retry)  # the retry passes: the gate never deadlocks a real need
    rows = [r for r in _actions(store) if r["tool"] == "Bash"]
    assert [r.get("reads") for r in rows] == [["README.md"], ["README.md"]]
    assert session.load(store, "s1")["ledger"]["reads"] == 2


def test_ranged_shell_reads_are_logged_and_never_gated(store: Path) -> None:
    commands = ["sed -n '1,5p' README.md", "head -n 3 README.md", "tail -5 README.md"]
    for command in commands * 2:
        pre, _ = _shell(store, command)
        assert not _denied(pre), command
    # a ranged read never makes a later full read a repeat
    assert not _denied(_shell(store, "cat README.md")[0])
    rows = [r for r in _actions(store) if r["tool"] == "Bash"]
    assert [r.get("reads") for r in rows] == [["README.md"]] * 7
    # a pipeline or a changed file is not gated either
    assert not _denied(_shell(store, "cat README.md | wc -l")[0])
    (store.parent / "README.md").write_text("# changed on disk\n")
    assert not _denied(_shell(store, "cat README.md")[0])


def test_shell_reads_outside_the_project_or_of_secrets_are_not_recorded(store: Path) -> None:
    (store.parent / ".env").write_text("TOKEN=x\n")
    _shell(store, "cat /etc/hostname")
    _shell(store, "cat .env")
    rows = [r for r in _actions(store) if r["tool"] == "Bash"]
    assert len(rows) == 2 and all("reads" not in r for r in rows)
    _shell(store, "cat README.md")
    assert _actions(store)[-1]["reads"] == ["README.md"]


# --- Gemini CLI: injected context is never the person's words ---------------------------------


def test_gemini_journals_only_the_users_words_from_a_real_before_agent_payload(
    store: Path,
) -> None:
    service.remember(store, "The staging database is refreshed nightly at 02:00")
    service.remember(store, "Use uv, not pip, in this repository", kind="preference")
    service.remember(store, "Deploys go out on Tuesdays")
    payload = json.loads((PAYLOADS / "gemini-cli-0.61.0-BeforeAgent.json").read_text())
    payload["cwd"] = str(store.parent)
    run = run_hook("BeforeAgent", payload, cwd=store.parent, host="gemini")
    turns = [t for t in _journal(store) if t["who"] == "user"]
    assert [t["text"] for t in turns] == ["SCRIPT:plain when is the staging database refreshed?"]
    # recall ran on the user's words, not on the digest the prompt carried
    assert "refreshed nightly" in run.context
    assert "Use uv" not in run.context
    after = json.loads((PAYLOADS / "gemini-cli-0.61.0-AfterAgent.json").read_text())
    after["cwd"] = str(store.parent)
    run_hook("AfterAgent", after, cwd=store.parent, host="gemini")
    answers = [t["text"] for t in _journal(store) if t["who"] == "assistant"]
    assert answers == ["Done after 0 tool results."]


@pytest.mark.parametrize("escaped", [True, False], ids=["escaped", "raw"])
def test_a_remember_inside_injected_context_is_not_stored(store: Path, escaped: bool) -> None:
    fence = "<memdir-memory>\n- f-1 (fact, owner): remember that the queue is SQS\n</memdir-memory>"
    if escaped:
        fence = fence.replace("<", "&lt;").replace(">", "&gt;")
    prompt = f"<hook_context>{fence}</hook_context>\n\nremember that the cache is Redis"
    if not escaped:
        prompt = f"{fence}\n\nremember that the cache is Redis"
    payload = {"session_id": "g1", "cwd": str(store.parent), "prompt": prompt}
    run_hook("BeforeAgent", payload, cwd=store.parent, host="gemini")
    assert [r.text for r in service.list_records(store)] == ["The cache is Redis"]
    user = [t["text"] for t in _journal(store) if t["who"] == "user"]
    assert user == ["remember that the cache is Redis"]


# --- MCP saves under every host's name ------------------------------------------------------


@pytest.mark.parametrize(
    ("host", "tool"),
    [
        ("claude-code", "mcp__memdir__memory_remember"),
        ("gemini", "mcp_memdir_memory_remember"),
        ("copilot", "memdir-memory_correct"),
    ],
)
def test_a_save_through_memdir_mcp_tools_is_recognised_under_any_name(
    store: Path, host: str, tool: str
) -> None:
    (store.parent / "x.py").write_text("x = 1\n")
    for session_id, name in (("saved", tool), ("other", "mcp_notmemdir_memory_remember")):
        base = {"session_id": session_id, "cwd": str(store.parent)}
        _edit = {"tool_name": "Write", "tool_input": {"file_path": str(store.parent / "x.py")}}
        run_hook("PostToolUse", {**base, **_edit, "tool_response": {}}, cwd=store.parent)
        saved = {"tool_name": name, "tool_input": {"text": "x is one"}, "tool_response": {}}
        run_hook("PostToolUse", {**base, **saved}, cwd=store.parent, host=host)
        run_hook("Stop", {**base, "last_assistant_message": "ok"}, cwd=store.parent)
    assert session.load(store, "saved")["beliefs"] == 1
    assert session.load(store, "other")["beliefs"] == 0
    assert session.load(store, "other")["reminders"]
    assert not session.load(store, "saved")["reminders"]


def _mcp_remember(store: Path, env: dict[str, str], text: str) -> None:
    """Save ``text`` through a real ``memdir serve`` over stdio, as a host would."""
    requests = [
        INITIALIZE,
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "memory_remember", "arguments": {"text": text}},
        },
    ]
    data = "".join(json.dumps(r) + "\n" for r in requests).encode()
    done = subprocess.run(
        [sys.executable, "-m", "memdir", "serve"],
        input=data,
        capture_output=True,
        env={**_base_env(), "MEMDIR_STORE": str(store), **env},
        cwd=store.parent,
        timeout=60,
        check=True,
    )
    replies = [json.loads(line) for line in done.stdout.decode().splitlines()]
    assert any(r.get("id") == 2 and not r["result"].get("isError") for r in replies), replies


@pytest.mark.slow
def test_the_mcp_server_marks_the_session_it_serves(store: Path) -> None:
    """No PostToolUse for the MCP call at all: the server's own mark silences the reminder."""
    (store.parent / "x.py").write_text("x = 1\n")
    for session_id in ("served", "elsewhere"):
        base = {"session_id": session_id, "cwd": str(store.parent)}
        edit = {"tool_name": "Write", "tool_input": {"file_path": str(store.parent / "x.py")}}
        run_hook("PostToolUse", {**base, **edit, "tool_response": {}}, cwd=store.parent)
    _mcp_remember(store, {"CLAUDE_CODE_SESSION_ID": "served"}, "x starts at one")
    for session_id in ("served", "elsewhere"):
        base = {"session_id": session_id, "cwd": str(store.parent)}
        run_hook("Stop", {**base, "last_assistant_message": "ok"}, cwd=store.parent)
    assert not session.load(store, "served")["reminders"]
    assert session.load(store, "elsewhere")["reminders"]
    assert [r.text for r in service.list_records(store)] == ["x starts at one"]


# --- Claude Code: failures, notebooks, compaction, transcripts, resume ------------------------


def test_post_tool_use_failure_is_a_failed_action_that_changes_nothing(store: Path) -> None:
    target = store.parent / "x.py"
    _call(
        store,
        "PostToolUseFailure",
        tool_name="Edit",
        tool_input={"file_path": str(target), "old_string": "a", "new_string": "b"},
        error="String to replace not found in file. token=sk-proj-EXAMPLE000000000000000000000000",
        is_interrupt=False,
    )
    (row,) = _actions(store)
    assert row["tool"] == "Edit" and row["path"] == "x.py"
    assert row["ok"] is False and row["failed"] is True
    assert "String to replace not found" in row["error"] and "EXAMPLE0000" not in row["error"]
    assert session.load(store, "s1")["written"] == []
    assert session.load(store, "s1")["tool_calls"] == 1


def test_notebook_edit_is_an_edit(store: Path) -> None:
    notebook = store.parent / "analysis.ipynb"
    notebook.write_text(json.dumps({"cells": [], "nbformat": 4, "nbformat_minor": 5}))
    _call(
        store,
        "PostToolUse",
        tool_name="NotebookEdit",
        tool_input={"notebook_path": str(notebook), "new_source": "print(1)", "cell_id": "a"},
        tool_response={"new_source": "print(1)"},
    )
    assert _actions(store)[-1]["path"] == "analysis.ipynb"
    assert session.load(store, "s1")["written"] == ["analysis.ipynb"]
    assert "analysis.ipynb" in _anatomy(store)


def _compactions(store: Path, session_id: str) -> int:
    return len(session.load(store, session_id)["compactions"])


@pytest.mark.parametrize(
    ("host", "events"),
    [
        ("claude-code", ["PreCompact", "SessionStart:compact", "PostCompact"]),
        ("codex", ["PreCompact", "PostCompact"]),
        ("gemini", ["PreCompress"]),
        ("claude-code", ["SessionStart:compact", "PostCompact"]),  # PreCompact never ran
    ],
    ids=["claude", "codex", "gemini", "no-precompact"],
)
def test_one_checkpoint_per_compaction_in_each_hosts_order(
    store: Path, host: str, events: list[str]
) -> None:
    def compaction() -> None:
        for item in events:
            name, _, source = item.partition(":")
            fields = {"source": source} if source else {"trigger": "manual"}
            _call(store, name, host, **fields)

    def activity() -> None:  # Gemini compresses inside a turn: a prompt, then PreCompress
        prompt = "BeforeAgent" if host == "gemini" else "UserPromptSubmit"
        _call(store, prompt, host, prompt="go on")

    _call(store, "SessionStart", host, source="startup")
    activity()
    compaction()
    assert _compactions(store, "s1") == 1
    generation = session.load(store, "s1")["generation"]
    activity()
    compaction()  # the next compaction is never lost
    assert _compactions(store, "s1") == 2
    assert session.load(store, "s1")["generation"] == generation + 1


def test_a_compaction_evicts_reads_once_in_claudes_order(store: Path) -> None:
    target = store.parent / "README.md"
    read: dict[str, Any] = {"tool_name": "Read", "tool_input": {"file_path": str(target)}}
    _call(store, "PostToolUse", **read, tool_response={"type": "text"})
    assert _denied(_call(store, "PreToolUse", **read))
    _call(store, "PreCompact", trigger="auto")
    _call(store, "SessionStart", source="compact")
    _call(store, "PostCompact", trigger="auto")
    assert not _denied(_call(store, "PreToolUse", **read))  # its earlier read was compacted
    _call(store, "PostToolUse", **read, tool_response={"type": "text"})
    assert _denied(_call(store, "PreToolUse", **read))  # and the new read is remembered


def test_stop_falls_back_on_the_transcripts_last_assistant_message(
    store: Path, tmp_path: Path
) -> None:
    transcript = tmp_path / "session.jsonl"
    shutil.copy(TRANSCRIPTS / "representative_messages.jsonl", transcript)
    last = ""
    for line in transcript.read_text().splitlines():
        row = json.loads(line)
        if row.get("type") == "assistant":
            texts = [b["text"] for b in row["message"]["content"] if b.get("type") == "text"]
            last = "\n\n".join(texts) or last
    assert last.startswith("Perfect! As you can see")
    _call(store, "Stop", transcript_path=str(transcript), stop_hook_active=False)
    _call(
        store,
        "Stop",
        transcript_path=str(transcript),
        last_assistant_message="The payload's own answer wins.",
        stop_hook_active=False,
    )
    answers = [t["text"] for t in _journal(store) if t["who"] == "assistant"]
    assert answers == [last, "The payload's own answer wins."]


def test_a_resumed_session_is_not_given_what_its_context_holds(store: Path) -> None:
    service.remember(store, "Never push on Fridays", kind="rule")
    first = _call(store, "SessionStart", source="startup")
    assert "Never push on Fridays" in first.context
    resumed = _call(store, "SessionStart", source="resume")
    assert resumed.stdout == b""  # everything is already in the resumed context
    service.remember(store, "Always sign release tags", kind="rule")
    again = _call(store, "SessionStart", source="resume")
    assert "Always sign release tags" in again.context
    assert "Never push on Fridays" not in again.context
    asked = _call(store, "UserPromptSubmit", prompt="can we push on Fridays?")
    assert "Never push on Fridays" not in asked.context
    fresh = _call(store, "SessionStart", session_id="s2", source="startup")
    assert "Never push on Fridays" in fresh.context  # a new session gets everything


def _gemini_transcript(path: Path, used: int) -> Path:
    """A Gemini CLI session transcript whose last answer reports ``used`` prompt tokens."""
    rows = [
        {"sessionId": "s1", "projectHash": "x", "startTime": "2026-12-03T17:14:00Z"},
        {"id": "1", "type": "user", "content": [{"text": "hi"}]},
        {"id": "2", "type": "gemini", "content": "hello", "model": "gemini-2.5-flash"},
        {
            "id": "2",
            "type": "gemini",
            "content": "hello",
            "model": "gemini-2.5-flash",
            "tokens": {"input": used, "output": 5, "cached": 0, "thoughts": 0, "total": used + 5},
        },
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_gemini_precompress_before_every_request_counts_only_a_real_compression(
    store: Path, tmp_path: Path
) -> None:
    """Gemini CLI fires PreCompress before each request; it compresses past half the window."""
    small = _gemini_transcript(tmp_path / "small.jsonl", 12_000)
    big = _gemini_transcript(tmp_path / "big.jsonl", 700_000)
    _call(store, "SessionStart", "gemini", source="startup")
    for _ in range(3):
        _call(store, "BeforeAgent", "gemini", prompt="go on")
        _call(store, "PreCompress", "gemini", trigger="auto", transcript_path=str(small))
    assert _compactions(store, "s1") == 0
    assert session.load(store, "s1")["generation"] == 0
    _call(store, "PreCompress", "gemini", trigger="auto", transcript_path=str(big))
    assert _compactions(store, "s1") == 1
    _call(store, "PreCompress", "gemini", trigger="manual", transcript_path=str(small))
    assert _compactions(store, "s1") == 1  # /compress right after: the same, still open
    _call(store, "BeforeAgent", "gemini", prompt="go on")
    _call(store, "PreCompress", "gemini", trigger="manual", transcript_path=str(small))
    assert _compactions(store, "s1") == 2  # /compress is always a compression
    settings = store.parent / ".gemini" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"model": {"compressionThreshold": 0.01}}))
    _call(store, "BeforeAgent", "gemini", prompt="go on")
    _call(store, "PreCompress", "gemini", trigger="auto", transcript_path=str(small))
    assert _compactions(store, "s1") == 3  # 12,000 tokens is past 1% of the window


HOST_SCRIPT = """
import json, subprocess, sys
requests, stop = sys.argv[1], sys.argv[2]
subprocess.run([sys.executable, "-m", "memdir", "serve"], input=requests.encode(), check=True,
               capture_output=True, timeout=60)
subprocess.run([sys.executable, "-m", "memdir", "hook", "Stop"], input=stop.encode(), check=True,
               capture_output=True, timeout=60)
"""


@pytest.mark.slow
def test_without_a_session_id_the_host_process_ties_a_save_to_its_session(store: Path) -> None:
    """A host that gives its server no session id: the server's parent is the host."""
    (store.parent / "x.py").write_text("x = 1\n")
    for session_id in ("served", "elsewhere"):
        base = {"session_id": session_id, "cwd": str(store.parent)}
        edit = {"tool_name": "Write", "tool_input": {"file_path": str(store.parent / "x.py")}}
        run_hook("PostToolUse", {**base, **edit, "tool_response": {}}, cwd=store.parent)
    call = {"name": "memory_remember", "arguments": {"text": "x starts at one"}}
    requests = [
        INITIALIZE,
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call},
    ]
    stop = {"session_id": "served", "cwd": str(store.parent), "last_assistant_message": "ok"}
    subprocess.run(  # the "host": it starts the server and, later, its own session's hook
        [
            sys.executable,
            "-c",
            HOST_SCRIPT,
            "".join(json.dumps(r) + "\n" for r in requests),
            json.dumps(stop),
        ],
        check=True,
        cwd=store.parent,
        env={**_base_env(), "MEMDIR_STORE": str(store)},
        timeout=120,
    )
    other = {"session_id": "elsewhere", "cwd": str(store.parent), "last_assistant_message": "ok"}
    run_hook("Stop", other, cwd=store.parent)  # another host process's session
    marks = (store / "state" / "mcp-saves.jsonl").read_text().splitlines()
    assert len(marks) == 1 and json.loads(marks[0])["session"] == ""
    assert not session.load(store, "served")["reminders"]
    assert session.load(store, "elsewhere")["reminders"]


def test_gemini_read_many_files_is_a_row_listing_its_files(store: Path) -> None:
    (store.parent / "docs").mkdir()
    (store.parent / "docs" / "a.md").write_text("a\n")
    paths = ["README.md", "docs/a.md", "docs/*.md", "/etc/hostname", "missing.md"]
    _call(
        store,
        "AfterTool",
        "gemini",
        tool_name="read_many_files",
        tool_input={"paths": paths},
        tool_response={"llmContent": "…"},
    )
    (row,) = _actions(store)
    assert row["tool"] == "Read" and row["reads"] == ["README.md", "docs/a.md"] and row["ok"]
    reads = session.load(store, "s1")["reads"]
    assert set(reads) == {"README.md", "docs/a.md"} and all(r["full"] for r in reads.values())
