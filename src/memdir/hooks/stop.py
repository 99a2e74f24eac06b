"""Stop: journal the assistant's last message; queue a reminder to write memory. Never blocks.

Stop fires at the end of every turn. The answer is the payload's ``last_assistant_message``
(Gemini CLI: ``prompt_response``); when a host sends only the common fields, it is the last
assistant message in ``transcript_path`` (Claude Code's JSONL transcript). When the session has
changed files and no belief was written (by ``memdir remember``/``correct``, the MCP tools under
any host's name for them, a save the MCP server marked for this session
(:mod:`memdir.kernel.storage.saves`), or an explicit request in a prompt), a reminder is queued once
for the next prompt. Stopping is never blocked: a memory
tool must not hold a person's session hostage.

Imports: standard library and the kernel only.
"""

from __future__ import annotations

import contextlib
import os
import stat
import sys
import time
from pathlib import Path

from memdir.hooks.context import Context
from memdir.hooks.payload import HookEvent, HookResult
from memdir.kernel.base.errors import MemdirError
from memdir.kernel.hostio.hookio import text_field
from memdir.kernel.storage import journal, paths, saves, session

TYPE_CHECKING = False  # the hook path never imports typing (start-up cost)
if TYPE_CHECKING:
    from typing import Any


TRANSCRIPT_TAIL_BYTES = 1024 * 1024
"""How much of a transcript's end is read to find the last assistant message."""
MESSAGE_CHARS = 64 * 1024


def _text_of(message: Any) -> str:
    """Return the text blocks of a transcript message's content, joined."""
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts = [
        block.get("text", "")
        for block in content
        if isinstance(block, dict) and block.get("type") == "text"
    ]
    return "\n\n".join(p for p in parts if isinstance(p, str) and p.strip())


def answer_key(answer: str) -> int:
    """Return a CRC-32 of an answer (never 0), to know one already journaled in this session."""
    import zlib

    return zlib.crc32(answer.strip().encode("utf-8", "replace")) or 1


def last_assistant_message(transcript: str) -> str:
    """Return the newest main-agent assistant text in a JSONL transcript ("" if none).

    Reads Claude Code's transcript rows, Copilot CLI's ``events.jsonl`` rows and Factory
    Droid's session rows. In Copilot's file a ``user.message`` newer than every answer means this
    turn's answer is not written yet: "" then, never the previous turn's answer.

    Only the transcript's last :data:`TRANSCRIPT_TAIL_BYTES` are read; lines that are not JSON,
    sidechain (subagent) lines and assistant lines holding only tool calls are skipped.

    Args:
        transcript: The payload's ``transcript_path`` (a ``.jsonl`` file).
    """
    path = Path(transcript)
    if not transcript or path.suffix != ".jsonl" or not path.is_absolute():
        return ""
    try:
        with path.open("rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                return ""
            handle.seek(max(size - TRANSCRIPT_TAIL_BYTES, 0))
            lines = handle.read().splitlines()
    except OSError:
        return ""
    import json

    for raw in reversed(lines):
        try:
            row = json.loads(raw)
        except ValueError:
            continue
        if not isinstance(row, dict):
            continue
        data = row.get("data")
        if row.get("type") == "user.message":
            return ""  # Copilot CLI: this turn's answer is not written yet
        if row.get("type") == "assistant.message" and isinstance(data, dict):
            # Copilot CLI's events.jsonl: {"type": "assistant.message", "data": {"content": …}}
            content = data.get("content")
            if isinstance(content, str) and content.strip() and not data.get("parentToolCallId"):
                return content[:MESSAGE_CHARS]
            continue
        message = row.get("message")
        if row.get("type") == "message" and isinstance(message, dict):
            # Factory Droid's session JSONL: {"type": "message", "message": {"role": …}}
            text = _text_of(message) if message.get("role") == "assistant" else ""
            if text.strip():
                return text[:MESSAGE_CHARS]
            continue
        if row.get("type") != "assistant" or row.get("isSidechain"):
            continue
        text = _text_of(row.get("message"))
        if text.strip():
            return text[:MESSAGE_CHARS]
    return ""


def handle(event: HookEvent, context: Context) -> HookResult | None:
    """Journal the turn's answer and maybe queue a reminder; return nothing."""
    if event.subagent:
        return None
    state = session.load(context.store, event.session)
    answer = event.last_message
    if not answer.strip():  # hosts that send only the common fields: read the transcript
        transcript = text_field(event.raw, "transcript_path")
        answer = last_assistant_message(transcript)
        # Copilot CLI fires agentStop before it writes the turn's answer to events.jsonl
        # (seen with 1.0.102), and the newest answer there may still be the previous turn's:
        # look again a few times, within the hook's budget.
        tries = 10 if event.host == "copilot" else 0
        while (not answer.strip() or answer_key(answer) == state["answer"]) and tries:
            if context.remaining() <= 0.5:
                break
            time.sleep(0.1)
            tries -= 1
            answer = last_assistant_message(transcript)
    key = answer_key(answer) if answer.strip() else 0
    if key and key != state["answer"]:  # never the previous turn's answer a second time
        with contextlib.suppress(MemdirError):  # nothing left after private spans: no turn
            journal.append_turn(context.store, "assistant", answer, session=event.session)
    context.kept()
    stop: dict[str, Any] = {"e": "stop"}  # the fold queues the reminder
    if key:
        stop["answer"] = key
    if state["written"] and not state["beliefs"] and not state["reminded"]:
        # A save through the MCP server, under whatever name the host gave the tool.
        stop["saved"] = saves.count_for(context.store, event.session, str(state["started_at"])) > 0
    session.record(context.store, event.session, stop)
    if answer.strip() and _observer_due(context):
        _spawn_observer(context)
    if not context.read_only:
        from memdir.kernel.storage import upkeep

        upkeep.spawn_if_due(context.store, context.settings)  # logs, map, hygiene when due
    return None


OBSERVER_MARK = "observer.spawned"


def _observer_due(context: Context) -> bool:
    """Whether a background observer pass is due; claims it (at most one per interval)."""
    every = context.settings.observe_every_seconds
    if every <= 0:
        return False
    mark = paths.layout(context.store).state_path(OBSERVER_MARK)
    try:
        if time.time() - mark.stat().st_mtime < every:
            return False
    except FileNotFoundError:
        pass
    mark.touch()
    return True


def _spawn_observer(context: Context) -> None:
    import subprocess  # only when a pass is due

    subprocess.Popen(
        [sys.executable, "-m", "memdir", "observe", "--once", "--store", str(context.store)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        env={**os.environ},
    )
