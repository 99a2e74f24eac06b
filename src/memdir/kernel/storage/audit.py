"""The store's own mutation audit log and its rejected-value tombstones (DESIGN §1, §2, §4).

**Audit log** (``audit/YYYY-MM.jsonl``, UTC month of the event, then ``YYYY-MM.1.jsonl``,
``YYYY-MM.2.jsonl``… once a file holds :data:`SEGMENT_BYTES`): one JSON object per mutation,
appended with one ``O_APPEND`` write (:func:`memdir.kernel.base.appendlog.append`) and committed
with the write it describes. Each commit hashes and compresses the whole file it appended to, so
a month's log in one file made every write cost more as the month went on (a bulk import of
100,000 records is one 13 MB event: ``remember`` then took 300 ms more at the next write). Git
history does not count as an audit trail because ``purge`` rewrites it; purge never rewrites
these files (it logs its own event). An event never holds belief text, only SHA-256 hashes of
the record files before and after::

    {"id": "a1b2c3d4e5f60718", "at": "2026-12-03T18:00:00Z", "op": "reject",
     "records": [{"id": "f-…", "before": "sha256:…", "after": "sha256:…"}],
     "origin": "owner", "channel": "cli", "host": null, "session": null, "reason": "…"}

``before`` is ``null`` for a new record, ``after`` ``null`` for a deleted one. A write's events
are part of its intent (:mod:`memdir.kernel.storage.txn`), so recovery after a kill completes them;
an
event whose ``id`` the log already holds is not appended twice.

**Tombstones** (``audit/tombstones.jsonl``): an append-only ledger keyed on a rejected
*value*, never its text::

    {"at": "…", "event": "add", "key": "sha256:…", "record": "f-…", "origin": "owner"}
    {"at": "…", "event": "lift", "key": "sha256:…", "origin": "owner", "channel": "cli"}

A key is tombstoned when its last event is ``add``. The key is :func:`value_key`
(:mod:`memdir.kernel.base.valuekey`): the text NFKC-normalised, invisible characters removed,
the common Cyrillic and Greek look-alikes of Latin letters folded (after Unicode TS #39's
confusables), case folded, and everything that is not a letter, mark or digit (whitespace,
punctuation, symbols) dropped, then SHA-256 hashed. So "Use npm." and "ＵＳＥ  n\u200bpm" and
"Usе npm" (a Cyrillic е) share one key.

Imports: standard library only.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from pathlib import Path

from memdir.kernel.base import appendlog
from memdir.kernel.base.clock import now_iso
from memdir.kernel.base.valuekey import fold as fold  # the index keys on it too
from memdir.kernel.base.valuekey import value_key as value_key

TYPE_CHECKING = False  # the hooks' reads load this module (tombstones): never typing
if TYPE_CHECKING:
    from typing import Any

AUDIT_DIR = "audit"
TOMBSTONES = "audit/tombstones.jsonl"
REASON_CHARS = 200


def content_hash(data: bytes | None) -> str | None:
    """Return ``sha256:<hex>`` of a file's bytes, or ``None`` for no file."""
    return None if data is None else "sha256:" + hashlib.sha256(data).hexdigest()


def file_hash(path: Path) -> str | None:
    """Return :func:`content_hash` of the file at ``path`` (``None`` when it does not exist)."""
    try:
        return content_hash(path.read_bytes())
    except (FileNotFoundError, IsADirectoryError):
        return None


# --- events ----------------------------------------------------------------------------------


SEGMENT_BYTES = 256 * 1024
"""An audit file this large takes no more events: the month's next ones go to a new one (a
commit then hashes at most this much of the log, plus the last event)."""


def log_path(at: str, part: int = 0) -> str:
    """Return the store-relative audit file ``part`` of the month of ``at`` (ISO time)."""
    return f"{AUDIT_DIR}/{at[:7]}.jsonl" if part == 0 else f"{AUDIT_DIR}/{at[:7]}.{part}.jsonl"


def _segment(name: str) -> tuple[str, int] | None:
    """``(month, part)`` of an audit file name (``2026-12.jsonl``, ``2026-12.3.jsonl``), or None."""
    if not name.endswith(".jsonl"):
        return None
    month, rest = name[:7], name[7:-6]
    if not (month[:4].isdigit() and month[4:5] == "-" and month[5:].isdigit() and len(month) == 7):
        return None
    if not rest:
        return month, 0
    return (month, int(rest[1:])) if rest[0] == "." and rest[1:].isdigit() else None


def _segments(store: Path) -> list[tuple[str, int]]:
    """Every audit file of the store as ``(month, part)``, in order."""
    try:
        names = os.listdir(store / AUDIT_DIR)
    except OSError:
        return []
    return sorted(found for found in map(_segment, names) if found is not None)


def _parts(store: Path, month: str) -> list[int]:
    """The audit files of ``month`` (``YYYY-MM``) in the store, as part numbers, ascending."""
    return [part for each, part in _segments(store) if each == month]


def current_path(store: Path, at: str) -> str:
    """Return the audit file an event made at ``at`` is appended to (see the module docstring)."""
    parts = _parts(store, at[:7])
    if not parts:
        return log_path(at)
    try:
        size = (store / log_path(at, parts[-1])).stat().st_size
    except OSError:
        size = 0
    return log_path(at, parts[-1] if size < SEGMENT_BYTES else parts[-1] + 1)


def event(
    op: str,
    records: list[dict[str, Any]],
    who: dict[str, Any],
    *,
    reason: str | None = None,
    **details: Any,
) -> dict[str, Any]:
    """Return one audit event (not yet written).

    Args:
        op: The operation: ``remember``, ``correct``, ``reject``, ``purge``, ``import``…
        records: ``{"id", "before", "after"}`` per record touched (hashes, never text).
        who: The caller's fields (``origin``, ``channel``, ``host``, ``session``).
        reason: Why, as the person or agent gave it (cut to :data:`REASON_CHARS`).
        details: Further keys (counts, a proposal id, a commit).

    Returns:
        The event as a JSON object with a fresh random ``id``.
    """
    return {
        "id": os.urandom(8).hex(),
        "at": now_iso(),
        "op": op,
        "records": records,
        "origin": who.get("origin"),
        "channel": who.get("channel"),
        "host": who.get("host"),
        "session": who.get("session"),
        "reason": reason[:REASON_CHARS] if reason else None,
        **details,
    }


def who_from_trailers(trailers: Any) -> dict[str, Any]:
    """Return the caller's fields from commit trailers (``Memdir-Origin`` …)."""
    from memdir.kernel.base.caller import TRAILER_KEYS

    names = {key: name for name, key in TRAILER_KEYS.items()}
    return {names[k]: v for k, v in trailers if k in names}


def _ids_in(path: Path) -> set[str]:
    ids: set[str] = set()
    try:
        with path.open(encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if '"id"' in line:
                    try:
                        ids.add(str(json.loads(line).get("id")))
                    except (ValueError, AttributeError):
                        continue
    except FileNotFoundError:
        pass
    return ids


def append(store: Path, events: list[dict[str, Any]], *, recovering: bool = False) -> list[str]:
    """Append ``events`` to their month's current audit file, one write per file; return the paths.

    With ``recovering`` an event whose ``id`` the file already holds is skipped (a replay).

    Raises:
        OSError: the audit folder cannot be written.
    """
    by_file: dict[str, list[dict[str, Any]]] = {}
    for item in events:
        by_file.setdefault(current_path(store, str(item["at"])), []).append(item)
    for rel, items in by_file.items():
        path = store / rel
        if recovering:
            month = rel[len(AUDIT_DIR) + 1 :][:7]
            have: set[str] = set()
            for part in _parts(store, month):
                have |= _ids_in(store / log_path(month, part))
            items = [i for i in items if i["id"] not in have]
        if items:
            data = "".join(json.dumps(i, ensure_ascii=True) + "\n" for i in items)
            appendlog.append(path, data.encode("utf-8"))
    return list(by_file)


def record(store: Path, event_: dict[str, Any]) -> str:
    """Append one event now (outside a :mod:`txn` write); return its store-relative file."""
    return append(store, [event_])[0]


def read(store: Path, record_id: str | None = None) -> list[dict[str, Any]]:
    """Return the audit events, oldest first; only those naming ``record_id`` when given.

    Torn or foreign lines are skipped.
    """
    out: list[dict[str, Any]] = []
    for month, part in _segments(store):
        path = store / log_path(month, part)
        with path.open(encoding="utf-8", errors="replace") as fh:
            for line in fh:
                try:
                    item = json.loads(line)
                except ValueError:
                    continue
                if not isinstance(item, dict) or "op" not in item:
                    continue
                ids = [r.get("id") for r in item.get("records") or [] if isinstance(r, dict)]
                if record_id is None or record_id in ids or item.get("target") == record_id:
                    out.append(item)
    out.sort(key=lambda i: str(i.get("at", "")))
    return out


# --- tombstones ------------------------------------------------------------------------------


def tombstones(store: Path) -> dict[str, dict[str, Any]]:
    """Return the tombstoned keys, each with the ``add`` entry that set it."""
    live: dict[str, dict[str, Any]] = {}
    try:
        with (store / TOMBSTONES).open(encoding="utf-8", errors="replace") as fh:
            for line in fh:
                try:
                    item = json.loads(line)
                    key = item["key"]
                except (ValueError, KeyError, TypeError):
                    continue
                if item.get("event") == "add":
                    live[key] = item
                elif item.get("event") == "lift":
                    live.pop(key, None)
    except FileNotFoundError:
        pass
    return live


def lifted(store: Path) -> set[str]:
    """Return the keys whose tombstone the owner lifted (last event ``lift``).

    A rejected record whose value was lifted no longer refuses look-alikes of it either.
    """
    last: dict[str, str] = {}
    try:
        with (store / TOMBSTONES).open(encoding="utf-8", errors="replace") as fh:
            for line in fh:
                try:
                    item = json.loads(line)
                    last[item["key"]] = str(item.get("event"))
                except (ValueError, KeyError, TypeError):
                    continue
    except FileNotFoundError:
        pass
    return {key for key, event_ in last.items() if event_ == "lift"}


def tombstone_for(store: Path, text: str) -> dict[str, Any] | None:
    """Return the tombstone that refuses ``text`` (its ``add`` entry), or ``None``."""
    return tombstones(store).get(value_key(text))


def refusal(entry: dict[str, Any]) -> str:
    """Return the message that refuses a tombstoned value."""
    rec = entry.get("record")
    named = f" (record {rec})" if rec else ""
    return (
        f"refused: this value was rejected{named} and is tombstoned, so it is not learned again; "
        "the owner can lift it with `memdir tombstone lift "
        + (str(rec) if rec else "--text …")
        + "`"
    )


def tombstone_line(key: str, event_: str, who: dict[str, Any], record_id: str | None) -> str:
    """Return one tombstone ledger line (JSON, newline-terminated)."""
    item = {
        "at": now_iso(),
        "event": event_,
        "key": key,
        "record": record_id,
        "origin": who.get("origin"),
        "channel": who.get("channel"),
    }
    return json.dumps(item, ensure_ascii=True) + "\n"


def add_tombstones(store: Path, lines: list[str], *, recovering: bool = False) -> bool:
    """Append tombstone ``lines``; when ``recovering``, only keys not already tombstoned.

    Returns:
        Whether anything was appended.
    """
    if recovering:
        live = tombstones(store)
        lines = [
            line
            for line in lines
            if not (json.loads(line).get("event") == "add" and json.loads(line)["key"] in live)
        ]
    if not lines:
        return False
    appendlog.append(store / TOMBSTONES, "".join(lines).encode("utf-8"))
    return True


def retract(store: Path, events: list[dict[str, Any]], stones: list[str]) -> None:
    """Take ``events`` and tombstone ``stones`` out again after their write failed; never raise.

    Only the lines themselves are dropped (by event id, or the exact tombstone line); lines
    appended meanwhile by others stay (:func:`memdir.kernel.base.appendlog.rewrite`). A log file
    left empty was created by the failed write itself (audit lines are appended only under the
    store lock, which the caller holds), so it is removed: a failed write leaves nothing behind.
    """
    from memdir.kernel.base.errors import MemdirError

    ids = {str(e["id"]) for e in events}
    touched = [TOMBSTONES] if stones else []
    for month in {str(e["at"])[:7] for e in events}:
        for part in reversed(_parts(store, month)):  # appended to the newest: looked at first
            rel = log_path(month, part)
            with contextlib.suppress(OSError):
                data = (store / rel).read_bytes()
                if not any(i.encode() in data for i in ids):
                    continue
            touched.append(rel)
            with contextlib.suppress(MemdirError, OSError):
                appendlog.rewrite(store / rel, lambda line: not _names_event(line, ids))
    if stones:
        drop = {s.encode("utf-8") for s in stones}
        with contextlib.suppress(MemdirError, OSError):
            appendlog.rewrite(store / TOMBSTONES, lambda line: line not in drop)
    for rel in touched:
        path = store / rel
        with contextlib.suppress(OSError):
            if path.stat().st_size == 0:
                path.unlink()


def _names_event(line: bytes, ids: set[str]) -> bool:
    try:
        return str(json.loads(line).get("id")) in ids
    except (ValueError, AttributeError):
        return False
