"""Gemini CLI 0.61.0 conformance: the released binary, a scripted session, memdir's real hooks.

The pinned ``gemini`` (``.ci/install-hosts``) runs headless (``-p``, ``--output-format
stream-json``) in a throwaway HOME, inside a git project where ``memdir install --host gemini``
ran. Its model API is a loopback stand-in (``GOOGLE_GEMINI_BASE_URL``, a dummy
``GEMINI_API_KEY``) that answers from a script and records every request; every other address
goes through a catching proxy (``HTTPS_PROXY``) that refuses and records it, so the suite asserts
that nothing left the machine.

The user's side is what a person does once: pick "Gemini API key" as the auth method, turn
usage statistics off, and trust the project folder (``~/.gemini/trustedFolders.json``, what the
trust dialog writes). Tool calls are approved with ``--approval-mode yolo`` on the command line,
never through memdir's install.

The session (two runs of ``gemini``, then ``gemini mcp list``):

1. start; a full read of ``notes.txt``; the same read again (memdir refuses it); a ranged read
   (``start_line``/``end_line``) of ``src/app.py`` then a full read of it (allowed: the ranged
   read held only part of it); ``write_file``; ``replace``; a shell command that works and one
   that fails; ``mcp_memdir_memory_recall`` and ``mcp_memdir_memory_remember``; the answer.
2. ``--resume latest`` with "remember that …"; a read whose reply reports a prompt over half the
   model's window, so Gemini compresses the chat before its next request; the answer; the end.

Gemini fires ``PreCompress`` before *every* model request, compressing or not (0.61.0,
``ChatCompressionService.compress``): the suite checks memdir keeps one checkpoint per real
compression, none for the others.

With ``MEMDIR_RECORD_FIXTURES=1`` the run rewrites the trimmed payload fixtures in
``tests/hosts/fixtures/gemini-cli-0.61.0/`` (replayed by ``tests/hooks/test_gemini_payloads.py``).
"""

from __future__ import annotations

import json
import sys
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import pytest

from memdir.kernel.storage import session as session_state
from tests.hosts.conformance.conftest import (
    FIXTURES,
    LoopbackServer,
    Reply,
    Request,
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

if TYPE_CHECKING:
    from memdir.kernel.storage.session import SessionState

pytestmark = [pytest.mark.slow, pytest.mark.enable_socket]

VERSION = "0.61.0"
MODEL = "gemini-2.5-flash"
"""Named with ``-m``: the default "auto" model first asks a routing classifier."""
FIXTURE_DIR = FIXTURES / f"gemini-cli-{VERSION}"
SEED_RULE = "Use pytest for tests, never unittest"
OWNER_STATEMENT = "the staging database is refreshed every Sunday at 02:00 UTC"
AGENT_FACT = "The notes file lists Greek letters in alphabet order"
BIG_PROMPT_TOKENS = 700_000
"""Over Gemini's default compression threshold, 0.5 of the 1,048,576-token window."""
REFUSAL = "already read in full"
"""From memdir's duplicate-read refusal (src/memdir/hooks/pre_tool_use.py)."""


# --------------------------------------------------------------------------- the stand-ins


def _chunk(parts: list[dict[str, Any]], prompt_tokens: int = 120) -> dict[str, Any]:
    return {
        "candidates": [
            {"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}
        ],
        "usageMetadata": {
            "promptTokenCount": prompt_tokens,
            "candidatesTokenCount": 8,
            "totalTokenCount": prompt_tokens + 8,
        },
        "modelVersion": MODEL,
    }


def call(name: str, prompt_tokens: int = 120, **args: Any) -> dict[str, Any]:
    """One streamed model turn that calls tool ``name`` with ``args``."""
    return _chunk([{"functionCall": {"name": name, "args": args}}], prompt_tokens)


def say(text: str) -> dict[str, Any]:
    """One streamed model turn that answers ``text``."""
    return _chunk([{"text": text}])


@dataclass
class Exchange:
    """One model request the host made, and the scripted turn that answered it."""

    label: str
    body: dict[str, Any]

    def text(self) -> str:
        """Every text and function response of the request, as one string (for searching)."""
        return json.dumps(self.body.get("contents", []), ensure_ascii=False)

    def function_responses(self) -> list[dict[str, Any]]:
        """The ``functionResponse`` parts of the request's last turn."""
        contents = self.body.get("contents") or [{}]
        parts = contents[-1].get("parts", [])
        return [p["functionResponse"] for p in parts if "functionResponse" in p]


@dataclass
class GeminiStandIn:
    """The Gemini API, scripted: ``streamGenerateContent`` pops the next queued turn.

    ``generateContent`` (Gemini's own utility calls) answers a ``<state_snapshot>`` when asked
    to compress and an empty JSON object otherwise; ``countTokens`` estimates 4 bytes a token.
    """

    queue: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    exchanges: list[Exchange] = field(default_factory=list)
    summaries: int = 0  # compression calls answered
    unexpected: list[str] = field(default_factory=list)

    def script(self, *turns: tuple[str, dict[str, Any]]) -> None:
        """Queue labelled turns for the next run."""
        self.queue.extend(turns)

    def answer(self, request: Request) -> Reply:
        """Answer one request (runs in the server's thread)."""
        path = urlsplit(request.path).path
        body = request.json if isinstance(request.json, dict) else {}
        if request.method == "POST" and path.endswith(f"/models/{MODEL}:streamGenerateContent"):
            label, turn = self.queue.pop(0) if self.queue else ("extra", say("Nothing more."))
            self.exchanges.append(Exchange(label, body))
            return Reply.sse([(None, turn)])
        if request.method == "POST" and path.endswith(":generateContent"):
            system = json.dumps(body.get("systemInstruction", ""))
            if "state_snapshot" in system or "state_snapshot" in json.dumps(body["contents"][-1]):
                self.summaries += 1
                text = "<state_snapshot>The person is tidying notes.txt.</state_snapshot>"
            else:
                text = "{}"
            return Reply.of_json(_chunk([{"text": text}]))
        if request.method == "POST" and path.endswith(":countTokens"):
            return Reply.of_json({"totalTokens": max(1, len(request.body) // 4)})
        self.unexpected.append(f"{request.method} {request.path}")
        return Reply.of_json({"error": {"code": 404, "message": "not scripted"}}, 404)

    def by_label(self, label: str) -> Exchange:
        """The request answered by the turn labelled ``label``."""
        found = [e for e in self.exchanges if e.label == label]
        assert found, f"no model request was answered by {label!r}: {self.labels()}"
        return found[0]

    def after(self, label: str) -> Exchange:
        """The request that followed the turn labelled ``label`` (it carries that tool's result)."""
        labels = self.labels()
        assert label in labels, f"{label!r} never ran: {labels}"
        index = labels.index(label) + 1
        assert index < len(self.exchanges), f"nothing followed {label!r}: {labels}"
        return self.exchanges[index]

    def labels(self) -> list[str]:
        """The labels of the turns answered so far, in order."""
        return [e.label for e in self.exchanges]


class StrayCatcher:
    """An HTTP(S) proxy on 127.0.0.1 that refuses and records every request sent through it."""

    def __init__(self) -> None:
        self.seen: list[str] = []
        catcher = self

        class Handler(BaseHTTPRequestHandler):
            def _refuse(self) -> None:
                catcher.seen.append(f"{self.command} {self.path}")
                self.send_response(403)
                self.send_header("Content-Length", "0")
                self.send_header("Connection", "close")
                self.end_headers()

            do_CONNECT = do_GET = do_POST = do_PUT = do_HEAD = do_DELETE = _refuse

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        """The proxy's address, ``http://127.0.0.1:PORT``."""
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> StrayCatcher:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


# --------------------------------------------------------------------------- the session


@dataclass
class Run:
    """One ``gemini`` process: its exit code, output events, stderr and wall time."""

    returncode: int
    events: list[dict[str, Any]]
    stderr: str
    seconds: float

    def session_id(self) -> str:
        """The session id the ``init`` event names."""
        return next(str(e["session_id"]) for e in self.events if e.get("type") == "init")

    def answer(self) -> str:
        """The assistant's text, all deltas joined."""
        return "".join(
            str(e.get("content", ""))
            for e in self.events
            if e.get("type") == "message" and e.get("role") == "assistant"
        )


@dataclass
class Session:
    """Everything the scripted session left behind."""

    box: Sandbox
    model: GeminiStandIn
    stray: list[str]
    runs: list[Run]
    states: list[State]  # memdir's state after each run
    hook_states: list[SessionState]  # the session's hook state after each run
    mcp_list: str
    doctors: tuple[dict[str, Any], dict[str, Any]]  # memdir doctor's Gemini result: trusted, not
    payloads: list[dict[str, Any]]
    seconds: float


def _user_settings(box: Sandbox, payload_log: Path) -> None:
    """What a person sets once in ``~/.gemini``: auth method, no usage statistics, trust.

    A payload logger is added as a *user* hook for every event memdir handles, to record what
    Gemini really sends (memdir's own hooks stay in the project's settings, as installed).
    """
    gemini = box.home / ".gemini"
    gemini.mkdir(parents=True, exist_ok=True)
    logger = {"type": "command", "command": payload_logger(payload_log), "timeout": 5000}
    events: tuple[str, ...] = ("SessionStart", "BeforeAgent", "BeforeTool", "AfterTool")
    events += ("AfterAgent", "PreCompress", "SessionEnd")
    settings = {
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "privacy": {"usageStatisticsEnabled": False},
        "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
        "hooks": {event: [{"hooks": [logger]}] for event in events},
    }
    (gemini / "settings.json").write_text(json.dumps(settings, indent=2))
    (gemini / "trustedFolders.json").write_text(json.dumps({str(box.project): "TRUST_FOLDER"}))


def _gemini(box: Sandbox, env: dict[str, str], *args: str, timeout: float = 90) -> Run:
    started = time.monotonic()
    done = box.run([str(host_binary("gemini")), *args], env=env, timeout=timeout)
    seconds = time.monotonic() - started
    events = []
    for line in done.stdout.splitlines():
        if line.strip().startswith("{"):
            try:
                events.append(json.loads(line))
            except ValueError:
                continue
    return Run(done.returncode, events, done.stderr, seconds)


def _doctor_trusted_and_not(
    box: Sandbox, binary: Path, env: dict[str, str]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """``memdir doctor --json``'s Gemini result in the trusted folder, then with trust taken away."""
    env = {**env, "PATH": f"{binary.parent}:{box.env['PATH']}"}  # doctor asks `gemini mcp list`
    trusted_folders = box.home / ".gemini" / "trustedFolders.json"
    kept = trusted_folders.read_text()
    results = []
    for trust in (kept, "{}"):
        trusted_folders.write_text(trust)
        done = box.run([sys.executable, "-m", "memdir", "doctor", "--json"], env=env, timeout=120)
        found = [r for r in json.loads(done.stdout)["results"] if r["host"] == "gemini"]
        assert len(found) == 1, done.stdout + done.stderr
        results.append(found[0])
    trusted_folders.write_text(kept)
    return results[0], results[1]


@pytest.fixture(scope="module")
def session(module_root: Path) -> Session:
    """Run the scripted two-part session once for the whole module."""
    binary = host_binary("gemini")
    started = time.monotonic()
    box = make_sandbox(module_root, "gemini")
    installed = json.loads((box.project / ".gemini" / "settings.json").read_text())
    payload_log = module_root / "payloads"
    _user_settings(box, payload_log)
    seeded = box.memdir("remember", SEED_RULE, "--kind", "rule")
    assert seeded.returncode == 0, seeded.stderr
    (box.project / "docs").mkdir()
    model = GeminiStandIn()
    with LoopbackServer(model.answer) as api, StrayCatcher() as catcher:
        env = {
            "GOOGLE_GEMINI_BASE_URL": api.url,
            "GEMINI_API_KEY": "conformance-dummy-key",
            "HTTPS_PROXY": catcher.url,
            "HTTP_PROXY": catcher.url,
            "NO_PROXY": "127.0.0.1",
            # gemini relaunches itself as a child with this set; start that child directly.
            "GEMINI_CLI_NO_RELAUNCH": "true",
        }
        flags = ["-m", MODEL, "--output-format", "stream-json", "--approval-mode", "yolo"]
        model.script(
            ("read", call("read_file", file_path="notes.txt")),
            ("read-again", call("read_file", file_path="notes.txt")),
            ("read-range", call("read_file", file_path="src/app.py", start_line=1, end_line=4)),
            ("read-after-range", call("read_file", file_path="src/app.py")),
            ("write", call("write_file", file_path="docs/todo.md", content="- tidy notes\n")),
            (
                "edit",
                call(
                    "replace",
                    file_path="notes.txt",
                    instruction="Capitalise beta.",
                    old_string="beta",
                    new_string="BETA",
                ),
            ),
            ("shell-ok", call("run_shell_command", command="echo shell-ok")),
            ("shell-fail", call("run_shell_command", command="ls no-such-file-here")),
            ("recall", call("mcp_memdir_memory_recall", query="pytest unittest tests")),
            ("remember", call("mcp_memdir_memory_remember", text=AGENT_FACT, kind="fact")),
            ("answer", say("Done: read, wrote, edited, ran and saved.")),
        )
        # -d: Gemini's debug log (stderr) says how many hooks it registered and how they ran.
        first = _gemini(
            box, env, *flags, "-d", "-p", "Tidy notes.txt and note a todo. How do we test?"
        )
        states = [read_state(box.store)]
        hook_states = [session_state.load(box.store, first.session_id())]
        model.script(
            ("resume-read", call("read_file", BIG_PROMPT_TOKENS, file_path="README.md")),
            ("resume-answer", say("Noted.")),
        )
        second = _gemini(
            box, env, *flags, "--resume", "latest", "-p", f"Remember that {OWNER_STATEMENT}."
        )
        states.append(read_state(box.store))
        hook_states.append(session_state.load(box.store, second.session_id()))
        listed = box.run([str(binary), "mcp", "list"], env=env, timeout=60)
        doctors = _doctor_trusted_and_not(box, binary, env)
        assert not api.errors, "\n".join(api.errors)
        stray = list(catcher.seen)
    payloads = logged_payloads(payload_log)
    result = Session(
        box=box,
        model=model,
        stray=stray,
        runs=[first, second],
        states=states,
        hook_states=hook_states,
        mcp_list=listed.stdout + listed.stderr,
        doctors=doctors,
        payloads=payloads,
        seconds=time.monotonic() - started,
    )
    result.box.install["settings_as_installed"] = installed
    if recording():
        _record_fixtures(result)
    return result


def _by_event(payloads: list[dict[str, Any]], event: str) -> list[dict[str, Any]]:
    return [p for p in payloads if p.get("hook_event_name") == event]


def _record_fixtures(session: Session) -> None:
    """Write one trimmed fixture per interesting payload (``MEMDIR_RECORD_FIXTURES=1``)."""
    box = session.box
    rewrite = {str(box.project): "/home/dev/proj", str(box.home): "/home/dev"}
    chosen: dict[str, dict[str, Any]] = {}
    for payload in session.payloads:
        event = str(payload.get("hook_event_name"))
        tool = str(payload.get("tool_name", ""))
        args = payload.get("tool_input") or {}
        name = event
        if event == "SessionStart":
            name += "-" + str(payload.get("source"))
        elif event in ("BeforeTool", "AfterTool"):
            name += "-" + tool
            if tool == "read_file" and "start_line" in args:
                name += "-ranged"
            if tool == "run_shell_command" and "no-such" in str(args.get("command")):
                name += "-failed"
        elif event == "BeforeAgent" and "Remember that" in str(payload.get("prompt")):
            name += "-remember"
        chosen.setdefault(name, payload)
    for name, payload in chosen.items():
        write_fixture(payload, FIXTURE_DIR / f"{name}.json", rewrite)


# --------------------------------------------------------------------------- the host's side


def test_both_runs_finish_and_nothing_leaves_the_machine(session: Session) -> None:
    for run in session.runs:
        assert run.returncode == 0, run.stderr[-3000:]
        assert any(e.get("type") == "result" and e.get("status") == "success" for e in run.events)
    assert session.runs[0].answer() == "Done: read, wrote, edited, ran and saved."
    assert session.runs[1].answer() == "Noted."
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
    assert session.seconds < 180, f"the Gemini session took {session.seconds:.0f} s"


GEMINI_HOOK_COMPLAINTS = (
    "Invalid hook",
    "Discarding invalid hook",
    "is not an array",
    "missing command field",
    "Hook configuration error",
    "Hook execution error",
    "Hook timed out",
    " failed (",
)
"""What Gemini CLI 0.61.0 logs when it rejects a hook entry or a hook fails."""


def test_gemini_validated_and_ran_memdir_hooks_with_no_warning(session: Session) -> None:
    first, second = session.runs
    log = first.stderr  # the debug log of the first run
    # 7 of memdir's entries and 7 payload loggers: Gemini discarded none of them.
    assert "Hook registry initialized with 14 hook entries" in log, log[-3000:]
    for event in ("SessionStart", "BeforeTool", "PreCompress", "SessionEnd"):
        assert f"Hook execution for {event}: 2 hooks executed successfully" in log, event
    assert "Tool execution blocked: memdir: notes.txt was already read in full" in log
    for run in session.runs:
        for complaint in GEMINI_HOOK_COMPLAINTS:
            assert complaint not in run.stderr, run.stderr[-3000:]
    # Gemini's one-time notice on project hooks names memdir's commands; it is not shown again.
    assert "project-level hooks have been detected" in first.stderr
    assert "memdir hook BeforeTool --host gemini" in first.stderr
    assert "project-level hooks have been detected" not in second.stderr
    seen = {p.get("hook_event_name") for p in session.payloads}
    assert {"SessionStart", "BeforeAgent", "BeforeTool", "AfterTool", "AfterAgent"} <= seen
    assert {"PreCompress", "SessionEnd"} <= seen


def test_session_digest_reached_the_model_in_the_first_prompt(session: Session) -> None:
    first = session.model.by_label("read").text()
    assert "memdir-memory" in first
    assert SEED_RULE in first


def test_the_instruction_block_reached_the_model(session: Session) -> None:
    """The GEMINI.md block install wrote is in what Gemini CLI sends (its context file)."""
    assert "Project memory (memdir)" in session.model.by_label("read").text()


def test_prompt_context_reached_the_model(session: Session) -> None:
    # BeforeAgent's answer to "remember that …" travels in the same turn's prompt.
    resumed = session.model.by_label("resume-read").text()
    assert "memdir stored" in resumed
    assert "staging database is refreshed every Sunday" in resumed


def test_second_full_read_was_refused(session: Session) -> None:
    model = session.model
    allowed = json.dumps(model.after("read").function_responses())
    refused = json.dumps(model.after("read-again").function_responses())
    assert "alpha" in allowed and REFUSAL not in allowed
    assert REFUSAL in refused and "alpha" not in refused


def test_a_ranged_read_is_not_a_full_read(session: Session) -> None:
    model = session.model
    ranged = json.dumps(model.after("read-range").function_responses())
    assert "def step_0" in ranged and REFUSAL not in ranged
    full = json.dumps(model.after("read-after-range").function_responses())
    assert REFUSAL not in full and "def step_39" in full


def test_memdir_mcp_server_is_connected_and_answers(session: Session) -> None:
    assert "memdir" in session.mcp_list and "Connected" in session.mcp_list, session.mcp_list
    declared = json.dumps(session.model.by_label("read").body.get("tools", []))
    assert "mcp_memdir_memory_recall" in declared and "mcp_memdir_memory_remember" in declared
    recalled = json.dumps(session.model.after("recall").function_responses())
    assert SEED_RULE in recalled
    saved = json.dumps(session.model.after("remember").function_responses())
    assert AGENT_FACT in saved and '"origin' in saved


def test_doctor_reports_geminis_server_connected_only_in_a_trusted_folder(
    session: Session,
) -> None:
    trusted, untrusted = session.doctors
    assert trusted["ok"], trusted
    checks = {c["check"]: c for c in trusted["checks"]}
    assert checks["server (gemini mcp list)"]["detail"] == "Connected"
    assert not untrusted["ok"]
    failed = [c for c in untrusted["checks"] if not c["ok"]]
    assert [c["check"] for c in failed] == ["server (gemini mcp list)"], failed
    assert "trust the folder" in failed[0]["fix"]


def test_install_writes_memdir_mcp_server_into_gemini_settings(session: Session) -> None:
    installed = session.box.install["settings_as_installed"]
    entry = installed.get("mcpServers", {}).get("memdir")
    assert isinstance(entry, dict), f"no mcpServers.memdir in {sorted(installed)}"
    assert entry.get("args", [])[-1:] == ["serve"]
    assert int(entry.get("timeout", 0)) >= 10_000  # milliseconds: Gemini's 5 s default is short


# --------------------------------------------------------------------------- memdir's side


def test_beliefs_were_stored(session: Session) -> None:
    state = session.states[-1]
    owner = state.records_with("staging database is refreshed every Sunday")
    assert [r["origin"] for r in owner] == ["owner"]
    agent = state.records_with(AGENT_FACT)
    assert [r["origin"] for r in agent] == ["agent"]
    assert state.records_with(SEED_RULE)


def _turns(session: Session, who: str) -> list[str]:
    return [str(t.get("text", "")) for t in session.states[-1].journal if t.get("who") == who]


def test_journal_holds_the_persons_prompts_and_the_answers(session: Session) -> None:
    users = _turns(session, "user")
    assert any("Tidy notes.txt and note a todo. How do we test?" in u for u in users), users
    assert any(f"Remember that {OWNER_STATEMENT}." in u for u in users), users
    answers = _turns(session, "assistant")
    assert answers == ["Done: read, wrote, edited, ran and saved.", "Noted."]


def test_no_injected_memory_in_any_user_turn(session: Session) -> None:
    users = _turns(session, "user")
    assert users == [
        "Tidy notes.txt and note a todo. How do we test?",
        f"Remember that {OWNER_STATEMENT}.",
    ]
    for text in users:
        assert "memdir-memory" not in text and "hook_context" not in text, text[:400]


def test_every_read_write_edit_and_shell_command_has_an_action_row(session: Session) -> None:
    rows = session.states[0].actions
    seen = [(r.get("tool"), r.get("path") or r.get("command"), r.get("ok")) for r in rows]
    assert ("Read", "notes.txt", True) in seen
    assert ("Read", "src/app.py", True) in seen
    assert ("Write", "docs/todo.md", True) in seen
    assert ("Edit", "notes.txt", True) in seen
    assert ("Bash", "echo shell-ok", True) in seen
    assert ("Bash", "ls no-such-file-here", False) in seen
    # One row per read that ran; a refused read never ran and has none.
    ran = [
        label
        for label in ("read", "read-again", "read-range", "read-after-range")
        if REFUSAL not in json.dumps(session.model.after(label).function_responses())
    ]
    assert "read" in ran and "read-range" in ran and "read-again" not in ran
    assert len([s for s in seen if s[0] == "Read"]) == len(ran)


def test_file_map_holds_the_written_and_edited_files(session: Session) -> None:
    files = session.states[0].anatomy.get("files", {})
    project = session.box.project
    for rel in ("docs/todo.md", "notes.txt"):
        assert rel in files, sorted(files)
        assert files[rel].get("size") == (project / rel).stat().st_size
    assert (project / "notes.txt").read_text() == "alpha\nBETA\ngamma\n"


def test_an_mcp_save_counts_as_saved_memory(session: Session) -> None:
    state = session.hook_states[0]
    assert state["beliefs"] >= 1
    assert state["reminders"] == [] and not state["reminded"]


def test_one_checkpoint_per_compression(session: Session) -> None:
    assert session.model.summaries >= 1  # Gemini did compress in the second run
    sid = session.runs[0].session_id()
    assert session.runs[1].session_id() == sid  # --resume keeps the session
    assert len(_by_event(session.payloads, "PreCompress")) > 1  # it fires before every request
    assert session.hook_states[0]["compactions"] == []
    assert len(session.hook_states[1]["compactions"]) == 1


def test_resume_was_seen_and_the_session_ended(session: Session) -> None:
    sources = [p.get("source") for p in _by_event(session.payloads, "SessionStart")]
    assert sources[:2] == ["startup", "resume"]
    state = session.hook_states[1]
    assert state["starts"] == 2 and state["source"] == "resume"
    assert len(state["ends"]) == 2


def test_no_hook_errors(session: Session) -> None:
    assert session.states[-1].hook_errors == ""
