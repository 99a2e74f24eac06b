"""The belief lifecycle: remember, correct, reject, forget, accept (DESIGN §4).

Every operation is one read-modify-write under the store lock, ending in one
:func:`memdir.kernel.storage.txn.apply` (files, one commit, index). The gates run in DESIGN §4's
order: provenance, then the secret scan, then the near-duplicate check, then the write.

- **remember**: a near-duplicate of an active (or candidate) record of the same kind updates
  that record (``updated_at`` bumped; aliases, tags and links merged) instead of adding one; a
  near-duplicate of a ``rejected`` record is refused, naming it, so a belief the owner
  rejected is never re-learned. Near-duplicate means a shingle similarity at or above the
  manifest's ``[policy] near_duplicate`` (default 0.7; see
  :func:`memdir.kernel.lang.text.similarity`).
- **correct** writes a new record with ``supersedes: old``; the old one becomes
  ``superseded`` with ``superseded_by`` and the reason. One commit holds both.
- **reject** / **forget** / **accept** change a status along
  :data:`memdir.kernel.base.model.TRANSITIONS`; repeating one is a no-op, not an error.
- **Authority** (DESIGN §4): every operation takes the :class:`~memdir.kernel.base.caller.Caller`
  its edge built, and its commit carries the caller as git trailers. A caller that is not the
  owner may correct, reject or forget its own records; on the owner's record
  (:func:`memdir.kernel.storage.authority.owned_by_owner`) the change becomes a proposal for the
  owner
  to decide in review, and the record is left as it is. A near-duplicate the agent remembers
  of an owner's record leaves that record unchanged too.

Records are re-read from their files before every change (never from the index alone), so a
hand edit made since the last index update is kept. The kernel reads memdir's canonical files
itself; callers above the kernel pass a tolerant ``read`` for anything else.

Imports: standard library only.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memdir.kernel.base import validity
from memdir.kernel.base.caller import PROPOSAL_TRAILER, Caller
from memdir.kernel.base.clock import now_iso, parse_instant, today_iso
from memdir.kernel.base.errors import (
    AuthorityError,
    NotFoundError,
    ObsoleteProposalError,
    ProvenanceError,
    RecordParseError,
    RejectedBeliefError,
    TransitionError,
    UsageError,
)
from memdir.kernel.base.ids import KIND_PREFIX, check_id, mint_id
from memdir.kernel.base.model import ACCEPTED_ORIGINS, TRANSITIONS, Record, relative_path
from memdir.kernel.lang.polarity import opposed
from memdir.kernel.lang.redact import check_text, strip_private
from memdir.kernel.lang.text import (
    needle_tags,
    normalized_text,
    query_terms,
    similarity,
)
from memdir.kernel.storage import audit, authority, txn
from memdir.kernel.storage.authority import Proposal
from memdir.kernel.storage.lock import DEFAULT_TIMEOUT_SECONDS, store_lock
from memdir.kernel.storage.manifest import Manifest
from memdir.kernel.storage.recordfile import Parsed, read_canonical

if TYPE_CHECKING:
    from memdir.kernel.index.interface import IndexBackend

MAX_TEXT_CHARS = 4000
"""Longest belief text: a belief is a sentence or a short paragraph; prose goes in the body."""
MAX_BODY_CHARS = 64 * 1024
MAX_LIST_ITEMS = 64
SIMILAR_POOL = 30
"""Records compared for near-duplication: the best BM25 matches of the new text."""

ORIGIN_RANK = {"observer": 0, "import": 1, "agent": 2, "owner": 3}
"""When a near-duplicate is confirmed, the record keeps the strongest origin that stated it."""

Reader = Callable[[Path, str], Parsed]
"""Tolerant reader: (absolute file, store-relative path) → Parsed; raises RecordParseError."""


@dataclass
class Handle:
    """An open store for lifecycle operations: folder, index, manifest and a tolerant reader."""

    store: Path
    index: IndexBackend
    manifest: Manifest
    read: Reader | None = None
    lock_timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS
    lock_queue: bool = True  # wait while the lock keeps changing hands (False: hooks' budget)


@dataclass(frozen=True, slots=True)
class Written:
    """The outcome of one lifecycle operation."""

    record: Record  # the record as it now is (the new one, for correct)
    created: bool  # a new record file was written
    changed: bool  # anything was written at all (False for a repeated reject, say)
    previous: Record | None = None  # the superseded record, for correct
    note: str = ""  # one line for the person: what happened
    proposal: Proposal | None = None  # set when the change became a proposal (nothing changed)
    conflicts: tuple[str, ...] = ()  # ids of active records a new belief contradicts


# --- input checks ----------------------------------------------------------------------------


def clean_text(text: str, what: str = "text") -> str:
    """Return ``text`` with private spans dropped and outer whitespace stripped.

    Raises:
        UsageError: it is empty, longer than :data:`MAX_TEXT_CHARS`, or not valid Unicode.
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise UsageError(f"{what} is not valid UTF-8") from exc
    cleaned = strip_private(text).strip()
    if not cleaned:
        raise UsageError(f"{what} is empty")
    if len(cleaned) > MAX_TEXT_CHARS:
        raise UsageError(
            f"{what} is {len(cleaned)} characters; the limit is {MAX_TEXT_CHARS} "
            "(put longer prose in the body)"
        )
    return cleaned


def clean_list(name: str, values: Iterable[str]) -> tuple[str, ...]:
    """Return list values stripped, de-duplicated, tags without a leading ``#``.

    ``<private>…</private>`` spans are dropped, as from every text memdir keeps.

    A single value that is a JSON array (``'["a", "b"]'``) is read as that array (case B11).

    Raises:
        UsageError: an item is not text, or there are more than :data:`MAX_LIST_ITEMS`.
    """
    import json

    items: list[Any] = list(values)
    if len(items) == 1 and isinstance(items[0], str) and items[0].strip().startswith("["):
        try:
            decoded = json.loads(items[0])
        except (ValueError, RecursionError) as exc:
            raise UsageError(
                f"{name}: {items[0]!r} looks like a JSON array but is not one"
            ) from exc
        if not isinstance(decoded, list):
            raise UsageError(f"{name} must be a list of strings")
        items = decoded
    out: list[str] = []
    for item in items:
        if not isinstance(item, str):
            raise UsageError(f"{name} must be strings, not {type(item).__name__}")
        value = strip_private(item).strip()
        if name == "tags":
            value = value.lstrip("#").strip()
        if value and value not in out:
            out.append(value)
    if len(out) > MAX_LIST_ITEMS:
        raise UsageError(f"at most {MAX_LIST_ITEMS} {name}")
    return tuple(out)


def check_origin(origin: str) -> None:
    """Refuse origins a record may not carry (``untrusted``, ``system``, unknown).

    Raises:
        ProvenanceError: the origin is refused by policy.
    """
    if origin not in ACCEPTED_ORIGINS:
        raise ProvenanceError(
            f"refused: origin {origin!r} may not write memory (only "
            f"{', '.join(ACCEPTED_ORIGINS)}); web pages, tool output and other people's words "
            "are untrusted"
        )


def clean_reason(reason: str | None) -> str | None:
    """Return a reason with private spans dropped (``None`` when nothing is left).

    Raises:
        SecretError: the reason holds a secret.
    """
    if reason is None:
        return None
    check_text(reason)
    return strip_private(reason).strip() or None


def _check_importance(importance: int) -> int:
    if not 1 <= importance <= 10:
        raise UsageError(f"importance must be 1..10, not {importance}")
    return importance


_ENTITY_TYPE = re.compile(r"[a-z][a-z0-9-]{0,39}")


def check_entity_type(kind: str, entity_type: str | None) -> str | None:
    """Return an entity's type, lower-cased, or ``None`` when none was given.

    Raises:
        UsageError: a type was given for a kind other than ``entity``, or it is not one word of
            lower-case letters, digits and hyphens (it names a folder in an AMP export).
    """
    if entity_type is None or not entity_type.strip():
        return None
    value = entity_type.strip().lower()
    if kind != "entity":
        raise UsageError(f"--entity-type is for kind entity, not {kind}")
    if not _ENTITY_TYPE.fullmatch(value):
        raise UsageError(
            f"entity type {entity_type!r} must be one word: lower-case letters, digits, hyphens"
        )
    return value


def _check_kind(kind: str) -> str:
    if kind not in KIND_PREFIX:
        raise UsageError(f"unknown kind {kind!r}; expected one of {', '.join(KIND_PREFIX)}")
    return kind


# --- reading ---------------------------------------------------------------------------------


def load(handle: Handle, record_id: str) -> tuple[Record, str]:
    """Return a record read fresh from its file, and its store-relative path.

    Raises:
        NotFoundError: no record has this id (the index is brought up to date by the caller).
        RecordParseError: the file cannot be read (and no tolerant reader was given).
    """
    record_id = check_id(record_id)
    rel = handle.index.get_path(record_id)
    if rel is None:
        raise NotFoundError(
            f"no record {record_id!r}; see `memdir list` or `memdir recall`", record_id=record_id
        )
    path = handle.store / rel
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise NotFoundError(
            f"record {record_id} was deleted from disk; run `memdir reindex`"
        ) from exc
    except UnicodeDecodeError as exc:
        raise RecordParseError(f"{rel} is not UTF-8 text") from exc
    parsed = read_canonical(text, Path(rel), handle.manifest.scope)
    if parsed is None:
        if handle.read is None:
            raise RecordParseError(f"{rel} was edited by hand; it needs the full reader")
        parsed = handle.read(path, rel)
    return parsed.record, rel


def compare(
    index: IndexBackend, text: str, statuses: Iterable[str]
) -> list[tuple[float, bool, dict[str, Any]]]:
    """Compare ``text`` with the records most like it: ``(similarity, opposed, doc)``.

    Args:
        index: The store's index.
        text: A belief's text.
        statuses: The record statuses to compare with.

    Returns:
        The best :data:`SIMILAR_POOL` BM25 matches of ``text`` (or, for text with no words,
        the records of the same text), most similar first: the shingle similarity in
        [0, 1] (1.0 for equal normalised text) and whether the record contradicts ``text``
        (:func:`memdir.kernel.lang.polarity.opposed`; never for equal text).
    """
    terms = query_terms(text)
    # No words at all (emoji, symbols): the index compares against exact texts.
    docs = index.similar_candidates(terms, text, list(statuses), SIMILAR_POOL)
    found = []
    key = normalized_text(text)
    for doc in docs:
        if normalized_text(doc["text"]) == key:
            found.append((1.0, False, doc))
        else:
            found.append((similarity(text, doc["text"]), opposed(text, doc["text"]), doc))
    found.sort(key=lambda item: -item[0])
    return found


def find_similar(
    index: IndexBackend, text: str, threshold: float, statuses: Iterable[str]
) -> list[tuple[float, dict[str, Any]]]:
    """Return ``(similarity, doc)`` for near-duplicates of ``text``, most similar first.

    A near-duplicate is at or above ``threshold`` (shingle similarity) and does not
    contradict ``text``: "Never use tabs…" is no duplicate of "Always use tabs…", however
    many words they share (:func:`memdir.kernel.lang.polarity.opposed`). Every write path
    that merges or refuses a repeat (remember, correct, the observer, importers) asks here.
    """
    return [
        (score, doc)
        for score, against, doc in compare(index, text, statuses)
        if score >= threshold and not against
    ]


# --- operations ------------------------------------------------------------------------------


def _message(op: str, record_id: str, reason: str | None, **details: str) -> str:
    subject = f"{op} {record_id}" + (f": {reason}" if reason else "")
    lines = [f"{key}: {value}" for key, value in details.items() if value]
    return subject.replace("\n", " ")[:200] + ("\n\n" + "\n".join(lines) if lines else "")


def remember(
    handle: Handle,
    text: str,
    *,
    kind: str = "fact",
    origin: str = "owner",
    channel: str = "cli",
    aliases: Iterable[str] = (),
    tags: Iterable[str] = (),
    links: Iterable[str] = (),
    importance: int | None = None,
    body: str = "",
    status: str = "active",
    session: str | None = None,
    journal: str | None = None,
    observed_at: str | None = None,
    extra: tuple[tuple[str, str], ...] = (),
    caller: Caller | None = None,
    entity_type: str | None = None,
    valid_from: str | None = None,
    valid_until: str | None = None,
) -> Written:
    """Store one belief, or update its near-duplicate (see the module docstring).

    Args:
        handle: The open store.
        text: The belief; private spans are dropped.
        kind: One of DESIGN §1's kinds.
        origin: Who it came from, decided by the channel, never by the caller's claim.
        channel: ``cli``, ``mcp``, ``hook``, ``observer`` or ``import``.
        aliases: Other words for it, searched by recall.
        tags: Labels.
        links: Ids of related records; each must exist.
        importance: 1..10; 5 when ``None``.
        body: Optional longer prose; ``[[id]]`` references in it are links too.
        status: ``active``, or ``candidate`` for the observer.
        session: The host session it was said in, if any.
        journal: A citation (``journal/<day>.jsonl:<start>-<end>``) of the evidence.
        observed_at: When it was observed (ISO date or instant, kept as written); today when
            ``None``.
        valid_from: When it became true in the world (date or ISO time); ``None``: when it
            was observed (:mod:`memdir.kernel.base.validity`).
        valid_until: When it stops (stopped) being true, exclusive; ``None``: still true.
        extra: Further front matter keys with their raw YAML text (bug records keep their
            signature and occurrences here).
        caller: Who is acting; when given, its origin, channel and session replace
            ``origin``, ``channel`` and ``session``.
        entity_type: For an ``entity``: what sort (``person``, ``service``, ``team``…), kept
            as ``source.entity_type`` (AMP's ``entities/<type>/`` folder).

    A needle tag the text starts with (``[决定] …``, see :func:`needle_tags`) is added to
    ``tags``, on every write path.

    Returns:
        :class:`Written`; ``created`` is False when a near-duplicate was updated instead.

    Raises:
        ProvenanceError: the origin is refused.
        SecretError: the text, aliases, tags or body hold a secret.
        RejectedBeliefError: it repeats a rejected belief.
        NotFoundError: a link names no record.
        UsageError: bad kind, importance, status or text.
        LockTimeoutError, GitError, OSError: from the write.
    """
    caller = caller or Caller(origin, channel, session=session)
    origin, channel, session = caller.origin, caller.channel, caller.session
    check_origin(origin)
    text = clean_text(text)
    body = strip_private(body)
    if len(body) > MAX_BODY_CHARS:
        raise UsageError(f"body is longer than {MAX_BODY_CHARS} characters")
    alias_list = clean_list("aliases", aliases)
    tag_list = clean_list("tags", (*clean_list("tags", tags), *needle_tags(text)))
    link_list = tuple(check_id(link) for link in clean_list("links", links))
    check_text("\n".join([text, *alias_list, *tag_list, body, *(raw for _, raw in extra)]))
    valid_from = validity.clean_when(valid_from, "valid_from")
    valid_until = validity.clean_when(valid_until, "valid_until")
    validity.check_order(valid_from, valid_until)

    kind = _check_kind(kind)
    entity_type = check_entity_type(kind, entity_type)
    if status not in ("active", "candidate"):
        raise UsageError(f"a new record is active or candidate, not {status!r}")
    if importance is not None:
        _check_importance(importance)
    if observed_at:
        parse_instant(observed_at)  # an ISO date or time, not in the future
    with store_lock(handle.store, "remember", handle.lock_timeout_seconds, queue=handle.lock_queue):
        txn.recover(handle.store, handle.index)
        for link in link_list:
            if handle.index.get_path(link) is None:
                raise NotFoundError(f"link target {link!r} is not a record")
        compared = compare(handle.index, text, ("active", "candidate", "rejected"))
        threshold = handle.manifest.near_duplicate
        similar = [(sc, doc) for sc, against, doc in compared if sc >= threshold and not against]
        _refuse_rejected(handle, text, similar)
        if not any(doc["kind"] == kind and doc["status"] != "rejected" for _, doc in similar):
            found = restated(handle, text, kind)
            if found is not None:
                old_id, successor = found
                if not caller.is_owner:
                    raise RejectedBeliefError(
                        f"refused: this restates {old_id}, which was superseded by {successor}; "
                        f"see `memdir get {successor}` (correct {successor} to change it)"
                    )
                return _correct_locked(
                    handle, successor, text, f"restated superseded {old_id}", caller
                )
        for _, doc in similar:
            if doc["kind"] == kind and doc["status"] != "rejected":  # lifted: a new record
                return _confirm(
                    handle,
                    doc["id"],
                    caller,
                    alias_list,
                    tag_list,
                    link_list,
                    importance,
                    body,
                    status,
                    (valid_from, valid_until),
                )
        contradicted = [
            doc for _, against, doc in compared if against and doc["status"] == "active"
        ]
        now = now_iso()
        record = Record(
            id=mint_id(kind),
            kind=kind,
            text=text,
            status=status,
            origin=origin,
            importance=importance if importance is not None else 5,
            aliases=alias_list,
            tags=tag_list,
            links=link_list,
            created_at=now,
            updated_at=now,
            observed_at=observed_at or today_iso(),
            valid_from=valid_from,
            valid_until=valid_until,
            source={"channel": channel, "session": session, "journal": journal}
            | ({"entity_type": entity_type} if entity_type else {}),
            scope=handle.manifest.scope,
            body=body,
            extra=extra,
        )

        while (
            handle.index.get_path(record.id) is not None
            or (handle.store / relative_path(record)).exists()
        ):
            record = dataclasses.replace(record, id=mint_id(kind))  # 20 random bits collided
        written = txn.apply(
            handle.store,
            handle.index,
            [txn.Change(relative_path(record), record)],
            _message("remember", record.id, None, kind=kind, origin=origin, channel=channel),
            trailers=caller.trailers(),
        )
        return Written(
            written[0] or record,
            created=True,
            changed=True,
            note=_remembered_note(record, contradicted),
            conflicts=tuple(doc["id"] for doc in contradicted),
        )


def _remembered_note(record: Record, contradicted: list[dict[str, Any]]) -> str:
    """The line a new belief is reported with; it names each record it contradicts.

    Both stay active (nothing is lost and the person decides): correcting the old record
    to the new text supersedes it by the new record (:func:`correct` adopts an active
    record that already says the corrected text), forgetting the new one keeps the old.
    """
    if not contradicted:
        return f"remembered {record.id}"
    import shlex

    old = contradicted[0]
    also = [doc["id"] for doc in contradicted[1:]]
    return (
        f'remembered {record.id}; it contradicts {old["id"]} ("{old["text"]}")'
        + (f" and {', '.join(also)}" if also else "")
        + f". Both are active. To keep the new one: `memdir correct {old['id']} --text "
        f"{shlex.quote(record.text)}`; to keep the old one: `memdir forget {record.id}`"
    )


def _refuse_rejected(
    handle: Handle, text: str, similar: list[tuple[float, dict[str, Any]]]
) -> None:
    """Refuse a new text whose value is tombstoned or that repeats a rejected record.

    Raises:
        RejectedBeliefError: it does (the message names the rejected record).
    """
    stone = audit.tombstone_for(handle.store, text)
    if stone is not None:
        raise RejectedBeliefError(audit.refusal(stone))
    lifted = audit.lifted(handle.store)
    for _, doc in similar:
        if doc["status"] == "rejected" and audit.value_key(doc["text"]) not in lifted:
            raise RejectedBeliefError(
                f"refused: this repeats {doc['id']}, which was rejected"
                + (f" ({doc['reason']})" if doc.get("reason") else "")
                + f"; see `memdir get {doc['id']}`"
            )


def _confirm(
    handle: Handle,
    record_id: str,
    caller: Caller,
    aliases: tuple[str, ...],
    tags: tuple[str, ...],
    links: tuple[str, ...],
    importance: int | None,
    body: str,
    status: str,
    valid: tuple[str | None, str | None] = (None, None),
) -> Written:
    origin, channel = caller.origin, caller.channel
    old, rel = load(handle, record_id)
    if not caller.is_owner and authority.owned_by_owner(old):
        return Written(  # the owner's record is the owner's: the agent saying it again adds nothing
            old,
            created=False,
            changed=False,
            note=f"already known: {old.id} (the owner's record; left as the owner wrote it)",
        )
    promote = old.status == "candidate" and status == "active"
    new = dataclasses.replace(
        old,
        aliases=old.aliases + tuple(a for a in aliases if a not in old.aliases),
        tags=old.tags + tuple(t for t in tags if t not in old.tags),
        links=old.links + tuple(x for x in links if x not in old.links and x != old.id),
        importance=max(old.importance, importance or 0),
        body=old.body if old.body.strip() or not body else body,
        origin=origin
        if ORIGIN_RANK.get(origin, 0) > ORIGIN_RANK.get(old.origin, 0)
        else old.origin,
        status="active" if promote else old.status,
        reason=f"confirmed by {origin}" if promote else old.reason,
        valid_from=valid[0] or old.valid_from,  # said again with dates: the dates are news
        valid_until=valid[1] or old.valid_until,
        updated_at=now_iso(),
    )
    if dataclasses.replace(new, updated_at=old.updated_at) == old:
        # Said again with nothing new (an observer re-reading a journal, say): no write, no commit.
        return Written(old, created=False, changed=False, note=f"already known: {old.id}")
    note = f"updated {old.id} (near-duplicate of an existing {old.status} record)"
    written = txn.apply(
        handle.store,
        handle.index,
        [txn.Change(rel, new)],
        _message("remember", old.id, "near-duplicate, updated", origin=origin, channel=channel),
        trailers=caller.trailers(),
    )
    return Written(written[0] or new, created=False, changed=True, note=note)


def correct(
    handle: Handle,
    record_id: str,
    text: str,
    *,
    reason: str | None = None,
    origin: str = "owner",
    channel: str = "cli",
    session: str | None = None,
    caller: Caller | None = None,
    valid_until: str | None = None,
) -> Written:
    """Supersede a record with a corrected one (one commit holds both changes).

    ``caller`` (when given) replaces ``origin``, ``channel`` and ``session``. A caller that
    is not the owner correcting the owner's record makes a proposal instead (module docstring).

    ``valid_until`` says the old belief was *true until then* rather than wrong ("true until
    March, then this"): the old record keeps it as its ``valid_until`` and the new one starts
    then (``valid_from``), so ``recall --as-of`` before that date still answers the old value.
    Without it the old belief was simply wrong and has no valid time left.

    Returns:
        :class:`Written` with the new record and ``previous`` the superseded one; for a
        proposal, the record unchanged, ``changed`` False and ``proposal`` set.

    Raises:
        NotFoundError: no such record.
        TransitionError: the record is not active or candidate (a superseded record names
            its successor to correct instead).
        RejectedBeliefError: the new text repeats a rejected belief.
        UsageError: the new text is empty or the same as the old.
        ProvenanceError, SecretError, LockTimeoutError, GitError, OSError.
    """
    caller = caller or Caller(origin, channel, session=session)
    origin, channel, session = caller.origin, caller.channel, caller.session
    check_origin(origin)
    text = clean_text(text)
    check_text(text)
    reason = clean_reason(reason)
    until = validity.clean_when(valid_until, "valid_until")
    with store_lock(handle.store, "correct", handle.lock_timeout_seconds, queue=handle.lock_queue):
        txn.recover(handle.store, handle.index)
        return _correct_locked(handle, record_id, text, reason, caller, until)


def restated(handle: Handle, text: str, kind: str) -> tuple[str, str] | None:
    """Return ``(superseded id, live successor id)`` when ``text`` restates a superseded value.

    The successor is the end of the ``superseded_by`` chain that is active or candidate.
    """
    found = find_similar(handle.index, text, handle.manifest.near_duplicate, ("superseded",))
    for _, doc in found:
        if doc["kind"] != kind:
            continue
        current = live_successor(handle, doc)
        if current["status"] in ("active", "candidate"):
            return doc["id"], current["id"]
    return None


def live_successor(handle: Handle, doc: dict[str, Any]) -> dict[str, Any]:
    """Follow ``doc``'s ``superseded_by`` chain in the index to its end.

    Returns:
        The last indexed document of the chain (``doc`` itself when it has no successor); a
        cycle or a successor missing from the index ends the walk where it is.
    """
    current, seen = doc, {doc["id"]}
    while current.get("superseded_by") and current["superseded_by"] not in seen:
        seen.add(current["superseded_by"])
        nxt = handle.index.get_doc(current["superseded_by"])
        if nxt is None:
            break
        current = nxt
    return current


def _correct_locked(
    handle: Handle,
    record_id: str,
    text: str,
    reason: str | None,
    caller: Caller,
    until: str | None = None,
) -> Written:
    """:func:`correct`'s body; the caller holds the store lock and has cleaned the input."""
    origin, channel = caller.origin, caller.channel
    old, rel = load(handle, record_id)
    if old.status not in ("active", "candidate"):
        hint = ""
        if old.superseded_by:  # name the live end of the chain, not the next superseded link
            live = live_successor(handle, {"id": old.id, "superseded_by": old.superseded_by})
            if live.get("status") in ("active", "candidate"):
                hint = f"; correct {live['id']} instead"
            else:
                hint = f"; it was superseded by {old.superseded_by}"
        raise TransitionError(f"cannot correct {old.id}: it is {old.status}{hint}")
    if normalized_text(text) == normalized_text(old.text):
        raise UsageError(f"the new text is the same as {old.id}'s")
    _check_not_rejected(handle, text)
    validity.check_order(old.valid_from, until)
    if not caller.is_owner and authority.owned_by_owner(old):
        return _proposed(
            handle, "correct", old, caller, text=text, reason=reason, valid_until=until
        )
    twin = _twin(handle, text, old, caller) if until is None else None
    if twin is not None:  # the corrected text is already an active record: it takes over
        (kept, kept_rel), now = twin, now_iso()
        new = dataclasses.replace(kept, supersedes=old.id, updated_at=now)
        retired = dataclasses.replace(
            old, status="superseded", superseded_by=kept.id, reason=reason, updated_at=now
        )
        changes = [txn.Change(kept_rel, new), txn.Change(rel, retired)]
    else:
        new, retired = _corrected(old, text, reason, caller, until)
        changes = [txn.Change(relative_path(new), new), txn.Change(rel, retired)]
    written = txn.apply(
        handle.store,
        handle.index,
        changes,
        _message("correct", f"{old.id} -> {new.id}", reason, origin=origin, channel=channel),
        trailers=caller.trailers(),
        reason=reason,
    )
    new, retired = written[0] or new, written[1] or retired  # as written (their project)
    note = f"{new.id} supersedes {old.id}"
    if twin is not None:
        note = f"{new.id}, which already said this, supersedes {old.id}"
    elif retired.status != "superseded":
        note = f"{new.id} takes over from {old.id} on {until}"
    return Written(new, created=twin is None, changed=True, previous=retired, note=note)


def _twin(handle: Handle, text: str, old: Record, caller: Caller) -> tuple[Record, str] | None:
    """Return the live record (and its path) that already says ``text``, for ``correct``.

    "Never use tabs…" remembered beside "Always use tabs…" is its own record (the two
    contradict); correcting the old one to that text then supersedes it by the record that
    exists rather than writing a second copy. Only an active or candidate record of the same
    kind, with equal normalised text, that supersedes nothing yet and that the caller may
    change (an agent never edits the owner's record) is adopted.
    """
    key = normalized_text(text)
    for _, doc in find_similar(handle.index, text, 1.0, ("active", "candidate")):
        if doc["id"] == old.id or doc["kind"] != old.kind or normalized_text(doc["text"]) != key:
            continue
        found, rel = load(handle, doc["id"])
        if found.supersedes or (not caller.is_owner and authority.owned_by_owner(found)):
            continue
        return found, rel
    return None


def _check_not_rejected(handle: Handle, text: str) -> None:
    """Refuse a correction's text that repeats a rejected or tombstoned belief.

    Raises:
        RejectedBeliefError: it does.
    """
    lifted = audit.lifted(handle.store)
    for _, doc in find_similar(handle.index, text, handle.manifest.near_duplicate, ("rejected",)):
        if audit.value_key(doc["text"]) in lifted:
            continue
        raise RejectedBeliefError(f"refused: the correction repeats rejected {doc['id']}")
    stone = audit.tombstone_for(handle.store, text)
    if stone is not None:
        raise RejectedBeliefError(audit.refusal(stone))


def _corrected(
    old: Record, text: str, reason: str | None, caller: Caller, until: str | None = None
) -> tuple[Record, Record]:
    """Return the correcting record and ``old`` superseded by it (nothing is written).

    With ``until``, the old belief was true until then and the new one is true from then. An
    ``until`` still ahead leaves the old record active until that date (it is what is true
    now) and links the new one to it instead of superseding it.
    """
    now = now_iso()
    new = Record(
        id=mint_id(old.kind),
        kind=old.kind,
        text=text,
        status="active",
        origin=caller.origin,
        importance=old.importance,
        confidence=old.confidence,
        aliases=old.aliases,
        tags=clean_list("tags", (*old.tags, *needle_tags(text))),
        links=old.links,
        supersedes=old.id,
        created_at=now,
        updated_at=now,
        observed_at=today_iso(),
        valid_from=until,
        source={"channel": caller.channel, "session": caller.session, "journal": None},
        scope=old.scope,
        reason=reason,
    )
    ahead = validity.stored_instant(until)
    if until is not None and ahead is not None and ahead > validity.asked_instant(None):
        new = dataclasses.replace(new, supersedes=None, links=(*new.links, old.id))
        return new, dataclasses.replace(old, valid_until=until, reason=reason, updated_at=now)
    retired = dataclasses.replace(
        old,
        status="superseded",
        superseded_by=new.id,
        reason=reason,
        updated_at=now,
        valid_until=until or old.valid_until,
    )
    return new, retired


def proposal_state(handle: Handle, proposal: Proposal) -> authority.Obsolete | None:
    """Return why ``proposal`` no longer applies to its record now, or ``None`` if it does.

    Raises:
        RecordParseError: the record's file cannot be read.
    """
    try:
        record, _ = load(handle, proposal.record)
    except NotFoundError:
        record = None
    return authority.obsolete(proposal, record)


def accept_proposal(handle: Handle, proposal_id: str, caller: Caller) -> tuple[Written, Proposal]:
    """Apply a pending proposal as the owner: ONE commit holds the change and the decision.

    The commit writes the record change (correct: the new record and the superseded one;
    reject/forget: the record's new status) and moves ``proposals/<id>.json`` to
    ``proposals/decided/<id>.json``, through :func:`memdir.kernel.storage.txn.apply`'s intent, so a
    kill never leaves one without the other and ``memdir rollback`` of that commit puts the
    record back and the proposal back to pending together. Its message is the change's
    (``correct A -> B: <reason> (proposal prop-… by …, accepted by the owner)``) and it carries
    the proposal trailer.

    Returns:
        The :class:`Written` change and the proposal as decided (``outcome``: what was done).

    Raises:
        AuthorityError: ``caller`` is not the owner.
        NotFoundError: no such proposal.
        UsageError: it was already decided.
        ObsoleteProposalError: its record was superseded, rejected, forgotten, purged or
            reworded since it was proposed; the message says what and how to dismiss it.
        RejectedBeliefError: a proposed correction repeats a belief rejected since.
        LockTimeoutError, GitError, OSError: from the write (nothing is half-done).
    """
    if not caller.is_owner:
        raise AuthorityError("refused: only the owner decides a proposal, in `memdir review`")
    with store_lock(handle.store, "review", handle.lock_timeout_seconds, queue=handle.lock_queue):
        txn.recover(handle.store, handle.index)
        proposal = authority.load(handle.store, proposal_id)
        if proposal.status != "pending":
            raise UsageError(f"{proposal.id} was already {proposal.status} ({proposal.decided_at})")
        stale = proposal_state(handle, proposal)
        if stale is not None:
            then = f" ({proposal.id}'s successor is {stale.successor})" if stale.successor else ""
            raise ObsoleteProposalError(
                f"{proposal.id} is obsolete and cannot be accepted: {stale.reason}{then}. "
                "This is not a refusal: the change no longer applies to the record as it is. "
                f"Dismiss it with `memdir review --dismiss {proposal.id}`"
                + (
                    f"; to change {stale.successor}, use `memdir correct {stale.successor}`"
                    if stale.successor
                    else ""
                )
            )
        old, rel = load(handle, proposal.record)
        said = f"{proposal.reason or proposal.op} (proposal {proposal.id} by the "
        said += f"{proposal.by.describe()}, accepted by the owner)"
        reason = clean_reason(said)
        origin, channel = caller.origin, caller.channel
        if proposal.op == "correct":
            text = clean_text(proposal.text or "")
            check_text(text)
            _check_not_rejected(handle, text)
            validity.check_order(old.valid_from, proposal.valid_until)
            new, retired = _corrected(old, text, reason, caller, proposal.valid_until)
            changes = [txn.Change(relative_path(new), new), txn.Change(rel, retired)]
            message = _message(
                "correct", f"{old.id} -> {new.id}", reason, origin=origin, channel=channel
            )
            note = f"{new.id} supersedes {old.id}"
            if retired.status != "superseded":
                note = f"{new.id} takes over from {old.id} on {proposal.valid_until}"
            written = Written(new, True, True, previous=retired, note=note)
        else:
            status = "rejected" if proposal.op == "reject" else "forgotten"
            new = dataclasses.replace(old, status=status, reason=reason, updated_at=now_iso())
            changes = [txn.Change(rel, new)]
            message = _message(proposal.op, old.id, reason, origin=origin, channel=channel)
            written = Written(new, False, True, note=f"{proposal.op}: {old.id} is now {status}")
        done, files = authority.decided_files(proposal, f"accepted by the owner: {written.note}")
        txn.apply(
            handle.store,
            handle.index,
            changes,
            message,
            trailers=(*caller.trailers(), (PROPOSAL_TRAILER, proposal.id)),
            op=proposal.op,
            reason=reason,
            files=files,
        )
        return written, done


def update(
    handle: Handle,
    record_id: str,
    *,
    op: str,
    caller: Caller,
    reason: str | None = None,
    **fields: Any,
) -> Written:
    """Change fields of a record in place (bug occurrences, tags), one commit, no status change.

    The commit and the audit event name ``caller``, who made the change (never the record's
    own origin: a bug the agent logged and the owner marked fixed was fixed by the owner).

    Raises:
        NotFoundError: no such record.
        UsageError: a field is not a record field, or ``status`` is given (use :func:`set_status`).
        SecretError: a new text value holds a secret.
    """
    if "status" in fields or "id" in fields:
        raise UsageError("update cannot change a record's id or status")
    text_values = [v for v in fields.values() if isinstance(v, str)]
    check_text("\n".join(text_values))
    reason = clean_reason(reason)
    with store_lock(handle.store, op, handle.lock_timeout_seconds, queue=handle.lock_queue):
        txn.recover(handle.store, handle.index)
        old, rel = load(handle, record_id)
        try:
            new = dataclasses.replace(old, **fields, updated_at=now_iso())
        except TypeError as exc:
            raise UsageError(f"not a record field: {exc}") from exc
        txn.apply(
            handle.store,
            handle.index,
            [txn.Change(rel, new)],
            _message(op, old.id, reason, origin=caller.origin, channel=caller.channel),
            trailers=caller.trailers(),
            op=op,
            reason=reason,
        )
        return Written(new, created=False, changed=True, note=f"{op}: {old.id} updated")


def set_status(
    handle: Handle,
    record_id: str,
    status: str,
    *,
    reason: str | None,
    op: str,
    origin: str = "owner",
    channel: str = "cli",
    caller: Caller | None = None,
    adopt: bool = False,
) -> Written:
    """Move a record to ``status`` (``rejected``, ``forgotten``, ``active``) with a reason.

    Repeating a change already made returns ``changed=False`` and writes nothing. ``caller``
    (when given) replaces ``origin`` and ``channel``. A caller that is not the owner rejecting
    or forgetting the owner's record makes a proposal instead (``proposal`` set, nothing
    changed); accepting candidates is the owner's (review) or the observer's (corroboration).

    ``adopt`` (the owner accepting a candidate in review) gives the record the owner's
    authority: its ``origin`` becomes ``owner``, so from then on an agent can only propose
    changes to it (DESIGN §4). Where it came from stays as provenance: ``source`` is kept
    as it was (channel, session, journal citation) and the audit event names the origin it had
    (``from_origin``). ``adopt`` by a caller that is not the owner changes no origin.

    Raises:
        NotFoundError: no such record.
        TransitionError: the lifecycle does not allow it; the message says what does.
        SecretError: the reason holds a secret.
        LockTimeoutError, GitError, OSError: from the write.
    """
    caller = caller or Caller(origin, channel)
    origin, channel = caller.origin, caller.channel
    reason = clean_reason(reason)
    with store_lock(handle.store, op, handle.lock_timeout_seconds, queue=handle.lock_queue):
        txn.recover(handle.store, handle.index)
        old, rel = load(handle, record_id)
        if old.status == status:
            return Written(old, created=False, changed=False, note=f"{old.id} is already {status}")
        if status not in TRANSITIONS.get(old.status, frozenset()):
            hint = (
                f"; it was superseded by {old.superseded_by}" if old.superseded_by else ""
            ) + " (`memdir rollback` undoes a change)"
            raise TransitionError(f"cannot {op} {old.id}: it is {old.status}{hint}")
        if not caller.is_owner and authority.owned_by_owner(old):
            if op not in authority.PROPOSAL_OPS:
                raise AuthorityError(f"refused: {op} of the owner's record {old.id} is the owner's")
            return _proposed(handle, op, old, caller, reason=reason)
        new = dataclasses.replace(old, status=status, reason=reason, updated_at=now_iso())
        details: dict[str, object] = {}
        if adopt and caller.is_owner and old.origin != caller.origin:
            new = dataclasses.replace(new, origin=caller.origin)
            details["from_origin"] = old.origin
        txn.apply(
            handle.store,
            handle.index,
            [txn.Change(rel, new)],
            _message(op, old.id, reason, origin=origin, channel=channel),
            trailers=caller.trailers(),
            op=op,
            reason=reason,
            details=details,
        )
        return Written(new, created=False, changed=True, note=f"{op}: {old.id} is now {status}")


def _proposed(
    handle: Handle,
    op: str,
    old: Record,
    caller: Caller,
    *,
    text: str | None = None,
    reason: str | None = None,
    valid_until: str | None = None,
) -> Written:
    """Write a proposal to ``op`` the owner's record ``old``; the record is not changed.

    ``valid_until`` (a correction: the old belief was true until then, the new one from then)
    travels with the proposal and is applied when the owner accepts it.
    """
    proposal = authority.propose(
        handle.store, op, old, caller, text=text, reason=reason, valid_until=valid_until
    )
    note = (
        f"{authority.PROPOSED_NOTE} ({proposal.id}); {old.id} is the owner's record and is "
        "unchanged until the owner accepts"
    )
    return Written(old, created=False, changed=False, note=note, proposal=proposal)
