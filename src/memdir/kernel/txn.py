"""One logical write: record files, one git commit, the index, all or nothing.

The caller holds the store lock (:func:`memdir.kernel.lock.store_lock`) around the whole
read-modify-write. :func:`apply` first writes an *intent* (``state/intent.json``: every file's
new content and the commit message), then replaces the files atomically, commits, updates the
index and removes the intent. A process killed at any instant leaves either no intent (nothing
changed, or everything did) or an intent that :func:`recover` replays on the next write or
``memdir health``: writing the same bytes again is idempotent, and a replay whose files are
already committed makes no second commit. So a multi-file change such as a correction (new
record + superseded old one) is never half-applied, and is always exactly one commit.

A git failure is different from a kill: the process is alive to undo what it did. Every file
is put back as it was, the intent is removed and nothing is staged (:func:`memdir.kernel.gitio.
commit` builds commits in memdir's own index), so a write git refused is absent, never live
and reported failed (invariant 9). A write refused because of the store's git state (a merge
in progress, a detached HEAD) touches no file at all.

Once the commit is made the write is complete: the index is derived data, so an index that
stays busy past the connection's timeout (another process scanning, a long ``PRAGMA
integrity_check``) does not fail the write. The index then misses the change until the next
stat scan (any CLI command, MCP call or ``memdir health``) re-reads the files (case B15).

Imports: standard library only.
"""

from __future__ import annotations

import contextlib
import json
import re
import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from memdir.kernel import gitio
from memdir.kernel.atomic import fsync_dir, write_atomic
from memdir.kernel.errors import GitError, GitStateError
from memdir.kernel.index import FileStat, Index
from memdir.kernel.model import Record
from memdir.kernel.paths import state_dir
from memdir.kernel.recordfile import dump, read_canonical

INTENT_NAME = "intent.json"
REFUSED_INTENT_NAME = "intent.refused.json"
_PROPOSAL_FILE = re.compile(r"^proposals/(decided/)?prop-[0-9a-hjkmnp-tv-z]{14}\.json$")
"""A proposal's file (:mod:`memdir.kernel.authority`): accepting one moves it in the same write."""


def _contained(texts: object) -> bool:
    """Whether an intent's files are all records or proposals memdir writes.

    Record files are ``records/<kind>/<name>.md``; proposal files
    ``proposals/[decided/]prop-….json``.
    """
    if not isinstance(texts, dict):
        return False
    for rel, text in texts.items():
        parts = rel.split("/") if isinstance(rel, str) else []
        proposal = isinstance(rel, str) and _PROPOSAL_FILE.match(rel)
        if proposal and (text is None or isinstance(text, str)):
            continue
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
    files: Mapping[str, str | None] | None = None,
) -> None:
    """Write ``changes`` as one commit and index them; the caller holds the store lock.

    Args:
        store: The store folder.
        index: Its open index.
        changes: The files of this one logical write.
        message: The commit message.
        trailers: Who made the change (:meth:`memdir.kernel.caller.Caller.trailers`), ending
            the commit message; a replay by :func:`recover` keeps them.
        files: Proposal files (``proposals/…``: text, or ``None`` to delete) written in the
            same commit, e.g. an accepted proposal's move to ``decided/``.

    Raises:
        GitStateError: the store's git is mid-merge, detached…; nothing was written.
        GitError: git is missing or failed; every file is as it was, the intent is removed
            and nothing is staged (the write is refused and absent).
        UsageError: a record holds a value that cannot be written (nothing is changed).
        OSError: the disk is full or read-only; nothing is changed if the intent could not
            be written, else the intent stays for :func:`recover`.
    """
    gitio.git_path()  # fail before touching anything when git is missing
    texts = {c.path: (dump(c.record) if c.record is not None else None) for c in changes}
    texts.update(files or {})
    apply_texts(store, index, texts, message, trailers=trailers)


def apply_texts(
    store: Path,
    index: Index,
    texts: dict[str, str | None],
    message: str,
    *,
    trailers: gitio.Trailers = (),
) -> None:
    """Write files (``None`` deletes one) as one commit, all or nothing; see :func:`apply`.

    Raises:
        GitStateError, GitError, OSError: as :func:`apply`.
    """
    if all(_unchanged(store, rel, text) for rel, text in texts.items()):
        return  # the same bytes again (a near-duplicate within the same second): no empty commit
    gitio.check_writable(store)  # refused before any file is touched
    durable = _contained(texts)  # only record files can be replayed after a crash
    if durable:
        intent = {"message": message, "files": texts, "trailers": [list(t) for t in trailers]}
        write_atomic(_intent_path(store), json.dumps(intent, ensure_ascii=False).encode("utf-8"))
    try:
        _replay(store, index, texts, message, trailers=trailers)
    except GitError as err:
        with contextlib.suppress(FileNotFoundError):
            _intent_path(store).unlink()
        if "nothing was stored" not in str(err):
            err.args = (f"nothing was stored: {err}",)
        raise


def _unchanged(store: Path, rel: str, text: str | None) -> bool:
    """Whether writing ``text`` at ``rel`` would change nothing on disk."""
    path = store / rel
    try:
        return text is not None and path.read_bytes() == text.encode("utf-8")
    except OSError:
        return False


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


def _put(target: Path, data: bytes | None) -> None:
    if data is None:
        with contextlib.suppress(FileNotFoundError):
            target.unlink()
            fsync_dir(target.parent)
    else:
        write_atomic(target, data)


def _replay(
    store: Path,
    index: Index,
    texts: dict[str, str | None],
    message: str,
    *,
    trailers: gitio.Trailers = (),
    recovering: bool = False,
) -> None:
    """Write the files and commit them; on a git failure put every file back as it was.

    Raises:
        GitError: git failed; the files are as they were before this call.
        OSError: a file could not be written (the intent, if any, stays for :func:`recover`).
    """
    before = {rel: _read(store / rel) for rel in texts}
    try:
        for rel, text in texts.items():
            _put(store / rel, text.encode("utf-8") if text is not None else None)
        if not recovering or gitio.changed_since_head(store, list(texts)):
            gitio.commit(store, list(texts), message, trailers=trailers)
        # else: the interrupted process had committed; a second, empty commit would say nothing
    except GitError:
        for rel, data in before.items():
            _put(store / rel, data)
        raise
    with contextlib.suppress(sqlite3.OperationalError):
        # Busy past the timeout: the next stat scan indexes these files (module docstring).
        _reindex(store, index, texts)
    with contextlib.suppress(FileNotFoundError):
        _intent_path(store).unlink()


def _reindex(store: Path, index: Index, texts: dict[str, str | None]) -> None:
    with index.write():
        for rel, text in texts.items():
            if not rel.startswith("records/"):
                continue  # not a record (a rollback of an init or sync commit): nothing to index
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
        GitError: git is missing or failed; the files are as they were and the intent stays,
            so a later write or ``memdir health`` finishes it once git works.
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
    try:
        _replay(
            store,
            index,
            texts,
            message + "\n\n(completed after an interruption)",
            trailers=trailers,
            recovering=True,
        )
    except GitError as err:
        text = (
            "an interrupted write is waiting to be finished, and git refused it, so nothing "
            f"else is stored until it can be: {err}"
        )
        if isinstance(err, GitStateError):
            raise GitStateError(text, state=err.state) from err
        raise GitError(text) from err
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
