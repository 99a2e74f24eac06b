"""Path-scoped beliefs: records tagged ``path:GLOB`` apply to the files their globs match.

``memdir remember --paths "src/billing/**"`` tags the record ``path:src/billing/**``. The digest
shows it only when the session touched a matching file; the PostToolUse hook injects it when
the agent reads or edits one (:func:`memdir.kernel.index.digest.scoped_for_file`). The active scoped
records are kept in ``state/path-scoped.json``, keyed by the modification times of the record
folders (every write renames a file into one), so a hook opens the index only after a change.

Imports: standard library only.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from memdir.kernel.base.layout import StoreLayout, layout

TYPE_CHECKING = False  # the hook path never imports typing (start-up cost)
if TYPE_CHECKING:
    from typing import Any

PATH_TAG = "path:"
"""Prefix of a tag scoping a record to a path glob: ``path:src/billing/**``."""
CACHE = StoreLayout.PATH_SCOPED

_GLOBS: dict[str, re.Pattern[str]] = {}


def check_glob(glob: str) -> str:
    """Return ``glob`` cleaned (``/`` separators, no leading ``./``), or raise ``ValueError``.

    Raises:
        ValueError: empty, absolute, or climbing out of the project (``..``).
    """
    clean = glob.strip().replace("\\", "/")
    while clean.startswith("./"):
        clean = clean[2:]
    if not clean or clean.startswith("/") or ".." in clean.split("/"):
        raise ValueError(f"{glob!r} is not a path glob inside the project (e.g. 'src/billing/**')")
    return clean


def path_globs(doc: dict[str, Any]) -> list[str]:
    """Return the path globs a record (as indexed) is scoped to; empty when it is not scoped."""
    return [t[len(PATH_TAG) :] for t in doc.get("tags") or () if t.startswith(PATH_TAG)]


def glob_matches(glob: str, rel: str) -> bool:
    """Return whether project-relative ``rel`` matches ``glob``.

    ``**`` matches any number of folders, ``*`` and ``?`` stay within one name, a glob naming a
    folder matches everything under it, and a glob without ``/`` matches a file name in any
    folder (``*.sql``), as in ``.gitignore``.

    Args:
        glob: e.g. ``src/billing/**``, ``*.sql``, ``docs/*.md``.
        rel: a path relative to the project, ``/``-separated.
    """
    pattern = _GLOBS.get(glob)
    if pattern is None:
        body = glob.strip("/")
        out = []
        i = 0
        while i < len(body):
            if body.startswith("**/", i):
                out.append("(?:.*/)?")
                i += 3
            elif body.startswith("**", i):
                out.append(".*")
                i += 2
            elif body[i] == "*":
                out.append("[^/]*")
                i += 1
            elif body[i] == "?":
                out.append("[^/]")
                i += 1
            else:
                out.append(re.escape(body[i]))
                i += 1
        prefix = "" if "/" in body else "(?:.*/)?"
        pattern = _GLOBS[glob] = re.compile(f"{prefix}{''.join(out)}(?:/.*)?")
    rel = rel.replace("\\", "/")
    while rel.startswith("./"):
        rel = rel[2:]
    return pattern.fullmatch(rel) is not None


def matches(doc: dict[str, Any], files: list[str]) -> bool:
    """Return whether any of ``files`` matches any of the record's globs."""
    return any(glob_matches(g, rel) for g in path_globs(doc) for rel in files)


def _key(store: Path) -> list[int]:
    records = store / "records"
    try:
        key = sorted(e.stat().st_mtime_ns for e in os.scandir(records) if e.is_dir())
        key.append(records.stat().st_mtime_ns)
    except OSError:
        return []
    return key


def cached(store: Path) -> list[dict[str, Any]] | None:
    """Return the cached scoped records, or ``None`` when a record folder changed since."""
    key = _key(store)
    try:
        with open(layout(store).state_path(CACHE), encoding="utf-8") as fh:
            kept = json.load(fh)
    except (OSError, ValueError):
        return None
    if not key or not isinstance(kept, dict) or kept.get("key") != key:
        return None
    docs = kept.get("docs")
    return docs if isinstance(docs, list) else None


def save(store: Path, docs: list[dict[str, Any]]) -> None:
    """Keep ``docs`` as the scoped records for the record folders as they are now."""
    key = _key(store)
    if not key:
        return
    target = layout(store).state_path(CACHE)
    try:
        tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps({"key": key, "docs": docs}), encoding="utf-8")
        os.replace(tmp, target)
    except OSError:
        pass  # a read-only store scans the index again next time


def cached_any(store: Path) -> list[dict[str, Any]] | None:
    """Return the cached scoped records even when a record changed since (``None``: no cache).

    For the hook on the read path, which must not open the index: a record retired since is
    filtered out by :func:`still_active`; the SessionStart hook and ``remember --paths``
    refresh the list.
    """
    try:
        with open(layout(store).state_path(CACHE), encoding="utf-8") as fh:
            kept = json.load(fh)
    except (OSError, ValueError):
        return None
    docs = kept.get("docs") if isinstance(kept, dict) else None
    return docs if isinstance(docs, list) else None


def still_active(store: Path, doc: dict[str, Any]) -> bool:
    """Whether the record file of a cached doc still says ``status: active``."""
    path = store / "records" / str(doc.get("kind", "")) / f"{doc.get('id', '')}.md"
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            head = fh.read(4096)
    except OSError:
        return False
    for line in head.splitlines()[1:]:
        if line.strip() == "---":
            break
        if line.startswith("status:"):
            return line.split(":", 1)[1].strip().strip("'\"") == "active"
    return False


def render(
    docs: list[dict[str, Any]], files: list[str], budget_tokens: int
) -> tuple[str, tuple[str, ...]]:
    """Return the fenced block of the scoped ``docs`` for ``files`` and the ids it carries."""
    from memdir.kernel.lang import fence

    order = {"owner": 0, "import": 1, "agent": 2, "observer": 3}
    docs = sorted(
        docs, key=lambda d: (order.get(d.get("origin", ""), 9), -int(d.get("importance", 5)))
    )
    items = [
        fence.Item(
            d["id"],
            d["kind"],
            d["origin"],
            (d.get("updated_at") or d.get("created_at") or "")[:10],
            d["text"],
        )
        for d in docs
    ]
    text, kept = fence.render(
        items, title=f"Beliefs scoped to {', '.join(files[:3])}:", budget_tokens=budget_tokens
    )
    return text, tuple(item.id for item in kept)
