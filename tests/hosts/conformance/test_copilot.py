"""GitHub Copilot CLI 1.0.102 conformance: the released binary, a scripted session, memdir's hooks.

The pinned ``copilot`` (``.ci/install-hosts``) runs headless (``copilot -p … --output-format
json``, then ``--continue``) in a throwaway HOME, inside a git project where ``memdir install
--host copilot`` ran. Its model is a BYOK provider (``COPILOT_PROVIDER_TYPE=anthropic``,
``COPILOT_PROVIDER_BASE_URL`` pointing at a loopback stand-in of the Anthropic Messages API) and
``COPILOT_OFFLINE=true`` keeps it from contacting GitHub; every other address goes through a
catching proxy that refuses and records it.

What a person does once, done here in the throwaway HOME: trust the project folder
(``trusted_folders`` in ``~/.copilot/config.json``, what the trust prompt writes); without it
``copilot -p`` skips the repository's hooks and its workspace ``.mcp.json``. Tools are approved
with ``--allow-all-tools`` on the command line, never by memdir's install.

The session: start (the digest), a full ``view``, the same view again (refused), a ranged view
(``view_range``) then a full view of that file, ``create``, ``edit``, a shell command that works
and one that fails, memdir's MCP ``memdir-memory_recall`` and ``memdir-memory_remember``, the
answer; then ``--continue`` with "remember that …", and the end.

With ``MEMDIR_RECORD_FIXTURES=1`` the run rewrites the trimmed payload fixtures in
``tests/hosts/fixtures/copilot-1.0.102/`` (replayed by ``tests/hooks/test_copilot_replay.py``).
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

VERSION = "1.0.102"
FIXTURE_DIR = FIXTURES / f"copilot-{VERSION}"
EVENTS = (
    "sessionStart",
    "userPromptSubmitted",
    "preToolUse",
    "postToolUse",
    "postToolUseFailure",
    "agentStop",
    "preCompact",
    "sessionEnd",
)
SEED_RULE = "Use pytest for tests, never unittest"
OWNER_STATEMENT = "the staging database is refreshed every Sunday at 02:00 UTC"
AGENT_FACT = "The notes file lists Greek letters in alphabet order"
REFUSAL = "already read in full"
FIRST_PROMPT = "Tidy notes.txt and note a todo. How do we test?"


@dataclass
class Run:
    """One ``copilot`` process: exit code, JSONL events, stderr, seconds."""

    returncode: int
    events: list[dict[str, Any]]
    stderr: str
    seconds: float

    def answer(self) -> str:
        """The assistant's final messages, joined."""
        return "".join(
            str(e["data"].get("content", ""))
            for e in self.events
            if e.get("type") == "assistant.message" and isinstance(e.get("data"), dict)
        )


@dataclass
class Session:
    """Everything the scripted session left behind."""

    box: Sandbox
    model: ScriptedMessages
    stray: list[str]
    runs: list[Run]
    state: State
    hook_state: dict[str, Any]
    payloads: list[dict[str, Any]]
    log: str  # Copilot's own debug log
    doctor: dict[str, Any]
    seconds: float


def _copilot(box: Sandbox, env: dict[str, str], *args: str) -> Run:
    started = time.monotonic()
    done = box.run([str(host_binary("copilot")), *args], env=env, timeout=120)
    events = []
    for line in done.stdout.splitlines():
        if line.startswith("{"):
            try:
                events.append(json.loads(line))
            except ValueError:
                continue
    return Run(done.returncode, events, done.stderr, time.monotonic() - started)


def _person_settings(box: Sandbox, payload_log: Path) -> None:
    """Trust the folder (what the prompt writes); a user-level payload logger on every event."""
    copilot = box.home / ".copilot"
    (copilot / "hooks").mkdir(parents=True)
    (copilot / "config.json").write_text(json.dumps({"trusted_folders": [str(box.project)]}))
    logger = {"type": "command", "bash": payload_logger(payload_log), "timeoutSec": 5}
    hooks = {"version": 1, "hooks": {event: [logger] for event in EVENTS}}
    (copilot / "hooks" / "payload-logger.json").write_text(json.dumps(hooks))


@pytest.fixture(scope="module")
def session(module_root: Path) -> Session:
    """Run the scripted session once for the whole module."""
    binary = host_binary("copilot")
    started = time.monotonic()
    box = make_sandbox(module_root, "copilot")
    payload_log = module_root / "payloads"
    _person_settings(box, payload_log)
    assert box.memdir("remember", SEED_RULE, "--kind", "rule").returncode == 0
    (box.project / "docs").mkdir()
    model = ScriptedMessages()
    with LoopbackServer(model) as api, StrayCatcher() as catcher:
        env = {
            "COPILOT_OFFLINE": "true",
            "COPILOT_PROVIDER_TYPE": "anthropic",
            "COPILOT_PROVIDER_BASE_URL": api.url,
            "COPILOT_PROVIDER_API_KEY": "conformance-dummy-key",
            "COPILOT_MODEL": "claude-sonnet-4.5",
            "HTTPS_PROXY": catcher.url,
            "HTTP_PROXY": catcher.url,
            "NO_PROXY": "127.0.0.1",
        }
        logs = module_root / "copilot-logs"
        flags = ["--allow-all-tools", "--output-format", "json"]
        flags += ["--log-level", "debug", "--log-dir", str(logs)]
        model.script(
            ("read", call("view", path="notes.txt")),
            ("read-again", call("view", path="notes.txt")),
            ("read-range", call("view", path="src/app.py", view_range=[1, 4])),
            ("read-after-range", call("view", path="src/app.py")),
            ("write", call("create", path="docs/todo.md", file_text="- tidy notes\n")),
            ("edit", call("edit", path="notes.txt", old_str="beta", new_str="BETA")),
            ("shell-ok", call("bash", command="echo shell-ok", description="echo")),
            ("shell-fail", call("bash", command="ls no-such-file-here", description="ls")),
            ("read-missing", call("view", path="missing.txt")),
            ("recall", call("memdir-memory_recall", query="pytest unittest tests")),
            ("remember", call("memdir-memory_remember", text=AGENT_FACT, kind="fact")),
            ("answer", say("Done: read, wrote, edited, ran and saved.")),
        )
        first = _copilot(box, env, "-p", FIRST_PROMPT, *flags)
        model.script(("resume-answer", say("Noted.")))
        second = _copilot(box, env, "--continue", "-p", f"Remember that {OWNER_STATEMENT}.", *flags)
        doctor_env = {**env, "PATH": f"{binary.parent}:{box.env['PATH']}"}
        done = box.run(
            [sys.executable, "-m", "memdir", "doctor", "--json"], env=doctor_env, timeout=120
        )
        doctor = [r for r in json.loads(done.stdout)["results"] if r["host"] == "copilot"]
        assert not api.errors, "\n".join(api.errors)
        stray = list(catcher.seen)
    payloads = logged_payloads(payload_log)
    sid = str(next(p["sessionId"] for p in payloads if "sessionId" in p))
    log = "".join(p.read_text(errors="replace") for p in sorted(logs.glob("*")) if p.is_file())
    result = Session(
        box=box,
        model=model,
        stray=stray,
        runs=[first, second],
        state=read_state(box.store),
        hook_state=dict(session_state.load(box.store, sid)),
        payloads=payloads,
        log=log,
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
        event = _event_of(payload)
        name = event
        args = payload.get("toolArgs")
        args = args if isinstance(args, dict) else {}
        if event == "sessionStart":
            name += "-" + str(payload.get("source"))
        elif "toolName" in payload:
            name += "-" + str(payload["toolName"])
            if "view_range" in args:
                name += "-ranged"
            if "no-such" in str(args.get("command")):
                name += "-fail"
        elif event == "userPromptSubmitted" and "Remember that" in str(payload.get("prompt")):
            name += "-remember"
        chosen.setdefault(name, payload)
    for name, payload in chosen.items():
        write_fixture(payload, FIXTURE_DIR / f"{name}.json", rewrite)


def _event_of(payload: dict[str, Any]) -> str:
    """Copilot's camelCase payloads carry no event name: tell it from the fields."""
    if "toolResult" in payload:
        return "postToolUse"
    if "error" in payload and "toolName" in payload:
        return "postToolUseFailure"
    if "toolName" in payload:
        return "preToolUse"
    if "prompt" in payload:
        return "userPromptSubmitted"
    if "stopReason" in payload:
        return "agentStop"
    if "trigger" in payload:
        return "preCompact"
    if "reason" in payload:
        return "sessionEnd"
    return "sessionStart"


# --------------------------------------------------------------------------- the host's side


def test_both_runs_finish_and_nothing_leaves_the_machine(session: Session) -> None:
    for run in session.runs:
        assert run.returncode == 0, run.stderr[-3000:]
    assert "Done: read, wrote, edited, ran and saved." in session.runs[0].answer()
    assert "Noted." in session.runs[1].answer()
    assert session.model.labels() == [
        "read",
        "read-again",
        "read-range",
        "read-after-range",
        "write",
        "edit",
        "shell-ok",
        "shell-fail",
        "read-missing",
        "recall",
        "remember",
        "answer",
        "resume-answer",
    ]
    assert not session.model.unexpected, session.model.unexpected
    assert session.stray == [], f"requests meant for another machine: {session.stray}"
    assert session.seconds < 120, f"the Copilot session took {session.seconds:.0f} s"


def test_copilot_loads_the_repository_hooks_of_a_trusted_folder(session: Session) -> None:
    assert "Loading repo hooks in prompt mode (folder is trusted or opt-in set)" in session.log
    events = {_event_of(p) for p in session.payloads}
    assert {"sessionStart", "userPromptSubmitted", "preToolUse", "postToolUse"} <= events
    assert {"postToolUseFailure", "agentStop", "sessionEnd"} <= events
    assert session.state.hook_errors == ""


def test_the_instruction_block_reaches_the_model(session: Session) -> None:
    assert "Project memory (memdir)" in session.model.by_label("read").text()


def test_session_digest_reached_the_model(session: Session) -> None:
    first = session.model.by_label("read").text()
    assert "memdir-memory" in first and SEED_RULE in first


def test_prompt_context_reached_the_model(session: Session) -> None:
    resumed = session.model.by_label("resume-answer").text()
    assert "memdir stored" in resumed
    assert "staging database is refreshed every Sunday" in resumed


def test_second_full_read_was_refused_with_a_flat_answer(session: Session) -> None:
    model = session.model
    allowed = model.after("read").tool_results()
    refused = model.after("read-again").tool_results()
    assert "alpha" in allowed and REFUSAL not in allowed
    assert REFUSAL in refused and "alpha" not in refused
    assert "Denied by preToolUse hook: memdir:" in refused


def test_a_ranged_read_is_not_a_full_read(session: Session) -> None:
    ranged = session.model.after("read-range").tool_results()
    assert "def step_0" in ranged and REFUSAL not in ranged
    full = session.model.after("read-after-range").tool_results()
    assert REFUSAL not in full and "def step_39" in full


def test_memdir_mcp_tools_are_offered_and_answer(session: Session) -> None:
    offered = session.model.by_label("read").tools()
    assert "memdir-memory_recall" in offered and "memdir-memory_remember" in offered
    assert SEED_RULE in session.model.after("recall").tool_results()
    saved = session.model.after("remember").tool_results()
    assert AGENT_FACT in saved


def test_doctor_asks_nothing_it_cannot_and_finds_the_wiring(session: Session) -> None:
    checks = {c["check"]: c for c in session.doctor["checks"]}
    assert checks["hooks"]["ok"], checks["hooks"]
    assert checks["mcp entry"]["ok"] and checks["instructions"]["ok"]
    assert checks["folder trusted (~/.copilot/config.json)"]["ok"], checks


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
    assert ("Bash", "ls no-such-file-here", False) in seen  # "completed with exit code 2"
    assert ("Read", "missing.txt", False) in seen  # postToolUseFailure
    assert len([s for s in seen if s[0] == "Read"]) == 4  # the refused read never ran


def test_an_mcp_save_counts_as_saved_memory(session: Session) -> None:
    assert session.hook_state["beliefs"] >= 1
    assert session.hook_state["reminders"] == []


def test_continue_keeps_the_session_and_it_ends(session: Session) -> None:
    starts = [p for p in session.payloads if _event_of(p) == "sessionStart"]
    assert [p.get("source") for p in starts][:2] == ["new", "resume"]
    assert len({p["sessionId"] for p in starts}) == 1
    assert session.hook_state["starts"] == 2
    assert len(session.hook_state["ends"]) == 2
