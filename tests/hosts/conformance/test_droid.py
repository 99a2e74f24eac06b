"""Factory Droid 0.215.0 conformance: the released binary, a scripted session, memdir's hooks.

The pinned ``droid`` (npm ``droid``, Factory's own CLI: repository Factory-AI/factory, binaries
``@factory/cli-*``; ``.ci/install-hosts``) runs headless (``droid exec --auto high -o json``) in a throwaway HOME, inside a git project where ``memdir install --host
droid`` ran. Its model is a custom model in ``~/.factory/settings.json`` (``provider:
"anthropic"``, ``baseUrl`` pointing at a loopback stand-in of the Anthropic Messages API);
every other address (Droid first tries ``api.factory.ai`` and carries on offline) goes through a
catching proxy that refuses it. Those refused calls are Droid's own (account, telemetry), listed
in :data:`FACTORY_CALLS` and asserted to be nothing else.

The person's side: the custom model, and ``--auto high`` on the command line for edits and
shell commands. Project hooks in ``.factory/settings.json`` and the project's
``.factory/mcp.json`` need no trust step in 0.215.0 (``droid mcp list``: ``connected
[project]``).

The session: start (the digest), a full ``Read``, the same read again (refused), a ranged read
(``offset``/``limit``) then a full read, ``Create``, ``Edit``, a shell command that works and one
that fails, ``memdir___memory_recall`` and ``memdir___memory_remember``, the answer; then
the end. ``droid exec`` fires no UserPromptSubmit (0.215.0), so per-prompt recall and "remember
that …" do not reach memdir there; ``droid exec -s SESSION`` (continuing a session headless)
exited 1 with no output against the stand-in, so resume is not driven here.

With ``MEMDIR_RECORD_FIXTURES=1`` the run rewrites the trimmed payload fixtures in
``tests/hosts/fixtures/droid-0.215.0/``.
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

VERSION = "0.215.0"
FIXTURE_DIR = FIXTURES / f"droid-{VERSION}"
EVENTS: tuple[str, ...] = ("SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse")
EVENTS += ("Stop", "PreCompact", "SessionEnd")
FACTORY_CALLS = ("api.factory.ai:443", "telemetry.factory.ai:443", ".run.app:443")
"""Droid's own calls home (account, telemetry, its OpenTelemetry collector); all refused."""
SEED_RULE = "Use pytest for tests, never unittest"
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
    doctor: dict[str, Any]
    seconds: float


def _result(run: Any) -> dict[str, Any]:
    lines = [ln for ln in run.stdout.splitlines() if ln.startswith("{")]
    return json.loads(lines[-1]) if lines else {}


@pytest.fixture(scope="module")
def session(module_root: Path) -> Session:
    """Run the scripted session once for the whole module."""
    binary = host_binary("droid")
    started = time.monotonic()
    box = make_sandbox(module_root, "droid")
    payload_log = module_root / "payloads"
    assert box.memdir("remember", SEED_RULE, "--kind", "rule").returncode == 0
    (box.project / "docs").mkdir()
    project = box.project
    model = ScriptedMessages()
    with LoopbackServer(model) as api, StrayCatcher() as catcher:
        factory = box.home / ".factory"
        factory.mkdir()
        logger = {"type": "command", "command": payload_logger(payload_log), "timeout": 5}
        custom = {
            "model": "stand-in",
            "displayName": "Loopback stand-in",
            "baseUrl": api.url,
            "apiKey": "conformance-dummy-key",
            "provider": "anthropic",
            "maxOutputTokens": 1000,
        }
        settings = {
            "customModels": [custom],
            "hooks": {event: [{"matcher": "*", "hooks": [logger]}] for event in EVENTS},
        }
        (factory / "settings.json").write_text(json.dumps(settings))
        env = {"HTTPS_PROXY": catcher.url, "HTTP_PROXY": catcher.url, "NO_PROXY": "127.0.0.1"}
        notes, app = str(project / "notes.txt"), str(project / "src" / "app.py")
        model.script(
            ("read", call("Read", file_path=notes)),
            ("read-again", call("Read", file_path=notes)),
            ("read-range", call("Read", file_path=app, offset=0, limit=4)),
            ("read-after-range", call("Read", file_path=app)),
            ("write", call("Create", file_path=str(project / "docs/todo.md"), content="- tidy\n")),
            ("edit", call("Edit", file_path=notes, old_str="beta", new_str="BETA")),
            (
                "shell-ok",
                call("Execute", command="echo shell-ok", riskLevelReason="prints", riskLevel="low"),
            ),
            (
                "shell-fail",
                call(
                    "Execute",
                    command="ls no-such-file-here",
                    riskLevelReason="lists",
                    riskLevel="low",
                ),
            ),
            ("recall", call("memdir___memory_recall", query="pytest unittest tests")),
            ("remember", call("memdir___memory_remember", text=AGENT_FACT, kind="fact")),
            ("answer", say("Done: read, wrote, edited, ran and saved.")),
        )
        flags = ["--auto", "high", "-m", "custom:stand-in", "-o", "json"]
        first = box.run([str(binary), "exec", *flags, FIRST_PROMPT], env=env, timeout=120)
        sid = str(_result(first).get("session_id", ""))
        doctor_env = {**env, "PATH": f"{binary.parent}:{box.env['PATH']}"}
        done = box.run(
            [sys.executable, "-m", "memdir", "doctor", "--json"], env=doctor_env, timeout=120
        )
        doctor = [r for r in json.loads(done.stdout)["results"] if r["host"] == "droid"]
        assert not api.errors, "\n".join(api.errors)
        stray = list(catcher.seen)
    payloads = logged_payloads(payload_log)
    result = Session(
        box=box,
        model=model,
        stray=stray,
        runs=[first],
        state=read_state(box.store),
        hook_state=dict(session_state.load(box.store, sid)),
        payloads=payloads,
        doctor=doctor[0] if doctor else {},
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
        if event == "SessionStart":
            name += "-" + str(payload.get("source"))
        elif "tool_name" in payload:
            name += "-" + str(payload["tool_name"])
            if "offset" in args:
                name += "-ranged"
            if "no-such" in str(args.get("command")):
                name += "-fail"
        chosen.setdefault(name, payload)
    for name, payload in chosen.items():
        write_fixture(payload, FIXTURE_DIR / f"{name}.json", rewrite)


def _events(session: Session) -> list[str]:
    return [str(p.get("hook_event_name")) for p in session.payloads]


# --------------------------------------------------------------------------- the host's side


def test_the_run_finishes_offline(session: Session) -> None:
    for run in session.runs:
        assert run.returncode == 0, run.stderr[-3000:] + run.stdout[-3000:]
        assert _result(run).get("subtype") == "success", run.stdout[-3000:]
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
    ]
    assert not session.model.unexpected, session.model.unexpected
    others = [s for s in session.stray if not any(host in s for host in FACTORY_CALLS)]
    assert others == [], f"requests meant for another machine: {others}"
    assert session.seconds < 150, f"the Droid session took {session.seconds:.0f} s"


def test_droid_runs_the_project_hooks(session: Session) -> None:
    seen = set(_events(session))
    assert {"SessionStart", "PreToolUse", "PostToolUse", "Stop", "SessionEnd"} <= seen
    assert "UserPromptSubmit" not in seen  # droid exec never fires it (0.215.0)
    assert session.state.hook_errors == ""


def test_the_instruction_block_and_digest_reach_the_model(session: Session) -> None:
    first = session.model.by_label("read").text()
    assert "Project memory (memdir)" in first  # AGENTS.md
    assert "memdir-memory" in first and SEED_RULE in first


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


def test_memdir_mcp_server_connects_and_answers(session: Session) -> None:
    assert SEED_RULE in session.model.after("recall").tool_results()
    assert AGENT_FACT in session.model.after("remember").tool_results()
    checks = {c["check"]: c for c in session.doctor["checks"]}
    assert checks["server (droid mcp list)"]["ok"], checks
    assert checks["hooks"]["ok"] and checks["mcp entry"]["ok"] and checks["instructions"]["ok"]


# --------------------------------------------------------------------------- memdir's side


def test_the_agents_save_was_stored(session: Session) -> None:
    assert [r["origin"] for r in session.state.records_with(AGENT_FACT)] == ["agent"]
    assert session.hook_state["beliefs"] >= 1


def test_answers_are_journaled(session: Session) -> None:
    answers = [str(t.get("text")) for t in session.state.journal if t.get("who") == "assistant"]
    assert answers == ["Done: read, wrote, edited, ran and saved."]  # from Droid's session file


def test_every_read_write_edit_and_shell_command_has_an_action_row(session: Session) -> None:
    rows = session.state.actions
    seen = [(r.get("tool"), r.get("path") or r.get("command"), r.get("ok")) for r in rows]
    assert ("Read", "notes.txt", True) in seen
    assert ("Write", "docs/todo.md", True) in seen
    assert ("Edit", "notes.txt", True) in seen
    assert ("Bash", "echo shell-ok", True) in seen
    # A failed Execute fires no PostToolUse (and Droid has no PostToolUseFailure): no row
    assert ("Bash", "ls no-such-file-here", False) not in seen
    assert "cannot access" in session.model.after("shell-fail").tool_results()


def test_the_session_starts_and_ends(session: Session) -> None:
    starts = [p for p in session.payloads if p.get("hook_event_name") == "SessionStart"]
    assert [p.get("source") for p in starts] == ["startup"]
    assert session.hook_state["starts"] == 1 and len(session.hook_state["ends"]) == 1
