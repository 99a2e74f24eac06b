"""Authority: the agent never overrules the owner (DESIGN §4, §10 invariant 8).

Three rules, decided from the :class:`~memdir.kernel.base.caller.Caller` each edge builds:

- **Purge and rollback are the owner's alone.** Any other caller is refused with
  :class:`~memdir.kernel.base.errors.AuthorityError` (exit 3, code ``owner_only``), and the attempt
  is appended to ``audit/refused.jsonl`` and committed, so ``memdir log`` shows it.
- **On an owner's record the agent can only propose.** ``correct``, ``reject`` and ``forget``
  of a record whose origin is ``owner`` (or an imported record that was the owner's) by any
  other caller write a *proposal*, ``proposals/<id>.json``, in its own commit, and leave the
  record untouched. The owner accepts it (the change is then made with the owner's authority)
  or declines it (nothing changes) in ``memdir review``.
- **The agent's own records stay its own**: records of origin ``agent``, ``observer`` or
  ``import`` (not the owner's) are corrected, rejected and forgotten directly.

A proposal file (JSON, one object)::

    {"id": "prop-01m8njn1qx1zh6", "op": "reject", "record": "f-01m8…", "text": null,
     "reason": "…", "by": {"origin": "agent", "channel": "mcp", "host": null, "session": null},
     "created_at": "…", "status": "pending", "decided_at": null, "outcome": null,
     "against": {"status": "active", "updated_at": "…", "text_sha256": "…"}}

``against`` is the target record's state when the agent proposed: a proposal whose record has
since been superseded, rejected, forgotten, purged or reworded is *obsolete*
(:func:`obsolete`): review shows why (and the successor), it cannot be accepted, only
dismissed (declined). Accepting a proposal is one commit holding the change and the proposal's
move to ``decided/`` (:func:`memdir.kernel.storage.lifecycle.accept_proposal`), so one rollback
undoes
both.

It holds the proposed text (for ``correct``) and the agent's reason, never the owner's
record text. A decided proposal moves to ``proposals/decided/<id>.json`` (status, time and
outcome filled in), so ``proposals/*.json`` is exactly what awaits the owner. The store lock is
held around every read-modify-write here.

Imports: standard library only.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from memdir.kernel.base.atomic import write_atomic
from memdir.kernel.base.caller import PROPOSAL_TRAILER, Caller
from memdir.kernel.base.clock import now_iso
from memdir.kernel.base.errors import AuthorityError, NotFoundError, UsageError
from memdir.kernel.base.model import TRANSITIONS, Record
from memdir.kernel.storage import audit, gitio

PROPOSALS_DIR = "proposals"
DECIDED_DIR = "proposals/decided"
REFUSED_LOG = "audit/refused.jsonl"
PROPOSAL_OPS = ("correct", "reject", "forget")
PROPOSAL_PREFIX = "prop-"
PROPOSAL_ID = re.compile(r"^prop-[0-9a-hjkmnp-tv-z]{14}$")
PROPOSED_NOTE = "proposed; the owner decides in `memdir review`"
"""What every channel tells the agent when its change became a proposal (never "done")."""


def owned_by_owner(record: Record) -> bool:
    """Whether ``record`` is the owner's: origin ``owner``, or imported from an owner record."""
    if record.origin == "owner":
        return True
    return record.origin == "import" and (record.source or {}).get("original_origin") == "owner"


def is_proposal_id(value: str) -> bool:
    """Whether ``value`` looks like a proposal id (``prop-`` and 14 base32 characters)."""
    return bool(PROPOSAL_ID.match(value))


def looks_like_proposal(value: str) -> bool:
    """Whether the person meant a proposal (``prop-…``), well formed or not."""
    return value.strip().lower().startswith(PROPOSAL_PREFIX)


def text_hash(text: str) -> str:
    """Return the SHA-256 (hex) of a record's text: what a proposal was made against."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# --- refusals --------------------------------------------------------------------------------


def refuse_unless_owner(store: Path, op: str, target: str, caller: Caller, why: str) -> None:
    """Raise :class:`AuthorityError` unless ``caller`` is the owner; record the attempt first.

    Args:
        store: The store folder.
        op: ``purge`` or ``rollback``.
        target: The record id or commit named (kept to 80 safe characters).
        caller: Who asked.
        why: What the operation does, for the message ("rewrites history").

    Raises:
        AuthorityError: the caller is not the owner (exit 3, code ``owner_only``).
    """
    if caller.is_owner:
        return
    recorded = _record_refusal(store, op, target, caller)
    where = f" ({caller.host}'s shell)" if caller.channel == "cli" and caller.host else ""
    raise AuthorityError(
        f"refused: {op} {why} and is the owner's alone; this request came from the "
        f"{caller.origin} through {caller.channel}{where}, so nothing was changed"
        + (" (the attempt is recorded in `memdir log`)" if recorded else "")
        + f". The person can run `memdir {op} … --yes` in their own terminal; "
        "to retire a belief use `memdir forget`, which proposes it when the record is the owner's"
    )


def _record_refusal(store: Path, op: str, target: str, caller: Caller) -> bool:
    """Append the refused attempt to ``audit/refused.jsonl`` and commit it; never raise."""
    from memdir.kernel.base.errors import MemdirError
    from memdir.kernel.storage.lock import store_lock

    safe_target = re.sub(r"[^A-Za-z0-9._~^-]", "_", target)[:80]
    line = {
        "at": now_iso(),
        "op": op,
        "target": safe_target,
        "code": AuthorityError.code,
        **{k: v for k, v in caller.to_json().items() if v},
    }
    try:
        with store_lock(store, "refused", 5.0, queue=False):
            path = store / REFUSED_LOG
            path.parent.mkdir(parents=True, exist_ok=True)
            with path.open("a", encoding="utf-8") as out:
                out.write(json.dumps(line, ensure_ascii=True) + "\n")
                out.flush()
                os.fsync(out.fileno())
            who = caller.to_json()
            rel = audit.record(
                store, audit.event("refused", [], who, target=safe_target, refused=op)
            )
            gitio.commit(
                store,
                [REFUSED_LOG, rel],
                f"refused {op} {safe_target}: owner only",
                trailers=caller.trailers(),
            )
    except (MemdirError, OSError):
        return False  # recording the attempt must never turn the refusal into another error
    return True


# --- proposals -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Proposal:
    """A change the agent asked for on an owner's record; the owner decides in review."""

    id: str
    op: str  # correct | reject | forget
    record: str  # the target record's id
    text: str | None  # the proposed new text (correct only)
    reason: str | None  # the agent's reason
    by: Caller
    created_at: str
    status: str = "pending"  # pending | accepted | declined
    decided_at: str | None = None
    outcome: str | None = None  # accepted: what was done; declined: the owner's reason
    against: dict[str, str] | None = None  # the record's status, updated_at, text_sha256 then
    valid_until: str | None = None  # correct: the old belief was true until then (new from then)

    @property
    def path(self) -> str:
        """The proposal's file, relative to the store (``decided/`` once decided)."""
        folder = PROPOSALS_DIR if self.status == "pending" else DECIDED_DIR
        return f"{folder}/{self.id}.json"

    def to_json(self) -> dict[str, Any]:
        """Return the proposal as its file's JSON object."""
        return {
            "id": self.id,
            "op": self.op,
            "record": self.record,
            "text": self.text,
            "reason": self.reason,
            "by": self.by.to_json(),
            "created_at": self.created_at,
            "status": self.status,
            "decided_at": self.decided_at,
            "outcome": self.outcome,
            "against": self.against,
            "valid_until": self.valid_until,
        }

    @classmethod
    def from_json(cls, value: Any) -> Proposal:
        """Return the proposal a file holds.

        Raises:
            UsageError: the object is not a proposal (a field is missing or of the wrong type).
        """
        try:
            by = value["by"]
            proposal = cls(
                id=str(value["id"]),
                op=str(value["op"]),
                record=str(value["record"]),
                text=_optional(value.get("text")),
                reason=_optional(value.get("reason")),
                by=Caller(
                    str(by["origin"]),
                    str(by["channel"]),
                    _optional(by.get("host")),
                    _optional(by.get("session")),
                ),
                created_at=str(value["created_at"]),
                status=str(value.get("status") or "pending"),
                decided_at=_optional(value.get("decided_at")),
                outcome=_optional(value.get("outcome")),
                against=_against(value.get("against")),
                valid_until=_optional(value.get("valid_until")),
            )
        except (KeyError, TypeError) as exc:
            raise UsageError(f"not a memdir proposal: missing or bad field {exc}") from exc
        if not is_proposal_id(proposal.id) or proposal.op not in PROPOSAL_OPS:
            raise UsageError(f"not a memdir proposal: id {proposal.id!r}, op {proposal.op!r}")
        return proposal


def _optional(value: Any) -> str | None:
    return None if value is None else str(value)


def _against(value: Any) -> dict[str, str] | None:
    if not isinstance(value, dict):
        return None
    return {str(k): str(v) for k, v in value.items() if isinstance(v, str)}


@dataclass(frozen=True, slots=True)
class Obsolete:
    """Why a pending proposal no longer applies to its record, and the record's successor."""

    reason: str  # one line: "f-… was superseded by f-… since this was proposed"
    successor: str | None = None  # the record that replaced the target, if any

    def to_json(self) -> dict[str, str | None]:
        """Return ``{"reason": …, "successor": … | null}``."""
        return {"reason": self.reason, "successor": self.successor}


def obsolete(proposal: Proposal, record: Record | None) -> Obsolete | None:
    """Return why ``proposal`` no longer applies to ``record`` (its target now), or ``None``.

    Args:
        proposal: A pending proposal.
        record: Its target record read fresh, or ``None`` when the record is gone (purged).

    Returns:
        ``None`` when the proposal can still be applied as proposed; else an :class:`Obsolete`
        naming what happened: superseded (with the successor), rejected, forgotten, gone, or
        its text changed since (a different ``text_sha256`` than the proposal recorded).
    """
    rid = proposal.record
    if record is None:
        return Obsolete(f"{rid} no longer exists (it was purged)")
    if record.status == "superseded":
        return Obsolete(
            f"{rid} was superseded by {record.superseded_by} since this was proposed",
            record.superseded_by,
        )
    allowed = {"correct": ("active", "candidate")}.get(proposal.op)
    target = {"reject": "rejected", "forget": "forgotten"}.get(proposal.op, "")
    if allowed is not None and record.status not in allowed:
        return Obsolete(f"{rid} is {record.status} now")
    if allowed is None and target not in TRANSITIONS.get(record.status, frozenset()):
        return Obsolete(f"{rid} is {record.status} now")
    then = (proposal.against or {}).get("text_sha256")
    if then and then != text_hash(record.text):
        return Obsolete(f"{rid}'s text changed since this was proposed (now {record.text!r})")
    return None


def _mint() -> str:
    from memdir.kernel.base.ids import mint_id

    return PROPOSAL_PREFIX + mint_id("fact").split("-", 1)[1]


def propose(
    store: Path,
    op: str,
    record: Record,
    caller: Caller,
    *,
    text: str | None = None,
    reason: str | None = None,
    valid_until: str | None = None,
) -> Proposal:
    """Write a proposal to ``op`` the owner's ``record``, in its own commit; return it.

    The caller holds the store lock and has checked ``text`` and ``reason`` (secrets, private
    spans) as the operation itself would, and ``valid_until`` (a correction's "true until
    then, then this", already cleaned) as the owner's correction would. The same pending
    proposal made again (same op, record, text, end date and caller origin) is returned
    instead of a second one.

    Raises:
        UsageError: ``op`` is not one of :data:`PROPOSAL_OPS`.
        GitError, OSError: from the write (the proposal file is removed again).
    """
    if op not in PROPOSAL_OPS:
        raise UsageError(f"only {', '.join(PROPOSAL_OPS)} can be proposed, not {op!r}")
    for existing in pending(store):
        if (
            existing.op,
            existing.record,
            existing.text,
            existing.valid_until,
            existing.by.origin,
        ) == (op, record.id, text, valid_until, caller.origin):
            return existing
    against = {
        "status": record.status,
        "updated_at": record.updated_at,
        "text_sha256": text_hash(record.text),
    }
    proposal = Proposal(
        _mint(),
        op,
        record.id,
        text,
        reason,
        caller,
        now_iso(),
        against=against,
        valid_until=valid_until,
    )
    while (store / proposal.path).exists():
        proposal = replace(proposal, id=_mint())
    _write(store, proposal)
    event = audit.event(
        "propose",
        [{"id": record.id, "before": None, "after": None}],
        caller.to_json(),
        reason=reason,
        proposal=proposal.id,
        proposed=op,
    )
    logged = audit.record(store, event)
    subject = f"propose {op} {record.id}" + (f": {reason}" if reason else "")
    try:
        gitio.commit(
            store,
            [proposal.path, logged],
            subject.replace("\n", " ")[:200],
            trailers=(*caller.trailers(), (PROPOSAL_TRAILER, proposal.id)),
        )
    except BaseException:
        (store / proposal.path).unlink(missing_ok=True)
        audit.retract(store, [event], [])
        raise
    return proposal


def _write(store: Path, proposal: Proposal) -> None:
    data = json.dumps(proposal.to_json(), ensure_ascii=False, indent=2) + "\n"
    write_atomic(store / proposal.path, data.encode("utf-8"))


def load(store: Path, proposal_id: str) -> Proposal:
    """Return one proposal.

    Raises:
        NotFoundError: no such proposal (also for a ``prop-…`` id of the wrong shape).
        UsageError: the id is not a proposal id at all, or the file is not a proposal.
    """
    if not is_proposal_id(proposal_id):
        if looks_like_proposal(proposal_id):
            raise NotFoundError(f"no proposal {proposal_id!r}; see `memdir review`")
        raise UsageError(f"{proposal_id!r} is not a proposal id (prop-…); see `memdir review`")
    path = store / PROPOSALS_DIR / f"{proposal_id}.json"
    if not path.exists():
        path = store / DECIDED_DIR / f"{proposal_id}.json"
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise NotFoundError(f"no proposal {proposal_id!r}; see `memdir review`") from None
    except (ValueError, OSError) as exc:
        raise UsageError(f"{path.name} cannot be read: {exc}") from exc
    return Proposal.from_json(value)


def pending_count(store: Path) -> int:
    """Return how many proposals await the owner (file names only: nothing is parsed)."""
    folder = store / PROPOSALS_DIR
    return sum(1 for _ in folder.glob("prop-*.json")) if folder.is_dir() else 0


def pending(store: Path) -> list[Proposal]:
    """Return the proposals awaiting the owner, oldest first (unreadable files are skipped)."""
    found = []
    folder = store / PROPOSALS_DIR
    if not folder.is_dir():
        return []
    for path in sorted(folder.glob("prop-*.json")):
        try:
            proposal = load(store, path.stem)
        except (NotFoundError, UsageError):
            continue
        if proposal.status == "pending":
            found.append(proposal)
    found.sort(key=lambda p: (p.created_at, p.id))
    return found


def decided_files(proposal: Proposal, outcome: str) -> tuple[Proposal, dict[str, str | None]]:
    """Return ``proposal`` accepted with ``outcome``, and the file moves that record it.

    The moves (``proposals/<id>.json`` removed, ``proposals/decided/<id>.json`` written) go in
    the same :func:`memdir.kernel.storage.txn.apply` as the accepted change, so they are one commit.
    """
    done = replace(proposal, status="accepted", decided_at=now_iso(), outcome=outcome)
    data = json.dumps(done.to_json(), ensure_ascii=False, indent=2) + "\n"
    return done, {proposal.path: None, done.path: data}


def drop_for(store: Path, record_id: str) -> list[str]:
    """Delete the pending proposals about ``record_id`` (purged); return their paths.

    The caller holds the store lock and commits the returned paths.
    """
    gone = []
    for proposal in pending(store):
        if proposal.record == record_id:
            (store / proposal.path).unlink(missing_ok=True)
            gone.append(proposal.path)
    return gone


def decide(store: Path, proposal: Proposal, status: str, caller: Caller, outcome: str) -> Proposal:
    """Mark ``proposal`` accepted or declined by the owner, in its own commit; return it.

    The file moves to ``proposals/decided/`` in that commit.

    The caller holds the store lock and has applied the change (for ``accepted``).

    Raises:
        AuthorityError: ``caller`` is not the owner.
        UsageError: ``status`` is not ``accepted`` or ``declined``.
        GitError, OSError: from the write.
    """
    if not caller.is_owner:
        raise AuthorityError("refused: only the owner decides a proposal, in `memdir review`")
    if status not in ("accepted", "declined"):
        raise UsageError(f"a proposal is accepted or declined, not {status!r}")
    done = replace(proposal, status=status, decided_at=now_iso(), outcome=outcome)
    _write(store, done)
    (store / proposal.path).unlink(missing_ok=True)
    verb = "accept" if status == "accepted" else "decline"
    logged = audit.record(
        store,
        audit.event(
            f"{verb}-proposal",
            [{"id": done.record, "before": None, "after": None}],
            caller.to_json(),
            reason=outcome,
            proposal=done.id,
        ),
    )
    gitio.commit(
        store,
        [proposal.path, done.path, logged],
        f"{verb} proposal {done.id} ({done.op} {done.record}): {outcome}".replace("\n", " ")[:200],
        trailers=(*caller.trailers(), (PROPOSAL_TRAILER, done.id)),
    )
    return done
