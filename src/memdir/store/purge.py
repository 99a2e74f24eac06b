"""``memdir purge``: erase a record's text from everywhere memdir keeps it (DESIGN §4).

Forget retires a belief and keeps its history; purge is for text that must not exist at all
(a leaked secret, personal data). It removes:

1. the record file from the working tree;
2. its rows from the index (and re-indexes the journal files it rewrote);
3. every journal and action-log line that carried the text (matched on normalised words, so
   case and punctuation do not hide it), and such lines in ``state/`` logs. The logs are
   rewritten with :func:`memdir.kernel.appendlog.rewrite`, so lines hooks append meanwhile
   are kept (DESIGN §7);
4. the file from every commit of the store's history, and the same lines from every historic
   journal blob, by rewriting the history with ``git fast-export`` / ``git fast-import``; commit
   messages that carried the text are replaced. Old objects are then expired and pruned.

It prints an erasure report naming every place. Copies already pushed to a remote or cloned
elsewhere are outside the store's reach; the report says so.
"""

from __future__ import annotations

import json
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memdir.kernel import appendlog, gitio, journal, txn
from memdir.kernel.errors import GitError, UsageError
from memdir.kernel.lifecycle import Handle, load
from memdir.kernel.lock import store_lock
from memdir.kernel.text import normalized_text

_DATA = re.compile(rb"^data (\d+)$")


@dataclass
class Erasure:
    """The erasure report: every place the text was removed from."""

    record_id: str
    places: list[dict[str, Any]] = field(default_factory=list)
    caveats: list[str] = field(default_factory=list)

    def add(self, place: str, detail: str, count: int = 1) -> None:
        """Record one place the text was removed from."""
        self.places.append({"place": place, "detail": detail, "count": count})

    def to_json(self) -> dict[str, Any]:
        """Return the report as a JSON object."""
        return {"purged": self.record_id, "places": self.places, "caveats": self.caveats}


class _Needle:
    """Decides whether a line of text carries the purged record's text or id."""

    def __init__(self, text: str, record_id: str) -> None:
        self.words = f" {normalized_text(text)} "
        self.record_id = record_id

    def text_carries(self, value: str) -> bool:
        """Whether ``value`` holds the record's words in order (normalised)."""
        return self.words.strip() != "" and self.words in f" {normalized_text(value)} "

    def carries(self, line: str) -> bool:
        """Whether one line (JSON or plain text) holds the text or cites the record."""
        if self.record_id in line:
            return True
        stripped = line.strip()
        if stripped.startswith("{"):
            try:
                value = json.loads(stripped)
            except ValueError:
                value = None
            if isinstance(value, dict):
                return any(isinstance(v, str) and self.text_carries(v) for v in value.values())
        return self.text_carries(line)

    def filter_bytes(self, data: bytes) -> tuple[bytes, int]:
        """Return ``data`` without the lines that carry the text, and how many were dropped."""
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            return data, 0
        kept, dropped = [], 0
        for line in text.splitlines(keepends=True):
            if self.carries(line):
                dropped += 1
            else:
                kept.append(line)
        return ("".join(kept).encode("utf-8"), dropped) if dropped else (data, 0)


def _filter_logs(store: Path, needle: _Needle, erasure: Erasure) -> list[str]:
    """Drop the carrying lines from every log; hooks appending meanwhile lose nothing."""
    changed = []
    targets = [(folder, "*.jsonl") for folder in ("journal", "actions")] + [("state", "*.log")]
    for folder, pattern in targets:
        directory = store / folder
        for path in sorted(directory.glob(pattern)) if directory.is_dir() else []:
            done = appendlog.rewrite(
                path, lambda line: not needle.carries(line.decode("utf-8", "replace"))
            )
            if done.dropped:
                if folder != "state":
                    changed.append(f"{folder}/{path.name}")
                erasure.add(folder, f"{folder}/{path.name}: {done.dropped} line(s)", done.dropped)
    return changed


def _rewrite_stream(stream: bytes, rel: str, needle: _Needle) -> tuple[bytes, dict[str, int]]:
    """Rewrite a ``git fast-export`` stream: drop ``rel``, filter blobs and messages."""
    out: list[bytes] = []
    counts = {"blobs": 0, "lines": 0, "messages": 0, "file_versions": 0}
    kind = b""
    cursor = 0
    target = rel.encode("utf-8")
    while cursor < len(stream):
        end = stream.find(b"\n", cursor)
        end = len(stream) if end < 0 else end
        line = stream[cursor:end]
        cursor = end + 1
        match = _DATA.match(line)
        if match:
            size = int(match.group(1))
            payload = stream[cursor : cursor + size]
            cursor += size
            if kind == b"blob":
                payload, dropped = needle.filter_bytes(payload)
                if dropped:
                    counts["blobs"] += 1
                    counts["lines"] += dropped
            elif needle.text_carries(payload.decode("utf-8", "replace")):
                payload = b"[message removed by memdir purge]\n"
                counts["messages"] += 1
            out.append(b"data %d\n" % len(payload) + payload)
            continue
        if line.startswith((b"blob", b"commit ", b"reset ", b"tag ")):
            kind = line.split(b" ", 1)[0]
        if (line.startswith(b"M ") and line.split(b" ", 3)[-1] == target) or line == b"D " + target:
            counts["file_versions"] += 1
            continue
        out.append(line + b"\n")
    return b"".join(out), counts


def _rewrite_history(store: Path, rel: str, needle: _Needle, erasure: Erasure) -> None:
    exported = gitio.run_git(
        store,
        "fast-export",
        "--all",
        "--signed-tags=strip",
        "--tag-of-filtered-object=drop",
        "--reencode=yes",
    ).stdout
    rewritten, counts = _rewrite_stream(exported, rel, needle)
    done = subprocess.run(
        [gitio.git_path(), "-C", str(store), "fast-import", "--force", "--quiet"],
        input=rewritten,
        capture_output=True,
        check=False,
    )
    if done.returncode != 0:
        raise GitError(f"history rewrite failed: {done.stderr.decode('utf-8', 'replace').strip()}")
    gitio.run_git(store, "reset", "-q")  # git's index follows the rewritten HEAD; files stay
    gitio.run_git(store, "reflog", "expire", "--expire=now", "--all")
    gitio.run_git(store, "gc", "--prune=now", "--quiet")
    erasure.add(
        "git history",
        f"{counts['file_versions']} version(s) of {rel} removed from history",
        counts["file_versions"],
    )
    if counts["lines"]:
        erasure.add(
            "git history",
            f"{counts['lines']} line(s) removed from {counts['blobs']} historic file(s)",
            counts["lines"],
        )
    if counts["messages"]:
        erasure.add(
            "git history", f"{counts['messages']} commit message(s) replaced", counts["messages"]
        )
    erasure.add("git objects", "reflog expired and unreachable objects pruned", 1)


def purge(handle: Handle, record_id: str, *, yes: bool) -> Erasure:
    """Erase ``record_id`` and its text from the store and its history.

    Raises:
        UsageError: ``yes`` is False (purge rewrites history and cannot be undone).
        NotFoundError: no such record.
        GitError: the history rewrite failed (the working tree is already purged).
        LockTimeoutError: another writer held the store.
    """
    if not yes:
        raise UsageError(
            "purge erases text from history and cannot be undone; pass --yes to confirm"
        )
    store = handle.store
    with store_lock(store, "purge", handle.lock_timeout_seconds):
        txn.recover(store, handle.index)
        record, rel = load(handle, record_id)
        needle = _Needle(record.text, record.id)
        erasure = Erasure(record.id)
        (store / rel).unlink()
        erasure.add("working tree", rel)
        with handle.index.write():
            handle.index.forget_path(rel)
        erasure.add("index", f"record {record.id} and its links")
        changed_logs = _filter_logs(store, needle, erasure)
        _rewrite_history(store, rel, needle, erasure)
        tracked = (
            gitio.run_git(store, "ls-files", "--", *changed_logs).stdout.decode().split()
            if changed_logs
            else []
        )
        gitio.commit(
            store, tracked, f"purge {record.id}: erased from working tree, index, logs and history"
        )
        if changed_logs:
            journal.sync_journal(handle.index, store)
            erasure.add("index", "journal turns re-indexed from the rewritten files")
        handle.index.scrub()
        erasure.add("index", "deleted pages and search segments compacted (VACUUM)")
    erasure.caveats.append(
        "copies pushed to a remote or cloned elsewhere are not erased; force-push the store "
        "and ask other clones to re-clone"
    )
    return erasure
