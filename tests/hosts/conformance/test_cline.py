"""Cline CLI 3.0.65 conformance: the released binary, a scripted session, memdir's real hooks.

The pinned ``cline`` (npm ``cline``, ``.ci/install-hosts``; a Bun-compiled binary from
``@cline/cli-linux-x64``) runs headless (``cline --json PROMPT``: act mode, tools auto-approved)
in a throwaway HOME, inside a git project where ``memdir install --host cline`` wrote its hook
files (``.clinerules/hooks/<Event>``) and its rules file (``.clinerules/memdir.md``). Its model
is the ``openai-compatible`` provider set up with ``cline auth openai-compatible -k … -m … -b
URL`` (a base URL is refused for any other provider), pointing at a loopback stand-in of the
Chat Completions API; every other address goes through a catching proxy that refuses it. The
hub daemon the CLI starts is given its own port and ended when the session is over.

What a person does once, done here in the throwaway HOME: add memdir's MCP server to Cline's
settings (``~/.cline/data/settings/cline_mcp_settings.json``; memdir does not write it).

What Cline CLI 3.0.65 does with hooks (``@cline/core`` 0.0.86), and so what is asserted:

- It runs every hook file named after an event in ``.clinerules/hooks/`` (and ``~/.cline/hooks/``,
  where the payload logger goes) with no setting to turn on; the payload names the event in
  snake case (``"hookName": "tool_call"``), passes parameters as JSON strings and the real input
  in ``tool_call.input``.
- TaskStart runs detached: its answer is never read. memdir keeps the digest and the next
  PreToolUse answer carries it (:mod:`memdir.hooks.deferred`).
- ``cline --json PROMPT`` fires no UserPromptSubmit for the task's prompt, and a task cannot be
  continued headless (``--id`` with ``--json`` answers "JSON output mode requires a prompt
  argument or piped stdin"; without ``--json`` it wants a TTY), so per-prompt recall is not
  proven here.
- ``cancel: true`` from a PreToolUse hook aborts the whole task, and hook files cannot skip one
  call, so the duplicate-read gate is advisory: its refusal reaches the model as context and the
  read runs.
- PreCompact is not wired to hook files at all (``PreCompact: void 0`` in its table).

With ``MEMDIR_RECORD_FIXTURES=1`` the run rewrites the trimmed payload fixtures in
``tests/hosts/fixtures/cline-3.0.65/`` (replayed by ``tests/hooks/test_hook_json_replay.py``).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from memdir.kernel.storage import session as session_state
from tests.hosts.conformance.chat_script import ScriptedChat, call, say
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
from tests.hosts.conformance.test_gemini import StrayCatcher

pytestmark = [pytest.mark.slow, pytest.mark.enable_socket]

VERSION = "3.0.65"
FIXTURE_DIR = FIXTURES / f"cline-{VERSION}"
EVENTS = (
    "TaskStart",
    "TaskResume",
    "TaskCancel",
    "TaskComplete",
    "TaskError",
    "PreToolUse",
    "PostToolUse",
    "UserPromptSubmit",
    "PreCompact",
    "SessionShutdown",
)
"""Every hook file name Cline CLI 3.0.65 looks for (its ``d3`` table)."""
SEED_RULE = "Use pytest for tests, never unittest"
AGENT_FACT = "The notes file lists Greek letters in alphabet order"
REFUSAL = "already read in full"
PROMPT = "Tidy notes.txt and note a todo. How do we test?"
ANSWER = "Done: read, edited, wrote, ran and saved."


@dataclass
class Session:
    """Everything the scripted session left behind."""

    box: Sandbox
    model: ScriptedChat
    stray: list[str]
    run: Any
    state: State
    hook_state: dict[str, Any]
    payloads: list[dict[str, Any]]
    seconds: float


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _end_hub(box: Sandbox) -> list[int]:
    """End the hub daemons this session's ``cline`` started (found by the sandbox's path)."""
    ended = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue
        if b"--cline-hub-daemon" in argv and f"HOME={box.home}".encode() in environ:
            os.kill(int(entry.name), signal.SIGTERM)
            ended.append(int(entry.name))
    return ended


@pytest.fixture(scope="module")
def session(module_root: Path) -> Session:
    """Run the scripted session once for the whole module."""
    binary = host_binary("cline")
    started = time.monotonic()
    box = make_sandbox(module_root, "cline")
    payload_log = module_root / "payloads"
    logger = payload_logger(payload_log)
    global_hooks = box.home / ".cline" / "hooks"  # Cline's own global hooks folder
    global_hooks.mkdir(parents=True)
    for event in EVENTS:
        script = global_hooks / event
        script.write_text(f"#!/bin/sh\n{logger}\n")
        script.chmod(0o755)
    settings = box.home / ".cline" / "data" / "settings"
    settings.mkdir(parents=True)
    # Cline starts its MCP servers outside the project: the store is named
    # (and its 3 s default start-up timeout is too short for a loaded test machine)
    server = {"command": "memdir", "args": ["serve", "--store", str(box.store)], "timeout": 60}
    (settings / "cline_mcp_settings.json").write_text(
        json.dumps({"mcpServers": {"memdir": server}})
    )
    # Cline's own opt-out of its telemetry and of updates (global-settings.json)
    opt_out = {"telemetryOptOut": True, "autoUpdateEnabled": False}
    (settings / "global-settings.json").write_text(json.dumps(opt_out))
    assert box.memdir("remember", SEED_RULE, "--kind", "rule").returncode == 0
    (box.project / "docs").mkdir()
    project = box.project
    model = ScriptedChat()
    try:
        with LoopbackServer(model) as api, StrayCatcher() as catcher:
            env = {
                "HTTPS_PROXY": catcher.url,
                "HTTP_PROXY": catcher.url,
                "NO_PROXY": "127.0.0.1",
                "CLINE_HUB_PORT": str(_free_port()),
                "CLINE_NO_AUTO_UPDATE": "1",
            }
            auth = [str(binary), "auth", "openai-compatible", "-k", "conformance-dummy-key"]
            auth += ["-m", "stand-in", "-b", api.url]
            done = box.run(auth, env=env, timeout=60)
            assert done.returncode == 0, done.stdout + done.stderr
            notes, app = str(project / "notes.txt"), str(project / "src" / "app.py")
            model.script(
                ("read", call("read_files", files=[{"path": notes}])),
                ("read-again", call("read_files", files=[{"path": notes}])),
                (
                    "read-range",
                    call("read_files", files=[{"path": app, "start_line": 1, "end_line": 4}]),
                ),
                ("edit", call("editor", path=notes, old_text="beta", new_text="BETA")),
                ("write", call("editor", path=str(project / "docs/todo.md"), new_text="- tidy\n")),
                ("shell-ok", call("run_commands", commands=["echo shell-ok"])),
                ("shell-fail", call("run_commands", commands=["ls no-such-file-here"])),
                ("recall", call("memdir__memory_recall", query="pytest unittest tests")),
                ("remember", call("memdir__memory_remember", text=AGENT_FACT, kind="fact")),
                ("answer", say(ANSWER)),
            )
            run = box.run([str(binary), "--json", PROMPT], env=env, timeout=150)
            assert not api.errors, "\n".join(api.errors)
            stray = list(catcher.seen)
    finally:
        _end_hub(box)
    time.sleep(1)  # the detached TaskStart/TaskComplete hooks finish their writes
    payloads = logged_payloads(payload_log)
    sid = str(payloads[0]["taskId"])
    result = Session(
        box=box,
        model=model,
        stray=stray,
        run=run,
        state=read_state(box.store),
        hook_state=dict(session_state.load(box.store, sid)),
        payloads=payloads,
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
    names = {"agent_start": "TaskStart", "tool_call": "PreToolUse", "tool_result": "PostToolUse"}
    names.update(agent_end="TaskComplete", prompt_submit="UserPromptSubmit")
    for payload in session.payloads:
        name = names.get(str(payload.get("hookName")), str(payload.get("hookName")))
        call_ = payload.get("tool_call") or payload.get("tool_result") or {}
        if call_:
            name += "-" + str(call_.get("name"))
            text = json.dumps(call_.get("input"))
            if "start_line" in text:
                name += "-ranged"
            if "no-such" in text:
                name += "-fail"
            if "todo.md" in text:
                name += "-create"
        chosen.setdefault(name, payload)
    for name, payload in chosen.items():
        write_fixture(payload, FIXTURE_DIR / f"{name}.json", rewrite)


def _hooks(session: Session) -> list[str]:
    return [str(p.get("hookName")) for p in session.payloads]


def _first_with(session: Session, text: str) -> str:
    """The label of the first request whose messages hold ``text`` ("" when none does)."""
    return next((e.label for e in session.model.exchanges if text in e.text()), "")


# --------------------------------------------------------------------------- the host's side


def test_the_session_finishes_and_nothing_leaves_the_machine(session: Session) -> None:
    assert session.run.returncode == 0, session.run.stderr[-3000:] + session.run.stdout[-3000:]
    assert session.model.labels() == [
        "read",
        "read-again",
        "read-range",
        "edit",
        "write",
        "shell-ok",
        "shell-fail",
        "recall",
        "remember",
        "answer",
    ]
    assert not session.model.unexpected, session.model.unexpected
    # PostHog feature flags (data.cline.bot), asked for even with telemetryOptOut: refused by the
    # catching proxy, like anything else not meant for 127.0.0.1
    assert set(session.stray) <= {"CONNECT data.cline.bot:443"}, session.stray
    assert session.seconds < 150, f"the Cline session took {session.seconds:.0f} s"


def test_cline_ran_the_hooks_it_has(session: Session) -> None:
    seen = set(_hooks(session))
    assert {"agent_start", "tool_call", "tool_result", "agent_end"} <= seen
    # 3.0.65: no UserPromptSubmit for the task's own prompt; PreCompact is never run from files
    assert "prompt_submit" not in seen and "pre_compact" not in seen
    assert session.state.hook_errors == ""


def test_the_rules_file_reaches_the_model(session: Session) -> None:
    assert "Project memory (memdir)" in session.model.by_label("read").system()


def test_session_digest_reached_the_model_with_a_tool_answer(session: Session) -> None:
    # TaskStart's answer is never read; the digest comes back with the next PreToolUse answer
    assert SEED_RULE not in session.model.by_label("read").text()
    first = _first_with(session, SEED_RULE)
    assert first, "the digest never reached the model"
    assert "memdir-memory" in session.model.by_label(first).text()
    # with the first tool answer after the detached TaskStart hook finished (the first one here;
    # a later one on a starved machine), and once
    assert first != "answer", first
    labels = session.model.labels()
    before_recall = session.model.exchanges[: labels.index("recall") + 1]  # no MCP result yet
    assert sum(SEED_RULE in e.since_last_assistant() for e in before_recall) == 1


def test_second_full_read_is_refused_in_context_not_blocked(session: Session) -> None:
    allowed = session.model.after("read").since_last_assistant()
    assert "alpha" in allowed and REFUSAL not in allowed
    again = session.model.after("read-again").since_last_assistant()
    assert REFUSAL in again  # the refusal reached the model, as hook context
    assert "alpha" in session.model.after("read-again").tool_results()  # and the read ran
    assert session.hook_state["ledger"]["denied"] >= 1


def test_a_ranged_read_is_not_a_full_read(session: Session) -> None:
    ranged = session.model.after("read-range").since_last_assistant()
    assert "def step_0" in ranged and REFUSAL not in ranged


def test_memdir_mcp_server_answers(session: Session) -> None:
    assert "memdir__memory_recall" in session.model.by_label("read").tools()
    assert SEED_RULE in session.model.after("recall").tool_results()
    assert AGENT_FACT in session.model.after("remember").tool_results()


# --------------------------------------------------------------------------- memdir's side


def test_every_read_edit_and_shell_command_has_an_action_row(session: Session) -> None:
    rows = session.state.actions
    seen = [(r.get("tool"), r.get("path") or r.get("command"), r.get("ok")) for r in rows]
    assert ("Read", "notes.txt", True) in seen
    assert ("Edit", "notes.txt", True) in seen
    assert ("Edit", "docs/todo.md", True) in seen
    assert ("Bash", "echo shell-ok", True) in seen
    assert ("Bash", "ls no-such-file-here", False) in seen


def test_the_agent_fact_is_stored_and_counts_as_saved_memory(session: Session) -> None:
    assert [r["origin"] for r in session.state.records_with(AGENT_FACT)] == ["agent"]
    assert session.hook_state["beliefs"] >= 1


def test_journal_holds_the_answer(session: Session) -> None:
    answers = [str(t.get("text")) for t in session.state.journal if t.get("who") == "assistant"]
    assert answers == [ANSWER]
