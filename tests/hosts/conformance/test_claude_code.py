"""Claude Code 2.1.332, the released binary, through a scripted session with memdir installed.

One module-scoped run drives ``claude -p`` (stream-json in and out, one prompt at a time) against
a loopback stand-in for the Anthropic Messages API, then resumes the session with ``--resume``
and asks ``claude mcp get memdir``. Trust and MCP approval are granted in the throwaway HOME the
way a person grants them (``~/.claude.json``: the project's ``hasTrustDialogAccepted`` and
``enabledMcpjsonServers``; tool permissions in ``~/.claude/settings.json``), never by a bypass
flag. Each test then asserts one thing from the host's own output, its debug log, what reached
the model, or what memdir kept.

The script (each prompt starts with a ``[[step:NAME]]`` tag; the stand-in answers by tag and by
how many assistant turns follow the tagged prompt, so side requests cannot shift it):
remember → read → reread (refused) → ranged read → write + edit → shell + failing shell →
MCP recall + remember → a prompt that per-prompt recall answers → /compact → read after the
compaction → (new process) resume.

``MEMDIR_RECORD_FIXTURES=1`` rewrites the recorded payloads under
``tests/hosts/fixtures/claude-code-2.1.332/`` from the run (tests/hooks replays them).
"""

from __future__ import annotations

import itertools
import json
import queue
import re
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from memdir.kernel.hostio.hosttable import CANONICAL_EVENTS
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
    trim,
    write_fixture,
)

pytestmark = [pytest.mark.slow, pytest.mark.enable_socket]

VERSION = "2.1.332"
FIXTURE_DIR = FIXTURES / f"claude-code-{VERSION}"
HOOK_EVENTS = CANONICAL_EVENTS
"""Every event the payload logger listens to (memdir's own and the ones it should hear)."""
SEEDED_RULE = "Never push directly to the main branch"
NEW_RULE = "Always run make check before a commit"
"""Stored between the session and its resume: the one thing the resume has not been shown."""
BELIEF = "The staging database is read-only on Fridays"
MCP_BELIEF = "The release build uses make, not ninja"
RECALL_COMMAND = 'memdir recall "staging database"'
"""The command memdir's instruction block tells the agent to run, run by the agent's shell."""
TURN_TIMEOUT = 60.0
"""Seconds one prompt may take end to end (hooks, tools, the MCP server's start)."""

_TAG = re.compile(r"^\[\[step:([a-z0-9-]+)\]\]", re.M)
_SUMMARY_REQUEST = "summary of the conversation"


# --------------------------------------------------------------------------- the stand-in


def _sse(model: str, blocks: list[dict[str, Any]], ids: itertools.count[int]) -> Reply:
    """Return one assistant turn as Anthropic Messages streaming events."""
    events: list[tuple[str | None, Any]] = [
        (
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": f"msg_{next(ids):04d}",
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": {"input_tokens": 120, "output_tokens": 1},
                },
            },
        )
    ]
    stop = "end_turn"
    for index, block in enumerate(blocks):
        if block["type"] == "text":
            start: dict[str, Any] = {"type": "text", "text": ""}
            delta: dict[str, Any] = {"type": "text_delta", "text": block["text"]}
        else:
            stop = "tool_use"
            start = {
                "type": "tool_use",
                "id": f"toolu_{next(ids):04d}",
                "name": block["name"],
                "input": {},
            }
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        events += [
            (
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": start},
            ),
            (
                "content_block_delta",
                {"type": "content_block_delta", "index": index, "delta": delta},
            ),
            ("content_block_stop", {"type": "content_block_stop", "index": index}),
        ]
    events += [
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {"output_tokens": 12},
            },
        ),
        ("message_stop", {"type": "message_stop"}),
    ]
    return Reply.sse(events)


def _text(content: Any) -> str:
    """Return the text blocks of a message's content, joined."""
    if isinstance(content, str):
        return content
    return "\n".join(
        str(b.get("text", ""))
        for b in content or []
        if isinstance(b, dict) and b.get("type") == "text"
    )


def _step_of(message: dict[str, Any]) -> str | None:
    """Return the ``[[step:NAME]]`` that starts a line of one of a user message's text blocks."""
    if message.get("role") != "user":
        return None
    content = message.get("content")
    blocks = [content] if isinstance(content, str) else [_text([b]) for b in content or []]
    for block in blocks:
        found = _TAG.search(block)
        if found:
            return found.group(1)
    return None


def text(value: str) -> dict[str, Any]:
    """A text block of a scripted assistant turn."""
    return {"type": "text", "text": value}


def tool(name: str, **tool_input: Any) -> dict[str, Any]:
    """A tool_use block of a scripted assistant turn."""
    return {"type": "tool", "name": name, "input": tool_input}


@dataclass
class MessagesStandIn:
    """Answers ``POST /v1/messages`` from a script; everything else gets an empty success.

    ``script`` maps a step tag to its assistant turns; turn *n* answers the request that holds
    the tagged prompt followed by *n* assistant messages. A compaction's summary request gets a
    summary; any other request is answered with plain text and kept in ``unscripted``.
    """

    script: dict[str, list[list[dict[str, Any]]]]
    unscripted: list[dict[str, Any]] = field(default_factory=list)
    by_step: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    _ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    def __call__(self, request: Request) -> Reply:
        """Answer one request."""
        if request.method == "HEAD":
            return Reply(200, b"")
        if not request.path.startswith("/v1/messages"):
            return Reply.of_json({"data": [], "has_more": False})
        body = request.json or {}
        if request.path.startswith("/v1/messages/count_tokens"):
            return Reply.of_json({"input_tokens": 120})
        model = str(body.get("model", "claude"))
        messages = body.get("messages", [])
        last = _text(messages[-1].get("content")) if messages else ""
        if _SUMMARY_REQUEST in last:
            self.by_step.setdefault("compact-summary", []).append(body)
            summary = (
                "<analysis>Scripted.</analysis>\n<summary>The scripted session so far.</summary>"
            )
            return _sse(model, [text(summary)], self._ids)
        for index in range(len(messages) - 1, -1, -1):
            step = _step_of(messages[index])
            if step is not None:
                break
        else:
            self.unscripted.append(body)
            return _sse(model, [text("OK.")], self._ids)
        self.by_step.setdefault(step, []).append(body)
        turns = self.script.get(step, [])
        done = sum(1 for m in messages[index + 1 :] if m.get("role") == "assistant")
        turn = turns[done] if done < len(turns) else [text(f"Done with {step}.")]
        return _sse(model, turn, self._ids)


# --------------------------------------------------------------------------- the driver


class StreamSession:
    """A ``claude -p`` process speaking stream-json, fed one prompt at a time."""

    def __init__(self, box: Sandbox, args: list[str], env: dict[str, str]) -> None:
        self.messages: list[dict[str, Any]] = []
        self.stderr: list[str] = []
        self._queue: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.proc = subprocess.Popen(
            args,
            cwd=box.project,
            env={**box.env, **env},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        self._readers = [
            threading.Thread(target=self._read_stdout, daemon=True),
            threading.Thread(target=self._read_stderr, daemon=True),
        ]
        for reader in self._readers:
            reader.start()

    def _read_stdout(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            try:
                value = json.loads(line)
            except ValueError:
                value = {"type": "non-json", "line": line}
            self.messages.append(value)
            self._queue.put(value)
        self._queue.put(None)

    def _read_stderr(self) -> None:
        assert self.proc.stderr is not None
        self.stderr.extend(self.proc.stderr)

    def send(self, prompt: str, timeout: float = TURN_TIMEOUT) -> dict[str, Any]:
        """Send one user message and return the turn's ``result`` message."""
        assert self.proc.stdin is not None
        line = {
            "type": "user",
            "message": {"role": "user", "content": [{"type": "text", "text": prompt}]},
        }
        self.proc.stdin.write(json.dumps(line) + "\n")
        self.proc.stdin.flush()
        deadline = time.monotonic() + timeout
        while True:
            try:
                item = self._queue.get(timeout=max(deadline - time.monotonic(), 0.01))
            except queue.Empty:
                self.kill()
                pytest.fail(f"claude gave no result for {prompt!r} within {timeout:g} s")
            if item is None:
                pytest.fail(
                    f"claude exited before answering {prompt!r}: {''.join(self.stderr)[-2000:]}"
                )
            if item.get("type") == "result":
                return item

    def close(self, timeout: float = 30) -> int:
        """Close stdin, wait for the process to end (SessionEnd runs), return its exit code."""
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            pytest.fail(f"claude did not exit within {timeout:g} s of its input ending")
        finally:
            self._release()

    def _release(self) -> None:
        for reader in self._readers:
            reader.join(timeout=5)
        for pipe in (self.proc.stdout, self.proc.stderr):
            if pipe is not None:
                pipe.close()

    def kill(self) -> None:
        """End the process group."""
        import os
        import signal

        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        self._release()


# --------------------------------------------------------------------------- the run


@dataclass
class Run:
    """Everything one scripted Claude Code session left behind."""

    box: Sandbox
    standin: MessagesStandIn
    requests: list[Request]
    stream: list[dict[str, Any]]  # stream-json messages of the main session
    resume_stream: list[dict[str, Any]]
    stderr: str  # both processes
    debug: str  # both debug logs
    mcp_get: subprocess.CompletedProcess[str]
    payloads: list[dict[str, Any]]
    state: State
    session_id: str
    seconds: float

    def tool_result(self, tool_name: str, nth: int = 0) -> dict[str, Any]:
        """The ``tool_result`` block answering the ``nth`` call of ``tool_name`` (as sent back)."""
        calls = [
            b["id"]
            for m in self.stream
            if m.get("type") == "assistant"
            for b in m["message"]["content"]
            if b.get("type") == "tool_use" and b.get("name") == tool_name
        ]
        wanted = calls[nth]
        for m in self.stream:
            if m.get("type") != "user":
                continue
            content = m["message"].get("content")
            for b in content if isinstance(content, list) else []:
                if b.get("type") == "tool_result" and b.get("tool_use_id") == wanted:
                    return dict(b)
        raise AssertionError(f"no tool_result for {tool_name} #{nth}")

    def step_requests(self, step: str) -> str:
        """Every request body that answered ``step``, as one JSON string."""
        return json.dumps(self.standin.by_step.get(step, []))

    def with_prompt(self, step: str) -> str:
        """What reached the model with ``step``'s prompt: that message and every one after it,
        in the first request of the step (hook context rides beside the prompt), as JSON."""
        messages = self.standin.by_step[step][0]["messages"]
        at = max(i for i, m in enumerate(messages) if _step_of(m) == step)
        return json.dumps(messages[at:])

    def payloads_of(self, event: str) -> list[dict[str, Any]]:
        """The logged payloads of one hook event, in order."""
        return [p for p in self.payloads if p.get("hook_event_name") == event]


def _env(url: str) -> dict[str, str]:
    """Point Claude Code at the stand-in, with a dummy key and no traffic but the model's."""
    return {
        "ANTHROPIC_BASE_URL": url,
        "ANTHROPIC_API_KEY": "sk-ant-conformance-test",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "DISABLE_AUTOUPDATER": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    }


def _hook_statuses(debug: str) -> dict[str, set[str]]:
    """Each memdir hook event Claude Code's debug log shows finishing, with its exit statuses."""
    statuses: dict[str, set[str]] = {}
    for event, status in re.findall(
        r"memdir hook (\w+)[^\]\n]*\] (?:finished|completed) with status (\d+)", debug
    ):
        statuses.setdefault(event, set()).add(status)
    return statuses


def _no_settings_warning(*texts: str) -> None:
    """Fail when Claude Code skipped a settings entry or logged a warning about hooks or MCP."""
    for text_ in texts:
        assert "Invalid setting" not in text_
        assert "settings entries were skipped" not in text_
        found = re.findall(
            r"\[(?:WARN|ERROR)\][^\n]*(?:hook|settings|mcp|memdir)[^\n]*", text_, re.I
        )
        assert not found, found


def _project_entry(box: Sandbox, **fields: Any) -> None:
    """Merge ``fields`` into the project's entry of ``~/.claude.json`` (where Claude Code keeps
    what a person accepted for a folder; an install may have put a local-scope server there)."""
    config = box.home / ".claude.json"
    data = json.loads(config.read_text()) if config.exists() else {}
    data.update(hasCompletedOnboarding=True)
    data.setdefault("projects", {}).setdefault(str(box.project), {}).update(fields)
    config.write_text(json.dumps(data, indent=2))


def _grant(box: Sandbox, logs: Path) -> None:
    """Trust the project and allow the script's tools, as a person would.

    The payload logger is a user-scope hook beside memdir's project hooks. The MCP server needs
    no approval: the personal install puts it in the local scope.
    """
    _project_entry(box, hasTrustDialogAccepted=True, hasCompletedProjectOnboarding=True)
    settings = box.home / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    logger = {"hooks": [{"type": "command", "command": payload_logger(logs)}]}
    settings.write_text(
        json.dumps(
            {
                "hooks": {event: [logger] for event in HOOK_EVENTS},
                "permissions": {
                    "allow": [
                        "Read",
                        "Write",
                        "Edit",
                        "Bash",
                        "mcp__memdir__memory_recall",
                        "mcp__memdir__memory_remember",
                    ]
                },
            },
            indent=2,
        )
    )


def _script(project: Path) -> dict[str, list[list[dict[str, Any]]]]:
    app = str(project / "src" / "app.py")
    return {
        "remember": [[text("Noted.")]],
        "read": [[tool("Read", file_path=app)]],
        "reread": [[tool("Read", file_path=app)]],
        "ranged": [[tool("Read", file_path=app, offset=10, limit=5)]],
        "write": [
            [
                tool(
                    "Write",
                    file_path=str(project / "docs" / "plan.md"),
                    content="# Plan\n\nShip the release on Tuesday.\n",
                )
            ],
            [tool("Edit", file_path=app, old_string="def step_1():", new_string="def step_one():")],
        ],
        "shell": [
            [tool("Bash", command="git status --short", description="Show the working tree")],
            [tool("Bash", command=RECALL_COMMAND, description="Ask memdir")],
            [tool("Bash", command="ls no-such-folder", description="List a missing folder")],
        ],
        "mcp": [
            [tool("mcp__memdir__memory_recall", query="staging database Fridays")],
            [tool("mcp__memdir__memory_remember", text=MCP_BELIEF, kind="fact")],
        ],
        "recall": [[text("It uses make.")]],
        "after-compact": [[tool("Read", file_path=app)]],
        "resume": [[text("Welcome back.")]],
    }


PROMPTS = (
    f"Remember that {BELIEF[0].lower()}{BELIEF[1:]}.\n[[step:remember]]",
    "[[step:read]] Read src/app.py.",
    "[[step:reread]] Read src/app.py again.",
    "[[step:ranged]] Show lines 10 to 15 of src/app.py.",
    "[[step:write]] Write a plan to docs/plan.md and rename step_1.",
    "[[step:shell]] Show git status, then list no-such-folder.",
    "[[step:mcp]] Check memory about the staging database, and save how the release is built.",
    "[[step:recall]] Which tool does the release build use, make or ninja?",
    "/compact",
    "[[step:after-compact]] Read src/app.py once more.",
)


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    """Install memdir, run the scripted session, resume it, ask ``claude mcp get``."""
    claude = str(host_binary("claude"))
    root = tmp_path_factory.mktemp("claude-code")
    box = make_sandbox(root, "claude-code")
    seeded = box.memdir("remember", SEEDED_RULE, "--kind", "rule")
    assert seeded.returncode == 0, seeded.stderr
    logs = root / "payloads"
    _grant(box, logs)
    standin = MessagesStandIn(_script(box.project))
    started = time.monotonic()
    with LoopbackServer(standin) as server:
        env = _env(server.url)
        stream_args = ["--output-format", "stream-json", "--verbose"]
        main = StreamSession(
            box,
            [
                claude,
                "-p",
                "--input-format",
                "stream-json",
                *stream_args,
                "--debug-file",
                str(root / "debug-1.log"),
            ],
            env,
        )
        try:
            results = [main.send(prompt) for prompt in PROMPTS]
        finally:
            main.close()
        session_id = str(results[0]["session_id"])
        added = box.memdir("remember", NEW_RULE, "--kind", "rule")
        assert added.returncode == 0, added.stderr
        resumed = box.run(
            [
                claude,
                "-p",
                "--resume",
                session_id,
                *stream_args,
                "--debug-file",
                str(root / "debug-2.log"),
                "[[step:resume]] Where were we?",
            ],
            env=env,
            timeout=TURN_TIMEOUT,
        )
        assert resumed.returncode == 0, resumed.stderr
        mcp_get = box.run([claude, "mcp", "get", "memdir"], env=env, timeout=TURN_TIMEOUT)
        requests = list(server.requests)
        assert not server.errors, "\n".join(server.errors)
    seconds = time.monotonic() - started
    # Kept beside the sandbox for a person debugging a failure (never committed).
    (root / "requests.json").write_text(json.dumps([r.json for r in requests], indent=1))
    (root / "stream.jsonl").write_text("".join(json.dumps(m) + "\n" for m in main.messages))
    debug = "".join(p.read_text() for p in sorted(root.glob("debug-*.log")))
    result = Run(
        box=box,
        standin=standin,
        requests=requests,
        stream=main.messages,
        resume_stream=[json.loads(x) for x in resumed.stdout.splitlines() if x.startswith("{")],
        stderr="".join(main.stderr) + resumed.stderr,
        debug=debug,
        mcp_get=mcp_get,
        payloads=logged_payloads(logs),
        state=read_state(box.store),
        session_id=session_id,
        seconds=seconds,
    )
    if recording():
        _record_fixtures(result)
    print(f"claude-code {VERSION} conformance session: {seconds:.1f} s")
    return result


# --------------------------------------------------------------------------- fixtures out


def _fixture_name(payload: dict[str, Any]) -> str:
    event = str(payload.get("hook_event_name"))
    qualifier = payload.get("source") or payload.get("trigger") or payload.get("reason") or ""
    tool_name = str(payload.get("tool_name", ""))
    if tool_name:
        qualifier = tool_name.removeprefix("mcp__memdir__")
        if payload.get("tool_input", {}).get("offset"):
            qualifier += "-ranged"
    return f"{event}-{qualifier}" if qualifier else event


def _record_fixtures(run: Run) -> None:
    """Write one trimmed fixture per (event, qualifier), first seen wins; the rest are dropped."""
    rewrite = {
        re.sub(r"[^A-Za-z0-9]", "-", str(run.box.project)): "-home-dev-project",  # transcripts
        str(run.box.project): "/home/dev/project",
        str(run.box.home): "/home/dev",
        str(run.box.root): "/home/dev/sandbox",
        str(Path(sys.executable).parent.parent): "/home/dev/.venv",
    }
    for old in [*FIXTURE_DIR.glob("*.json"), *FIXTURE_DIR.glob("*.jsonl")]:
        old.unlink()
    FIXTURE_DIR.mkdir(parents=True, exist_ok=True)
    _record_transcript(run, rewrite)
    seen: set[str] = set()
    for payload in run.payloads:
        name = _fixture_name(payload)
        if name in seen:
            continue
        seen.add(name)
        write_fixture(payload, FIXTURE_DIR / f"{name}.json", rewrite)


def _record_transcript(run: Run, rewrite: dict[str, str]) -> None:
    """Keep the transcript's last turn (the resumed prompt to the end), trimmed, line by line:
    what a Stop hook finds at ``transcript_path``."""
    found = sorted((run.box.home / ".claude" / "projects").glob(f"*/{run.session_id}.jsonl"))
    lines = [json.loads(x) for x in found[0].read_text().splitlines() if x.strip()]
    start = max(
        i
        for i, x in enumerate(lines)
        if x.get("type") == "user" and isinstance(x.get("message", {}).get("content"), str)
    )
    tail = [json.dumps(trim(x, rewrite, 300), ensure_ascii=False) for x in lines[start:]]
    text = "\n".join(tail) + "\n"
    assert len(text.encode()) < 20_000, "the transcript tail is too big for a fixture"
    (FIXTURE_DIR / "transcript-tail.jsonl").write_text(text, encoding="utf-8")


# --------------------------------------------------------------------------- the host's view


def test_the_session_ran_every_step_within_its_budget(run: Run) -> None:
    assert not run.standin.unscripted, json.dumps(run.standin.unscripted)[:2000]
    for step in (
        "remember",
        "read",
        "reread",
        "ranged",
        "write",
        "shell",
        "mcp",
        "recall",
        "after-compact",
        "resume",
        "compact-summary",
    ):
        assert run.standin.by_step.get(step), f"no request answered step {step}"
    assert run.seconds < 150, f"the Claude Code session took {run.seconds:.0f} s"
    # With nonessential traffic off, the messages endpoint is all Claude Code calls.
    assert {(r.method, r.path.split("?")[0]) for r in run.requests} == {("POST", "/v1/messages")}


def test_claude_code_validated_memdirs_settings_with_no_warning(run: Run) -> None:
    _no_settings_warning(run.stderr, run.debug)


def test_every_memdir_hook_ran_and_succeeded(run: Run) -> None:
    statuses = _hook_statuses(run.debug)
    installed = json.loads((run.box.project / ".claude" / "settings.local.json").read_text())
    # The script fires every event memdir installs (a failing Bash call: PostToolUseFailure).
    assert set(statuses) == set(installed["hooks"]), f"hooks that never ran: {statuses}"
    assert all(s == {"0"} for s in statuses.values()), statuses
    responses = [m for m in run.stream if m.get("subtype") == "hook_response"]
    failed = [
        {k: m.get(k) for k in ("hook_name", "exit_code", "outcome", "stdout", "stderr")}
        for m in responses
        if m.get("exit_code") != 0
    ]
    assert responses and not failed, json.dumps(failed, indent=1)


def _digest_in(shown: str) -> bool:
    """Whether memdir's SessionStart digest, holding the seeded rule, is in ``shown`` (JSON)."""
    return bool(
        re.search(
            r"SessionStart hook additional context: <memdir-memory>[^<]*" + SEEDED_RULE, shown
        )
    )


def test_the_digest_reached_the_model_at_session_start(run: Run) -> None:
    assert _digest_in(run.with_prompt("remember"))


def test_resume_injects_what_is_new_and_not_what_the_transcript_holds(run: Run) -> None:
    shown = run.with_prompt("resume")
    assert "SessionStart hook additional context: <memdir-memory>" in shown and NEW_RULE in shown
    assert SEEDED_RULE not in shown
    # The transcript Claude Code resumed still carries the earlier digest, once.
    assert run.step_requests("resume").count(SEEDED_RULE) == 1


def test_the_digest_is_injected_again_after_compaction(run: Run) -> None:
    shown = run.with_prompt("after-compact")
    # The compaction replaced the earlier turns with the summary; only memdir's re-injection
    # can carry the rule past it.
    assert "The scripted session so far." in json.dumps(run.standin.by_step["after-compact"][0])
    assert _digest_in(shown) and "Context was compacted" in shown


def test_per_prompt_recall_reached_the_model(run: Run) -> None:
    shown = run.with_prompt("recall")
    assert "<memdir-memory>" in shown and MCP_BELIEF in shown
    assert "Relevant to this prompt" in shown


def test_the_stored_belief_was_acknowledged_to_the_model(run: Run) -> None:
    shown = run.with_prompt("remember")
    assert "memdir stored" in shown and BELIEF in shown


def test_the_second_full_read_was_refused_with_memdirs_reason(run: Run) -> None:
    first = run.tool_result("Read", 0)
    assert not first.get("is_error") and "def step_39" in json.dumps(first)
    second = run.tool_result("Read", 1)
    assert second.get("is_error") is True
    assert "already read in full in this session" in json.dumps(second)
    assert "def step_39" not in json.dumps(second)


def test_a_ranged_read_and_a_read_after_compaction_are_allowed(run: Run) -> None:
    ranged = run.tool_result("Read", 2)
    assert not ranged.get("is_error") and "def step_3" in json.dumps(ranged)
    assert "def step_39" not in json.dumps(ranged)
    after = run.tool_result("Read", 3)
    assert not after.get("is_error") and "def step_39" in json.dumps(after)


def test_the_instruction_block_reached_the_model(run: Run) -> None:
    first = run.with_prompt("remember") + json.dumps(run.standin.by_step["remember"][0])
    assert "## Project memory (memdir)" in first and "CLAUDE.local.md" in first


def test_the_agents_shell_can_run_the_command_memdir_names(run: Run) -> None:
    result = run.tool_result("Bash", 1)
    assert not result.get("is_error") and BELIEF in json.dumps(result), result


def test_the_mcp_server_connected_and_answered(run: Run) -> None:
    assert run.mcp_get.returncode == 0, run.mcp_get.stderr
    assert "Connected" in run.mcp_get.stdout, run.mcp_get.stdout
    assert "pending" not in run.mcp_get.stdout.lower()
    recall = run.tool_result("mcp__memdir__memory_recall")
    assert not recall.get("is_error") and BELIEF in json.dumps(recall)
    remember = run.tool_result("mcp__memdir__memory_remember")
    assert not remember.get("is_error") and MCP_BELIEF in json.dumps(remember)


def test_the_compaction_order_is_precompact_sessionstart_postcompact(run: Run) -> None:
    order = [
        (p["hook_event_name"], p.get("source") or p.get("trigger"))
        for p in run.payloads
        if p["hook_event_name"] in ("PreCompact", "PostCompact") or p.get("source") == "compact"
    ]
    assert order == [
        ("PreCompact", "manual"),
        ("SessionStart", "compact"),
        ("PostCompact", "manual"),
    ]


def test_resume_gives_the_model_the_new_rule(run: Run) -> None:
    shown = run.with_prompt("resume")
    assert "SessionStart hook additional context: <memdir-memory>" in shown and NEW_RULE in shown


def test_resume_keeps_the_session(run: Run) -> None:
    starts = run.payloads_of("SessionStart")
    assert [p["source"] for p in starts] == ["startup", "compact", "resume"]
    assert {p["session_id"] for p in starts} == {run.session_id}


# --------------------------------------------------------------------------- memdir's state


def test_the_remembered_belief_is_stored_as_the_owners(run: Run) -> None:
    found = run.state.records_with(BELIEF)
    assert len(found) == 1, found
    assert found[0]["origin"] == "owner" and found[0]["status"] == "active"
    assert "[[step" not in found[0]["text"]
    by_mcp = run.state.records_with(MCP_BELIEF)
    assert len(by_mcp) == 1 and by_mcp[0]["origin"] == "agent"


def test_the_journal_holds_both_sides_and_no_injected_memory(run: Run) -> None:
    turns = [t for t in run.state.journal if t["session"] == run.session_id]
    user = [t["text"] for t in turns if t["who"] == "user"]
    assistant = [t["text"] for t in turns if t["who"] == "assistant"]
    for prompt in (*PROMPTS, "[[step:resume]] Where were we?"):
        if "[[step:" in prompt:
            assert prompt in user, f"not journaled: {prompt}"
    assert "Noted." in assistant and "Welcome back." in assistant
    assert not [t for t in user if "<memdir-memory>" in t or "memdir-memory" in t]
    assert not [t for t in user if SEEDED_RULE in t]


def test_every_read_write_edit_and_shell_command_has_an_action_row(run: Run) -> None:
    rows = [r for r in run.state.actions if r["session"] == run.session_id]
    reads = [r for r in rows if r["tool"] == "Read"]
    assert [r["path"] for r in reads] == ["src/app.py"] * 3  # full, ranged, after compaction
    assert [(r["tool"], r["path"]) for r in rows if r["tool"] in ("Write", "Edit")] == [
        ("Write", "docs/plan.md"),
        ("Edit", "src/app.py"),
    ]
    shells = [(r["command"], r["ok"]) for r in rows if r["tool"] == "Bash"]
    assert ("git status --short", True) in shells and (RECALL_COMMAND, True) in shells


def test_a_failed_shell_command_has_a_failed_action_row(run: Run) -> None:
    rows = [r for r in run.state.actions if r["session"] == run.session_id and r["tool"] == "Bash"]
    assert ("ls no-such-folder", False) in [(r["command"], r["ok"]) for r in rows]


def test_the_file_map_follows_the_writes(run: Run) -> None:
    files = run.state.anatomy["files"]
    assert "docs/plan.md" in files
    assert "step_one" in json.dumps(files["src/app.py"])


def test_one_checkpoint_per_compaction(run: Run) -> None:
    compactions = run.state.sessions[run.session_id]["compactions"]
    assert len(compactions) == 1, compactions
    assert compactions[0]["trigger"] == "manual"


def test_no_hook_errors(run: Run) -> None:
    assert run.state.hook_errors == ""


# --------------------------------------------------------------------------- the shared install


@dataclass
class SharedRun:
    """A ``memdir install --shared`` project: the MCP approval step, then one prompt."""

    box: Sandbox
    before_approval: subprocess.CompletedProcess[str]  # claude mcp get memdir
    after_approval: subprocess.CompletedProcess[str]
    prompt: subprocess.CompletedProcess[str]  # claude -p
    debug: str
    state: State


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> SharedRun:
    """Install with ``--shared``, trust the folder, ask ``claude mcp get`` before and after
    approving the ``.mcp.json`` server as a person would, then run one prompt."""
    claude = str(host_binary("claude"))
    root = tmp_path_factory.mktemp("claude-code-shared")
    box = make_sandbox(root, "claude-code", install_args=["--shared"])
    _project_entry(box, hasTrustDialogAccepted=True, hasCompletedProjectOnboarding=True)
    with LoopbackServer(MessagesStandIn({"remember": [[text("Noted.")]]})) as server:
        env = _env(server.url)
        before = box.run([claude, "mcp", "get", "memdir"], env=env, timeout=TURN_TIMEOUT)
        _project_entry(box, enabledMcpjsonServers=["memdir"])
        after = box.run([claude, "mcp", "get", "memdir"], env=env, timeout=TURN_TIMEOUT)
        debug_file = root / "debug.log"
        prompt = box.run(
            [claude, "-p", "--debug-file", str(debug_file), PROMPTS[0]],
            env=env,
            timeout=TURN_TIMEOUT,
        )
        assert not server.errors, "\n".join(server.errors)
    return SharedRun(box, before, after, prompt, debug_file.read_text(), read_state(box.store))


def test_shared_install_names_no_path_of_this_machine(shared: SharedRun) -> None:
    for rel in (".claude/settings.json", ".mcp.json"):
        text_ = (shared.box.project / rel).read_text()
        assert "memdir" in text_ and str(Path(sys.executable).parent) not in text_, rel


def test_a_shared_mcp_server_waits_for_the_persons_approval(shared: SharedRun) -> None:
    assert "pending approval" in shared.before_approval.stdout.lower(), shared.before_approval
    steps = " ".join(shared.box.install.get("next_steps", []))
    assert "Pending approval" in steps and "claude mcp get memdir" in steps
    assert shared.after_approval.returncode == 0, shared.after_approval.stderr
    assert "Connected" in shared.after_approval.stdout, shared.after_approval.stdout


def test_shared_hooks_run_through_the_memdir_on_path(shared: SharedRun) -> None:
    assert shared.prompt.returncode == 0, shared.prompt.stderr
    _no_settings_warning(shared.prompt.stderr, shared.debug)
    statuses = _hook_statuses(shared.debug)
    assert {"SessionStart", "UserPromptSubmit", "Stop", "SessionEnd"} <= set(statuses), statuses
    assert all(s == {"0"} for s in statuses.values()), statuses
    found = shared.state.records_with(BELIEF)
    assert [r["origin"] for r in found] == ["owner"]
    assert shared.state.hook_errors == ""
