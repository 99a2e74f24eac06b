"""Write a store's records as a Talewell / AMP repository (``memdir export --to amp DIR``).

Layout (Talewell's README, the AMP protocol): ``amp.json`` (schema version and policy) and a
``memory/`` tree with one Markdown record per file, named ``<id>.md``:

- ``fact``, ``preference``, ``rule``, ``decision``, ``bug`` → ``memory/facts/`` (AMP has no
  folder for memdir's extra kinds; the record's ``kind`` key keeps the memdir kind, which
  ``memdir import --from amp`` reads first);
- ``entity`` → ``memory/entities/<type>/`` (``source.entity_type``, else ``general``);
- ``episode`` → ``memory/episodes/``; ``procedure`` → ``memory/procedures/``.

Front matter carries AMP's keys (``id``, ``kind``, ``aliases``, ``text``, ``origin``,
``importance``, ``observedAt``, ``links``) and then, for memdir's round trip, ``status``,
``tags``, ``supersedes``, ``supersededBy`` and ``reason`` when they say something. A record
memdir imported from AMP gets its AMP id back (``source.amp_id``), with every link and
``[[id]]`` to it rewritten, and its original origin (``source.original_origin``), so
AMP → memdir → AMP gives the same records. ``memory/index.json`` (Talewell's generated
catalogue) is not written; Talewell rebuilds it.

Secrets typed into a record by hand are masked, as in every export (DESIGN §4). By default only
``active`` records are written: an AMP repository has no status, so Talewell treats every file
as a live belief.

Imports: standard library, the kernel and :mod:`memdir.store.bulk` (masking).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memdir.kernel.base.atomic import write_text_atomic
from memdir.kernel.base.errors import UsageError
from memdir.kernel.base.model import Record
from memdir.kernel.index import doc_record
from memdir.kernel.storage import identity
from memdir.kernel.storage.lifecycle import Handle
from memdir.store.bulk import masked

SCHEMA = "amp/1"
FOLDERS = {"entity": "entities", "episode": "episodes", "procedure": "procedures"}
"""memdir kind → ``memory/<folder>``; every other kind goes to ``facts``."""
LINK = re.compile(r"\[\[([^\[\]\s|]+)(\|[^\]]*)?\]\]")
_PLAIN = re.compile(r"^[A-Za-z0-9\u00a0-\uffff][^:#\n\"'\[\]{},]*$")
_SPECIAL = {"true", "false", "null", "yes", "no", "on", "off", "~", ""}


@dataclass
class Exported:
    """What an AMP export wrote."""

    directory: str
    records: int = 0
    by_kind: dict[str, int] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """Return the folder and counts as a JSON object."""
        return {"directory": self.directory, "records": self.records, "by_kind": self.by_kind}


def _scalar(value: str) -> str:
    """Return ``value`` as a YAML scalar: plain when unambiguous, else double-quoted."""
    if (
        _PLAIN.match(value)
        and value == value.strip()
        and value.lower() not in _SPECIAL
        and not re.fullmatch(r"[-+0-9.eE_:]+", value)
    ):
        return value
    return json.dumps(value, ensure_ascii=False)


def _flow(values: Iterable[str]) -> str:
    return "[" + ", ".join(_scalar(v) for v in values) + "]"


def folder(record: Record) -> str:
    """Return the record's folder inside the repository, e.g. ``memory/entities/person``."""
    if record.kind == "entity":
        kind_type = str(record.source.get("entity_type") or "general")
        kind_type = re.sub(r"[^A-Za-z0-9_.-]+", "-", kind_type).strip(".-") or "general"
        return f"memory/entities/{kind_type}"
    return f"memory/{FOLDERS.get(record.kind, 'facts')}"


def render(record: Record, ids: dict[str, str]) -> str:
    """Return one record as an AMP Markdown file; ``ids`` maps memdir ids to AMP ids."""
    origin = record.origin
    if origin == "import" and record.source.get("original_origin"):
        origin = str(record.source["original_origin"])
    lines = [
        "---",
        f"id: {_scalar(ids.get(record.id, record.id))}",
        f"kind: {record.kind}",
        f"aliases: {_flow(record.aliases)}",
        f"text: {_scalar(record.text)}",
        f"origin: {_scalar(origin)}",
        f"importance: {record.importance}",
        f"observedAt: {_scalar(str(record.observed_at)[:10] or record.created_at[:10])}",
        f"links: {_flow(ids.get(link, link) for link in record.links)}",
    ]
    if record.status != "active":
        lines.append(f"status: {record.status}")
    if record.tags:
        lines.append(f"tags: {_flow(record.tags)}")
    for key, value in (("supersedes", record.supersedes), ("supersededBy", record.superseded_by)):
        if value:
            lines.append(f"{key}: {_scalar(ids.get(value, value))}")
    if record.reason:
        lines.append(f"reason: {_scalar(record.reason)}")
    lines.append("---")
    body = LINK.sub(
        lambda m: f"[[{ids.get(m.group(1), m.group(1))}{m.group(2) or ''}]]", record.body
    )
    text = "\n".join(lines) + "\n"
    if body.strip():
        text += "\n" + body.strip() + "\n"
    return text


def _drop_stale(directory: Path, keep: set[str]) -> None:
    """Remove record files an earlier memdir export wrote that this one does not."""
    try:
        manifest = json.loads((directory / "amp.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return
    if not isinstance(manifest, dict) or manifest.get("generator") != "memdir":
        return
    for path in (directory / "memory").rglob("*.md"):
        if path.stem not in keep:
            path.unlink()


def export(handle: Handle, directory: Path, statuses: Iterable[str] = ("active",)) -> Exported:
    """Write the store's records (of ``statuses``) into ``directory`` as an AMP repository.

    Args:
        handle: The open store.
        directory: The repository folder; created when missing. It must be empty or already
            an AMP repository (``amp.json`` present): files memdir wrote before are replaced.
        statuses: Which records to write (default ``active``; empty = all). Only records of
            this store's scope and project are written, decided in the index query
            (issue 10, mark 4; :func:`memdir.kernel.storage.identity.export_filter`): a file
            copied in from another store is not this store's to export.

    Returns:
        The folder and how many records of each kind were written.

    Raises:
        UsageError: ``directory`` is a file, or a non-empty folder that is not an AMP repository.
    """
    if directory.exists() and not directory.is_dir():
        raise UsageError(f"{directory} is a file; give a folder for the AMP repository")
    if directory.is_dir() and any(directory.iterdir()) and not (directory / "amp.json").is_file():
        raise UsageError(
            f"{directory} is not empty and holds no amp.json; give an empty or new folder"
        )
    wanted = identity.export_filter(handle.store, handle.manifest, statuses)
    records = [
        masked(doc_record(doc)) for doc in handle.index.list_docs(newest_first=False, served=wanted)
    ]
    ids = {
        r.id: str(r.source["amp_id"])
        for r in records
        if isinstance(r.source.get("amp_id"), str) and r.source["amp_id"]
    }
    done = Exported(str(directory))
    _drop_stale(directory, {ids.get(r.id, r.id) for r in records})
    for record in records:
        name = ids.get(record.id, record.id)
        path = directory / folder(record) / f"{name}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomic(path, render(record, ids))
        done.records += 1
        done.by_kind[record.kind] = done.by_kind.get(record.kind, 0) + 1
    manifest = {
        "schema": SCHEMA,
        "generator": "memdir",
        "policy": {"refusedOrigins": ["untrusted", "system"]},
    }
    write_text_atomic(directory / "amp.json", json.dumps(manifest, indent=2) + "\n")
    return done
