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

TYPE_CHECKING = False  # the hook path never imports typing (start-up cost)
if TYPE_CHECKING:
    from typing import Any

PATH_TAG = "path:"
"""Prefix of a tag scoping a record to a path glob: ``path:src/billing/**``."""
CACHE = "path-scoped.json"

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
        with open(store / "state" / CACHE, encoding="utf-8") as fh:
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
    target = store / "state" / CACHE
    try:
        tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps({"key": key, "docs": docs}), encoding="utf-8")
        os.replace(tmp, target)
    except OSError:
        pass  # a read-only store scans the index again next time
