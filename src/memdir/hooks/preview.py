"""``memdir hook EVENT --preview``: show a person exactly what the agent would be given.

The same digest, recall, rules and read gate the hooks use, computed from the store and the
session's saved state, with nothing written: no journal turn, no record, no session change, no
background process. What a real hook would *store* (an explicit "remember that…" in the prompt)
is shown as what it would store. The payload is read from stdin like a hook's (any host's
shape, with ``--host``); ``--prompt TEXT`` and ``--session ID`` fill the usual fields without
one.

Imports: standard library and the kernel only.
"""

from __future__ import annotations

from memdir.hooks.context import Context
from memdir.hooks.payload import HookEvent, HookResult
from memdir.kernel.index import digest
from memdir.kernel.storage import session

PREVIEWED = ("SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolBatch")
"""Events that can give the agent something; the others never answer the host."""


def _session_start(event: HookEvent, context: Context) -> HookResult | None:
    from memdir.hooks.session_start import recent_files

    source = event.source or "startup"
    state = session.load(context.store, event.session)
    injection = digest.session_digest(
        context.index,
        project=context.project,
        files=recent_files(state),
        budget_tokens=context.settings.digest_tokens,
        compacted=source in ("compact", "clear"),
        exclude=state["injected"] if source == "resume" else (),
        demoted=digest.demoted_ids(context.store),
        served=context.served,
    )
    return HookResult(context=injection.text) if injection.text else None


def _prompt(event: HookEvent, context: Context) -> HookResult | None:
    from memdir.kernel.base.explicit import find_requests

    if not event.prompt.strip():
        return None
    state = session.load(context.store, event.session)
    notes = [
        f'memdir would store ({request.kind}): "{request.text}"'
        for request in find_requests(event.prompt)[:3]
    ]
    settings = context.settings
    injection = digest.prompt_recall(
        context.index,
        event.prompt,
        budget_tokens=settings.prompt_tokens,
        min_score=settings.prompt_min_score,
        exclude=state["injected"],
        notes=[*notes, *state["reminders"]],
        demoted=digest.demoted_ids(context.store),
        preamble=not state.get("preambled"),
        served=context.served,
    )
    return HookResult(context=injection.text) if injection.text else None


def _pre_tool(event: HookEvent, context: Context) -> HookResult | None:
    from memdir.hooks.pre_tool_use import _target, refusal

    if event.subagent or context.settings.duplicate_read == "off":
        return None
    rel, how = _target(event, context)
    if rel is None:
        return None
    seen = session.observe(context.project / rel)
    if seen is None:
        return None
    state = session.load(context.store, event.session)
    if not session.deny_applies(state, {"e": "deny", "rel": rel, **seen}):
        return None
    reason = refusal(rel, int(state["reads"][rel].get("tokens", 0)), how)
    if context.settings.duplicate_read == "warn":
        return HookResult(context=reason)
    return HookResult(deny_reason=reason)


def _batch(event: HookEvent, context: Context) -> HookResult | None:
    injection = digest.top_rules(
        context.index,
        project=context.project,
        budget_tokens=context.settings.rules_tokens,
        served=context.served,
    )
    return HookResult(context=injection.text) if injection.text else None


def preview(event: HookEvent, context: Context) -> HookResult | None:
    """Return what the hook for ``event`` would give the agent now, writing nothing.

    Args:
        event: The canonical event (from the payload on stdin and the options).
        context: The store's context; only read.

    Returns:
        The result a hook would answer with, or ``None`` when it would stay silent. For
        PostToolBatch this is the rules block shown every ``[hooks] resurface_every`` batches.
    """
    handlers = {
        "SessionStart": _session_start,
        "UserPromptSubmit": _prompt,
        "PreToolUse": _pre_tool,
        "PostToolBatch": _batch,
    }
    handler = handlers.get(event.name)
    return handler(event, context) if handler else None
