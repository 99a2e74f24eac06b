"""PostToolBatch: re-surface the top rules every ``[hooks] resurface_every`` batches.

Instruction-following decays within a long session, not with file size; a short reminder of
the owner's rules every N tool batches (default 25, DESIGN §6) costs a few dozen tokens.

Imports: standard library and the kernel only.
"""

from __future__ import annotations

from memdir.hooks.context import Context
from memdir.hooks.payload import HookEvent, HookResult
from memdir.kernel.index import digest
from memdir.kernel.lang.text import estimate_tokens
from memdir.kernel.storage import session


def handle(event: HookEvent, context: Context) -> HookResult | None:
    """Count the batch; every N batches return the rules."""
    if event.subagent:
        return None
    every = context.settings.resurface_every
    offset = session.record(context.store, event.session, {"e": "batch"})
    batches = session.load(context.store, event.session, before=offset)["batches"] + 1
    due = every > 0 and batches % every == 0
    if not due:
        return None
    injection = digest.top_rules(
        context.index,
        project=context.project,
        budget_tokens=context.settings.rules_tokens,
        served=context.served,
    )
    if not injection.text:
        return None
    tokens = estimate_tokens(injection.text)
    session.record(context.store, event.session, {"e": "inject", "ids": [], "tokens": tokens})
    return HookResult(context=injection.text)
