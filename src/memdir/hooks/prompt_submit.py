"""UserPromptSubmit: journal the prompt, store explicit requests, remind, recall.

1. The prompt goes to the journal, secrets masked and ``<private>`` spans dropped first.
2. A sentence that asks to remember something ("remember that…", "from now on…", "记住…")
   is the owner speaking: it is written as an ``owner`` record citing the journal line
   (DESIGN §8). A secret or a rejected belief is refused, and the agent is told so. The
   requests are spooled first (:mod:`memdir.kernel.storage.spool`): when this hook runs out of time
   or the store is busy, the next hook run, the observer or ``memdir health`` stores them.
3. Reminders queued by Stop are delivered once.
4. Records the prompt earns are injected (:func:`memdir.kernel.digest.prompt_recall`: never
   on weak words alone, never a near-duplicate, never what the session already holds), the
   fence's preamble only once per context (again after a compaction or ``/clear``).

Imports: standard library and the kernel only.
"""

from __future__ import annotations

from memdir.hooks.context import Context
from memdir.hooks.payload import HookEvent, HookResult
from memdir.hooks.tools import has_error_text
from memdir.kernel.base.caller import Caller
from memdir.kernel.base.errors import MemdirError
from memdir.kernel.base.explicit import find_requests
from memdir.kernel.index import digest
from memdir.kernel.lang.redact import redact
from memdir.kernel.lang.text import estimate_tokens
from memdir.kernel.storage import hits, journal, saves, session


def _store_requests(
    event: HookEvent, context: Context, citation: str
) -> tuple[list[str], list[str]]:
    notes: list[str] = []
    stored: list[str] = []
    requests = find_requests(event.prompt)[:3]
    if not requests:
        return notes, stored
    from memdir.kernel.storage import lifecycle, spool  # only when the person asked to remember

    # Kept first: a hook that runs out of time leaves them for the next run (kernel.spool).
    kept = spool.add(
        context.store,
        [(r.text, r.kind) for r in requests],
        host=event.host,
        session=event.session,
        citation=citation,
    )
    finished = True
    for request in requests:
        if context.expired():
            finished = False
            notes.append(
                f'memdir did not store "{redact(request.text)}" yet: out of time; it will be '
                "stored on memdir's next run"
            )
            continue
        try:
            done = lifecycle.remember(
                context.handle(),
                request.text,
                kind=request.kind,
                caller=Caller("owner", "hook", event.host, event.session),
                journal=citation,
            )
        except MemdirError as err:  # the refused text is shown masked: context ends up in files
            if kept is not None and spool.transient(err):
                finished = False
                notes.append(
                    f'memdir did not store "{redact(request.text)}" yet: {err}; it will be '
                    "stored on memdir's next run"
                )
            else:
                notes.append(f'memdir did not store "{redact(request.text)}": {err}')
            continue
        verb = "stored" if done.created else "already knew (updated)"
        notes.append(f'memdir {verb} {done.record.id} ({done.record.kind}): "{done.record.text}"')
        if done.conflicts:  # both kept: the person decides which one holds
            notes.append(f"memdir: {done.note}")
        stored.append(done.record.id)
    if finished:
        spool.done(kept)
    return notes, stored


def handle(event: HookEvent, context: Context) -> HookResult | None:
    """Journal, store, remind and recall for one prompt; return what to inject."""
    if not event.prompt.strip():
        return None
    citation = ""
    try:
        ref = journal.append_turn(context.store, "user", event.prompt, session=event.session)
        citation = f"{ref.file}:{ref.offset}-{ref.offset + ref.length}"
    except MemdirError:
        pass  # a prompt that is empty once private spans are dropped is not journaled
    context.kept()
    notes, stored = _store_requests(event, context, citation)
    state = session.load(context.store, event.session)
    reminders = list(state["reminders"])
    # The context already holds what was injected, stored from its prompts, or saved by the
    # agent itself through MCP (kernel.storage.saves): none of it is injected again.
    saved = saves.ids_for(context.store, event.session, str(state["started_at"]))
    seen = [*state["injected"], *stored, *(i for i in saved if i)]
    change = {"e": "prompt", "beliefs": len(stored), "delivered": len(reminders)}
    if session.model_of(event.raw):
        change["model"] = session.model_of(event.raw)  # the ledger is priced per model
    if has_error_text(event.prompt):
        change["error"] = True  # an edit after it is a fix (the bug nudge)
    session.record(context.store, event.session, change)
    settings = context.settings
    injection = digest.prompt_recall(
        context.index,
        event.prompt,
        budget_tokens=settings.prompt_tokens,
        min_score=settings.prompt_min_score,
        exclude=seen,
        notes=[*notes, *reminders],
        demoted=digest.demoted_ids(context.store),
        preamble=not state.get("preambled"),
        user_index=context.user_index,
        served=context.served,
        user_served=context.user_served,
    )
    if not injection.text:
        return None
    shown = {
        "e": "inject",
        "ids": [*stored, *injection.ids],
        "tokens": estimate_tokens(injection.text),
        "preamble": not state.get("preambled"),
        "withheld": injection.withheld,
    }
    session.record(context.store, event.session, shown)
    hits.note(context.store, injection.ids, "inject")
    return HookResult(context=injection.text)
