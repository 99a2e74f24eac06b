"""The observer: journal turns in, candidate beliefs out, one byte offset per journal file.

Offsets live in ``state/observer.json``. On the very first run every existing journal file is
started at its end (history is not re-read, let alone sent to a model) unless ``from_start``;
after that, a file that appears (a new day) is read from its start. Only complete lines are
read, so a line another process is writing waits for the next tick. A file that was replaced,
shrunk or rewritten (``memdir purge``, a ``git checkout`` of an older version, a hand edit: a
SHA-256 of the bytes just before the saved offset no longer matches) is read again from its
start; near-duplicate handling makes that idempotent (a turn already distilled adds no
candidate and no commit). Offsets are saved after every batch, so a killed run loses at most
the batch in hand, and it is redone.

Each batch goes to the offline extractor and, when an endpoint is configured, to the LLM. An
LLM timeout or HTTP error leaves the offset where it was (the batch is retried next tick, and the
files after it are not read this pass: ``kept`` counts those turns, ``endpoint_failed`` is set);
a malformed reply is rejected and the batch counts as done. ``turns`` counts the turns read.
Every candidate cites its journal file and byte range and has origin ``observer``; one that
repeats a rejected belief is dropped; one distilled from the person's own words in a second,
different session, when the candidate also came from the person's words, is promoted to active
when the manifest's ``promote_corroborated`` says so (:func:`person_said`; the agent's turns
never corroborate).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memdir.kernel.base import jsonl
from memdir.kernel.base.atomic import write_text_atomic
from memdir.kernel.base.caller import OBSERVER, Caller
from memdir.kernel.base.errors import (
    JournalOffsetError,
    LockTimeoutError,
    MemdirError,
    RefusedError,
)
from memdir.kernel.lang.redact import redact
from memdir.kernel.storage import lifecycle, spool
from memdir.kernel.storage.journal import journal_files
from memdir.kernel.storage.lifecycle import Handle
from memdir.kernel.storage.lock import file_lock
from memdir.kernel.storage.paths import StoreLayout, layout
from memdir.observe import extract, llm

STATE_NAME = StoreLayout.OBSERVER
LOCK_NAME = StoreLayout.OBSERVER_LOCK
BATCH_TURNS = 40
BATCH_CHARS = 24_000
"""A batch ends at whichever comes first; it bounds one LLM call's prompt."""


@dataclass
class Observed:
    """What one observer pass did."""

    turns: int = 0  # worthy journal turns read and distilled in this pass
    candidates: list[str] = field(default_factory=list)  # ids written or updated
    promoted: list[str] = field(default_factory=list)  # ids made active by corroboration
    dropped: list[dict[str, str]] = field(default_factory=list)  # {"text", "why"}
    errors: list[str] = field(default_factory=list)
    busy: bool = False  # another observer run held the lock
    waiting: int = 0  # worthy turns left for a later pass: fewer than [observer] min_lines
    kept: int = 0  # turns left for the next pass because the LLM endpoint failed
    endpoint_failed: bool = False  # the LLM endpoint timed out or answered an HTTP error

    def to_json(self) -> dict[str, Any]:
        """Return the pass as a JSON object."""
        return {
            "turns": self.turns,
            "kept": self.kept,
            "endpoint_failed": self.endpoint_failed,
            "candidates": self.candidates,
            "promoted": self.promoted,
            "dropped": self.dropped,
            "errors": self.errors,
            "busy": self.busy,
            "waiting": self.waiting,
        }


def _load_state(store: Path) -> dict[str, Any] | None:
    path = layout(store).state_path(STATE_NAME)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and isinstance(data.get("files"), dict) else None


def _save_state(store: Path, state: dict[str, Any]) -> None:
    write_text_atomic(
        layout(store).in_state(STATE_NAME), json.dumps(state, indent=1, sort_keys=True)
    )


@dataclass
class _Turn:
    text: str
    who: str
    session: str
    file: str
    start: int
    end: int


def person_said(store: Path, citation: object) -> bool:
    """Whether every journal turn a citation names was the person's (``who: "user"``).

    A citation is ``journal/<file>:<start>-<end>`` (a byte range of the journal). Corroboration
    rests on the person's own words only (issue 10, mark 6): an assistant turn saying "we
    decided to skip the integration tests" twice, in two sessions, is the agent repeating
    itself, not the person agreeing. Anything unreadable counts as not the person's.

    Args:
        store: The store folder.
        citation: A record's ``source.journal`` (any value; only a well-formed one can pass).

    Returns:
        True when the range holds at least one turn and all of them are the person's.
    """
    if not isinstance(citation, str) or not citation.startswith("journal/"):
        return False
    name, _, span = citation[len("journal/") :].rpartition(":")
    start, _, end = span.partition("-")
    bad_name = ".." in name.split("/") or name.startswith("/") or not name.endswith(".jsonl")
    if bad_name or not start.isdigit() or not end.isdigit():
        return False
    try:
        with open(store / "journal" / name, "rb") as fh:
            fh.seek(int(start))
            data = fh.read(max(int(end) - int(start), 0))
        turns = [json.loads(line) for line in data.splitlines() if line.strip()]
    except (OSError, ValueError):
        return False
    return bool(turns) and all(isinstance(t, dict) and t.get("who") == "user" for t in turns)


def _propose(
    handle: Handle,
    observed: Observed,
    text: str,
    kind: str,
    turn: _Turn,
    importance: int | None,
    citation: str,
) -> None:
    own_words = bool(turn.session) and person_said(handle.store, citation)
    corroborating = [
        doc
        for _, doc in lifecycle.find_similar(
            handle.index, text, handle.manifest.near_duplicate, ("candidate",)
        )
        if own_words
        and (doc.get("source") or {}).get("session") not in ("", None, turn.session)
        and person_said(handle.store, (doc.get("source") or {}).get("journal"))
    ]
    retired = lifecycle.find_similar(
        handle.index, text, handle.manifest.near_duplicate, ("forgotten", "superseded")
    )
    if retired and not corroborating:
        # The owner retired it, or a correction replaced it: re-reading an old journal (a
        # rewritten file is read again from its start) must not bring it back.
        doc = retired[0][1]
        observed.dropped.append({"text": text, "why": f"{doc['status']}: {doc['id']}"})
        return
    try:
        if corroborating and handle.manifest.promote_corroborated:
            first = corroborating[0]
            sessions = f"{first['source'].get('session')} and {turn.session}"
            done = lifecycle.set_status(
                handle,
                first["id"],
                "active",
                reason=f"corroborated by the person in sessions {sessions}",
                op="promote",
                caller=OBSERVER,
            )
            observed.promoted.append(done.record.id)
            return
        done = lifecycle.remember(
            handle,
            text,
            kind=kind,
            caller=Caller("observer", "observer", session=turn.session or None),
            status="candidate",
            journal=citation,
            importance=importance,
        )
        if done.created:  # a near-duplicate of a record already there is not a new candidate
            observed.candidates.append(done.record.id)
    except RefusedError as err:  # reported masked: a refused secret is never printed either
        observed.dropped.append({"text": redact(text), "why": err.code})
    except MemdirError as err:
        observed.dropped.append({"text": redact(text), "why": f"{err.code}: {err}"})


def _distil(
    handle: Handle, observed: Observed, batch: list[_Turn], endpoint: llm.Endpoint | None
) -> bool:
    """Propose candidates from one batch; return False when the batch must be retried."""
    for turn in batch:
        citation = f"journal/{turn.file}:{turn.start}-{turn.end}"
        for found in extract.extract(turn.text, turn.who):
            _propose(handle, observed, found.text, found.kind, turn, None, citation)
    if endpoint is None or not batch:
        return True
    transcript = "\n".join(f"[{t.who}] {t.text}" for t in batch)
    try:
        proposals = llm.distill(endpoint, transcript)
    except llm.DistillError as err:
        observed.errors.append(str(err))
        observed.endpoint_failed = True
        return False
    except llm.MalformedReplyError as err:
        observed.errors.append(f"rejected the model's reply: {err}")
        return True
    first, last = batch[0], batch[-1]
    citation = f"journal/{first.file}:{first.start}-{last.end}"
    for proposal in proposals:
        _propose(
            handle, observed, proposal.text, proposal.kind, last, proposal.importance, citation
        )
    return True


def _read_file(path: Path, offset: int) -> tuple[list[_Turn], int]:
    turns: list[_Turn] = []
    try:
        tail = jsonl.read_tail(path, offset)
    except JournalOffsetError:
        tail = jsonl.read_tail(path, 0)  # replaced or rewritten: read it again
    for line in tail.lines:
        value = line.value or {}
        text, who = value.get("text"), value.get("who")
        if not isinstance(text, str) or not isinstance(who, str) or extract.is_noise(text):
            continue
        session = value.get("session") if isinstance(value.get("session"), str) else ""
        turns.append(
            _Turn(text, who, str(session), path.name, line.offset, line.offset + line.length)
        )
    return turns, tail.next_offset


FINGERPRINT_BYTES = 256
"""How many bytes before a file's offset the observer's state fingerprints."""


def _fingerprint(path: Path, offset: int) -> str:
    """SHA-256 (hex) of the up to :data:`FINGERPRINT_BYTES` bytes of ``path`` before ``offset``.

    Saved with the offset: a file whose bytes there differ next time was rewritten under the
    observer, so its offset no longer points at the turns it read. ``""`` when unreadable.
    """
    start = max(0, int(offset) - FINGERPRINT_BYTES)
    try:
        with path.open("rb") as fh:
            fh.seek(start)
            data = fh.read(int(offset) - start)
    except (OSError, ValueError):
        return ""
    return hashlib.sha256(data).hexdigest()


def _batches(turns: list[_Turn]) -> list[list[_Turn]]:
    batches: list[list[_Turn]] = [[]]
    size = 0
    for turn in turns:
        if len(batches[-1]) >= BATCH_TURNS or size + len(turn.text) > BATCH_CHARS:
            batches.append([])
            size = 0
        batches[-1].append(turn)
        size += len(turn.text)
    return [b for b in batches if b]


def observe_once(
    handle: Handle, *, from_start: bool = False, endpoint: llm.Endpoint | None = None
) -> Observed:
    """Run one observer pass over every journal file (see the module docstring)."""
    observed = Observed()
    try:
        with file_lock(layout(handle.store).in_state(LOCK_NAME), "observe", 0.2):
            _pass(handle, observed, from_start, endpoint)
    except LockTimeoutError:
        observed.busy = True
    return observed


def _pass(
    handle: Handle, observed: Observed, from_start: bool, endpoint: llm.Endpoint | None
) -> None:
    # An explicit request a prompt hook ran out of time for is the owner's, stored first, so
    # the same sentence read from the journal below only confirms it, never a candidate.
    with contextlib.suppress(MemdirError, OSError):
        spool.drain(handle)
    state = _load_state(handle.store)
    first_run = state is None or from_start
    state = state if state is not None and not from_start else {"files": {}}
    pending: list[tuple[Path, dict[str, Any], list[_Turn], int]] = []
    for path in journal_files(handle.store):
        known = state["files"].get(path.name)
        stat = path.stat()
        if known is None:
            offset = stat.st_size if (first_run and not from_start) else 0
        elif (
            known.get("ino") != stat.st_ino
            or known.get("offset", 0) > stat.st_size
            or known.get("before", _fingerprint(path, known.get("offset", 0)))
            != _fingerprint(path, known.get("offset", 0))
        ):
            # Replaced, shrunk, or its bytes before the offset changed (a rollback or checkout
            # of an older version, a hand edit, purge): read it again from its start. Turns
            # already distilled find their candidates as near-duplicates and add nothing.
            offset = 0
        else:
            offset = int(known.get("offset", 0))
        entry: dict[str, Any] = {"offset": offset, "ino": stat.st_ino}
        entry["before"] = _fingerprint(path, offset)
        state["files"][path.name] = entry
        turns, next_offset = _read_file(path, offset)
        pending.append((path, entry, turns, next_offset))
    worthy = sum(len(turns) for _, _, turns, _ in pending)
    if worthy and worthy < handle.manifest.observe_min_lines:
        # Too little to distil yet ([observer] min_lines): every offset stays before these
        # turns, so the next pass reads them again together with what follows.
        observed.waiting = worthy
        _save_state(handle.store, state)
        return
    for path, entry, turns, next_offset in pending:
        if observed.endpoint_failed:
            observed.kept += len(turns)  # not read now: its offset stays, the next pass reads it
            continue
        done_to = int(entry["offset"])
        batches = _batches(turns)
        for number, batch in enumerate(batches):
            ok = _distil(handle, observed, batch, endpoint)
            observed.turns += len(batch)  # read and given to the offline extractor either way
            if not ok:
                # The endpoint failed: keep the offset before this batch, retry next tick.
                observed.kept += sum(len(b) for b in batches[number:])
                break
            done_to = batch[-1].end
            entry.update(offset=done_to, before=_fingerprint(path, done_to))
            _save_state(handle.store, state)
        else:
            done_to = next_offset  # every batch done: skip the noise lines after the last turn too
        entry.update(offset=done_to, before=_fingerprint(path, done_to))
    state["last_run_at"] = time.time()
    _save_state(handle.store, state)
