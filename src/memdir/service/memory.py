"""Use cases of the observer, review, hygiene, threads, the bug log and transcript import."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memdir.kernel import journal, lifecycle, manifest
from memdir.kernel.errors import UsageError
from memdir.kernel.lifecycle import Handle, Written
from memdir.observe import llm, observer, transcripts
from memdir.service import opened
from memdir.service.project import project_root
from memdir.store import bugs, hygiene, threads


def observe_once(
    store: Path, *, from_start: bool = False, offline: bool = False
) -> observer.Observed:
    """Run one observer pass: journal turns in, candidate beliefs out (DESIGN §8)."""
    endpoint = None if offline else llm.Endpoint.from_env()
    with opened(store) as handle:
        return observer.observe_once(handle, from_start=from_start, endpoint=endpoint)


def review_list(store: Path) -> list[dict[str, Any]]:
    """Return the candidates awaiting review, oldest first."""
    with opened(store) as handle:
        return handle.index.list_docs(statuses=("candidate",), newest_first=False)


def _candidate(handle: Handle, record_id: str) -> None:
    """Raise unless ``record_id`` is a candidate (review acts on nothing else).

    Raises:
        NotFoundError: no such record.
        UsageError: the record exists but is not a candidate.
    """
    record, _ = lifecycle.load(handle, record_id)
    if record.status != "candidate":
        raise UsageError(
            f"{record.id} is not a candidate (it is {record.status}); review accepts, rejects "
            "or rewords candidates only: use `memdir reject`, `forget` or `correct` for others"
        )


def review_accept(store: Path, record_id: str, *, origin: str) -> Written:
    """Make a candidate an active belief.

    Raises:
        NotFoundError: no such record.
        UsageError: the record is not a candidate.
    """
    with opened(store) as handle:
        _candidate(handle, record_id)
        return lifecycle.set_status(
            handle, record_id, "active", reason="accepted in review", op="accept", origin=origin
        )


def review_reject(store: Path, record_id: str, reason: str, *, origin: str) -> Written:
    """Reject a candidate: it is never recalled and never proposed again.

    Raises:
        NotFoundError: no such record.
        UsageError: the record is not a candidate.
    """
    with opened(store) as handle:
        _candidate(handle, record_id)
        return lifecycle.set_status(
            handle, record_id, "rejected", reason=reason, op="reject", origin=origin
        )


def review_edit(store: Path, record_id: str, text: str, *, origin: str) -> Written:
    """Accept a candidate with new wording: a corrected, active record supersedes it.

    Raises:
        NotFoundError: no such record.
        UsageError: the record is not a candidate, or the text is refused.
    """
    with opened(store) as handle:
        _candidate(handle, record_id)
        return lifecycle.correct(handle, record_id, text, reason="edited in review", origin=origin)


def pending_threads(store: Path, within_minutes: float | None = None) -> list[dict[str, Any]]:
    """Return the sessions whose newest user turn no agent turn answered."""
    with opened(store, scan_records=False) as handle:
        journal.sync_journal(handle.index, store)
        return threads.pending(handle.index, within_minutes)


def dream(store: Path) -> dict[str, Any]:
    """Return the read-only hygiene report."""
    with opened(store) as handle:
        return hygiene.report(handle, project_root(store))


def bug_log(
    store: Path, error: str, fix: str, file: str | None, *, origin: str, channel: str
) -> Written:
    """Log a bug and its fix (or bump the matching open bug)."""
    with opened(store) as handle:
        return bugs.log(handle, error, fix, file, origin, channel)


def bug_search(store: Path, query: str, limit: int = 10) -> list[dict[str, Any]]:
    """Search the bug log."""
    with opened(store) as handle:
        return bugs.search(handle, query, limit)


def bug_list(store: Path) -> list[dict[str, Any]]:
    """List the bug log."""
    with opened(store) as handle:
        return bugs.listing(handle)


def bug_fixed(store: Path, record_id: str, *, origin: str, channel: str) -> Written:
    """Mark a bug fixed."""
    with opened(store) as handle:
        return bugs.mark_fixed(handle, record_id, origin, channel)


def import_transcripts(store: Path, paths: list[Path], source: str) -> transcripts.Imported:
    """Import Claude Code transcripts or Codex rollouts into the journal."""
    manifest.load(store)  # a store from a newer memdir is refused before anything is written
    return transcripts.import_files(store, paths, source)


def export_records(store: Path, statuses: list[str]) -> list[str]:
    """Return every record (of ``statuses``, or all) as JSON lines."""
    from memdir.store import bulk

    with opened(store) as handle:
        return list(bulk.export_lines(handle, statuses))


def import_records(store: Path, path: Path) -> Any:
    """Import records from a JSON Lines file (``memdir export`` output), one commit."""
    from memdir.store import bulk

    with opened(store) as handle:
        return bulk.import_lines(handle, bulk.read_jsonl(path))
