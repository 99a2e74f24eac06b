"""SessionStart: inject the session digest; after compaction or /clear, evict earlier reads.

``source`` is ``startup``, ``resume``, ``clear``, ``compact`` (or ``fork``). A resumed session
keeps its state (case B37), and its digest leaves out what the resumed context already holds
(nothing at all when nothing new would be shown). ``clear`` starts a new read generation, and
``compact`` joins the compaction in progress (:func:`memdir.hooks.compaction.join_compaction`:
one checkpoint per compaction, whatever the order of its events), so the duplicate-read gate
never refuses a file whose earlier read is no longer in context, and the rules are re-injected
even when PreCompact never ran (case B36).

Imports: standard library and the kernel only.
"""

from __future__ import annotations

import os
import sys

from memdir.hooks.context import Context
from memdir.hooks.payload import HookEvent, HookResult
from memdir.kernel.index import digest
from memdir.kernel.lang.text import estimate_tokens
from memdir.kernel.storage import session

TYPE_CHECKING = False  # the hook path never imports typing (start-up cost)
if TYPE_CHECKING:
    from memdir.kernel.storage.session import SessionState

RECENT_FILES = 12


def _spawn_reindex(context: Context) -> None:
    """Start a detached ``memdir reindex`` when records exist that the index has never seen."""
    import subprocess  # rare: only for a store whose index was never built

    records = context.store / "records"
    if not records.is_dir() or not any(records.rglob("*.md")):
        return
    subprocess.Popen(
        [sys.executable, "-m", "memdir", "reindex", "--store", str(context.store)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        env={**os.environ},
    )


def recent_files(state: SessionState) -> list[str]:
    """Return the files this session wrote, then read, newest first (at most a dozen)."""
    recent = list(reversed(state["written"]))[:RECENT_FILES]
    recent += [p for p in reversed(list(state["reads"])) if p not in recent][
        : RECENT_FILES - len(recent)
    ]
    return recent


def handle(event: HookEvent, context: Context) -> HookResult | None:
    """Update the session's state and return the digest to inject."""
    source = event.source or "startup"
    fresh_context = source in ("compact", "clear")
    start: dict[str, object] = {"e": "start", "source": source}
    if session.model_of(event.raw):
        start["model"] = session.model_of(event.raw)  # the ledger is priced per model
    session.record(context.store, event.session, start)
    state = session.load(context.store, event.session)
    recent = recent_files(state)
    already = list(state["injected"]) if source == "resume" else []  # what its context holds
    index = context.index
    if not index.list_docs(limit=1) and not index.file_stats():
        _spawn_reindex(context)
        return None
    settings = context.settings
    warnings: list[str] = []
    if source == "startup":  # once per session: a resumed or compacted one was told already
        from memdir.kernel.storage import manifest

        warnings = [
            f"Write budget: {w['message']}; {w['fix']}."
            for w in manifest.budget_warnings(
                settings,
                index.count_by("kind", status="active"),
                index.count_by("status").get("candidate", 0),
                manifest.map_files(context.store),
            )
        ]
    injection = digest.session_digest(
        index,
        project=context.project,
        files=recent,
        budget_tokens=settings.digest_tokens,
        compacted=fresh_context,
        exclude=already,
        mirrored=digest.mirrored_ids(context.store) if event.host == "claude-code" else frozenset(),
        demoted=digest.demoted_ids(context.store),
        pinned_tokens=settings.pinned_tokens,
        extra_notes=warnings,
        # path-scoped beliefs come back for every file the session touched (after a compaction
        # the host has dropped them with the reads they came with)
        touched=list(dict.fromkeys([*state["written"], *state["reads"]])),
        user_index=context.user_index,
        served=context.served,
        user_served=context.user_served,
    )
    if not context.read_only:
        digest.scoped_docs(index, context.store)  # the list PostToolUse reads (path scopes)
    if source == "startup" and not context.read_only:
        from memdir.kernel.storage import upkeep

        upkeep.spawn_if_due(context.store, settings)  # the map's stale-gated rescan, when due
    if not injection.text:
        return None
    shown = {
        "e": "inject",
        "ids": injection.ids,
        "tokens": estimate_tokens(injection.text),
        "preamble": True,  # the digest opens with the fence's header
    }
    session.record(context.store, event.session, shown)
    return HookResult(context=injection.text)
