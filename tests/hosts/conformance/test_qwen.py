"""Qwen Code 0.24.4 conformance: the released binary, a scripted session, memdir's real hooks.

The pinned ``qwen`` (``.ci/install-hosts``) runs headless (``qwen -p … --output-format
stream-json --approval-mode yolo``, then ``--continue``) in a throwaway HOME, inside a git project
where ``memdir install --host qwen`` ran. Its model is Qwen Code's ``anthropic`` auth, chosen by
the environment (``ANTHROPIC_API_KEY``, ``ANTHROPIC_MODEL``, ``ANTHROPIC_BASE_URL`` pointing at a
loopback stand-in of the Anthropic Messages API); every other address goes through a catching
proxy that refuses and records it.

What a person does once, done here in the throwaway HOME: trust the project folder
(``~/.qwen/trustedFolders.json``, what the trust dialog writes) and approve the project's MCP
server (``qwen mcp approve memdir``; until then ``qwen mcp list`` says "Pending approval" and the
server's tools are not offered). ``memdir doctor`` is asked before the approval.

The session: start (the digest), a full ``read_file``, the same read again (refused), a ranged
read (``offset``/``limit``) then a full read, ``write_file``, ``edit``, a shell command that works
and one that fails, ``mcp__memdir__memory_recall`` and ``mcp__memdir__memory_remember``, the
answer; then ``--continue`` with "remember that …". ``qwen -p`` fires no SessionEnd.

Compaction is not driven here: ``/compress`` on a short headless history answers "Compression was
not beneficial" (exit 1), and an automatic one forced by a reported 190,000-token prompt fails
Qwen's own inflated-count check. The ``PreCompact`` payload that forced run sent
(``PreCompact-auto.json``) is kept and replayed; PostCompact is Claude-shaped by the table only.

With ``MEMDIR_RECORD_FIXTURES=1`` the run rewrites the trimmed payload fixtures in
``tests/hosts/fixtures/qwen-code-0.24.4/`` (replayed by ``tests/hooks/test_hook_json_replay.py``).
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from memdir.kernel.storage import session as session_state
from tests.hosts.conformance.conftest import (
    FIXTURES,
    LoopbackServer,
    Sandbox,
    State,
    host_binary,
    logged_payloads,
    make_sandbox,
    payload_logger,
    read_state,
    recording,
    write_fixture,
)
from tests.hosts.conformance.messages_script import ScriptedMessages, call, say
from tests.hosts.conformance.test_gemini import StrayCatcher

pytestmark = [pytest.mark.slow, pytest.mark.enable_socket]

VERSION = "0.24.4"
FIXTURE_DIR = FIXTURES / f"qwen-code-{VERSION}"
EVENTS = (
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "PostToolBatch",
    "Stop",
    "PreCompact",
    "PostCompact",
    "SessionEnd",
)
SEED_RULE = "Use pytest for tests, never unittest"
OWNER_STATEMENT = "the staging database is refreshed every Sunday at 02:00 UTC"
AGENT_FACT = "The notes file lists Greek letters in alphabet order"
REFUSAL = "already read in full"
FIRST_PROMPT = "Tidy notes.txt and note a todo. How do we test?"


@dataclass
class Session:
    """Everything the scripted session left behind."""

    box: Sandbox
    model: ScriptedMessages
    stray: list[str]
    runs: list[Any]
    state: State
    hook_state: dict[str, Any]
    payloads: list[dict[str, Any]]
    doctor: dict[str, Any]  # memdir doctor's Qwen result before the approval
    seconds: float


def _doctor(box: Sandbox, env: dict[str, str]) -> dict[str, Any]:
    done = box.run([sys.executable, "-m", "memdir", "doctor", "--json"], env=env, timeout=120)
    found = [r for r in json.loads(done.stdout)["results"] if r["host"] == "qwen"]
    assert len(found) == 1, done.stdout + done.stderr
    return dict(found[0])


@pytest.fixture(scope="module")
def session(module_root: Path) -> Session:
    """Run the scripted session once for the whole module."""
    binary = host_binary("qwen")
    started = time.monotonic()
    box = make_sandbox(module_root, "qwen")
    payload_log = module_root / "payloads"
    qwen_home = box.home / ".qwen"
    qwen_home.mkdir(parents=True)
    logger = {"type": "command", "command": payload_logger(payload_log), "timeout": 5}
    settings = {
        "privacy": {"usageStatisticsEnabled": False},
        "hooks": {event: [{"hooks": [logger]}] for event in EVENTS},
    }
    (qwen_home / "settings.json").write_text(json.dumps(settings))
    (qwen_home / "trustedFolders.json").write_text(json.dumps({str(box.project): "TRUST_FOLDER"}))
    assert box.memdir("remember", SEED_RULE, "--kind", "rule").returncode == 0
    (box.project / "docs").mkdir()
    project = box.project
    model = ScriptedMessages()
    with LoopbackServer(model) as api, StrayCatcher() as catcher:
        env = {
            "ANTHROPIC_API_KEY": "conformance-dummy-key",
            "ANTHROPIC_MODEL": "claude-sonnet-4-5",
            "ANTHROPIC_BASE_URL": api.url,
            "HTTPS_PROXY": catcher.url,
            "HTTP_PROXY": catcher.url,
            "NO_PROXY": "127.0.0.1",
            "QWEN_CODE_SUPPRESS_YOLO_WARNING": "1",
        }
        doctor_env = {**env, "PATH": f"{binary.parent}:{box.env['PATH']}"}
        pending = _doctor(box, doctor_env)
        approved = box.run([str(binary), "mcp", "approve", "memdir"], env=env, timeout=60)
        assert approved.returncode == 0, approved.stdout + approved.stderr
        notes, app = str(project / "notes.txt"), str(project / "src" / "app.py")
        model.script(
            ("read", call("read_file", file_path=notes)),
            ("read-again", call("read_file", file_path=notes)),
            ("read-range", call("read_file", file_path=app, offset=0, limit=4)),
            ("read-after-range", call("read_file", file_path=app)),
            (
                "write",
                call("write_file", file_path=str(project / "docs/todo.md"), content="- tidy\n"),
            ),
            ("edit", call("edit", file_path=notes, old_string="beta", new_string="BETA")),
            ("shell-ok", call("run_shell_command", command="echo shell-ok", is_background=False)),
            (
                "shell-fail",
                call("run_shell_command", command="ls no-such-file-here", is_background=False),
            ),
            ("recall", call("mcp__memdir__memory_recall", query="pytest unittest tests")),
            ("remember", call("mcp__memdir__memory_remember", text=AGENT_FACT, kind="fact")),
            ("answer", say("Done: read, wrote, edited, ran and saved.")),
        )
        flags = ["--output-format", "stream-json", "--approval-mode", "yolo"]
        first = box.run([str(binary), "-p", FIRST_PROMPT, *flags], env=env, timeout=120)
        model.script(
            ("resume-read", call("read_file", file_path=str(project / "README.md"))),
            ("resume-answer", say("Noted.")),
        )
        prompt = f"Remember that {OWNER_STATEMENT}."
        second = box.run([str(binary), "--continue", "-p", prompt, *flags], env=env, timeout=120)
        assert not api.errors, "\n".join(api.errors)
        stray = list(catcher.seen)
    payloads = logged_payloads(payload_log)
    sid = str(payloads[0]["session_id"])
    result = Session(
        box=box,
        model=model,
        stray=stray,
        runs=[first, second],
        state=read_state(box.store),
        hook_state=dict(session_state.load(box.store, sid)),
        payloads=payloads,
        doctor=pending,
        seconds=time.monotonic() - started,
    )
    if recording():
        _record_fixtures(result)
    return result


def _record_fixtures(session: Session) -> None:
    """Write one trimmed fixture per interesting payload (``MEMDIR_RECORD_FIXTURES=1``)."""
    box = session.box
    rewrite = {str(box.project): "/home/dev/proj", str(box.home): "/home/dev"}
    chosen: dict[str, dict[str, Any]] = {}
    for payload in session.payloads:
        event = str(payload.get("hook_event_name"))
        name = event
        args = payload.get("tool_input") or {}
        if event in ("SessionStart", "PreCompact", "PostCompact"):
            name += "-" + str(payload.get("source") or payload.get("trigger"))
        elif "tool_name" in payload:
            name += "-" + str(payload["tool_name"])
            if "offset" in args:
                name += "-ranged"
            if "no-such" in str(args.get("command")):
                name += "-fail"
        elif event == "UserPromptSubmit" and "Remember that" in str(payload.get("prompt")):
            name += "-remember"
        elif event == "UserPromptSubmit" and not payload.get("prompt"):
            name += "-continuation"
        chosen.setdefault(name, payload)
    for name, payload in chosen.items():
        write_fixture(payload, FIXTURE_DIR / f"{name}.json", rewrite)


def _events(session: Session) -> list[str]:
    return [str(p.get("hook_event_name")) for p in session.payloads]


# --------------------------------------------------------------------------- the host's side


def test_both_runs_finish_and_nothing_leaves_the_machine(session: Session) -> None:
    for run in session.runs:
        assert run.returncode == 0, run.stderr[-3000:] + run.stdout[-3000:]
    assert session.model.labels() == [
        "read",
        "read-again",
        "read-range",
        "read-after-range",
        "write",
        "edit",
        "shell-ok",
        "shell-fail",
        "recall",
        "remember",
        "answer",
        "resume-read",
        "resume-answer",
    ]
    assert not session.model.unexpected, session.model.unexpected
    assert session.stray == [], f"requests meant for another machine: {session.stray}"
    assert session.seconds < 150, f"the Qwen session took {session.seconds:.0f} s"


def test_qwen_ran_every_hook_memdir_installed(session: Session) -> None:
    seen = set(_events(session))
    assert {"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse"} <= seen
    assert {"PostToolUseFailure", "PostToolBatch", "Stop"} <= seen
    assert "SessionEnd" not in seen  # `qwen -p` never fires it (0.24.4)
    assert session.state.hook_errors == ""


def test_the_instruction_block_reaches_the_model(session: Session) -> None:
    assert "Project memory (memdir)" in session.model.by_label("read").text()


def test_session_digest_reached_the_model(session: Session) -> None:
    first = session.model.by_label("read").text()
    assert "memdir-memory" in first and SEED_RULE in first


def test_prompt_context_reached_the_model(session: Session) -> None:
    resumed = session.model.by_label("resume-read").text()
    assert "memdir stored" in resumed
    assert "staging database is refreshed every Sunday" in resumed


def test_second_full_read_was_refused(session: Session) -> None:
    allowed = session.model.after("read").tool_results()
    refused = session.model.after("read-again").tool_results()
    assert "alpha" in allowed and REFUSAL not in allowed
    assert REFUSAL in refused and "alpha" not in refused


def test_a_ranged_read_is_not_a_full_read(session: Session) -> None:
    ranged = session.model.after("read-range").tool_results()
    assert "def step_0" in ranged and REFUSAL not in ranged
    full = session.model.after("read-after-range").tool_results()
    assert REFUSAL not in full and "def step_39" in full


def test_memdir_mcp_server_answers_once_approved(session: Session) -> None:
    assert SEED_RULE in session.model.after("recall").tool_results()
    assert AGENT_FACT in session.model.after("remember").tool_results()


def test_doctor_reports_the_pending_approval(session: Session) -> None:
    checks = {c["check"]: c for c in session.doctor["checks"]}
    assert checks["hooks"]["ok"] and checks["mcp entry"]["ok"] and checks["instructions"]["ok"]
    server = checks["server (qwen mcp list)"]
    assert not server["ok"] and "Pending approval" in server["detail"]
    assert "qwen mcp approve memdir" in server["fix"]


# --------------------------------------------------------------------------- memdir's side


def test_beliefs_were_stored(session: Session) -> None:
    state = session.state
    owner = state.records_with("staging database is refreshed every Sunday")
    assert [r["origin"] for r in owner] == ["owner"]
    assert [r["origin"] for r in state.records_with(AGENT_FACT)] == ["agent"]


def test_journal_holds_the_prompts_and_answers_without_injected_memory(session: Session) -> None:
    users = [str(t.get("text")) for t in session.state.journal if t.get("who") == "user"]
    assert users == [FIRST_PROMPT, f"Remember that {OWNER_STATEMENT}."]
    answers = [str(t.get("text")) for t in session.state.journal if t.get("who") == "assistant"]
    assert answers == ["Done: read, wrote, edited, ran and saved.", "Noted."]


def test_every_read_write_edit_and_shell_command_has_an_action_row(session: Session) -> None:
    rows = session.state.actions
    seen = [(r.get("tool"), r.get("path") or r.get("command"), r.get("ok")) for r in rows]
    assert ("Read", "notes.txt", True) in seen
    assert ("Write", "docs/todo.md", True) in seen
    assert ("Edit", "notes.txt", True) in seen
    assert ("Bash", "echo shell-ok", True) in seen
    assert ("Bash", "ls no-such-file-here", False) in seen


def test_an_mcp_save_counts_as_saved_memory(session: Session) -> None:
    assert session.hook_state["beliefs"] >= 1
    assert session.hook_state["reminders"] == []


def test_continue_keeps_the_session_and_it_ends(session: Session) -> None:
    starts = [p for p in session.payloads if p.get("hook_event_name") == "SessionStart"]
    assert [p.get("source") for p in starts] == ["startup", "resume"]
    assert len({p["session_id"] for p in starts}) == 1
    assert session.hook_state["starts"] == 2
