"""Capacity, the honest way: ``[policy] max_active`` demotes beliefs out of injection only.

wolfmem evicts past 800 facts: the oldest are deleted. memdir never deletes evidence. When a
kind has more active beliefs than its ``max_active`` (``[policy] max_active = { fact = 800 }``
in ``memdir.toml``), the ones past the cap, ranked least important first, then least recalled
(:mod:`memdir.kernel.storage.hits`), then least recently recalled or updated, are *demoted*:
the session digest and per-prompt injection leave them out, while ``memdir recall``, MCP
``memory_recall``, ``list`` and the history keep them, unchanged and active. ``memdir dream``
says which and why.

The demoted ids are written to ``state/demoted.json`` (machine-local) so that the hooks read one
small file instead of ranking the store on every prompt. :func:`refresh` rewrites it; ``memdir
reindex``, ``health`` and ``remember`` (when a cap is set) call it.

Imports: standard library and the kernel.
"""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass, field
from typing import Any

from memdir.kernel.base.atomic import write_text_atomic
from memdir.kernel.base.clock import now_iso
from memdir.kernel.base.layout import layout
from memdir.kernel.index.digest import DEMOTED
from memdir.kernel.storage import hits
from memdir.kernel.storage.lifecycle import Handle


@dataclass
class Capacity:
    """Per capped kind: how many are active, the cap, and the ids demoted (least kept first)."""

    by_kind: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def demoted(self) -> list[str]:
        """Every demoted id, kind by kind."""
        return [i for entry in self.by_kind.values() for i in entry["demoted"]]

    def to_json(self) -> dict[str, Any]:
        """Return ``{"by_kind": {kind: {"active", "cap", "demoted": [ids]}}, "ids": [...]}``."""
        return {"by_kind": self.by_kind, "ids": self.demoted}


def rank_key(doc: dict[str, Any], stats: dict[str, dict[str, object]]) -> tuple[Any, ...]:
    """Return the sort key that puts the beliefs to keep first (see the module docstring)."""
    seen = stats.get(doc["id"], {})
    last = str(seen.get("last_hit") or "") or str(doc.get("updated_at") or "")
    return (-int(doc.get("importance") or 5), -int(str(seen.get("hits", 0))), _neg(last))


def _neg(text: str) -> tuple[int, ...]:
    return tuple(-ord(ch) for ch in text)


def compute(handle: Handle, *, save_stats: bool = True) -> Capacity:
    """Return what ``[policy] max_active`` demotes in this store now.

    Nothing is written but, with ``save_stats``, the folded recall statistics.
    """
    caps: dict[str, int] = dict(getattr(handle.manifest, "max_active", {}) or {})
    result = Capacity()
    if not caps:
        return result
    stats = hits.fold(handle.store, save=save_stats)
    for kind, cap in sorted(caps.items()):
        docs = handle.index.list_docs(kinds=(kind,), statuses=("active",))
        ranked = sorted(docs, key=lambda d: rank_key(d, stats))
        result.by_kind[kind] = {
            "active": len(docs),
            "cap": cap,
            "demoted": [d["id"] for d in ranked[cap:]],
        }
    return result


def refresh(handle: Handle) -> Capacity:
    """Compute the demotions and write ``state/demoted.json`` for the hooks; return them.

    With no cap configured the file is removed. A store that cannot be written keeps its old
    file (the hooks then use the last demotions written).
    """
    capacity = compute(handle)
    path = layout(handle.store).in_state(DEMOTED)
    with contextlib.suppress(OSError):
        if not capacity.by_kind:
            path.unlink(missing_ok=True)
        else:
            body = {"at": now_iso(), **capacity.to_json()}
            write_text_atomic(path, json.dumps(body, ensure_ascii=False))
    return capacity
