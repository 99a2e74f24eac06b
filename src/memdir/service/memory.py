"""Use cases of the observer, review, hygiene, threads, the bug log and transcript import."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memdir.kernel.base.caller import Caller
from memdir.kernel.base.errors import AuthorityError, UsageError
from memdir.kernel.base.layout import StoreLayout, layout
from memdir.kernel.storage import authority, journal, lifecycle, manifest
from memdir.kernel.storage.authority import Proposal
from memdir.kernel.storage.lifecycle import Handle, Written
from memdir.kernel.storage.lock import store_lock
from memdir.observe import llm, observer, transcripts
from memdir.service import opened
from memdir.service.channel import cli_caller
from memdir.service.project import project_root
from memdir.store import bugs, hygiene, threads


def observe_once(
    store: Path, *, from_start: bool = False, offline: bool = False
) -> observer.Observed:
    """Run one observer pass: journal turns in, candidate beliefs out (DESIGN §8)."""
    endpoint = None if offline else llm.Endpoint.from_env()
    with opened(store) as handle:
        return observer.observe_once(handle, from_start=from_start, endpoint=endpoint)


def llm_setup_note() -> str | None:
    """Why the observer uses no LLM although half of its settings is set; ``None`` otherwise."""
    return llm.setup_note()


def review_list(store: Path) -> list[dict[str, Any]]:
    """Return the candidates awaiting review, oldest first."""
    with opened(store) as handle:
        return handle.index.list_docs(statuses=("candidate",), newest_first=False)


def sync_resolutions(store: Path, limit: int = 20) -> list[dict[str, Any]]:
    """Return the versions ``memdir sync`` set aside automatically, newest first.

    Each is a record a merge superseded (a concurrent edit kept beside the current one) or
    rejected (a value tombstoned on another machine); see :mod:`memdir.store.teamsync`.
    """
    from memdir.store import teamsync

    return teamsync.merge_resolutions(store)[:limit]


REVIEW_ELSEWHERE = {
    "accept": "",
    "reject": 'to reject it anyway: `memdir reject {id} --reason "…"`',
    "edit": 'to reword it: `memdir correct {id} --text "…"`',
}
"""What to run instead when review is asked to ``op`` a record that is not a candidate."""


def _candidate(handle: Handle, record_id: str, op: str) -> None:
    """Raise unless ``record_id`` is a candidate (review acts on nothing else).

    Args:
        handle: The open store.
        record_id: The record named after ``--accept``, ``--reject`` or ``--edit``.
        op: ``accept``, ``reject`` or ``edit``: named in the message with what to run instead.

    Raises:
        NotFoundError: no such record.
        UsageError: the record exists but is not a candidate; the message says what it is
            (already accepted or rejected, superseded by which record) and, when there is one,
            the command that does what was meant. Nothing is changed.
    """
    record, _ = lifecycle.load(handle, record_id)
    if record.status == "candidate":
        return
    done = {"accept": "active", "reject": "rejected"}.get(op)
    if record.status == done:
        raise UsageError(
            f"{record.id} is not a candidate: it is already {record.status}; nothing changed"
        )
    state = record.status + (f" by {record.superseded_by}" if record.superseded_by else "")
    hint = REVIEW_ELSEWHERE[op].format(id=record.id) if record.status == "active" else ""
    raise UsageError(
        f"{record.id} is not a candidate: it is {state}, so review cannot {op} it; "
        "nothing changed" + (f"; {hint}" if hint else "")
    )


def _reviewer(origin: str, caller: Caller | None) -> Caller:
    """Return the reviewing caller; only the owner reviews (DESIGN §4).

    Raises:
        AuthorityError: the caller is not the owner.
    """
    caller = caller or Caller(origin, "cli")
    if not caller.is_owner:
        raise AuthorityError(
            f"refused: only the owner reviews, in their own terminal; this is the "
            f"{caller.describe()}"
        )
    return caller


def review_accept(
    store: Path, record_id: str, *, origin: str = "owner", caller: Caller | None = None
) -> Written:
    """Make a candidate an active belief with the owner's authority (origin ``owner``).

    Accepting is the owner's adjudication: from then on an agent can only propose changes to
    it. Its ``source`` (channel, session, journal citation) is kept, and the audit event names
    the origin it had (``from_origin``: ``observer``, ``agent``, ``import``).

    Raises:
        AuthorityError: the caller is not the owner.
        NotFoundError: no such record.
        UsageError: the record is not a candidate.
    """
    caller = _reviewer(origin, caller)
    with opened(store) as handle:
        _candidate(handle, record_id, "accept")
        return lifecycle.set_status(
            handle,
            record_id,
            "active",
            reason="accepted in review",
            op="accept",
            caller=caller,
            adopt=True,
        )


def review_reject(
    store: Path,
    record_id: str,
    reason: str,
    *,
    origin: str = "owner",
    caller: Caller | None = None,
) -> Written:
    """Reject a candidate: it is never recalled and never proposed again.

    Raises:
        AuthorityError: the caller is not the owner.
        NotFoundError: no such record.
        UsageError: the record is not a candidate.
    """
    caller = _reviewer(origin, caller)
    with opened(store) as handle:
        _candidate(handle, record_id, "reject")
        return lifecycle.set_status(
            handle, record_id, "rejected", reason=reason, op="reject", caller=caller
        )


def review_edit(
    store: Path, record_id: str, text: str, *, origin: str = "owner", caller: Caller | None = None
) -> Written:
    """Accept a candidate with new wording: a corrected, active record supersedes it.

    Raises:
        AuthorityError: the caller is not the owner.
        NotFoundError: no such record.
        UsageError: the record is not a candidate, or the text is refused.
    """
    caller = _reviewer(origin, caller)
    with opened(store) as handle:
        _candidate(handle, record_id, "edit")
        return lifecycle.correct(handle, record_id, text, reason="edited in review", caller=caller)


# --- proposals (the agent's requested changes to the owner's records) ------------------------


def proposals_pending(store: Path) -> list[dict[str, Any]]:
    """Return the proposals awaiting the owner, oldest first, each with its record's state.

    Each item is the proposal's JSON plus ``current``: the target record's ``text`` and
    ``status`` now (``None`` when the record is gone), and ``obsolete``: ``None``, or
    ``{"reason": …, "successor": … | null}`` when the record changed since it was proposed
    (such a proposal cannot be accepted, only dismissed).
    """
    out = []
    with opened(store) as handle:
        for proposal in authority.pending(store):
            doc = handle.index.get_doc(proposal.record)
            current = {"text": doc["text"], "status": doc["status"]} if doc else None
            stale = lifecycle.proposal_state(handle, proposal)
            out.append(
                {
                    **proposal.to_json(),
                    "current": current,
                    "obsolete": stale.to_json() if stale else None,
                }
            )
    return out


@dataclass(frozen=True, slots=True)
class Decided:
    """A proposal the owner accepted or declined, and what accepting it wrote."""

    proposal: Proposal
    written: Written | None

    def to_json(self) -> dict[str, Any]:
        """Return ``{"proposal": …, "record": … | null}``."""
        return {
            "proposal": self.proposal.to_json(),
            "record": self.written.record.to_json() if self.written else None,
        }


def proposal_accept(store: Path, proposal_id: str, *, caller: Caller) -> Decided:
    """Apply a pending proposal with the owner's authority, in one commit with its decision.

    The change (correct, reject or forget) is made by ``caller`` (the owner) and its reason
    names the proposal and who made it; the same commit moves the proposal to ``decided/``
    (:func:`memdir.kernel.storage.lifecycle.accept_proposal`), so one rollback undoes both.

    Raises:
        AuthorityError: the caller is not the owner.
        NotFoundError: no such proposal.
        UsageError: it was already decided.
        ObsoleteProposalError: its record changed since (superseded, rejected, forgotten,
            purged, reworded); dismiss it instead (exit 1).
    """
    caller = _reviewer(caller.origin, caller)
    with opened(store) as handle:
        written, done = lifecycle.accept_proposal(handle, proposal_id, caller)
        return Decided(done, written)


def proposal_decline(
    store: Path, proposal_id: str, reason: str | None = None, *, caller: Caller
) -> Decided:
    """Decline (or dismiss an obsolete) pending proposal: its record stays as it is.

    The outcome reads ``declined by the owner[: <reason>]``, or ``dismissed by the owner as
    obsolete: <why>`` when its record changed since it was proposed.

    Raises:
        AuthorityError: the caller is not the owner.
        NotFoundError: no such proposal.
        UsageError: it was already decided.
        SecretError: the reason holds a secret.
    """
    caller = _reviewer(caller.origin, caller)
    reason = lifecycle.clean_reason(reason) if reason else None
    with opened(store) as handle, store_lock(store, "review"):
        proposal = _pending(store, proposal_id)
        stale = lifecycle.proposal_state(handle, proposal)
        if stale is not None:
            outcome = f"dismissed by the owner as obsolete: {stale.reason}"
        else:
            outcome = "declined by the owner" + (f": {reason}" if reason else "")
        return Decided(authority.decide(store, proposal, "declined", caller, outcome), None)


def _pending(store: Path, proposal_id: str) -> Proposal:
    proposal = authority.load(store, proposal_id)
    if proposal.status != "pending":
        raise UsageError(f"{proposal.id} was already {proposal.status} ({proposal.decided_at})")
    return proposal


def pending_threads(store: Path, within_minutes: float | None = None) -> list[dict[str, Any]]:
    """Return the sessions whose newest user turn no agent turn answered."""
    with opened(store, scan_records=False) as handle:
        journal.sync_journal(handle.index, store)
        return threads.pending(handle.index, within_minutes)


def dream(store: Path) -> dict[str, Any]:
    """Return the read-only hygiene report, with the waste report as its ``waste`` section."""
    from memdir.store import waste as waste_mod

    with opened(store) as handle:
        found = hygiene.report(handle, project_root(store))
        found["waste"] = waste_mod.report(handle, project_root(store))
        return found


def maintain(store: Path, *, due_only: bool = False) -> dict[str, Any]:
    """Run the store's upkeep (:mod:`memdir.store.maintain`): observer, logs, map, hygiene."""
    from memdir.kernel.base.atomic import write_text_atomic
    from memdir.kernel.filemap.anatomy import ANATOMY_JSON
    from memdir.service import project
    from memdir.store import maintain as maintain_mod

    def observe(s: Path) -> dict[str, Any]:
        return {"turns": observe_once(s).turns}

    def logs(s: Path) -> dict[str, Any]:
        return project.sync(s, logs_only=True).to_json()

    def scan(s: Path) -> dict[str, Any]:
        if not (s / ANATOMY_JSON).exists():
            return {"skipped": "no file map yet (`memdir scan` makes one)"}
        return project.scan(s).to_json()

    def hygiene(s: Path) -> dict[str, Any]:
        found = dream(s)
        report = layout(s).in_state(StoreLayout.DREAM)
        write_text_atomic(report, json.dumps(found, indent=1, default=str))
        return {"findings": len(found["findings"]), "report": report.relative_to(s).as_posix()}

    tasks = {"observe": observe, "logs": logs, "scan": scan, "hygiene": hygiene}
    return maintain_mod.run(store, due_only=due_only, tasks=tasks)


def waste(store: Path, days: int = 30) -> dict[str, Any]:
    """Return the waste report of the last ``days`` days (:mod:`memdir.store.waste`)."""
    from memdir.store import waste as waste_mod

    with opened(store) as handle:
        return waste_mod.report(handle, project_root(store), days=days)


def bug_log(store: Path, error: str, fix: str, file: str | None, *, caller: Caller) -> Written:
    """Log a bug and its fix (or bump the matching open bug); ``caller`` is who reported it."""
    with opened(store) as handle:
        return bugs.log(handle, error, fix, file, caller)


def bug_search(store: Path, query: str, limit: int = 10) -> list[dict[str, Any]]:
    """Search the bug log."""
    with opened(store) as handle:
        return bugs.search(handle, query, limit)


def bug_list(store: Path) -> list[dict[str, Any]]:
    """List the bug log."""
    with opened(store) as handle:
        return bugs.listing(handle)


def bug_fixed(store: Path, record_id: str, *, caller: Caller) -> Written:
    """Mark a bug fixed; ``caller`` (built at the edge) is recorded as who did it."""
    with opened(store) as handle:
        return bugs.mark_fixed(handle, record_id, caller)


def import_transcripts(store: Path, paths: list[Path], source: str) -> transcripts.Imported:
    """Import Claude Code transcripts or Codex rollouts into the journal."""
    manifest.load(store)  # a store from a newer memdir is refused before anything is written
    return transcripts.import_files(store, paths, source)


def export_records(store: Path, statuses: list[str]) -> list[str]:
    """Return every record of this store's scope and project (of ``statuses``; all) as JSON lines.

    A record of another scope or project (a file copied in from another store, say) is not
    this store's to export (issue 10, mark 4; :func:`memdir.store.bulk.export_lines`).
    """
    from memdir.store import bulk

    with opened(store) as handle:
        return list(bulk.export_lines(handle, statuses))


def import_records(store: Path, path: Path, *, caller: Caller | None = None) -> Any:
    """Import records from a JSON Lines file (``memdir export`` output), one commit.

    The records get origin ``import``; the commit names ``caller`` (default: from this
    process's environment), who ran the import.
    """
    from memdir.store import bulk

    trailers = (caller or cli_caller()).trailers()
    with opened(store) as handle:
        return bulk.import_lines(handle, bulk.read_jsonl(path), trailers=trailers)


def import_from(
    store: Path, fmt: str, path: Path, *, dry_run: bool = False, caller: Caller | None = None
) -> Any:
    """Import another tool's memory at ``path`` (``--from fmt``); one commit, or a dry run.

    Args:
        store: The store folder.
        fmt: A name in :data:`memdir.importers.FORMATS`.
        path: The source: a folder or file, as the format expects.
        dry_run: Count what would be created, refused and skipped; write nothing.
        caller: Who runs the import (default: from this process's environment).

    Returns:
        :class:`memdir.store.bulk.SourceImported`.

    Raises:
        UsageError: unknown format, or ``path`` is not such a source.
        LockTimeoutError, GitError: from the write.
    """
    from memdir import importers
    from memdir.store import bulk

    trailers = (caller or cli_caller()).trailers()
    with opened(store) as handle:
        items = importers.read(fmt, path, scope=handle.manifest.scope)
        first = next(items, None)  # a bad source fails here, before the store lock
        chained = items if first is None else _chain(first, items)
        return bulk.import_planned(handle, chained, fmt=fmt, dry_run=dry_run, trailers=trailers)


def _chain(first: Any, rest: Any) -> Any:
    """Yield ``first`` then ``rest``; a bug record gets memdir's error signature on the way."""
    import dataclasses
    import itertools
    import json

    for one in itertools.chain((first,), rest):
        record = one.record
        if record is not None and record.kind == "bug":
            sig = (("signature", " " + json.dumps(bugs.signature(record.text))),)
            record = dataclasses.replace(record, extra=sig + record.extra)
            one = dataclasses.replace(one, record=record)
        yield one
