"""``records/index.json``: a generated catalogue of every record, for tools that read files.

Talewell keeps a generated, rebuildable ``memory/index.json`` beside its records so that a tool
with no SQLite (a shell script, an editor plugin, an LLM reading the folder) can see every
belief at once. memdir writes the same kind of file at ``records/index.json`` on every
``memdir reindex``; the SQLite index stays what recall reads. The file is derived: git ignores
it (the store's ``.gitignore`` for new stores, ``.git/info/exclude`` for older ones) and
``reindex`` rewrites it whole, atomically. It reflects the store as of its ``generated_at``.

Shape::

    {"schema": "memdir-catalogue/1", "generated_at": "2026-12-03T20:40:00Z",
     "count": 2, "records": [{"id", "kind", "status", "text", "aliases", "tags",
     "importance", "observedAt", "updated_at", "entity_type", "path"}, …]}

Records come by kind, then id. Secrets typed into a record by hand are masked, as in every
export (DESIGN §4).

Imports: standard library, the kernel and :mod:`memdir.store.bulk` (masking).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from memdir.kernel.base.atomic import write_text_atomic
from memdir.kernel.base.clock import now_iso
from memdir.kernel.base.model import relative_path
from memdir.kernel.index import doc_record
from memdir.kernel.storage.lifecycle import Handle
from memdir.store.bulk import masked

CATALOGUE = "records/index.json"
"""The catalogue's path inside the store."""
SCHEMA = "memdir-catalogue/1"


def entry(doc: dict[str, Any]) -> dict[str, Any]:
    """Return one record's catalogue entry from its indexed document (masked)."""
    record = masked(doc_record(doc))
    source = record.source if isinstance(record.source, dict) else {}
    return {
        "id": record.id,
        "kind": record.kind,
        "status": record.status,
        "text": record.text,
        "aliases": list(record.aliases),
        "tags": list(record.tags),
        "importance": record.importance,
        "observedAt": record.observed_at,
        "updated_at": record.updated_at,
        "entity_type": source.get("entity_type"),
        "path": relative_path(record),
    }


def write(handle: Handle) -> Path:
    """Write ``records/index.json`` for every record the index holds; return its path.

    Args:
        handle: The open store, its index up to date.

    Returns:
        The catalogue's absolute path.

    Raises:
        OSError: the file cannot be written.
    """
    docs = handle.index.list_docs(newest_first=False)
    entries = sorted((entry(doc) for doc in docs), key=lambda e: (e["kind"], e["id"]))
    body = {"schema": SCHEMA, "generated_at": now_iso(), "count": len(entries), "records": entries}
    path = handle.store / CATALOGUE
    path.parent.mkdir(parents=True, exist_ok=True)
    ignore(handle.store)
    write_text_atomic(path, json.dumps(body, ensure_ascii=False, indent=1) + "\n")
    return path


def ignore(store: Path) -> None:
    """Make git ignore the catalogue in a store made before it existed (idempotent).

    New stores list it in their ``.gitignore``; an older store gets the line in its own
    ``.git/info/exclude``, which is never committed, so no teammate's clone changes.
    """
    ignored = store / ".gitignore"
    if ignored.exists() and CATALOGUE in ignored.read_text(encoding="utf-8").split():
        return
    exclude = store / ".git" / "info" / "exclude"
    if not exclude.parent.is_dir():
        return
    lines = exclude.read_text(encoding="utf-8").split("\n") if exclude.exists() else []
    if f"/{CATALOGUE}" in lines:
        return
    text = "\n".join(line for line in lines if line) + ("\n" if any(lines) else "")
    write_text_atomic(exclude, text + f"/{CATALOGUE}\n")
