"""One logical write: record files, one git commit, the index, all or nothing.

The caller holds the store lock (:func:`memdir.kernel.lock.store_lock`) around the whole
read-modify-write. :func:`apply` first writes an *intent* (``state/intent.json``: every file's
new content and the commit message), then replaces the files atomically, commits, updates the
index and removes the intent. A process killed at any instant leaves either no intent (nothing
changed, or everything did) or an intent that :func:`recover` replays on the next write or
``memdir health``: writing the same bytes again is idempotent, and a replay whose files are
already committed makes no second commit. So a multi-file change such as a correction (new
record + superseded old one) is never half-applied, and is always exactly one commit.

Once the commit is made the write is complete: the index is derived data, so an index that
stays busy past the connection's timeout (another process scanning, a long ``PRAGMA
integrity_check``) does not fail the write. The index then misses the change until the next
stat scan (any CLI command, MCP call or ``memdir health``) re-reads the files (case B15).

Imports: standard library only.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from memdir.kernel import audit, gitio
from memdir.kernel.atomic import fsync_dir, write_atomic
from memdir.kernel.errors import RejectedBeliefError
from memdir.kernel.index import FileStat, Index
from memdir.kernel.model import Record
from memdir.kernel.paths import state_dir
from memdir.kernel.recordfile import dump, read_canonical

INTENT_NAME = "intent.json"
REFUSED_INTENT_NAME = "intent.refused.json"


def _contained(texts: object) -> bool:
    """Whether an intent's files are all record files: ``records/<kind>/<name>.md``."""
    if not isinstance(texts, dict):
        return False
    for rel, text in texts.items():
        parts = rel.split("/") if isinstance(rel, str) else []
        if (
            len(parts) != 3
            or parts[0] != "records"
            or any(p in ("", ".", "..") or "\\" in p or ":" in p for p in parts)
            or not parts[2].endswith(".md")
            or not (text is None or isinstance(text, str))
        ):
            return False
    return True


@dataclass(frozen=True, slots=True)
class Change:
    """One file of a logical write: a record to write at ``path``, or ``None`` to delete it."""

    path: str  # relative to the store, e.g. records/fact/f-….md
    record: Record | None


def _intent_path(store: Path) -> Path:
    return state_dir(store) / INTENT_NAME


def apply(
    store: Path,
    index: Index,
    changes: list[Change],
    message: str,
    *,
    trailers: gitio.Trailers = (),
    op: str | None = None,
    reason: str | None = None,
) -> None:
    """Write ``changes`` as one commit and index them; the caller holds the store lock.

    ``trailers`` (who made the change; :meth:`memdir.kernel.caller.Caller.trailers`) end the
    commit message, and a replay by :func:`recover` keeps them.

    This is the one write every record change goes through, so it also carries the trust
    checks (:mod:`memdir.kernel.audit`): a record that would become ``active`` or ``candidate``
    with a new text is refused when that value is tombstoned; a record becoming ``rejected``
    tombstones its value; and one audit event (``op``, default the message's first word, the
    caller from ``trailers``, ``reason``, file hashes before and after) is part of the intent,
    appended before the files are committed.

    Raises:
        RejectedBeliefError: a changed text repeats a tombstoned value (nothing is changed).
        GitError: git is missing or failed; the intent stays for :func:`recover`.
        UsageError: a record holds a value that cannot be written (nothing is changed).
        OSError: the disk is full or read-only; nothing is changed if the intent could not
            be written, else the intent stays for :func:`recover`.
    """
    gitio.git_path()  # fail before touching anything when git is missing
    texts = {c.path: (dump(c.record) if c.record is not None else None) for c in changes}
    if all(_unchanged(store, rel, text) for rel, text in texts.items()):
        return  # the same bytes again (a near-duplicate within the same second): no empty commit
    who = audit.who_from_trailers(trailers)
    hashes, stones = [], []
    live = audit.tombstones(store)
    for change in changes:
        text = texts[change.path]
        hashes.append(
            {
                "id": Path(change.path).stem,
                "before": audit.file_hash(store / change.path),
                "after": audit.content_hash(None if text is None else text.encode("utf-8")),
            }
        )
        record = change.record
        if record is None:
            continue
        key = audit.value_key(record.text)
        if record.status in ("active", "candidate") and key in live:
            if _text_changed(store, change.path, record.text):
                raise RejectedBeliefError(audit.refusal(live[key]))
        elif record.status == "rejected" and key not in live:
            stones.append(audit.tombstone_line(key, "add", who, record.id))
            live[key] = {"record": record.id}
    event = audit.event(op or message.split(maxsplit=1)[0], hashes, who, reason=reason)
    intent = {
        "message": message,
        "files": texts,
        "trailers": [list(t) for t in trailers],
        "audit": [event],
        "tombstones": stones,
    }
    write_atomic(_intent_path(store), json.dumps(intent, ensure_ascii=False).encode("utf-8"))
    _replay(store, index, texts, message, trailers=tuple(trailers), events=[event], stones=stones)


def _text_changed(store: Path, rel: str, text: str) -> bool:
    """Whether the record file at ``rel`` does not already hold ``text`` (new or changed)."""
    try:
        parsed = read_canonical((store / rel).read_text(encoding="utf-8"), Path(rel))
    except (OSError, UnicodeDecodeError):
        return True
    return parsed is None or parsed.record.text != text


def _unchanged(store: Path, rel: str, text: str | None) -> bool:
    """Whether writing ``text`` at ``rel`` would change nothing on disk."""
    path = store / rel
    try:
        return text is not None and path.read_bytes() == text.encode("utf-8")
    except OSError:
        return False


def _replay(
    store: Path,
    index: Index,
    texts: dict[str, str | None],
    message: str,
    *,
    recovering: bool = False,
    trailers: gitio.Trailers = (),
    events: list[dict[str, object]] | None = None,
    stones: list[str] | None = None,
) -> None:
    for rel, text in texts.items():
        target = store / rel
        if text is None:
            with contextlib.suppress(FileNotFoundError):
                target.unlink()
                fsync_dir(target.parent)
        else:
            write_atomic(target, text.encode("utf-8"))
    # The audit files are append-only logs, committed in batches like the journal (`memdir
    # sync`, session end), never in a record's commit: a rollback reverts that commit and must
    # not take an audit line with it.
    audit.append(store, list(events or []), recovering=recovering)
    if stones:
        audit.add_tombstones(store, list(stones), recovering=recovering)
    if not recovering or gitio.changed_since_head(store, list(texts)):
        gitio.commit(store, list(texts), message, trailers=trailers)
    # else: the interrupted process had committed; a second, empty commit would say nothing
    with contextlib.suppress(sqlite3.OperationalError):
        # Busy past the timeout: the next stat scan indexes these files (module docstring).
        _reindex(store, index, texts)
    with contextlib.suppress(FileNotFoundError):
        _intent_path(store).unlink()


def _reindex(store: Path, index: Index, texts: dict[str, str | None]) -> None:
    with index.write():
        for rel, text in texts.items():
            if text is None:
                index.forget_path(rel)
                continue
            parsed = read_canonical(text, Path(rel))
            if parsed is not None:
                index.upsert_record(parsed.record, rel, FileStat.of(store / rel), [])


def recover(store: Path, index: Index) -> bool:
    """Finish a logical write that a killed process left behind; return whether there was one.

    The caller holds the store lock.

    Raises:
        GitError: git is missing or failed; the intent stays.
    """
    path = store / "state" / INTENT_NAME
    try:
        intent = json.loads(path.read_text(encoding="utf-8"))
        texts = intent["files"]
        message = str(intent["message"])
        trailers = _trailers(intent.get("trailers"))
        events = [e for e in intent.get("audit") or [] if _is_event(e)]
        stones = [t for t in intent.get("tombstones") or [] if _is_stone(t)]
    except FileNotFoundError:
        return False
    except (ValueError, KeyError, TypeError, OSError):
        # An intent that is not whole was never acted on: the files were not touched yet.
        with contextlib.suppress(OSError):
            path.unlink()
        return False
    if not _contained(texts):
        # Not one memdir wrote (it only writes records/…): set aside for `memdir health` to
        # name, never acted on, so a planted intent cannot write outside the store.
        path.replace(path.with_name(REFUSED_INTENT_NAME))
        return False
    _replay(
        store,
        index,
        texts,
        message + "\n\n(completed after an interruption)",
        recovering=True,
        trailers=trailers,
        events=events,
        stones=stones,
    )
    return True


def _is_event(value: object) -> bool:
    """Whether an intent's audit entry is an event memdir wrote (id, op, month-shaped time)."""
    return (
        isinstance(value, dict)
        and isinstance(value.get("id"), str)
        and isinstance(value.get("op"), str)
        and isinstance(value.get("at"), str)
        and len(value["at"]) >= 7
        and value["at"][:4].isdigit()
        and value["at"][4] == "-"
        and value["at"][5:7].isdigit()
    )


def _is_stone(value: object) -> bool:
    """Whether an intent's tombstone entry is one JSON line with a key."""
    if not isinstance(value, str) or value.count("\n") != 1 or not value.endswith("\n"):
        return False
    try:
        item = json.loads(value)
    except ValueError:
        return False
    return isinstance(item, dict) and str(item.get("key", "")).startswith("sha256:")


def _trailers(value: object) -> tuple[tuple[str, str], ...]:
    """Return an intent's trailers: pairs of one-line strings; anything else is dropped."""
    if not isinstance(value, list):
        return ()
    pairs = []
    for item in value:
        if (
            isinstance(item, list)
            and len(item) == 2
            and all(isinstance(x, str) and x and "\n" not in x for x in item)
        ):
            pairs.append((item[0], item[1]))
    return tuple(pairs)
