"""Use cases shared by the CLI and the MCP server (L3).

Each function takes a store folder and plain values, opens the store (bringing its index up
to date with a stat scan), does one thing, and returns a value with ``to_json()``. Nothing here
prints or reads ``argv``; errors are :class:`memdir.kernel.base.errors.MemdirError` subclasses.
Who is acting is decided at the edge (DESIGN §4) and passed in as ``caller``
(:class:`memdir.kernel.base.caller.Caller`); where a function takes ``caller=None`` it is decided
from
this process's environment as the CLI does (:func:`memdir.service.channel.cli_caller`), so a
script run in an agent's shell is the agent too. The lifecycle turns a change the agent asks
for on the owner's record into a proposal (``Written.proposal``); purge and rollback refuse
anyone but the owner (:mod:`memdir.kernel.storage.authority`).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from memdir.kernel.base import validity
from memdir.kernel.base.caller import Caller
from memdir.kernel.base.errors import MemdirError, NotFoundError, ProvenanceError, UsageError
from memdir.kernel.base.ids import check_id
from memdir.kernel.base.model import Kind, Record
from memdir.kernel.index import doc_record
from memdir.kernel.index.interface import IndexBackend
from memdir.kernel.index.recall import Hit, TurnHit, search_turns
from memdir.kernel.index.recall import recall as recall_records
from memdir.kernel.lang.text import truncate
from memdir.kernel.storage import authority, gitio, identity, lifecycle, paths
from memdir.kernel.storage import hits as hit_stats
from memdir.kernel.storage import journal as journal_mod
from memdir.kernel.storage.lifecycle import Handle, Written
from memdir.kernel.storage.manifest import Manifest
from memdir.kernel.storage.paths import StoreLayout, layout
from memdir.service.channel import cli_caller
from memdir.store import graph as graph_mod
from memdir.store import history, mirror, scan, setup
from memdir.store.setup import Initialised


@contextmanager
def opened(
    store: Path, *, scan_records: bool = True, backend: str | None = None, quick: bool = False
) -> Iterator[Handle]:
    """Open ``store`` with its index brought up to date; close it afterwards.

    ``backend`` overrides the manifest's ``[index] backend`` (see :func:`scan.open_handle`).
    ``quick``: trust the record folders' times (see :func:`scan.scan_records`); the hot paths
    (recall, remember) open stores so, and check the files an answer uses.

    A record that is not found because it was purged is reported as purged (still
    :class:`NotFoundError`, exit 4), so the user learns it was erased on purpose.
    """
    handle = scan.open_handle(store, scan=scan_records, backend=backend, quick=quick)
    try:
        yield handle
        scan.restamp(store)  # this command's own writes are no hand edit
        # Corrections, rejections and forgets reach Claude Code's auto-memory at once: when
        # the mirror is on and the store's head moved, its files are rewritten (cheap if not).
        mirror.refresh_if_changed(handle.index, store)
    except NotFoundError as err:
        raise _explained(store, err) from err
    finally:
        handle.index.close()


def _explained(store: Path, err: NotFoundError) -> NotFoundError:
    if err.record_id is None:
        return err
    try:
        purged = gitio.purge_commit(store, err.record_id)
    except MemdirError:
        return err
    if purged is None:
        return err
    return NotFoundError(
        f"record {err.record_id} was purged on {purged.at[:10]} (commit {purged.hash[:12]}): "
        "its text was erased from the store and its history; nothing of it remains",
        record_id=err.record_id,
    )


# --- init ------------------------------------------------------------------------------------


def init(
    cwd: Path, *, store: Path | None = None, user: bool = False, caller: Caller | None = None
) -> Initialised:
    """Create the project store for ``cwd`` (or ``store``, or the user store); idempotent.

    ``caller`` (default: from this process's environment) is recorded on the first commit.

    Raises:
        GitError: git is missing or failed.
        OSError: the folder cannot be created.
    """
    trailers = (caller or cli_caller()).trailers()
    if user:
        return setup.init_store(store or paths.user_store_dir(), scope="user", trailers=trailers)
    if store is not None:
        return setup.init_store(store, scope="project", trailers=trailers)
    project = paths.project_root_for(cwd)
    return setup.init_store(
        project / paths.STORE_DIRNAME, scope="project", project=project, trailers=trailers
    )


# --- lifecycle -------------------------------------------------------------------------------


NewStatus = Literal["active", "candidate"]
"""The statuses a new record may have (``candidate``: the observer's, awaiting review)."""


def remember(
    store: Path,
    text: str,
    *,
    kind: Kind = "fact",
    caller: Caller | None = None,
    aliases: Sequence[str] = (),
    tags: Sequence[str] = (),
    links: Sequence[str] = (),
    importance: int | None = None,
    body: str = "",
    status: NewStatus = "active",
    journal: str | None = None,
    observed_at: str | None = None,
    valid_from: str | None = None,
    valid_until: str | None = None,
    entity_type: str | None = None,
) -> Written:
    """Remember one belief (:func:`memdir.kernel.storage.lifecycle.remember` has the details).

    Args:
        store: The store folder.
        text: The belief.
        kind: What sort of belief.
        caller: Who is acting (default: this process's environment, as the CLI decides).
        aliases: Other words for it.
        tags: Labels.
        links: Ids of related records.
        importance: 1..10 (default 5).
        body: Longer prose.
        status: ``active``, or ``candidate`` (awaiting review).
        journal: A citation of the journal evidence.
        observed_at: When it was observed (ISO date or time; default today).
        valid_from: When it became true in the world (default: when observed).
        valid_until: When it stops (stopped) being true, exclusive.
        entity_type: For an entity: what sort.

    Returns:
        :class:`Written`: the record, and whether it was created or a near-duplicate updated.

    Raises:
        ProvenanceError, SecretError, RejectedBeliefError, NotFoundError, UsageError,
        LockTimeoutError, GitError: see the lifecycle.
    """
    with opened(store, quick=True) as handle:
        done = lifecycle.remember(
            handle,
            text,
            kind=kind,
            caller=caller or cli_caller(),
            aliases=aliases,
            tags=tags,
            links=links,
            importance=importance,
            body=body,
            status=status,
            journal=journal,
            observed_at=observed_at,
            valid_from=valid_from,
            valid_until=valid_until,
            entity_type=entity_type,
        )
        if handle.manifest.max_active:
            from memdir.store import capacity

            capacity.refresh(handle)  # a new belief may push an older one past its cap
        if any(t.startswith("path:") for t in done.record.tags):
            from memdir.kernel.index.digest import scoped_docs

            scoped_docs(handle.index, store)  # the hooks see a new path scope at once
        return done


def path_tags(paths: Iterable[str]) -> tuple[str, ...]:
    """Return the ``path:GLOB`` tags scoping a record to ``paths`` (globs, or commas between).

    Raises:
        UsageError: a value names no glob, or a glob is absolute or climbs out of the project.
    """
    from memdir.kernel.lang import pathscope

    out: list[str] = []
    for value in paths:
        if not value.strip(" ,"):
            raise UsageError(f"--paths: {value!r} names no glob (e.g. 'src/billing/**')")
        for glob in value.split(","):
            if not glob.strip():
                continue
            try:
                out.append(pathscope.PATH_TAG + pathscope.check_glob(glob))
            except ValueError as exc:
                raise UsageError(f"--paths: {exc}") from exc
    return tuple(dict.fromkeys(out))


def pin(store: Path, record_id: str, *, pinned: bool, caller: Caller) -> Written:
    """Pin (or unpin) an active record: pinned records are always in the session digest.

    Args:
        store: The store folder.
        record_id: The record.
        pinned: True to pin, False to unpin.
        caller: Who asks; only the owner pins.

    Returns:
        The record as written (unchanged when it already was so).

    Raises:
        ProvenanceError: the caller is not the owner (an agent's shell).
        NotFoundError: no such record.
        UsageError: the record is not active.
    """
    from memdir.kernel.index.digest import PINNED_TAG

    if not caller.is_owner:
        raise ProvenanceError(
            "refused: pinning decides what every session is told; only the owner pins, from "
            "their own terminal"
        )
    with opened(store) as handle:
        try:
            record, _ = lifecycle.load(handle, check_record_id(record_id))
        except NotFoundError as err:
            raise _explained(store, err) from err
        if record.status != "active":
            raise UsageError(f"{record.id} is {record.status}; only an active belief is pinned")
        has = PINNED_TAG in record.tags
        if has == pinned:
            state = "pinned" if pinned else "not pinned"
            return Written(
                record, created=False, changed=False, note=f"{record.id} already {state}"
            )
        tags = (
            (*record.tags, PINNED_TAG)
            if pinned
            else tuple(t for t in record.tags if t != PINNED_TAG)
        )
        return lifecycle.update(
            handle,
            record.id,
            op="pin" if pinned else "unpin",
            caller=caller,
            tags=tags,
        )


def correct(
    store: Path,
    record_id: str,
    text: str,
    *,
    reason: str | None = None,
    caller: Caller | None = None,
    valid_until: str | None = None,
) -> Written:
    """Supersede ``record_id`` with ``text`` (:func:`memdir.kernel.storage.lifecycle.correct`).

    Args:
        store: The store folder.
        record_id: The record to correct.
        text: The corrected belief.
        reason: Why the old one was wrong.
        caller: Who is acting (default: this process's environment).
        valid_until: The old belief was true until then (not wrong); the new one from then.

    Raises:
        NotFoundError, TransitionError, RejectedBeliefError, UsageError: see the lifecycle.
    """
    with opened(store) as handle:
        return lifecycle.correct(
            handle,
            record_id,
            text,
            reason=reason,
            caller=caller or cli_caller(),
            valid_until=valid_until,
        )


def correct_match(
    store: Path,
    query: str,
    text: str,
    *,
    reason: str | None = None,
    caller: Caller | None = None,
    valid_until: str | None = None,
) -> Written:
    """Supersede the one active record that best matches ``query`` (case B23).

    Args:
        store: The store folder.
        query: Words naming the record.
        text: The corrected belief.
        reason: Why the old one was wrong.
        caller: Who is acting (default: this process's environment).
        valid_until: The old belief was true until then (not wrong); the new one from then.

    Raises:
        NotFoundError: nothing matches.
        UsageError: the match is ambiguous (the two best scores are within 20 %); the message
            lists the candidates' ids to pass instead.
    """
    with opened(store) as handle:
        # only what recall would serve is found by a query (the read filter, issue 10)
        served = identity.read_filter(store, handle.manifest)
        found = recall_records(handle.index, query, limit=3, served=served).hits
        if not found:
            raise NotFoundError(f"no active record matches {query!r}")
        if len(found) > 1 and found[1].score >= 0.8 * found[0].score:
            ids = ", ".join(f"{h.doc['id']} ({truncate(h.doc['text'], 40)})" for h in found)
            raise UsageError(f"{query!r} matches more than one record: {ids}; pass the id")
        return lifecycle.correct(
            handle,
            found[0].doc["id"],
            text,
            reason=reason,
            caller=caller or cli_caller(),
            valid_until=valid_until,
        )


def reject(store: Path, record_id: str, reason: str, *, caller: Caller | None = None) -> Written:
    """Mark a belief wrong; it is never recalled and never re-learned.

    ``caller`` defaults to this process's environment (the CLI's rule).
    """
    with opened(store) as handle:
        return lifecycle.set_status(
            handle,
            record_id,
            "rejected",
            reason=reason,
            op="reject",
            caller=caller or cli_caller(),
        )


def forget(
    store: Path, record_id: str, reason: str | None = None, *, caller: Caller | None = None
) -> Written:
    """Retire a belief; its file and history stay; ``reason`` may be None (none given).

    ``caller`` defaults to this process's environment (the CLI's rule).
    """
    with opened(store) as handle:
        return lifecycle.set_status(
            handle,
            record_id,
            "forgotten",
            reason=reason,
            op="forget",
            caller=caller or cli_caller(),
        )


def recall_stats(store: Path, record_id: str) -> dict[str, Any]:
    """Return how often recall returned ``record_id`` and when last.

    Returns:
        ``{"hits": int, "last_hit": ISO str or None, "recalled": int, "injected": int}``:
        ``recalled`` by ``memdir recall`` and MCP, ``injected`` per prompt by the hooks
        (:mod:`memdir.kernel.storage.hits`); zeros for a record never recalled.
    """
    seen = hit_stats.fold(store).get(record_id, {})
    return {
        "hits": int(str(seen.get("hits", 0))),
        "last_hit": seen.get("last_hit") or None,
        "recalled": int(str(seen.get("recalled", 0))),
        "injected": int(str(seen.get("injected", 0))),
    }


def get(store: Path, record_id: str) -> Record:
    """Return one record, read fresh from its file.

    Raises:
        NotFoundError: no such record.
        RecordParseError: the file is quarantined.
    """
    with opened(store) as handle:
        record, _ = lifecycle.load(handle, record_id)
        return record


def list_records(
    store: Path,
    *,
    kinds: Sequence[str] = (),
    statuses: Sequence[str] = (),
    limit: int | None = None,
    tags: Sequence[str] = (),
    entity_types: Sequence[str] = (),
    served_only: bool = False,
) -> list[Record]:
    """Return records by kind and status, most recently updated first.

    Args:
        store: The store folder.
        kinds: Only these kinds (all when empty).
        statuses: Only these statuses (all when empty).
        limit: Most records to return (all when ``None``), counted after every filter.
        tags: Only records carrying one of these tags (compared case-insensitively, without a
            leading ``#`` or brackets, so ``[坑]`` and ``坑`` are the same tag).
        entity_types: Only entities of one of these types (``source.entity_type``).
        served_only: Only what recall would serve now: active (or the ``statuses`` asked
            for), true now, of this store's scope and project, no tombstoned value (the read
            filter, :func:`memdir.kernel.storage.identity.read_filter`, in the index query);
            the agent's listing. Without it, the owner's full view of the store.
    """
    wanted_tags = {tag_key(t) for t in tags}
    wanted_types = {t.strip().lower() for t in entity_types}
    filtered = bool(wanted_tags or wanted_types)
    with opened(store) as handle:
        served = (
            identity.read_filter(store, handle.manifest, statuses=tuple(statuses) or ("active",))
            if served_only
            else None
        )
        docs = handle.index.list_docs(
            kinds=("entity",) if wanted_types and not kinds else kinds,
            statuses=statuses,
            limit=None if filtered else limit,
            served=served,
        )
    if wanted_tags:
        docs = [d for d in docs if wanted_tags & {tag_key(t) for t in d.get("tags") or ()}]
    if wanted_types:
        docs = [d for d in docs if entity_type_of(d) in wanted_types]
    return [doc_record(doc) for doc in docs[:limit]]


FILTER_POOL = 500
"""Candidates a tag or entity-type filter looks through (the ranking's best, in order)."""


def tag_key(tag: str) -> str:
    """Return the form tags are compared in: ``"[坑]"``, ``"#坑"`` and ``"坑"`` are one tag."""
    return tag.strip().strip("[]").lstrip("#").strip().casefold()


def entity_type_of(doc: dict[str, Any]) -> str | None:
    """Return an indexed record's entity type (``source.entity_type``), or ``None``."""
    source = doc.get("source") or {}
    value = source.get("entity_type") if isinstance(source, dict) else None
    return str(value).lower() if value else None


# --- recall ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RecallResult:
    """Ranked records from the project store and the user store."""

    query: str
    terms: tuple[str, ...]
    hits: list[Hit]
    took_ms: float
    explain: bool

    def to_json(self) -> dict[str, Any]:
        """Return ``{"query", "terms", "results": […], "took_ms"}``."""
        return {
            "query": self.query,
            "terms": list(self.terms),
            "results": [hit.to_json(explain=self.explain) for hit in self.hits],
            "took_ms": round(self.took_ms, 3),
        }


def _user_store(project_store: Path) -> Path | None:
    user = paths.user_store_dir()
    if paths.is_store(user) and user.resolve() != project_store.resolve():
        return user
    return None


def recall(
    store: Path,
    query: str,
    *,
    limit: int | None = None,
    kinds: Sequence[str] = (),
    include_candidates: bool = False,
    explain: bool = False,
    include_user: bool = True,
    as_of: str | None = None,
    believed_at: str | None = None,
    tags: Sequence[str] = (),
    entity_types: Sequence[str] = (),
    count_hits: bool = True,
) -> RecallResult:
    """Recall from the project store, then the user store; merge by score.

    Each hit's ``scope`` says which store it came from. By default only what is true now is
    returned (valid time, :mod:`memdir.kernel.base.validity`). ``tags`` keeps only hits
    carrying one of those tags (see :func:`tag_key`), ``entity_types`` only entities of those
    types; both filter the best :data:`FILTER_POOL` candidates of the same ranking, so a
    filtered recall returns the same records in the same order as an unfiltered one, minus
    the others.

    Args:
        store: The project store.
        query: Free text.
        limit: Most hits (default: the manifest's ``recall_limit``).
        kinds: Only these kinds.
        include_candidates: Also candidates awaiting review.
        explain: Hits carry their score factors in ``to_json``.
        include_user: Also search the user store.
        as_of: A date or time: what was true in the world then (valid time), as memdir
            believes it now.
        believed_at: A date or time: what memdir believed then, from its own git history
            (record time), true then; combined with ``as_of``, what it believed then about
            that date.
        tags: Only hits with one of these tags.
        entity_types: Only entities of these types.
        count_hits: Count each record returned as a hit (:mod:`memdir.kernel.storage.hits`);
            False for a bulk forget's selection, say.

    Raises:
        UsageError: ``as_of`` or ``believed_at`` is not a date or ISO-8601 time.
        NotFoundError: ``believed_at`` is before the store's first commit.
    """
    started = time.perf_counter()
    served = ("active", "candidate") if include_candidates else ("active",)
    statuses = [*served, "superseded"] if as_of is not None else list(served)
    at = validity.asked_instant(as_of if as_of is not None else believed_at)
    stores = [store]
    user = _user_store(store) if include_user else None
    if user is not None:
        stores.append(user)
    hits: list[Hit] = []
    terms: tuple[str, ...] = ()
    wanted = limit
    wanted_tags = {tag_key(t) for t in tags}
    wanted_types = {t.strip().lower() for t in entity_types}
    came_from: dict[int, Path] = {}
    for each in stores:
        with _recall_index(each, believed_at) as (index, manifest, handle):
            wanted = limit or manifest.recall_limit
            # room for what the tag and type filters then leave out; without them each store's
            # own best ``wanted`` hold the merged best ``wanted`` (the read filter is in the
            # query and thins nothing), and ranking more costs time: at 10,000 records the
            # exact top 30 takes about twice as long as the top 10
            pool = max(wanted, FILTER_POOL) if wanted_tags or wanted_types else wanted
            # the read filter, in the index query: status, scope and project, valid time and
            # (for the live store) tombstoned values (issue 10, marks 3 and 4)
            served_filter = identity.read_filter(
                each, manifest, at=at, past=as_of is not None, statuses=served
            )
            if believed_at is not None:  # what memdir believed then: today's ledger not applied
                served_filter = served_filter.but(withheld=frozenset())
            for _ in range(2):  # once more when a file the answer used was edited in place
                result = recall_records(
                    index,
                    query,
                    limit=pool,
                    kinds=("entity",) if wanted_types and not kinds else kinds,
                    statuses=statuses,
                    decay=manifest.decay,
                    min_score=manifest.min_score,
                    explain=explain,
                    served=served_filter,
                )
                if handle is None or not scan.verify_files(
                    handle, [h.doc["id"] for h in result.hits[:wanted]]
                ):
                    break
            terms = result.terms
            for h in result.hits:
                if (
                    not wanted_tags or wanted_tags & {tag_key(t) for t in h.doc.get("tags") or ()}
                ) and (not wanted_types or entity_type_of(h.doc) in wanted_types):
                    hits.append(h)
                    came_from[id(h)] = each
    hits.sort(key=lambda h: -h.score)
    shown = hits[: wanted or 10]
    counted = count_hits and believed_at is None  # a question about the past is no use now
    for each in stores if counted else ():  # statistics for get, dream and max_active
        hit_stats.note(each, [h.doc["id"] for h in shown if came_from[id(h)] == each], "recall")
    return RecallResult(query, terms, shown, (time.perf_counter() - started) * 1000, explain)


@contextmanager
def _recall_index(
    store: Path, believed_at: str | None
) -> Iterator[tuple[IndexBackend, Manifest, Handle | None]]:
    """Yield the index recall reads, its manifest, and the live handle (``None`` for the past).

    The live index (opened quickly, its answer's files verified), or the store's as it was at
    ``believed_at`` (:mod:`memdir.store.believed`).
    """
    if believed_at is None:
        with opened(store, quick=True) as handle:
            yield handle.index, handle.manifest, handle
        return
    from memdir.kernel.storage import manifest as manifest_mod
    from memdir.store import believed

    loaded = manifest_mod.load(store)
    at = validity.asked_instant(believed_at)
    with believed.index_at(store, at, loaded.scope) as (index, _):
        yield index, loaded, None


# --- journal ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SearchResult:
    """Journal turns found for a query."""

    query: str
    terms: tuple[str, ...]
    hits: list[TurnHit]
    took_ms: float

    def to_json(self) -> dict[str, Any]:
        """Return ``{"query", "terms", "results": […], "took_ms"}``."""
        return {
            "query": self.query,
            "terms": list(self.terms),
            "results": [hit.to_json() for hit in self.hits],
            "took_ms": round(self.took_ms, 3),
        }


def journal_append(
    store: Path, who: str, text: str, *, session: str | None = None, at: str | None = None
) -> journal_mod.TurnRef:
    """Append one turn to the journal (redacted first).

    Raises:
        UsageError: bad ``who``, empty text, or ``at`` not an ISO-8601 time / in the future.
        IndexFormatError: the store was written by a newer memdir (nothing is written).
    """
    from memdir.kernel.base.clock import parse_instant
    from memdir.kernel.storage import manifest

    manifest.load(store)  # a store from a newer memdir is refused before anything is written
    paths.state_dir(store)
    instant = parse_instant(at) if at else None
    return journal_mod.append_turn(store, who, text, session=session, at=instant)


def search(store: Path, query: str, *, limit: int = 10, session: str | None = None) -> SearchResult:
    """Search journal turns; the index catches up with new journal lines first.

    With ``[recall] embed`` set, the lexical pool is re-ranked with that embedding model
    (:mod:`memdir.semantic`).

    Raises:
        UsageError: ``[recall] embed`` names a model that cannot be loaded or reached.
    """
    from memdir.kernel.storage import manifest

    started = time.perf_counter()
    settings = manifest.load(store)
    similarity, weight = None, 1.0
    if settings.embed:
        from memdir.semantic import from_settings, keep_vectors

        model = from_settings(settings.embed, settings.embed_url, settings.embed_model)
        keep_vectors(model, layout(store).in_state(StoreLayout.VECTORS))  # a new process each
        similarity, weight = model.similarity, model.weight
    with opened(store, scan_records=False) as handle:
        journal_mod.sync_journal(handle.index, store)
        terms, hits = search_turns(
            handle.index,
            query,
            limit=limit,
            session=session,
            similarity=similarity,
            semantic_weight=weight,
        )
    return SearchResult(query, terms, hits, (time.perf_counter() - started) * 1000)


# --- history and structure ---------------------------------------------------------------


def log(store: Path, record_id: str | None = None, limit: int = 20) -> list[Any]:
    """Return the store's commits (or a record's), newest first."""
    with opened(store) as handle:
        return history.log(handle, record_id, limit)


def diff(store: Path, record_id: str) -> history.Diff:
    """Return a record's supersession chain and the patches of its files."""
    with opened(store) as handle:
        return history.diff(handle, record_id)


def rollback(
    store: Path, commit: str, *, yes: bool, caller: Caller | None = None
) -> history.RolledBack:
    """Undo one commit with a revert commit; the owner's alone.

    Raises:
        AuthorityError: ``caller`` is not the owner (the attempt is recorded; nothing changes).
        UsageError, NotFoundError, GitError: see :func:`memdir.store.history.rollback`.
    """
    caller = caller or cli_caller()
    authority.refuse_unless_owner(store, "rollback", commit, caller, "changes what memory holds")
    with opened(store) as handle:
        return history.rollback(handle, commit, yes=yes, caller=caller)


def graph(store: Path, record_id: str, depth: int = 1) -> graph_mod.Graph:
    """Return the link graph around a record; text only for what this store serves.

    A linked record of another store (scope or project) or holding a tombstoned value is shown
    by id and status alone (:func:`memdir.store.graph.node`).
    """
    with opened(store) as handle:
        served = identity.read_filter(store, handle.manifest)
        return graph_mod.graph(handle.index, record_id, depth, served)


def build_index(store: Path, backend: str) -> dict[str, Any]:
    """Rebuild the index ``backend`` names from the records and the journal, in one transaction.

    Returns ``{"backend", "records", "quarantined", "turns", "took_ms", "server"}``; ``server``
    (PostgreSQL only) names its version and whether pgvector is installed.

    Raises:
        UsageError: psycopg is missing (``pip install 'memdir[postgres]'``).
        StorageError: the PostgreSQL server cannot be reached.
        ManifestError: ``memdir.toml`` is missing or invalid.
    """
    from memdir.kernel.storage import manifest

    started = time.perf_counter()
    if backend in ("", "sqlite"):
        report = scan.reindex(store)
        server: dict[str, Any] = {}
    else:
        settings = manifest.load(store)
        index = scan.open_backend(store, backend)
        try:
            report = scan.fill(index, store, settings)
            features = getattr(index, "features", None)
            server = features() if features else {}
        finally:
            index.close()
    return {
        "backend": "sqlite" if backend in ("", "sqlite") else "postgres",
        "records": report.indexed,
        "quarantined": report.quarantined,
        "turns": report.turns,
        "took_ms": round((time.perf_counter() - started) * 1000, 1),
        "server": server,
    }


def catalogue(store: Path, *, backend: str | None = None) -> list[Record]:
    """Return every active record, by kind then importance: the compact index for injection.

    ``backend`` reads another index than the manifest's (see :func:`opened`).
    """
    with opened(store, backend=backend) as handle:
        docs = handle.index.list_docs(served=identity.read_filter(store, handle.manifest))
    order = {
        kind: n
        for n, kind in enumerate(
            ("rule", "preference", "decision", "fact", "procedure", "entity", "episode", "bug")
        )
    }
    docs.sort(key=lambda d: (order.get(d["kind"], 99), -d["importance"], d["id"]))
    return [doc_record(doc) for doc in docs]


def reindex(store: Path) -> scan.ScanReport:
    """Rebuild the index from records and journal alone, then ``records/index.json``.

    The local SQLite index always (the hooks read it); the PostgreSQL index too when
    ``[index] backend`` names one (its report is the one returned then). The catalogue
    (:mod:`memdir.store.catalogue`) is written for tools that read files, and the
    ``[policy] max_active`` demotions (:mod:`memdir.store.capacity`) for the hooks.
    """
    from memdir.kernel.storage import manifest
    from memdir.store import capacity, catalogue

    report = scan.reindex(store)
    backend = manifest.load(store).index_backend
    if backend:
        index = scan.open_backend(store, backend)
        try:
            report = scan.fill(index, store, manifest.load(store))
        finally:
            index.close()
    with opened(store, scan_records=False) as handle:
        catalogue.write(handle)
        capacity.refresh(handle)  # [policy] max_active demotions, for the hooks
    return report


def check_record_id(record_id: str) -> str:
    """Return a syntactically valid record id or raise :class:`UsageError`."""
    return check_id(record_id)


def health(store: Path) -> Any:
    """Examine the store, make the safe repairs, and return the report (``.ok``, findings).

    The ``[policy] max_active`` demotions the hooks read are recomputed too, when a cap is set.
    """
    from memdir.store import capacity
    from memdir.store.health import check

    report = check(store)
    with contextlib.suppress(MemdirError, OSError), opened(store) as handle:
        if handle.manifest.max_active:
            capacity.refresh(handle)
    return report


def clear_hook_errors(store: Path) -> int:
    """Empty the store's hook error log once read; return how many entries it held.

    See :func:`memdir.store.health.clear_hook_errors` (an entry appended meanwhile is kept).
    """
    from memdir.store.health import clear_hook_errors as clear

    return clear(store)


def purge(store: Path, record_id: str, *, yes: bool, caller: Caller | None = None) -> Any:
    """Erase a record's text from the working tree, index, logs and history; the owner's alone.

    Raises:
        AuthorityError: ``caller`` is not the owner (the attempt is recorded; nothing changes).
        UsageError, NotFoundError, GitError: see :func:`memdir.store.purge.purge`.
    """
    from memdir.store.purge import purge as purge_record

    caller = caller or cli_caller()
    authority.refuse_unless_owner(store, "purge", record_id, caller, "rewrites history")
    with opened(store) as handle:
        return purge_record(handle, record_id, yes=yes, caller=caller)
