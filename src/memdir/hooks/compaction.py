"""PreCompact and PostCompact: checkpoint the session, idempotently, and never block.

PreCompact records one checkpoint per compaction (a second PreCompact for the same pending
compaction is a no-op) and starts a new read generation; SessionStart with ``source: compact``
then re-injects the rules. When a host skips PreCompact, PostCompact or SessionStart(compact)
starts the generation instead (case B36). Neither returns a decision: blocking compaction
would leave a full context stuck. Gemini CLI fires PreCompress before every model request, so
there only the ones that will really compress count (:mod:`memdir.hooks.gemini_compress`).

Imports: standard library and the kernel only.
"""

from __future__ import annotations

from memdir.hooks.context import Context
from memdir.hooks.payload import HookEvent, HookResult
from memdir.kernel import session
from memdir.kernel.clock import now_iso


def handle(event: HookEvent, context: Context) -> HookResult | None:
    """Record the compaction in the session's state; return nothing."""
    if event.host == "gemini" and event.name == "PreCompact":
        from memdir.hooks.gemini_compress import compressing

        if not compressing(event.raw, context.project):
            return (
                None  # Gemini fires PreCompress before every request; this one compresses nothing
            )
    with session.editing(context.store, event.session, context.remaining()) as state:
        if event.name == "PreCompact":
            if state.get("pending_compact"):
                return None
            state["pending_compact"] = True
            state["generation"] += 1
            state["compactions"].append(
                {
                    "at": now_iso(),
                    "trigger": event.source or "auto",
                    "generation": state["generation"],
                    "reads": len(state["reads"]),
                    "written": len(state["written"]),
                }
            )
        elif not state.get("pending_compact"):
            state["generation"] += 1  # PostCompact without a PreCompact: evict reads now
            state["compactions"].append(
                {
                    "at": now_iso(),
                    "trigger": event.source or "auto",
                    "generation": state["generation"],
                    "note": "PreCompact did not run",
                }
            )
            state["pending_compact"] = True  # SessionStart(compact) will not bump again
    return None
