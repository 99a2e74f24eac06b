"""One logical write: record files, one git commit, the index, all or nothing.

The caller holds the store lock (:func:`memdir.kernel.storage.lock.store_lock`) around the whole
read-modify-write. :func:`apply` first writes an *intent* (``state/intent.json``: every file's
new content and the commit message), then replaces the files atomically, commits, updates the
index and removes the intent. A process killed at any instant leaves either no intent (nothing
changed, or everything did) or an intent that :func:`recover` replays on the next write or
``memdir health``: writing the same bytes again is idempotent, and a replay whose files are
already committed makes no second commit. So a multi-file change such as a correction (new
record + superseded old one) is never half-applied, and is always exactly one commit.

A failure (git, a permission, a full disk, a read-only file system) is different from a kill:
the process is alive to undo what it did. Every file is put back as it was, the intent is
removed and nothing is staged (:func:`memdir.kernel.storage.gitio.commit` builds commits in memdir's
own index), so a failed write is absent, never live and reported failed (invariant 9). A
write refused because of the store's git state (a merge in progress, a detached HEAD) touches
no file at all. Only a process that died leaves an intent for :func:`recover`.

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
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from memdir.kernel.base.atomic import fsync_dir, write_atomic
from memdir.kernel.base.errors import GitError, GitStateError, RejectedBeliefError
from memdir.kernel.base.model import Record
from memdir.kernel.index import FileStat, OperationalError
from memdir.kernel.storage import audit, gitio, identity, manifest
from memdir.kernel.storage.paths import MANIFEST_NAME, StoreLayout, layout
from memdir.kernel.storage.recordfile import dump, read_canonical

TYPE_CHECKING = False
if TYPE_CHECKING:
    from memdir.kernel.index.interface import IndexBackend

INTENT_NAME = StoreLayout.INTENT
REFUSED_INTENT_NAME = StoreLayout.REFUSED_INTENT
_PROPOSAL_FILE = re.compile(r"^proposals/(decided/)?prop-[0-9a-hjkmnp-tv-z]{14}\.json$")
"""A proposal's file (:mod:`memdir.kernel.storage.authority`): accepting one moves it in the same
write."""


def _contained(texts: object) -> bool:
    """Whether an intent's files are all records or proposals memdir writes.

    Record files are ``records/<kind>/<name>.md``; proposal files
    ``proposals/[decided/]prop-….json``; the manifest, when a write adopts the store's
    project identity.
    """
    if not isinstance(texts, dict):
        return False
    for rel, text in texts.items():
        if rel == MANIFEST_NAME and isinstance(text, str):
            continue  # a store adopting its project identity (identity.adopt)
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
    return layout(store).in_state(INTENT_NAME)


def apply(
    store: Path,
    index: IndexBackend,
    changes: list[Change],
    message: str,
    *,
    trailers: gitio.Trailers = (),
    op: str | None = None,
    reason: str | None = None,
    files: Mapping[str, str | None] | None = None,
    details: Mapping[str, object] | None = None,
) -> list[Record | None]:
    """Write ``changes`` as one commit and index them; the caller holds the store lock.

    This is the one write every record change goes through, so it carries the trust checks
    (:mod:`memdir.kernel.storage.audit`): a record that would become ``active`` or ``candidate``
    with a new text is refused when that value is tombstoned; a record becoming ``rejected``
    tombstones its value; and one audit event (hashes only) is part of the intent, appended
    and committed with the files. A project-scoped record that names no project is given the
    store's identity (:mod:`memdir.kernel.storage.identity`); a store that has none yet adopts
    one, its manifest line committed with this write.

    Args:
        store: The store folder.
        index: Its open index.
        changes: The files of this one logical write.
        message: The commit message.
        trailers: Who made the change (:meth:`memdir.kernel.base.caller.Caller.trailers`), ending
            the commit message; a replay by :func:`recover` keeps them.
        op: The audit event's operation (default: the message's first word).
        reason: The audit event's reason.
        files: Proposal files (``proposals/…``: text, or ``None`` to delete) written in the
            same commit, e.g. an accepted proposal's move to ``decided/``.
        details: Further keys of the audit event (e.g. ``from_origin`` when the owner's
            review gives a candidate the owner's authority).

    Returns:
        Each change's record as written (``None`` for a deletion), in order: a project-scoped
        record that named no project carries the store's.

    Raises:
        RejectedBeliefError: a new or changed text repeats a tombstoned value (nothing is
            changed).
        GitStateError: the store's git is mid-merge, detached…; nothing was written.
        GitError: git is missing or failed; every file is as it was, the intent is removed
            and nothing is staged (the write is refused and absent).
        UsageError: a record holds a value that cannot be written (nothing is changed).
        OSError: the disk is full or read-only, or a file has no write permission; every
            file is put back as it was and the intent is removed (the write is absent).
    """
    gitio.git_path()  # fail before touching anything when git is missing
    project, manifest_text = identity.adopt(store, manifest.load(store))
    changes = [
        Change(c.path, identity.stamped(c.record, project) if c.record is not None else None)
        for c in changes
    ]
    texts = {c.path: (dump(c.record) if c.record is not None else None) for c in changes}
    texts.update(files or {})
    if manifest_text is not None and changes:  # a store from before identities: adopt one
        texts[MANIFEST_NAME] = manifest_text
    who = audit.who_from_trailers(trailers)
    stones = []
    live = audit.tombstones(store)
    for change in changes:
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
    apply_texts(
        store,
        index,
        texts,
        message,
        trailers=trailers,
        op=op,
        reason=reason,
        stones=stones,
        details=details,
    )
    return [c.record for c in changes]  # as written: project-scoped ones carry the project


def _text_changed(store: Path, rel: str, text: str) -> bool:
    """Whether the record file at ``rel`` does not already hold ``text`` (new or changed)."""
    try:
        parsed = read_canonical((store / rel).read_text(encoding="utf-8"), Path(rel))
    except (OSError, UnicodeDecodeError):
        return True
    return parsed is None or parsed.record.text != text


def apply_texts(
    store: Path,
    index: IndexBackend,
    texts: dict[str, str | None],
    message: str,
    *,
    trailers: gitio.Trailers = (),
    op: str | None = None,
    reason: str | None = None,
    stones: list[str] | None = None,
    details: Mapping[str, object] | None = None,
) -> None:
    """Write files (``None`` deletes one) as one commit, all or nothing; see :func:`apply`.

    One audit event (``op``, default the message's first word; the caller from ``trailers``;
    ``reason``; each file's SHA-256 before and after; the keys of ``details``) and the
    tombstone lines ``stones`` are appended to ``audit/`` just before the commit and committed
    with the files.

    Raises:
        GitStateError, GitError, OSError: as :func:`apply`.
    """
    if all(_unchanged(store, rel, text) for rel, text in texts.items()):
        return  # the same bytes again (a near-duplicate within the same second): no empty commit
    gitio.check_writable(store)  # refused before any file is touched
    events = [{**_event_for(store, texts, message, trailers, op, reason), **(details or {})}]
    stones = list(stones or [])
    durable = _contained(texts)  # only record files can be replayed after a crash
    if durable:
        intent = {
            "message": message,
            "files": texts,
            "trailers": [list(t) for t in trailers],
            "audit": events,
            "tombstones": stones,
        }
        write_atomic(_intent_path(store), json.dumps(intent, ensure_ascii=False).encode("utf-8"))
    try:
        _replay(store, index, texts, message, trailers=trailers, events=events, stones=stones)
    except GitError as err:
        if "nothing was stored" not in str(err):
            err.args = (f"nothing was stored: {err}",)
        raise


def _event_for(
    store: Path,
    texts: dict[str, str | None],
    message: str,
    trailers: gitio.Trailers,
    op: str | None,
    reason: str | None,
) -> dict[str, object]:
    """Return the audit event of one write: each file's SHA-256 now (before) and after."""
    hashes = [
        {
            "id": Path(str(rel)).stem,
            "before": audit.file_hash(store / str(rel)),
            "after": audit.content_hash(None if text is None else str(text).encode("utf-8")),
        }
        for rel, text in texts.items()
        if rel != MANIFEST_NAME
    ]
    who = audit.who_from_trailers(trailers)
    return audit.event(
        op or (message.split(maxsplit=1) or ["write"])[0], hashes, who, reason=reason
    )


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
    index: IndexBackend,
    texts: dict[str, str | None],
    message: str,
    *,
    trailers: gitio.Trailers = (),
    recovering: bool = False,
    events: list[dict[str, object]] | None = None,
    stones: list[str] | None = None,
) -> None:
    """Write the files and commit them; on any failure put every file back as it was.

    The audit ``events`` and tombstone ``stones`` are appended before the commit and
    committed with the files (on a replay, only those the logs do not hold yet); on a git
    failure they are taken out again.

    Raises:
        GitError: git failed; the files are as they were before this call.
        OSError: a file could not be written; the files are put back as they were and,
            unless this is a recovery, the intent is removed (the write is absent).
    """
    before = {rel: _read(store / rel) for rel in texts}
    try:
        for rel, text in texts.items():
            _put(store / rel, text.encode("utf-8") if text is not None else None)
        paths = list(texts) + audit.append(store, list(events or []), recovering=recovering)
        if stones:
            audit.add_tombstones(store, list(stones), recovering=recovering)
            paths.append(audit.TOMBSTONES)
        if not recovering or gitio.changed_since_head(store, paths):
            gitio.commit(store, paths, message, trailers=trailers)
        # else: the interrupted process had committed; a second, empty commit would say nothing
    except Exception:
        # Any failure before the commit (git, a permission, a full disk, a read-only file
        # system): this process is alive, so it undoes what it did and the write is absent
        # (invariant 9). Only a killed process leaves an intent for recover().
        restored = _restore(store, before)
        audit.retract(store, list(events or []), list(stones or []))
        if not recovering:
            _drop_intent(store, before, restored)
        raise
    with contextlib.suppress(OperationalError):
        # Busy past the timeout: the next stat scan indexes these files (module docstring).
        _reindex(store, index, texts)
    with contextlib.suppress(FileNotFoundError):
        _intent_path(store).unlink()


def _restore(store: Path, before: dict[str, bytes | None]) -> bool:
    """Put every file back as ``before`` held it; return whether all of them could be."""
    restored = True
    for rel, data in before.items():
        try:
            _put(store / rel, data)
        except OSError:
            restored = False
    return restored


def _drop_intent(store: Path, before: dict[str, bytes | None], restored: bool) -> None:
    """Remove a failed write's intent; never raise.

    When a file could not be put back (the disk is still full), the intent is replaced by
    one that writes the old contents, so the next write or ``memdir health`` finishes the
    undo: the failed write never becomes live.
    """
    path = _intent_path(store)
    try:
        files = {rel: (None if d is None else d.decode("utf-8")) for rel, d in before.items()}
        if restored or not _contained(files):
            path.unlink(missing_ok=True)
            return
        undo = {"message": "undo a write that failed", "files": files, "audit": []}
        write_atomic(path, json.dumps(undo, ensure_ascii=False).encode("utf-8"))
    except (OSError, UnicodeDecodeError):
        with contextlib.suppress(OSError):
            path.unlink(missing_ok=True)


def _reindex(store: Path, index: IndexBackend, texts: dict[str, str | None]) -> None:
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


def recover(store: Path, index: IndexBackend) -> bool:
    """Finish a logical write that a killed process left behind; return whether there was one.

    The caller holds the store lock.

    Raises:
        GitError: git is missing or failed; the files are as they were and the intent stays,
            so a later write or ``memdir health`` finishes it once git works.
    """
    path = layout(store).state_path(INTENT_NAME)
    try:
        intent = json.loads(path.read_text(encoding="utf-8"))
        texts = intent["files"]
        message = str(intent["message"])
        trailers = _trailers(intent.get("trailers"))
        events = [e for e in intent.get("audit") or [] if _is_event(e)]
        if "audit" not in intent and isinstance(texts, dict):  # an intent from before the log
            events = [_event_for(store, texts, message, trailers, None, None)]
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
    try:
        _replay(
            store,
            index,
            texts,
            message + "\n\n(completed after an interruption)",
            trailers=trailers,
            recovering=True,
            events=events,
            stones=stones,
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


def _is_event(value: object) -> bool:
    """Whether an intent's audit entry is an event memdir wrote (id, op, month-shaped time)."""
    if not isinstance(value, dict):
        return False
    at = value.get("at")
    return (
        isinstance(value.get("id"), str)
        and isinstance(value.get("op"), str)
        and isinstance(at, str)
        and len(at) >= 7
        and at[:4].isdigit()
        and at[4] == "-"
        and at[5:7].isdigit()
    )


def _is_stone(value: object) -> bool:
    """Whether an intent's tombstone entry is one JSON line with a ``sha256:`` key."""
    if not isinstance(value, str) or value.count("\n") != 1 or not value.endswith("\n"):
        return False
    try:
        item = json.loads(value)
    except ValueError:
        return False
    return isinstance(item, dict) and str(item.get("key", "")).startswith("sha256:")
