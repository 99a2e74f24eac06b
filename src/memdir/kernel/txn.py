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

from memdir.kernel import gitio
from memdir.kernel.atomic import fsync_dir, write_atomic
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
) -> None:
    """Write ``changes`` as one commit and index them; the caller holds the store lock.

    ``trailers`` (who made the change; :meth:`memdir.kernel.caller.Caller.trailers`) end the
    commit message, and a replay by :func:`recover` keeps them.

    Raises:
        GitError: git is missing or failed; the intent stays for :func:`recover`.
        UsageError: a record holds a value that cannot be written (nothing is changed).
        OSError: the disk is full or read-only; nothing is changed if the intent could not
            be written, else the intent stays for :func:`recover`.
    """
    gitio.git_path()  # fail before touching anything when git is missing
    texts = {c.path: (dump(c.record) if c.record is not None else None) for c in changes}
    if all(_unchanged(store, rel, text) for rel, text in texts.items()):
        return  # the same bytes again (a near-duplicate within the same second): no empty commit
    intent = {"message": message, "files": texts, "trailers": [list(t) for t in trailers]}
    write_atomic(_intent_path(store), json.dumps(intent, ensure_ascii=False).encode("utf-8"))
    _replay(store, index, texts, message, trailers=tuple(trailers))


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
) -> None:
    for rel, text in texts.items():
        target = store / rel
        if text is None:
            with contextlib.suppress(FileNotFoundError):
                target.unlink()
                fsync_dir(target.parent)
        else:
            write_atomic(target, text.encode("utf-8"))
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
    )
    return True


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
