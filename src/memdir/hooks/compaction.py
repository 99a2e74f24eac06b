"""PreCompact and PostCompact: one checkpoint per compaction, in any host's order; never block.

Hosts fire a compaction's events in different orders: Claude Code PreCompact →
SessionStart(``compact``) → PostCompact; Codex PreCompact → PostCompact (then SessionStart
``resume`` and ``compact`` on ``exec resume``); Gemini CLI only PreCompress (mapped to
PreCompact), from inside a turn, before *every* model request, so there only one that will
really compress counts (:mod:`memdir.hooks.gemini_compress`); a host may skip PreCompact. So a
compaction is *open* from its first event until the session does something else (a prompt or a
tool call): every later compaction event while it is open belongs to it, and records nothing
new. A PreCompact seen after the open compaction's PostCompact starts the next compaction
(the fold decides: :func:`memdir.kernel.storage.session.join_compaction`).

The first event of a compaction records its checkpoint (reads and writes so far) and starts a
new read generation, so the duplicate-read gate never refuses a file whose earlier read was
compacted away (case B36); SessionStart with ``source: compact`` then re-injects the rules.
Neither event returns a decision: blocking compaction would leave a full context stuck.

Imports: standard library and the kernel only.
"""

from __future__ import annotations

from memdir.hooks.context import Context
from memdir.hooks.payload import HookEvent, HookResult
from memdir.kernel.storage import session


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
