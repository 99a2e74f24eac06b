"""Acting on many records at once: forget by tag or by query, with a preview first.

wolfmem forgets with one line (``wolfmem forget "[坑]"``); memdir does the same through the
normal lifecycle, one :func:`memdir.service.forget` per record, so every record keeps its file
and history, every change is in the audit log, and a coding agent's request on the owner's
records becomes a proposal the owner decides in ``memdir review`` (DESIGN §4).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from memdir import service
from memdir.kernel.base.caller import Caller
from memdir.kernel.base.errors import UsageError
from memdir.kernel.base.model import Record
from memdir.kernel.storage.lifecycle import Written

LIVE = ("active", "candidate")
"""Statuses a bulk forget can retire (the others are already out of recall)."""

MAX_SELECTED = 500
"""Most records one bulk forget may select; more means the selection is too broad."""


def select(store: Path, *, tags: Sequence[str] = (), match: str | None = None) -> list[Record]:
    """Return the live records a bulk forget would retire.

    Args:
        store: The store folder.
        tags: Records carrying one of these tags (``[坑]``, ``坑`` and ``#坑`` are one tag).
        match: Records recall returns for this query (active and candidates, best first).

    Returns:
        The records, newest first for ``tags``, best first for ``match``; empty when none.

    Raises:
        UsageError: neither or both of ``tags`` and ``match`` were given, or more than
            :data:`MAX_SELECTED` records match.
    """
    if bool(tags) == (match is not None):
        raise UsageError("give either --tag or --match (or a record ID)")
    if match is not None:
        found = service.recall(
            store,
            match,
            limit=MAX_SELECTED + 1,
            include_candidates=True,
            include_user=False,
            count_hits=False,
        )
        records = [service.get(store, hit.doc["id"]) for hit in found.hits]
    else:
        records = service.list_records(store, statuses=LIVE, tags=tags)
    if len(records) > MAX_SELECTED:
        raise UsageError(f"more than {MAX_SELECTED} records match; narrow the tag or the query")
    return records


def forget_all(
    store: Path, records: Sequence[Record], reason: str | None, caller: Caller
) -> list[Written]:
    """Forget each record in turn; return what each call did.

    Args:
        store: The store folder.
        records: What :func:`select` returned (and the person confirmed).
        reason: Why, written on every record.
        caller: Who is acting; an agent's forget of an owner's record is a proposal.

    Returns:
        One :class:`Written` per record, in order.

    Raises:
        LockTimeoutError, GitError, OSError: from a write; the records before it are retired.
    """
    return [service.forget(store, r.id, reason, caller=caller) for r in records]
