"""A record's history: the git log, the supersession chain with its diffs, and rollback.

Rollback is a revert commit, never ``reset --hard`` (DESIGN §2): the rolled-back change stays
in the history, and rolling back the rollback restores it. The revert is computed without
touching git's index or the files (:func:`memdir.kernel.storage.gitio.revert_contents`) and written
as
one logical write (:func:`memdir.kernel.storage.txn.apply_texts`), so a git failure leaves the
store as
it was, with nothing staged.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memdir.kernel.base import appendlog
from memdir.kernel.base.caller import Caller
from memdir.kernel.base.errors import NotFoundError, RecordParseError, UsageError
from memdir.kernel.base.ids import check_id
from memdir.kernel.storage import audit, gitio, txn
from memdir.kernel.storage.lifecycle import Handle
from memdir.kernel.storage.lock import store_lock
from memdir.kernel.storage.recordfile import read_canonical
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
    kept_logs: list[str] = field(default_factory=list)  # append-only logs left as they are

    def to_json(self) -> dict[str, Any]:
        """Return ``{"rolled_back", "paths", "kept_logs"}``."""
        return {"rolled_back": self.commit, "paths": self.paths, "kept_logs": self.kept_logs}


LOG_DIRS = ("journal/", "actions/", audit.AUDIT_DIR + "/")
"""Append-only evidence (DESIGN §1, §8): rollback never removes or rewrites a line in them.

The one exception is a line an import copied in from another tool (it carries an ``import``
key; see :class:`memdir.store.bulk._Evidence`): rolling back the import's own commit removes
the lines that commit added, as the import's records go. Every other line, the hooks' turns
and action rows above all, stays; only ``memdir purge`` removes text from a log."""


def _import_line(line: bytes) -> bool:
    """Whether a log line is one an import copied in (a JSON object with an ``import`` key)."""
    try:
        row = json.loads(line)
    except ValueError:
        return False
    return isinstance(row, dict) and "import" in row


def _log_revert(handle: Handle, rel: str, full: str) -> str | bool | None:
    """What rollback does to the append-only log ``rel`` changed by commit ``full``.

    Returns:
        ``False`` to leave the file as it is; else its new text (``None`` deletes it): the
        file on disk less the import lines the commit added (each once).
    """
    before = gitio.file_at(handle.store, f"{full}^", rel) or b""
    after = gitio.file_at(handle.store, full, rel) or b""
    added = Counter(appendlog.split_lines(after))
    added.subtract(appendlog.split_lines(before))
    drop = Counter({line: n for line, n in added.items() if n > 0 and _import_line(line)})
    if not drop:
        return False
    path = handle.store / rel
    try:
        now = path.read_bytes()
    except FileNotFoundError:
        return False
    kept = []
    for line in appendlog.split_lines(now):
        if drop[line] > 0:
            drop[line] -= 1
        else:
            kept.append(line)
    if len(kept) == len(appendlog.split_lines(now)):
        return False
    if not kept and not before:
        return None
    return _as_text(rel, b"".join(kept))


def _as_text(rel: str, data: bytes | None) -> str | None:
    if data is None:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(f"{rel} is not UTF-8 text; roll it back with git itself") from exc


def _lifts(
    handle: Handle, texts: dict[str, str | None], caller: Caller | None
) -> tuple[list[str], list[str]]:
    """Tombstone ``lift`` lines for records the rollback brings back from ``rejected``.

    Returns:
        The ledger lines and the keys they lift (only keys tombstoned now).
    """
    live = audit.tombstones(handle.store)
    who = caller.to_json() if caller else {"origin": "owner", "channel": "cli"}
    lines: list[str] = []
    keys: list[str] = []
    for rel, text in sorted(texts.items()):
        if text is None or rel.startswith(LOG_DIRS) or not rel.endswith(".md"):
            continue
        try:
            now = read_canonical((handle.store / rel).read_text(encoding="utf-8"), Path(rel))
            after = read_canonical(text, Path(rel))
        except (OSError, UnicodeDecodeError, RecordParseError):
            continue
        if now is None or after is None or now.record.status != "rejected":
            continue
        if after.record.status == "rejected":
            continue
        key = audit.value_key(now.record.text)
        if key in live and key not in keys:
            lines.append(audit.tombstone_line(key, "lift", who, now.record.id))
            keys.append(key)
    return lines, keys


ROLLBACK_SUBJECT = "rollback {short}: "
"""How the subject of the revert commit of commit ``short`` (its first 12 hex digits) begins."""


def rolled_back_by(store: Path, full: str) -> str | None:
    """Return the revert commit that undid ``full`` and is still in effect, or ``None``.

    A revert is found by its subject (:data:`ROLLBACK_SUBJECT`) among the commits after
    ``full``; one that was itself rolled back later no longer counts (rolling back the rollback
    redid the change, so ``full`` may be rolled back again).

    Raises:
        GitError: git failed.
    """
    subject = ROLLBACK_SUBJECT.format(short=full[:12])
    done = gitio.run_git(
        store, "log", "-F", f"--grep={subject}", "--format=%H%x00%s", f"{full}..HEAD"
    )
    for line in done.stdout.decode("utf-8", "replace").splitlines():
        commit, _, text = line.partition("\x00")
        if text.startswith(subject) and rolled_back_by(store, commit) is None:
            return commit  # newest first: the latest revert still in effect
    return None


def rollback(handle: Handle, rev: str, *, yes: bool, caller: Caller | None = None) -> RolledBack:
    """Undo one commit with a revert commit, then re-index what it changed.

    The caller (the owner: :func:`memdir.service.rollback` refuses anyone else) is recorded as
    the revert commit's trailers. A record brought back from ``rejected`` (rolling back its
    ``reject``) has its value's tombstone lifted in the same commit (a ``lift`` line in
    ``audit/tombstones.jsonl``; the rollback's audit event names the keys as its reason).

    Raises:
        UsageError: ``yes`` is False (rollback changes beliefs; it must be confirmed), the
            commit is the store's first one, or it was already rolled back (the message names
            the revert commit; nothing is changed).
        NotFoundError: no such commit.
        GitError: the revert conflicts with later commits, or git failed; nothing is
            changed and nothing is staged.
        GitStateError: the store's git is mid-merge, detached…; nothing is changed.
    """
    if not yes:
        raise UsageError(
            "nothing rolled back: rollback changes what memory holds; pass --yes to confirm"
        )
    with store_lock(handle.store, "rollback", handle.lock_timeout_seconds, queue=handle.lock_queue):
        txn.recover(handle.store, handle.index)
        full = gitio.resolve_commit(handle.store, rev)
        parents = gitio.run_git(handle.store, "rev-list", "--parents", "-n1", full).stdout.split()
        if len(parents) < 2:
            raise UsageError("that is the store's first commit; it cannot be rolled back")
        undone = rolled_back_by(handle.store, full)
        if undone is not None:
            raise UsageError(
                f"{full[:12]} was already rolled back by {undone[:12]}; nothing changed "
                f"(to redo the change, roll back {undone[:12]})"
            )
        subject = next(
            (c.subject for c in gitio.log(handle.store, limit=200) if c.hash == full), full
        )
        changed = gitio.changed_paths(handle.store, full)
        logs = [rel for rel in changed if rel.startswith(LOG_DIRS)]
        # Append-only logs (the audit log too): a rollback never removes a line from them.
        contents = gitio.revert_contents(handle.store, full, keep=LOG_DIRS)
        texts = {rel: _as_text(rel, data) for rel, data in contents.items()}
        kept_logs = []
        for rel in logs:
            text = _log_revert(handle, rel, full)
            if text is False:
                kept_logs.append(rel)
            else:
                texts[rel] = text if isinstance(text, str) else None
        stones, lifted = _lifts(handle, texts, caller)
        txn.apply_texts(
            handle.store,
            handle.index,
            texts,
            ROLLBACK_SUBJECT.format(short=full[:12]) + f'undo "{subject}"',
            trailers=caller.trailers() if caller else (),
            reason=f"lifts tombstone {', '.join(lifted)}" if lifted else None,
            stones=stones,
        )
        paths = sorted(texts)
        scan_records(handle)
    return RolledBack(full, paths, sorted(kept_logs))
