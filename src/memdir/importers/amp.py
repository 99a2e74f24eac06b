"""Read a Talewell / AMP repository into memdir records.

Format (Talewell's README, the AMP protocol): a folder holding an ``amp.json`` manifest and a
``memory/`` tree — ``facts/``, ``entities/<type>/``, ``episodes/``, ``procedures/`` — with one
Markdown record per file. Front matter keys: ``id``, ``kind``, ``aliases``, ``text``,
``origin``, ``importance``, ``observedAt``, ``links``; the body is optional prose and may hold
``[[id]]`` references. ``memory/index.json`` is a generated catalogue and is not read.

Mapping: an AMP id that is already memdir-shaped (a repository ``memdir export --to amp``
wrote) is kept; any other id is mapped to a stable memdir id, recorded in
``source.amp_id`` and in the import report, and every link and ``[[id]]`` to it is rewritten.
The kind is the record's ``kind`` when memdir knows it, else the folder's. ``untrusted`` and
``system`` origins are refused, as Talewell refuses them; the record's own origin is kept in
``source.original_origin``. An entity's ``<type>`` folder is kept in ``source.entity_type``.

The reader makes two passes: the first reads only ids (to map links in any order), the second
yields one record at a time.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from memdir.importers.pipeline import (
    Item,
    as_importance,
    as_list,
    front_matter,
    make_record,
    read_text,
    refuse,
    skip,
    stable_id,
)
from memdir.kernel.base.errors import UsageError
from memdir.kernel.base.ids import ID_PATTERN, PREFIX_KIND
from memdir.kernel.base.model import KINDS, STATUSES

FORMAT = "amp"
FOLDERS: dict[str, str] = {
    "facts": "fact",
    "entities": "entity",
    "episodes": "episode",
    "procedures": "procedure",
}
"""``memory/<folder>`` → the kind a record there has when its own ``kind`` says nothing."""
REFUSED_ORIGINS = ("untrusted", "system")
LINK = re.compile(r"\[\[([^\[\]\s|]+)(\|[^\]]*)?\]\]")


def _files(root: Path) -> Iterator[tuple[Path, str]]:
    memory = root / "memory"
    for folder, kind in FOLDERS.items():
        base = memory / folder
        if base.is_dir():
            for path in sorted(base.rglob("*.md")):
                if not path.name.startswith("."):
                    yield path, kind
    # Kinds memdir has and AMP's four folders lack (preference, rule, …), if a writer used
    # memory/<kind>s/ for them.
    if memory.is_dir():
        for base in sorted(memory.iterdir()):
            if base.is_dir() and base.name not in FOLDERS:
                kind = base.name.rstrip("s")
                for path in sorted(base.rglob("*.md")):
                    if not path.name.startswith("."):
                        yield path, kind if kind in KINDS else "fact"


def check_repo(root: Path) -> None:
    """Refuse a folder that is not an AMP repository.

    Raises:
        UsageError: no ``amp.json`` and no ``memory/`` folder, or an unreadable manifest.
    """
    manifest = root / "amp.json"
    if not root.is_dir() or not (manifest.is_file() or (root / "memory").is_dir()):
        raise UsageError(f"{root} is not an AMP repository (no amp.json and no memory/ folder)")
    if manifest.is_file():
        try:
            json.loads(manifest.read_text(encoding="utf-8"))
        except (ValueError, UnicodeDecodeError) as err:
            raise UsageError(f"{manifest} is not valid JSON: {err}") from None


def map_id(amp_id: str, kind: str, observed_at: str) -> str:
    """Return the memdir id for an AMP id: kept when memdir-shaped, else derived from it."""
    if ID_PATTERN.match(amp_id):
        return amp_id
    prefix = amp_id.split("-", 1)[0]
    kind = PREFIX_KIND.get(prefix, kind) if "-" in amp_id else kind
    return stable_id(kind, f"amp\n{amp_id}", observed_at)


def _head(path: Path, kind: str) -> tuple[str, str, str] | None:
    text = read_text(path)
    if text is None:
        return None
    values, _, _ = front_matter(text)
    amp_id = str(values.get("id") or path.stem).strip()
    record_kind = str(values.get("kind") or kind)
    record_kind = record_kind if record_kind in KINDS else kind
    observed = str(values.get("observedAt") or values.get("observed_at") or "")
    return amp_id, record_kind, observed


def read(root: Path, *, scope: str = "project") -> Iterator[Item]:
    """Yield one :class:`Item` per record file of the AMP repository at ``root``.

    Args:
        root: The repository folder (holding ``amp.json`` and ``memory/``).
        scope: The store's scope, given to every record.

    Raises:
        UsageError: ``root`` is not an AMP repository.
    """
    check_repo(root)
    ids: dict[str, str] = {}
    for path, kind in _files(root):
        head = _head(path, kind)
        if head is not None:
            amp_id, record_kind, observed = head
            ids.setdefault(amp_id, map_id(amp_id, record_kind, observed))
    for path, kind in _files(root):
        yield _item(root, path, kind, ids, scope)


def _item(root: Path, path: Path, kind: str, ids: dict[str, str], scope: str) -> Item:
    rel = path.relative_to(root).as_posix()
    text = read_text(path)
    if text is None:
        return skip(rel, "file too large")
    values, body, _ = front_matter(text)
    if not values:
        return skip(rel, "no front matter")
    amp_id = str(values.get("id") or path.stem).strip()
    origin = str(values.get("origin") or "").strip().lower()
    if origin in REFUSED_ORIGINS:
        return refuse(rel, f"origin {origin} is refused")
    record_kind = str(values.get("kind") or kind)
    if record_kind not in KINDS:
        record_kind = kind
    belief = values.get("text")
    if not isinstance(belief, str) or not belief.strip():
        first = next((line for line in body.splitlines() if line.strip()), "")
        belief = first.lstrip("# ").strip()
        if not belief:
            return skip(rel, "no text")
    observed = str(values.get("observedAt") or values.get("observed_at") or "") or None
    new_id = ids.get(amp_id) or map_id(amp_id, record_kind, observed or "")
    links = [ids.get(link, link) for link in as_list(values.get("links"))]
    body = LINK.sub(lambda m: f"[[{ids.get(m.group(1), m.group(1))}{m.group(2) or ''}]]", body)
    links += [ids.get(m.group(1), m.group(1)) for m in LINK.finditer(body)]
    status = str(values.get("status") or "active")
    extra: dict[str, Any] = {"original_origin": origin or None}
    if new_id != amp_id:
        extra["amp_id"] = amp_id
    parts = path.relative_to(root / "memory").parts
    if record_kind == "entity" and len(parts) > 2 and parts[0] == "entities":
        extra["entity_type"] = parts[1]
    record = make_record(
        fmt=FORMAT,
        kind=record_kind,
        text=belief,
        key=amp_id,
        file=rel,
        place={"key": amp_id},
        status=status if status in STATUSES else "active",
        observed_at=observed,
        importance=as_importance(values.get("importance")),
        aliases=as_list(values.get("aliases")),
        tags=as_list(values.get("tags")),
        links=[link for link in links if link != new_id],
        body=body,
        extra_source=extra,
        scope=scope,
        record_id=new_id,
    )
    if record is None:
        return skip(rel, "no text")
    supersedes = values.get("supersedes")
    superseded_by = values.get("superseded_by") or values.get("supersededBy")
    reason = values.get("reason")
    record = dataclasses.replace(
        record,
        supersedes=ids.get(str(supersedes), str(supersedes)) if supersedes else None,
        superseded_by=ids.get(str(superseded_by), str(superseded_by)) if superseded_by else None,
        reason=str(reason) if reason else None,
    )
    return Item(rel, record)
