"""PreCompact and PostCompact: one checkpoint per compaction, in any host's order; never block.

Hosts fire a compaction's events in different orders: Claude Code PreCompact →
SessionStart(``compact``) → PostCompact; Codex PreCompact → PostCompact (then SessionStart
``resume`` and ``compact`` on ``exec resume``); Gemini CLI only PreCompress (mapped to
PreCompact), from inside a turn, before *every* model request, so there only one that will
really compress counts (:mod:`memdir.hooks.gemini_compress`); a host may skip PreCompact. So a
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

from memdir.hooks.context import Context
from memdir.hooks.payload import HookEvent, HookResult
from memdir.kernel import session
from memdir.kernel.clock import now_iso

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


def handle(event: HookEvent, context: Context) -> HookResult | None:
    """Record the compaction in the session's state; return nothing."""
    if event.host == "gemini" and event.name == "PreCompact":
        from memdir.hooks.gemini_compress import compressing

        if not compressing(event.raw, context.project):
            return None  # Gemini's PreCompress before a request it will not compress
    with session.editing(context.store, event.session, context.remaining()) as state:
        join_compaction(state, event.name, event.source)
    return None
