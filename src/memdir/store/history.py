"""A record's history: the git log, the supersession chain with its diffs, and rollback.

Rollback is a revert commit, never ``reset --hard`` (DESIGN §2): the rolled-back change stays
in the history, and rolling back the rollback restores it. The revert is computed without
touching git's index or the files (:func:`memdir.kernel.gitio.revert_contents`) and written as
one logical write (:func:`memdir.kernel.txn.apply_texts`), so a git failure leaves the store as
it was, with nothing staged.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from memdir.kernel import audit, gitio, txn
from memdir.kernel.caller import Caller
from memdir.kernel.errors import NotFoundError, UsageError
from memdir.kernel.ids import check_id
from memdir.kernel.lifecycle import Handle
from memdir.kernel.lock import store_lock
from memdir.store.scan import scan_records


def log(handle: Handle, record_id: str | None = None, limit: int = 20) -> list[gitio.Commit]:
    """Return the store's commits, newest first; only those touching ``record_id`` if given.

    Raises:
        NotFoundError: ``record_id`` names no record.
        GitError: git failed.
    """
    paths = None
    if record_id is not None:
        rel = handle.index.get_path(check_id(record_id))
        if rel is None:
            raise NotFoundError(f"no record {record_id!r}", record_id=record_id)
        paths = [rel]
    return gitio.log(handle.store, paths, limit)


def chain(handle: Handle, record_id: str) -> list[dict[str, Any]]:
    """Return the supersession chain through ``record_id``, oldest first (indexed documents).

    A neighbour that no longer exists ends the chain as a stub without text: status
    ``purged`` when ``memdir purge`` erased it, else ``missing``.

    Raises:
        NotFoundError: ``record_id`` names no record.
    """
    start = handle.index.get_doc(check_id(record_id))
    if start is None:
        raise NotFoundError(f"no record {record_id!r}", record_id=record_id)
    seen = {start["id"]}
    older = _follow(handle, start, "supersedes", seen)
    newer = _follow(handle, start, "superseded_by", seen)
    return [*reversed(older), start, *newer]


def _follow(handle: Handle, doc: dict[str, Any], key: str, seen: set[str]) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    while doc.get(key) and doc[key] not in seen:
        following = handle.index.get_doc(doc[key])
        if following is None:
            gone = gitio.purge_commit(handle.store, doc[key]) is not None
            found.append({"id": doc[key], "status": "purged" if gone else "missing", "text": None})
            break
        seen.add(following["id"])
        found.append(following)
        doc = following
    return found


@dataclass(frozen=True, slots=True)
class Diff:
    """What ``memdir diff ID`` shows."""

    record_id: str
    chain: list[dict[str, Any]]  # oldest first
    patches: dict[str, str]  # record id → ``git log -p`` text of its file

    def to_json(self) -> dict[str, Any]:
        """Return the diff as a JSON object."""
        return {
            "id": self.record_id,
            "chain": [
                {"id": d["id"], "status": d["status"], "text": d["text"], "reason": d.get("reason")}
                for d in self.chain
            ],
            "patches": self.patches,
        }


def diff(handle: Handle, record_id: str) -> Diff:
    """Return the chain through ``record_id`` and the git patches of each of its files."""
    docs = chain(handle, record_id)
    patches = {}
    for doc in docs:
        rel = handle.index.get_path(doc["id"]) if doc["text"] is not None else None
        patches[doc["id"]] = gitio.file_patches(handle.store, rel) if rel else ""
    return Diff(record_id, docs, patches)


@dataclass(frozen=True, slots=True)
class RolledBack:
    """The outcome of ``memdir rollback``."""

    commit: str  # the commit undone
    paths: list[str]  # files it changed back

    def to_json(self) -> dict[str, Any]:
        """Return the outcome as a JSON object."""
        return {"rolled_back": self.commit, "paths": self.paths}


def _as_text(rel: str, data: bytes | None) -> str | None:
    if data is None:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(f"{rel} is not UTF-8 text; roll it back with git itself") from exc


def rollback(handle: Handle, rev: str, *, yes: bool, caller: Caller | None = None) -> RolledBack:
    """Undo one commit with a revert commit, then re-index what it changed.

    The caller (the owner: :func:`memdir.service.rollback` refuses anyone else) is recorded as
    the revert commit's trailers.

    Raises:
        UsageError: ``yes`` is False (rollback changes beliefs; it must be confirmed), or the
            commit is the store's first one.
        NotFoundError: no such commit.
        GitError: the revert conflicts with later commits, or git failed; nothing is
            changed and nothing is staged.
        GitStateError: the store's git is mid-merge, detached…; nothing is changed.
    """
    if not yes:
        raise UsageError("rollback changes what memory holds; pass --yes to confirm")
    with store_lock(handle.store, "rollback", handle.lock_timeout_seconds, queue=handle.lock_queue):
        txn.recover(handle.store, handle.index)
        full = gitio.resolve_commit(handle.store, rev)
        parents = gitio.run_git(handle.store, "rev-list", "--parents", "-n1", full).stdout.split()
        if len(parents) < 2:
            raise UsageError("that is the store's first commit; it cannot be rolled back")
        subject = next(
            (c.subject for c in gitio.log(handle.store, limit=200) if c.hash == full), full
        )
        # The audit log is append-only: a rollback adds its own event, never removes one.
        contents = gitio.revert_contents(handle.store, full, keep=(audit.AUDIT_DIR + "/",))
        texts = {rel: _as_text(rel, data) for rel, data in contents.items()}
        txn.apply_texts(
            handle.store,
            handle.index,
            texts,
            f'rollback {full[:12]}: undo "{subject}"',
            trailers=caller.trailers() if caller else (),
        )
        paths = sorted(texts)
        scan_records(handle)
    return RolledBack(full, paths)
