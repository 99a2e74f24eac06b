"""``memdir purge``: erase a record's text from everywhere memdir keeps it (DESIGN §4).

Forget retires a belief and keeps its history; purge is for text that must not exist at all
(a leaked secret, personal data). It removes:

1. the record's file from the working tree, and its rows from the index;
2. every journal and action-log line (and ``state/*.log`` line) that carries the text of any
   version of the record, matched on normalised words so case and punctuation do not hide it.
   The logs are rewritten with :func:`memdir.kernel.base.appendlog.rewrite`, so hooks appending at
   the same moment lose nothing (DESIGN §7);
3. the record's file from every commit of the store's history, the same log lines from every
   historic log blob, and commit messages that carried the text, by rewriting the history with
   ``git fast-export`` / ``git fast-import``; exactly the objects the rewrite left unreachable
   are then destroyed (a person's stashes, other reflogs and unrelated loose objects are kept).

It never edits another record, now or in history: an id is not the secret, so records whose
``supersedes``, ``superseded_by`` or ``links`` name the purged id keep it, and records whose own
text holds the purged text are named in the report for the user to purge or correct. The
working tree, git's index and HEAD agree afterwards (``git status`` is clean).

The report names every place with a count. Copies pushed to a remote or cloned elsewhere are
outside the store's reach; the report says so.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from memdir.kernel.base import appendlog
from memdir.kernel.base.atomic import write_atomic
from memdir.kernel.base.caller import Caller
from memdir.kernel.base.errors import GitError, RecordParseError, UsageError
from memdir.kernel.lang.text import is_cjk, normalize, normalized_text
from memdir.kernel.storage import audit, authority, gitio, journal, txn
from memdir.kernel.storage.lifecycle import Handle, load
from memdir.kernel.storage.lock import store_lock
from memdir.kernel.storage.recordfile import read_canonical

_DATA = re.compile(rb"^data (\d+)$")
_TEXT_LINE = re.compile(r"^text:[ \t]*(.*)$", re.MULTILINE)
LOG_FOLDERS = ("journal", "actions")
"""Tracked append-only logs: their lines are filtered, now and in every historic version."""
REMOVED_MESSAGE = b"[message removed by memdir purge]\n"
REMOVED_REASON = "[reason removed by memdir purge]"
"""What an audit event's ``reason`` becomes when it held the purged text (the event stays)."""


@dataclass
class Erasure:
    """The erasure report: every place the text was removed from, and where it may remain."""

    record_id: str
    places: list[dict[str, Any]] = field(default_factory=list)
    caveats: list[str] = field(default_factory=list)
    still_held_by: list[dict[str, str]] = field(default_factory=list)

    def add(self, place: str, detail: str, count: int = 1) -> None:
        """Record one place the text was removed from, with how many items there."""
        self.places.append({"place": place, "detail": detail, "count": count})

    def to_json(self) -> dict[str, Any]:
        """Return the report as a JSON object."""
        return {
            "purged": self.record_id,
            "places": self.places,
            "caveats": self.caveats,
            "still_held_by": self.still_held_by,
        }


class _Needle:
    """Decides whether text carries any of the purged texts (all words, in order)."""

    def __init__(self, texts: set[str]) -> None:
        keys = {normalized_text(t) for t in texts if t and t.strip()}
        self.keys = sorted(k for k in keys if k)
        # A cheap first test per line: the longest word of each key, when it is plain ASCII
        # (an escaped non-ASCII word in raw JSON would not match it byte for byte).
        self.probes = [max(k.split(), key=len) for k in self.keys]
        self.cjk = {k: k.replace(" ", "") for k in self.keys if any(is_cjk(w) for w in k.split())}

    def text_carries(self, value: str) -> bool:
        """Whether ``value`` holds one of the texts, word for word (normalised)."""
        if not self.keys or not self._maybe(value):
            return False
        found = normalized_text(value)
        padded = f" {found} "
        for key in self.keys:
            if f" {key} " in padded:
                return True
            compact = self.cjk.get(key)
            if compact and compact in found.replace(" ", ""):
                return True  # CJK has no spaces: the text may sit inside a longer run
        return False

    def _maybe(self, line: str) -> bool:
        folded = normalize(line)
        return any(not probe.isascii() or probe in folded for probe in self.probes)

    def carries(self, raw: bytes) -> bool:
        """Whether one log line (JSON or plain text) holds one of the texts."""
        line = raw.decode("utf-8", "replace")
        if not self.keys or not self._maybe(line):
            return False  # most lines: no JSON parsing, no word splitting
        stripped = line.strip()
        if stripped.startswith("{"):
            try:
                value = json.loads(stripped)
            except (ValueError, RecursionError):
                value = None
            if isinstance(value, dict):
                return any(self.text_carries(s) for s in _strings(value))
        return self.text_carries(line)

    def sift(self, data: bytes) -> tuple[bytes, int]:
        """Return ``data`` without the lines that carry a text, and how many were dropped."""
        kept: list[bytes] = []
        dropped = 0
        for line in appendlog.split_lines(data):
            if self.carries(line):
                dropped += 1
            else:
                kept.append(line)
        return (b"".join(kept), dropped) if dropped else (data, 0)

    def redact(self, data: bytes) -> tuple[bytes, int]:
        """Return audit ``data`` with the reasons that carry a text replaced; how many lines.

        An audit event holds hashes, never text, except the ``reason`` a person or agent gave
        ("… is wrong"), which may quote the belief: that field becomes :data:`REMOVED_REASON`
        and the event stays (who did what, when). A line that still carries a text after that
        (not an event memdir wrote) is dropped.
        """
        out: list[bytes] = []
        changed = 0
        for line in appendlog.split_lines(data):
            if not self.carries(line):
                out.append(line)
                continue
            changed += 1
            try:
                value = json.loads(line)
            except (ValueError, RecursionError):
                continue
            if not isinstance(value, dict):
                continue
            if isinstance(value.get("reason"), str) and self.text_carries(value["reason"]):
                value["reason"] = REMOVED_REASON
            if not any(self.text_carries(text) for text in _strings(value)):
                out.append(json.dumps(value, ensure_ascii=True).encode("utf-8") + b"\n")
        return (b"".join(out), changed) if changed else (data, 0)


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _is_log(path: str) -> bool:
    parts = PurePosixPath(path).parts
    return len(parts) == 2 and parts[0] in LOG_FOLDERS and parts[1].endswith(".jsonl")


def _is_audit(path: str) -> bool:
    parts = PurePosixPath(path).parts
    return len(parts) == 2 and parts[0] == audit.AUDIT_DIR and parts[1].endswith(".jsonl")


def _record_id(path: str) -> str | None:
    parts = PurePosixPath(path).parts
    if len(parts) >= 2 and parts[0] == "records" and path.endswith(".md"):
        return PurePosixPath(path).stem
    return None


# --- the history as a fast-export stream -------------------------------------------------------


def _items(stream: bytes) -> Iterator[tuple[bytes, bytes | None]]:
    """Yield ``(line, payload)`` for each line of a fast-export stream; payload after ``data``."""
    cursor = 0
    while cursor < len(stream):
        end = stream.find(b"\n", cursor)
        end = len(stream) if end < 0 else end
        line = stream[cursor:end]
        cursor = end + 1
        match = _DATA.match(line)
        if match:
            size = int(match.group(1))
            yield line, stream[cursor : cursor + size]
            cursor += size
        else:
            yield line, None


@dataclass
class _History:
    """What the exported history holds, read before anything is changed."""

    stream: bytes
    blobs: dict[bytes, bytes] = field(default_factory=dict)  # mark -> content
    uses: dict[bytes, set[str]] = field(default_factory=dict)  # mark -> paths it appears at

    refs: list[str] = field(default_factory=list)  # the refs exported (and rewritten)
    reachable: set[str] = field(default_factory=set)  # object ids reachable before the rewrite
    purged_blobs: set[str] = field(default_factory=set)  # ids of the purged file's versions

    @classmethod
    def export(cls, store: Path, rel: str) -> _History:
        listed = (
            gitio.run_git(store, "for-each-ref", "--format=%(refname)")
            .stdout.decode("utf-8", "replace")
            .split()
        )
        for name in listed:
            if name.startswith(SYNC_REFS):  # `memdir sync`'s copy of the remote: fetched again
                gitio.run_git(store, "update-ref", "-d", name)
        refs = [
            name
            for name in listed
            if name != STASH_REF  # a person's stashes are theirs: never rewritten or expired
            and not name.startswith(SYNC_REFS)
        ]
        stream = gitio.run_git(
            store,
            "fast-export",
            "--signed-tags=strip",
            "--tag-of-filtered-object=drop",
            "--reencode=yes",
            *refs,
        ).stdout
        history = cls(stream, refs=refs)
        history.reachable, history.purged_blobs = _reachable(store, rel)
        kind, mark = b"", b""
        for line, payload in _items(stream):
            if payload is not None:
                if kind == b"blob":
                    history.blobs[mark] = payload
                continue
            if line.startswith((b"blob", b"commit ", b"reset ", b"tag ")):
                kind, mark = line.split(b" ", 1)[0], b""
            elif line.startswith(b"mark "):
                mark = line[5:]
            elif line.startswith(b"M "):
                _, _, ref, path = line.split(b" ", 3)
                history.uses.setdefault(ref, set()).add(_unquote(path))
        return history

    def versions(self, rel: str) -> list[bytes]:
        """Every committed content of ``rel``."""
        return [blob for mark, blob in self.blobs.items() if rel in self.uses.get(mark, ())]


STASH_REF = "refs/stash"
SYNC_REFS = "refs/memdir/"
"""Where ``memdir sync`` keeps what it fetched (:mod:`memdir.store.teamsync`); a purge deletes
these copies of the remote rather than rewriting them (the next sync fetches them again)."""


def _reachable(store: Path, rel: str = "") -> tuple[set[str], set[str]]:
    """Every object reachable from a ref, a reflog or the index; and ``rel``'s blob ids."""
    out = gitio.run_git(
        store, "rev-list", "--objects", "--all", "--reflog", "--indexed-objects"
    ).stdout.decode("utf-8", "replace")
    found, versions = set(), set()
    for line in out.splitlines():
        sha, _, path = line.partition(" ")
        found.add(sha)
        if rel and path == rel:
            versions.add(sha)
    return found, versions


def _unquote(path: bytes) -> str:
    text = path.decode("utf-8", "replace")
    if text.startswith('"') and text.endswith('"'):
        try:
            return str(json.loads(text))
        except ValueError:
            return text
    return text


def _texts_of(content: str, rel: str, scope: str) -> set[str]:
    """The text and body of one version of a record file (canonical or not)."""
    try:
        parsed = read_canonical(content, Path(rel), scope)
    except RecordParseError:  # an unreadable old version still yields its raw lines
        parsed = None
    if parsed is not None:
        return {parsed.record.text, parsed.record.body}
    found = set()
    for raw in _TEXT_LINE.findall(content):
        value = raw.strip()
        try:
            loaded = json.loads(value)
        except ValueError:
            loaded = value.strip("'")
        if isinstance(loaded, str):
            found.add(loaded)
    return found


def _rewrite_stream(history: _History, rel: str, needle: _Needle) -> tuple[bytes, dict[str, int]]:
    """Return the stream without ``rel`` and its blobs, with log blobs and messages filtered."""
    counts = {"blobs": 0, "lines": 0, "messages": 0, "file_versions": 0}
    only_purged = {m for m, paths in history.uses.items() if paths == {rel}}
    logs = {m for m, paths in history.uses.items() if paths and all(map(_is_log, paths))}
    audits = {m for m, paths in history.uses.items() if paths and all(map(_is_audit, paths))}
    out: list[bytes] = []
    held: list[bytes] = []  # a blob's lines, until its mark says whether it is kept
    kind, mark = b"", b""
    target = rel.encode("utf-8")
    skip_blank = False  # the optional newline after a dropped blob's data goes with it
    for line, payload in _items(history.stream):
        if skip_blank and payload is None and line == b"":
            skip_blank = False
            continue
        skip_blank = False
        if payload is None and line.startswith((b"blob", b"commit ", b"reset ", b"tag ")):
            kind, mark = line.split(b" ", 1)[0], b""
        if kind == b"blob" and payload is None:
            if line.startswith(b"mark "):
                mark = line[5:]
            held.append(line + b"\n")
            continue
        if payload is not None:
            if kind == b"blob":
                kind, blob_lines, held = b"", held, []
                if mark in only_purged:
                    skip_blank = True
                    continue  # the purged file's own content: not imported at all
                if mark in logs or mark in audits:
                    payload, dropped = (needle.sift if mark in logs else needle.redact)(payload)
                    counts["blobs"] += bool(dropped)
                    counts["lines"] += dropped
                out += blob_lines
            elif needle.text_carries(payload.decode("utf-8", "replace")):
                payload = REMOVED_MESSAGE
                counts["messages"] += 1
            out.append(b"data %d\n" % len(payload) + payload)
            continue
        if (line.startswith(b"M ") and line.split(b" ", 3)[-1] == target) or line == b"D " + target:
            counts["file_versions"] += line.startswith(b"M ")
            continue
        out.append(line + b"\n")
    return b"".join(out), counts


def _import(store: Path, history: _History, stream: bytes) -> int:
    """Replace the exported refs with the rewritten history; destroy only what that orphaned.

    The reflogs of the rewritten refs (and of ``HEAD``) lose the entries the rewrite made
    unreachable, then exactly the objects that were reachable before and are not now are
    deleted. A person's stashes, other reflog entries, and objects that were already
    unreachable before (a dropped stash one could still recover) are kept: no
    ``reflog expire --all`` and no ``gc --prune=now``.

    Returns:
        How many objects were destroyed.

    Raises:
        GitError: git failed.
    """
    done = gitio.run_git(
        store, "fast-import", "--force", "--quiet", input_bytes=stream, check=False
    )
    if done.returncode != 0:
        raise GitError(f"history rewrite failed: {done.stderr.decode('utf-8', 'replace').strip()}")
    gitio.run_git(store, "reset", "-q")  # git's index follows the rewritten HEAD; files stay
    gitio.run_git(
        store, "reflog", "expire", "--expire=never", "--expire-unreachable=now",
        "HEAD", *history.refs,
    )  # fmt: skip
    doomed = history.reachable - _reachable(store)[0]
    if not doomed:
        return 0
    # Packed objects that nothing reaches become loose (-A), so only the doomed are deleted.
    gitio.run_git(store, "repack", "-A", "-d", "-q")
    objects = gitio.git_dir(store) / "objects"
    for sha in doomed:
        with contextlib.suppress(FileNotFoundError):
            (objects / sha[:2] / sha[2:]).unlink()
    return len(doomed)


def _rewrite_history(
    store: Path, history: _History, rel: str, needle: _Needle, erasure: Erasure
) -> None:
    rewritten, counts = _rewrite_stream(history, rel, needle)
    destroyed = _import(store, history, rewritten)
    erasure.add(
        "git history",
        f"{counts['file_versions']} version(s) of {rel} removed from every commit",
        counts["file_versions"],
    )
    if counts["lines"]:
        erasure.add(
            "git history",
            f"{counts['lines']} line(s) removed from {counts['blobs']} historic log file(s)",
            counts["lines"],
        )
    if counts["messages"]:
        erasure.add(
            "git history", f"{counts['messages']} commit message(s) replaced", counts["messages"]
        )
    erasure.add(
        "git objects",
        f"{destroyed} object(s) the rewrite left unreachable destroyed (reflog entries of the "
        "rewritten branches expired; stashes and other unreachable objects kept)",
        destroyed,
    )
    kept = [sha for sha in history.purged_blobs if _exists(store, sha)]
    if kept:
        erasure.caveats.append(
            f"{len(kept)} old version(s) of {rel} are still reachable from a stash or another "
            f"reflog entry: drop it (`git -C {store} stash list`, `git stash drop`), then "
            f"`git -C {store} gc --prune=now` erases them"
        )


def _exists(store: Path, sha: str) -> bool:
    return gitio.run_git(store, "cat-file", "-e", sha, check=False).returncode == 0


# --- the working tree --------------------------------------------------------------------------


def _filter_logs(store: Path, needle: _Needle, erasure: Erasure) -> list[str]:
    """Drop the carrying lines from every log file; return the store paths rewritten."""
    changed = []
    targets = [(folder, "*.jsonl") for folder in LOG_FOLDERS] + [("state", "*.log")]
    for folder, pattern in targets:
        directory = store / folder
        for path in sorted(directory.glob(pattern)) if directory.is_dir() else []:
            done = appendlog.rewrite(path, lambda line: not needle.carries(line))
            if done.dropped:
                changed.append(f"{folder}/{path.name}")
                erasure.add(folder, f"{folder}/{path.name}: {done.dropped} line(s)", done.dropped)
    logs = store / audit.AUDIT_DIR  # appended to under the store lock only, which purge holds
    for path in sorted(logs.glob("*.jsonl")) if logs.is_dir() else []:
        data = path.read_bytes()
        redacted, count = needle.redact(data)
        if count:
            write_atomic(path, redacted)
            changed.append(f"{audit.AUDIT_DIR}/{path.name}")
            erasure.add("audit", f"{audit.AUDIT_DIR}/{path.name}: {count} reason(s) removed", count)
    return changed


def _holders(store: Path, history: _History, rel: str, needle: _Needle) -> list[dict[str, str]]:
    """Files other than the purged one and the logs that still hold the text, now or before."""
    found: dict[str, dict[str, str]] = {}
    for path in sorted(store.joinpath("records").rglob("*.md")):
        name = path.relative_to(store).as_posix()
        if name != rel and needle.text_carries(path.read_text("utf-8", "replace")):
            found[name] = {"id": _record_id(name) or "", "path": name, "in": "working tree"}
    for mark, blob in history.blobs.items():
        for name in sorted(history.uses.get(mark, ())):
            if name == rel or _is_log(name) or _is_audit(name) or name in found:
                continue
            if needle.text_carries(blob.decode("utf-8", "replace")):
                found[name] = {"id": _record_id(name) or "", "path": name, "in": "history"}
    return sorted(found.values(), key=lambda h: h["path"])


def _caveats(handle: Handle, record: Any, erasure: Erasure) -> None:
    for holder in erasure.still_held_by:
        who = holder["id"] or holder["path"]
        if holder["in"] == "working tree":
            erasure.caveats.append(f"still holds the text: {who} — purge it too or correct it")
        else:
            erasure.caveats.append(
                f"an earlier version of {who} holds the text in history — purge {who} to erase it"
            )
    referrers = sorted(
        {src for src, dst, _ in handle.index.links_of(record.id) if dst == record.id}
        | {
            doc["id"]
            for doc in handle.index.list_docs()
            if record.id in (doc.get("supersedes"), doc.get("superseded_by"))
        }
        - {record.id}
    )
    if referrers:
        erasure.caveats.append(
            f"{', '.join(referrers)} keep a reference to {record.id} (links or supersession): "
            "an id is not the text, so they were left unchanged"
        )
    if record.supersedes and record.status != "superseded":
        erasure.caveats.append(
            f"{record.supersedes} stays superseded: the correction that replaced it is gone, "
            "so nothing active holds that belief now"
        )
    erasure.caveats.append(
        "copies pushed to a remote or cloned elsewhere are not erased; force-push the store "
        "and ask other clones to re-clone"
    )


def purge(handle: Handle, record_id: str, *, yes: bool, caller: Caller | None = None) -> Erasure:
    """Erase ``record_id`` and its text from the store and its history.

    The caller (the owner: :func:`memdir.service.purge` refuses anyone else) is recorded as
    the purge commit's trailers.

    Raises:
        UsageError: ``yes`` is False (purge rewrites history and cannot be undone).
        NotFoundError: no such record.
        GitStateError: the store's git is mid-merge, detached…; nothing is erased.
        GitError: the history rewrite failed; the working tree, logs and index are untouched
            and the purge can be run again.
        LockTimeoutError: another writer held the store, or an appender held a log too long.
    """
    if not yes:
        raise UsageError(
            "nothing purged: purge erases text from history and cannot be undone; "
            "pass --yes to confirm"
        )
    store = handle.store
    with store_lock(store, "purge", handle.lock_timeout_seconds, queue=handle.lock_queue):
        txn.recover(store, handle.index)
        gitio.check_writable(store)  # refused before anything is erased
        record, rel = load(handle, record_id)
        history = _History.export(store, rel)
        texts = {record.text, record.body}
        for version in history.versions(rel):
            texts |= _texts_of(version.decode("utf-8", "replace"), rel, handle.manifest.scope)
        needle = _Needle(texts)
        erasure = Erasure(record.id)
        erasure.still_held_by = _holders(store, history, rel, needle)
        _caveats(handle, record, erasure)
        # History first: a git failure here leaves the record, its logs and the index as they
        # were, so the purge can simply be run again.
        rewritten = Erasure(record.id)
        _rewrite_history(store, history, rel, needle, rewritten)
        before = audit.file_hash(store / rel)
        (store / rel).unlink()
        erasure.add("working tree", rel)
        with handle.index.write():
            handle.index.forget_path(rel)
        erasure.add("index", f"record {record.id} and its links")
        changed_logs = _filter_logs(store, needle, erasure)
        erasure.places += rewritten.places
        erasure.caveats += rewritten.caveats
        tracked = (
            gitio.run_git(store, "ls-files", "--", *changed_logs).stdout.decode().split()
            if changed_logs
            else []
        )
        dropped = authority.drop_for(store, record.id)  # they can no longer apply to anything
        if dropped:
            tracked += dropped
            erasure.add("proposals", "pending proposals about it, closed", len(dropped))
        # The audit log and the tombstones hold no text (a reason quoting it was removed above):
        # purge keeps them and logs itself.
        who = caller.to_json() if caller else {"origin": "owner", "channel": "cli"}
        hashes = [{"id": record.id, "before": before, "after": None}]
        tracked.append(audit.record(store, audit.event("purge", hashes, who)))
        gitio.commit(
            store, tracked, purge_message(record.id), trailers=caller.trailers() if caller else ()
        )
        if changed_logs:
            journal.sync_journal(handle.index, store)
            erasure.add("index", "journal turns re-indexed from the rewritten files")
        handle.index.scrub()
        erasure.add("index", "deleted pages and search segments compacted (VACUUM)")
        if handle.manifest.index_backend:  # a shared index: the hooks' local one is erased too
            _scrub_local_index(store, rel)
            erasure.add("index", "the local SQLite index the hooks read, compacted too")
    return erasure


def _scrub_local_index(store: Path, rel: str) -> None:
    """Drop ``rel`` and re-read the journal in the local SQLite index, then compact it."""
    from memdir.store.scan import open_index

    local = open_index(store)
    try:
        with local.write():
            local.forget_path(rel)
        journal.sync_journal(local, store)
        local.scrub()
    finally:
        local.close()


def purge_message(record_id: str) -> str:
    """The message of the commit that records a purge (:func:`gitio.purge_commit` finds it)."""
    return f"{gitio.purge_subject(record_id)} erased from working tree, index, logs and history"
