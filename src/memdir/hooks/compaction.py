"""PreCompact and PostCompact: one checkpoint per compaction, in any host's order; never block.

Hosts fire a compaction's events in different orders: Claude Code PreCompact →
SessionStart(``compact``) → PostCompact; Codex PreCompact → PostCompact (then SessionStart
``resume`` and ``compact`` on ``exec resume``); Gemini CLI only PreCompress (mapped to
PreCompact), from inside a turn, before *every* model request, so an automatic one counts only
when Gemini will really compress (:func:`gemini_compresses`); a host may skip PreCompact. So a
compaction is *open* from its first event until the session does something else (a prompt or a
tool call): every later compaction event while it is open belongs to it, and records nothing
new. A PreCompact seen after the open compaction's PostCompact starts the next compaction.

The first event of a compaction records its checkpoint (reads and writes so far) and starts a
new read generation, so the duplicate-read gate never refuses a file whose earlier read was
compacted away (case B36); SessionStart with ``source: compact`` then re-injects the rules.
Neither event returns a decision: blocking compaction would leave a full context stuck.

Imports: standard library and the kernel only.
"""

from __future__ import annotations

import os
from pathlib import Path

from memdir.hooks.context import Context
from memdir.hooks.payload import HookEvent, HookResult
from memdir.kernel import session
from memdir.kernel.clock import now_iso
from memdir.kernel.hookio import text_field

TYPE_CHECKING = False  # the hook path never imports typing (start-up cost)
if TYPE_CHECKING:
    from typing import Any


def _activity(state: dict[str, Any]) -> list[int]:
    return [int(state["prompts"]), int(state["tool_calls"])]


def join_compaction(state: dict[str, Any], step: str, trigger: str) -> bool:
    """Count one compaction event (``PreCompact``, ``SessionStart``, ``PostCompact``).

    Args:
        state: The session's state, being edited.
        step: Which event of a compaction this is.
        trigger: ``manual``/``auto`` (or the SessionStart source), kept on the checkpoint.

    Returns:
        Whether this event began a new compaction (a checkpoint was recorded and the read
        generation moved on); ``False`` when it belongs to the compaction already open.
    """
    pending = state.get("pending_compact")
    if isinstance(pending, dict) and pending.get("activity") == _activity(state):
        steps = pending.setdefault("steps", [])
        if not (step == "PreCompact" and ("PostCompact" in steps or "SessionStart" in steps)):
            if step not in steps:
                steps.append(step)
            return False
    state["generation"] += 1
    checkpoint: dict[str, Any] = {
        "at": now_iso(),
        "trigger": trigger or "auto",
        "generation": state["generation"],
        "reads": len(state["reads"]),
        "written": len(state["written"]),
    }
    if step != "PreCompact":
        checkpoint["note"] = "PreCompact did not run"
    state["compactions"].append(checkpoint)
    state["pending_compact"] = {"activity": _activity(state), "steps": [step]}
    return True


GEMINI_WINDOW = 1_048_576
GEMMA_WINDOW = 256_000
GEMINI_THRESHOLD = 0.5
TRANSCRIPT_TAIL_BYTES = 1024 * 1024


def _gemini_threshold(project: Path) -> float:
    """Gemini CLI's ``model.compressionThreshold`` (project settings, then the user's)."""
    import json

    for settings in (project / ".gemini" / "settings.json", Path.home() / ".gemini/settings.json"):
        try:
            value = json.loads(settings.read_text(encoding="utf-8"))["model"][
                "compressionThreshold"
            ]
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if isinstance(value, (int, float)) and 0 < value <= 1:
            return float(value)
    return GEMINI_THRESHOLD


def gemini_compresses(transcript: str, project: Path) -> bool:
    """Whether Gemini CLI's automatic PreCompress will really compress the chat.

    Gemini CLI fires PreCompress before *every* model request, and compresses only when the
    last prompt's token count reaches ``model.compressionThreshold`` (default 0.5) of the
    model's window (0.61.0, ``ChatCompressionService.compress``). That count is in its session
    transcript (the last ``gemini`` message's ``tokens.input``), so memdir makes the same test.
    An unreadable transcript reads as "no compression": the common case is a no-op, and a
    missed one costs at most one refused re-read, which its retry passes.

    Args:
        transcript: The payload's ``transcript_path``.
        project: The project root (for its ``.gemini/settings.json``).
    """
    import json

    path = Path(transcript)
    if not transcript or not path.is_absolute():
        return False
    try:
        with path.open("rb") as handle:
            handle.seek(max(os.fstat(handle.fileno()).st_size - TRANSCRIPT_TAIL_BYTES, 0))
            lines = handle.read().splitlines()
    except OSError:
        return False
    for raw in reversed(lines):
        try:
            row = json.loads(raw)
        except ValueError:
            continue
        if not isinstance(row, dict) or row.get("type") != "gemini":
            continue
        tokens = row.get("tokens")
        if not isinstance(tokens, dict):
            continue
        used = tokens.get("input")
        if not isinstance(used, int):
            return False
        window = GEMMA_WINDOW if "gemma" in str(row.get("model", "")).lower() else GEMINI_WINDOW
        return used >= _gemini_threshold(project) * window
    return False


def handle(event: HookEvent, context: Context) -> HookResult | None:
    """Record the compaction in the session's state; return nothing."""
    if event.host == "gemini" and event.name == "PreCompact" and event.source != "manual":
        transcript = text_field(event.raw, "transcript_path")
        if not gemini_compresses(transcript, context.project):
            return None  # Gemini's PreCompress before a request it will not compress
    with session.editing(context.store, event.session, context.remaining()) as state:
        join_compaction(state, event.name, event.source)
    return None
