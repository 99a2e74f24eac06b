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


def handle(event: HookEvent, context: Context) -> HookResult | None:
    """Record the compaction in the session's state; return nothing."""
    if event.host == "gemini" and event.name == "PreCompact":
        from memdir.hooks.gemini_compress import compressing

        if not compressing(event.raw, context.project):
            return (
                None  # Gemini fires PreCompress before every request; this one compresses nothing
            )
    trigger = event.source or "auto"
    session.record(
        context.store, event.session, {"e": "compact", "name": event.name, "trigger": trigger}
    )
    return None
