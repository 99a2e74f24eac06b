"""Recall statistics per belief: how often recall returned it, and when last (wolfmem's hits).

Every recall that reaches someone counts: ``memdir recall`` and MCP ``memory_recall`` (``via:
recall``) and per-prompt injection by the prompt hook (``via: inject``). The session digest
does not count: it shows the same standing rules every session, which says nothing about use.

Writers append one JSON line per recall to ``state/recall-hits.jsonl`` (one ``write`` in
append mode: no lock, no read, safe from many processes at once). Readers fold the lines not yet
seen into ``state/recall-stats.json`` (``{"offset": bytes folded, "records": {id: {"hits",
"last_hit", "recalled", "injected"}}}``) and answer from it. Both files are machine-local
(``state/`` is git-ignored) and are kept apart from the index on purpose: the index is derived
from the records and is rebuilt, or moved to PostgreSQL, at will; these counts cannot be derived
from anything and survive both. ``memdir get`` shows them, ``memdir dream`` names active beliefs
never recalled in 90 days, and ``[policy] max_active`` ranks by them.

Imports: standard library only.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterable
from pathlib import Path

from memdir.kernel.base.atomic import write_text_atomic
from memdir.kernel.base.clock import now_iso
from memdir.kernel.base.layout import StoreLayout, layout

LOG = StoreLayout.RECALL_HITS  # in state/
STATS = StoreLayout.RECALL_STATS  # in state/
VIAS = ("recall", "inject")


def note(store: Path, ids: Iterable[str], via: str, at: str | None = None) -> None:
    """Append one recall of ``ids`` to the hits log; never raises (a statistic, not evidence).

    Args:
        store: The store folder.
        ids: Record ids returned, best first (nothing is written when empty).
        via: ``recall`` (CLI, MCP) or ``inject`` (per-prompt injection).
        at: The instant (ISO-8601 UTC); now when ``None``.
    """
    wanted = [i for i in ids if isinstance(i, str) and i]
    if not wanted or via not in VIAS:
        return
    line = json.dumps({"at": at or now_iso(), "via": via, "ids": wanted}) + "\n"
    try:
        fd = os.open(layout(store).state_path(LOG), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, line.encode("utf-8"))
        finally:
            os.close(fd)
    except OSError:
        pass  # a read-only store or a full disk: recall still answers


def fold(store: Path, *, save: bool = True) -> dict[str, dict[str, object]]:
    """Return the statistics per record id, folding in the log lines not yet counted.

    Args:
        store: The store folder.
        save: Write the folded statistics back (False for read-only reports).

    Returns:
        ``{id: {"hits": int, "last_hit": ISO str, "recalled": int, "injected": int}}``; an id
        never recalled is absent.

    A torn last line (a writer still appending) is left for the next fold; a line that is not
    JSON is skipped. The saved stats are rewritten atomically; a store that cannot be written
    still gets the right answer, folded in memory.
    """
    path = layout(store).state_path(STATS)
    try:
        saved = json.loads(path.read_text(encoding="utf-8"))
        offset = int(saved["offset"])
        records: dict[str, dict[str, object]] = dict(saved["records"])
    except (OSError, ValueError, KeyError, TypeError):
        offset, records = 0, {}
    try:
        with open(layout(store).state_path(LOG), "rb") as fh:
            size = fh.seek(0, os.SEEK_END)
            if size < offset:  # the log was replaced: count it again from the start
                offset, records = 0, {}
            fh.seek(offset)
            chunk = fh.read()
    except OSError:
        return records
    end = chunk.rfind(b"\n") + 1
    for raw in chunk[:end].splitlines():
        try:
            line = json.loads(raw)
            at, via, ids = str(line["at"]), str(line["via"]), list(line["ids"])
        except (ValueError, KeyError, TypeError):
            continue
        for record_id in ids:
            entry = records.setdefault(
                str(record_id), {"hits": 0, "last_hit": "", "recalled": 0, "injected": 0}
            )
            entry["hits"] = int(str(entry["hits"])) + 1
            key = "recalled" if via == "recall" else "injected"
            entry[key] = int(str(entry.get(key, 0))) + 1
            entry["last_hit"] = max(str(entry["last_hit"]), at)
    if end and save:
        with contextlib.suppress(OSError):
            write_text_atomic(path, json.dumps({"offset": offset + end, "records": records}))
    return records
