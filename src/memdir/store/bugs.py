"""The bug log: ``bug`` records keyed by a normalised error signature.

A report whose signature matches an open bug bumps its ``occurrences`` and ``last_seen``
instead of adding a record (OpenWolf's bug log, as beliefs with history). The signature drops
what varies between occurrences of one error: numbers, hex ids, quoted values and file paths.
"""

from __future__ import annotations

import json
import re
from typing import Any

from memdir.kernel.base.caller import Caller
from memdir.kernel.base.clock import now_iso
from memdir.kernel.base.errors import NotFoundError, UsageError
from memdir.kernel.index.recall import recall
from memdir.kernel.lang.redact import is_secret_path, redact
from memdir.kernel.lang.text import truncate
from memdir.kernel.storage import lifecycle
from memdir.kernel.storage.lifecycle import Handle, Written
from memdir.kernel.storage.lock import store_lock
from memdir.kernel.storage.paths import project_relative

_PATH = re.compile(r"(?:[A-Za-z]:)?(?:[\w.-]*[/\\])+[\w.-]+")
_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"|`[^`]*`")
_HEX = re.compile(r"\b0x[0-9a-fA-F]+\b|\b[0-9a-f]{7,40}\b")
_NUMBER = re.compile(r"\d+")


def signature(error: str) -> str:
    """Return the normalised signature of an error message (first line, variable parts masked)."""
    first = next((line.strip() for line in error.splitlines() if line.strip()), error.strip())
    text = _PATH.sub("<path>", first)
    text = _QUOTED.sub("<value>", text)
    text = _HEX.sub("<hex>", text)
    text = _NUMBER.sub("<n>", text)
    return " ".join(text.lower().split())[:300]


def _extra(doc: dict[str, Any]) -> dict[str, Any]:
    return _decode(doc.get("extra", []))


def _decode(pairs: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, raw in pairs:
        try:
            out[key] = json.loads(raw)
        except ValueError:
            out[key] = raw.strip()
    return out


def _raw(values: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    return tuple((k, " " + json.dumps(v, ensure_ascii=False)) for k, v in values.items())


def log(handle: Handle, error: str, fix: str, file: str | None, caller: Caller) -> Written:
    """Record a bug and its fix, or bump the matching open bug's occurrences.

    The error, the fix and the file are redacted first: the bug log is a capture path.

    Raises:
        UsageError: ``file`` is not a path inside the project (absolute, or climbing out with
            ``..``), or names a secret file (``.env``, a key): its name is never recorded.
    """
    if file:
        if is_secret_path(file) or is_secret_path(file.replace("\\", "/").rsplit("/", 1)[-1]):
            raise UsageError("--file names a secret file; its name is not recorded")
        # a project store sits at the project's root
        rel = project_relative(handle.store.parent, file, store_name=handle.store.name)
        if rel is None:
            raise UsageError(f"--file must be a path inside the project, not {file!r}")
        file = rel
    error, fix, file = redact(error), redact(fix), redact(file) if file else None
    sig = signature(error)
    # Finding the open bug and bumping it is one read-modify-write under the store lock, and
    # the count is read from the file, not the index: two reports of one bug at once (parallel
    # tool calls) both count (case B13).
    with store_lock(handle.store, "bug", handle.lock_timeout_seconds, queue=handle.lock_queue):
        for hit in recall(handle.index, sig, limit=10, kinds=("bug",)).hits:
            if _decode(hit.doc.get("extra", [])).get("signature") != sig:
                continue
            record, _ = lifecycle.load(handle, hit.doc["id"])
            extra = _decode(record.extra)
            if extra.get("signature") != sig or "fixed" in record.tags:
                continue
            extra.update(occurrences=int(extra.get("occurrences", 1)) + 1, last_seen=now_iso())
            body = (
                record.body
                if fix.strip() in record.body
                else f"{record.body.rstrip()}\n\nFix: {fix.strip()}\n"
            )
            return lifecycle.update(
                handle,
                record.id,
                op="bug",
                reason="seen again",
                caller=caller,
                extra=_raw(extra),
                body=body,
            )
        text = truncate(" ".join(error.split()), 200)
        body = f"Error: {error.strip()}\n\nFix: {fix.strip()}\n" + (
            f"\nFile: {file}\n" if file else ""
        )
        extra = {"signature": sig, "occurrences": 1, "last_seen": now_iso()}
        if file:
            extra["file"] = file
        return lifecycle.remember(
            handle,
            text,
            kind="bug",
            caller=caller,
            body=body,
            tags=("open",),
            extra=_raw(extra),
        )


def search(handle: Handle, query: str, limit: int = 10) -> list[dict[str, Any]]:
    """Return bug records relevant to ``query`` (an error message or words), open ones first."""
    hits = recall(handle.index, query, limit=limit, kinds=("bug",)).hits
    rows = [{**hit.to_json(), **_extra(hit.doc)} for hit in hits]
    rows.sort(key=lambda r: ("fixed" in r.get("tags", []), -r["score"]))
    return rows


def listing(handle: Handle) -> list[dict[str, Any]]:
    """Return every active bug record with its occurrences, newest first."""
    return [
        {**doc, **_extra(doc)}
        for doc in handle.index.list_docs(kinds=("bug",), statuses=("active",))
    ]


def mark_fixed(handle: Handle, record_id: str, caller: Caller) -> Written:
    """Mark a bug fixed (tag ``fixed``); it stays searchable as a solved problem.

    ``caller`` is who marked it (recorded on the commit and the audit event).
    """
    doc = handle.index.get_doc(record_id)
    if doc is None or doc["kind"] != "bug":
        raise NotFoundError(f"no bug record {record_id!r}; see `memdir bug list`")
    tags = (*(t for t in doc.get("tags", []) if t != "open"), "fixed")
    return lifecycle.update(
        handle,
        record_id,
        op="bug fixed",
        reason="fixed",
        caller=caller,
        tags=tuple(dict.fromkeys(tags)),
    )
