"""``memdir health``: what is wrong with a store, what was repaired, what to do next.

Read-mostly. It repairs only what is safe and mechanical: it finishes a logical write a
killed process left half-done (:func:`memdir.kernel.storage.txn.recover`), removes stale
dot-prefixed
temporary files and the git lock files a killed git left, and brings the index up to date.
Everything else is reported with the command that fixes it: quarantined files (by name, never
moved or rewritten), duplicated keys, dangling links, broken supersession chains, uncommitted
hand edits, journal and action-log lines that are not whole JSON objects (by file and line;
readers skip them, case B13), hook errors, lock state.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memdir.kernel.base.atomic import TEMP_SUFFIX
from memdir.kernel.base.errors import GitError, MemdirError
from memdir.kernel.base.layout import layout
from memdir.kernel.storage import gitio, manifest, txn
from memdir.kernel.storage.lifecycle import Handle
from memdir.kernel.storage.lock import inspect_lock, store_lock
from memdir.kernel.storage.paths import (
    HOOK_ERROR_LOG,
    HOOK_GAVE_UP,
    HOOK_ROW_LATE,
    MANIFEST_NAME,
    STATE_DIRNAME,
    StoreLayout,
)
from memdir.store.scan import open_index, scan_records, tolerant_reader

if TYPE_CHECKING:
    from memdir.kernel.index.interface import IndexBackend

STALE_TEMP_SECONDS = 60.0
"""A temporary file older than this belongs to a writer that died; younger ones may be live."""


@dataclass(frozen=True, slots=True)
class Finding:
    """One thing ``health`` noticed."""

    level: str  # "error", "warning" or "info" (info never fails the check)
    code: str  # stable slug
    message: str
    path: str | None = None  # store-relative file, when there is one
    fix: str | None = None  # the command that acts on it

    def to_json(self) -> dict[str, Any]:
        """Return the finding as a JSON object."""
        return {
            k: v
            for k, v in (
                ("level", self.level),
                ("code", self.code),
                ("message", self.message),
                ("path", self.path),
                ("fix", self.fix),
            )
            if v is not None
        }


@dataclass
class Report:
    """Everything ``health`` found; ``ok`` is False when any error or warning was found."""

    store: str
    findings: list[Finding] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """Whether nothing is wrong.

        Info findings do not count, nor do write-budget warnings (``over_budget_…``): a store
        past a budget is healthy, just due for consolidation, so ``memdir health`` in a script
        or CI must not fail on it.
        """
        return not any(
            f.level in ("error", "warning") and not f.code.startswith("over_budget")
            for f in self.findings
        )

    def to_json(self) -> dict[str, Any]:
        """Return the report as a JSON object."""
        return {
            "store": self.store,
            "ok": self.ok,
            "counts": self.counts,
            "findings": [f.to_json() for f in self.findings],
        }


def _remove_stale_temps(store: Path, report: Report) -> None:
    now = time.time()
    for folder, dirs, files in os.walk(store):
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in files:
            if name.startswith(".") and name.endswith(TEMP_SUFFIX):
                path = Path(folder) / name
                with contextlib.suppress(OSError):
                    if now - path.stat().st_mtime > STALE_TEMP_SECONDS:
                        path.unlink()
                        report.findings.append(
                            Finding(
                                "info",
                                "stale_temp_removed",
                                "removed a temporary file left by an interrupted write",
                                path.relative_to(store).as_posix(),
                            )
                        )


_FIXES = {
    "id_mismatch": "rename the file to its id (or fix the id), then `memdir reindex`",
    "bad_timestamp": "write the time as ISO-8601, e.g. 2026-04-16T06:00:00Z",
}


def _file_findings(handle: Handle, report: Report) -> None:
    for path, state, problems in handle.index.file_problems():
        for problem in problems:
            level = "error" if state == "quarantined" else problem.get("level", "warning")
            fix = (
                f"edit or remove {path}, then `memdir reindex`"
                if state == "quarantined"
                else _FIXES.get(
                    problem.get("code", ""),
                    "any memdir write to the record rewrites it canonically",
                )
            )
            report.findings.append(
                Finding(
                    level,
                    problem.get("code", "problem"),
                    ("quarantined: " if state == "quarantined" else "")
                    + problem.get("message", ""),
                    path,
                    fix,
                )
            )


def _symlink_findings(store: Path, report: Report) -> None:
    """Name every symbolic link under ``records/``: memdir reads none that leads out."""
    root = store / "records"
    if not root.is_dir():
        return
    for folder, dirs, files in os.walk(root):
        for name in [*files, *dirs]:
            path = Path(folder) / name
            if path.is_symlink() and not path.resolve().is_relative_to(store.resolve()):
                report.findings.append(
                    Finding(
                        "warning",
                        "symlink",
                        "a symbolic link to outside the store; memdir never reads it",
                        path.relative_to(store).as_posix(),
                        "remove the link; keep records as plain files inside the store",
                    )
                )


def _link_findings(handle: Handle, report: Report) -> None:
    statuses = handle.index.record_statuses()
    purged = _Purged(handle)
    for src, dst, via in handle.index.all_links():
        if statuses.get(src) not in ("active", "candidate"):
            continue
        state = statuses.get(dst)
        if state is None or state == "forgotten":
            gone = "forgotten" if state else "purged" if purged(dst) else "gone"
            report.findings.append(
                Finding(
                    "info" if gone == "purged" else "warning",
                    "dangling_link",
                    f"{src} links to {dst}, which is {gone}"
                    f" ({'[[id]] in the body' if via == 'body' else 'links'})",
                    handle.index.get_path(src),
                    f"`memdir correct {src}` without the link",
                )
            )
    successors: dict[str, list[str]] = {}
    for doc in handle.index.list_docs():
        if doc["status"] == "active" and doc.get("supersedes"):
            successors.setdefault(doc["supersedes"], []).append(doc["id"])
        later = doc.get("superseded_by")
        if doc["status"] == "superseded" and later and later not in statuses:
            erased = purged(later)
            report.findings.append(
                Finding(
                    "info" if erased else "warning",
                    "broken_chain",
                    f"{doc['id']} is superseded by {later}, which "
                    + ("was purged" if erased else "does not exist"),
                    handle.index.get_path(doc["id"]),
                    f"`memdir diff {doc['id']}`",
                )
            )
        earlier = doc.get("supersedes")
        if doc["status"] == "active" and earlier and statuses.get(earlier) == "active":
            report.findings.append(
                Finding(
                    "warning",
                    "broken_chain",
                    f"{doc['id']} supersedes {earlier}, which is still active",
                    handle.index.get_path(earlier),
                    f"`memdir forget {earlier} --reason superseded`",
                )
            )
    for earlier, ids in sorted(successors.items()):
        if len(ids) > 1:  # two corrections of one record both live (an older sync, a hand edit)
            report.findings.append(
                Finding(
                    "warning",
                    "forked_chain",
                    f"{' and '.join(sorted(ids))} both correct {earlier} and are both active",
                    handle.index.get_path(sorted(ids)[0]),
                    "keep one: `memdir correct ID --text ...` the other, or `memdir forget ID`",
                )
            )


class _Purged:
    """Whether a missing id was purged on purpose: a reference to it is then no fault.

    The purge commits are read once, and only when a missing id turns up.
    """

    def __init__(self, handle: Handle) -> None:
        self.store = handle.store
        self.ids: set[str] | None = None

    def __call__(self, record_id: str) -> bool:
        if self.ids is None:
            try:
                self.ids = gitio.purged_ids(self.store)
            except GitError:
                self.ids = set()
        return record_id in self.ids


def _git_state_findings(store: Path, report: Report) -> bool:
    """Name a git state memdir does not write in, with its fix; return whether git is usable."""
    try:
        state = gitio.git_state(store, unmerged=True)
    except GitError as err:
        if "dubious ownership" in str(err):  # made by another user: git will not touch it
            report.findings.append(
                Finding(
                    "error",
                    "git_ownership",
                    "the store's git repository belongs to another user, so git refuses to work "
                    "in it and every write fails (a store made with sudo, or a shared folder)",
                    None,
                    f"run memdir as the store's owner, or `chown -R` the store to you; or trust "
                    f"it: `git config --global --add safe.directory {store.resolve()}`",
                )
            )
        else:
            report.findings.append(Finding("error", "git", str(err)))
        return False
    if state is not None:
        report.findings.append(
            Finding(
                "error",
                state.code,
                f"the store's git {state.message}; memdir refuses writes until it is finished",
                None,
                state.fix,
            )
        )
        return state.code != "no_repository"
    return True


def _git_setup_findings(store: Path, report: Report) -> None:
    """What about the person's git setup affects the store: identity, an enclosing repository."""
    ident = gitio.run_git(store, "var", "GIT_COMMITTER_IDENT", check=False)
    if ident.returncode != 0:
        report.findings.append(
            Finding(
                "info",
                "git_identity",
                "git knows no name and email for the store (none in your global git config, "
                "or no HOME: a container, sudo, CI); memdir "
                f"commits as {gitio.FALLBACK_NAME} <{gitio.FALLBACK_EMAIL}>",
                None,
                'git config --global user.name "Your Name" && '
                "git config --global user.email you@example.com",
            )
        )
    parent = store.resolve().parent
    top = gitio.run_git(parent, "rev-parse", "--show-toplevel", check=False, discover=True)
    root = top.stdout.decode("utf-8", "replace").strip()
    if top.returncode != 0 or not root:
        return
    ignored = gitio.run_git(
        parent, "check-ignore", "-q", "--no-index", str(store.resolve()), check=False, discover=True
    )
    if ignored.returncode != 0:
        report.findings.append(
            Finding(
                "warning",
                "store_in_repository",
                f"the store sits inside the git repository at {root}, which does not ignore it: "
                "`git add -A` there would add the store to that project as an embedded "
                "repository",
                None,
                f"add /{Path(os.path.relpath(store.resolve(), root)).as_posix()}/ to "
                f"{root}/.git/info/exclude (`memdir init` in {root} does this)",
            )
        )


def _git_findings(handle: Handle, report: Report) -> None:
    if not _git_state_findings(handle.store, report):
        return
    try:
        _git_setup_findings(handle.store, report)
        dirty = gitio.dirty_paths(handle.store, "records")
    except GitError as err:
        report.findings.append(Finding("error", "git", str(err)))
        return
    if dirty:
        report.findings.append(
            Finding(
                "warning",
                "uncommitted",
                f"{len(dirty)} record file(s) changed outside memdir and not committed: "
                + ", ".join(dirty[:5])
                + (" …" if len(dirty) > 5 else ""),
                None,
                "commit them with `memdir sync` (or undo them with "
                "`git -C .memdir checkout -- records`, which leaves the append-only logs alone)",
            )
        )


LOG_FOLDERS = ("journal", "actions")
LISTED_LINES = 5


def _log_findings(store: Path, report: Report) -> None:
    """Report every complete line of the JSONL logs that is not a JSON object.

    Such a line is a write cut off by a crash or a full disk, or a hand edit; every reader skips
    it, and the next append starts on a fresh line. The unterminated tail of a file is left
    alone: a writer may be appending it right now.
    """
    for folder in LOG_FOLDERS:
        for path in sorted((store / folder).glob("*.jsonl")):
            bad: list[int] = []
            with contextlib.suppress(OSError), path.open("rb") as fh:
                for number, line in enumerate(fh, 1):
                    if not line.endswith(b"\n") or not line.strip():
                        continue
                    try:
                        whole = isinstance(json.loads(line), dict)
                    except ValueError:
                        whole = False
                    if not whole:
                        bad.append(number)
            if bad:
                listed = ", ".join(str(n) for n in bad[:LISTED_LINES])
                more = " …" if len(bad) > LISTED_LINES else ""
                report.findings.append(
                    Finding(
                        # Information, not a failure: a cut-off append was never acknowledged,
                        # so nothing it held was promised, and every whole line is still read.
                        "info",
                        "unreadable_line",
                        f"{len(bad)} line(s) are not whole JSON objects (line {listed}{more}): "
                        "a write cut off by a crash or a full disk, or a hand edit; they are "
                        "skipped, and the other lines are read",
                        path.relative_to(store).as_posix(),
                        "nothing to do if the lost entry does not matter; the file is append-only "
                        "evidence, so memdir never rewrites it",
                    )
                )


def _sync_findings(store: Path, report: Report) -> None:
    """Name the conflict the last ``memdir sync`` stopped on, and a merge left half-applied."""
    from memdir.store import teamsync

    conflict = teamsync.pending_conflict(store)
    if conflict is not None:
        paths: list[str | None] = [str(p) for p in conflict.get("paths") or []]
        for path in paths or [None]:
            report.findings.append(
                Finding(
                    "error",
                    "sync_conflict",
                    "the last `memdir sync` stopped: this file was changed differently on this "
                    "machine and on the remote and memdir cannot merge it; the store here is as "
                    "it was before that sync",
                    path,
                    "make the two versions agree (edit the file here, or undo the hand edit), "
                    "then `memdir sync`",
                )
            )
    if (layout(store).state_path(teamsync.PENDING)).exists():
        report.findings.append(
            Finding(
                "warning",
                "sync_interrupted",
                "a `memdir sync` was stopped while applying a merge; the next sync finishes it",
                f"{STATE_DIRNAME}/{teamsync.PENDING}",
                "memdir sync",
            )
        )


def clear_hook_errors(store: Path) -> int:
    """Empty ``state/hook-errors.log`` (``memdir health --clear-errors``); return the entries.

    Only what is in the file now is dropped: an entry a hook appends meanwhile is kept
    (:func:`memdir.kernel.base.appendlog.drop_head`), so the next ``health`` reports it.

    Returns:
        How many entries (``--- time event`` headers) were removed; 0 when there was no log.

    Raises:
        LockTimeoutError: a hook held the log past the wait; nothing was removed.
        OSError: the log cannot be read or rewritten.
    """
    from memdir.kernel.base import appendlog

    log = layout(store).state_path(HOOK_ERROR_LOG)
    try:
        data = log.read_bytes()
    except FileNotFoundError:
        return 0
    if not data:
        return 0
    appendlog.drop_head(log, len(data))
    return max(("\n" + data.decode("utf-8", "replace")).count("\n--- "), 1)


def _state_findings(store: Path, report: Report) -> None:
    lock = inspect_lock(store)
    if lock.held:
        report.findings.append(
            Finding("info", "lock_held", f"the store lock is held by {lock.holder}")
        )
    log = layout(store).state_path(HOOK_ERROR_LOG)
    if log.exists() and log.stat().st_size:
        text = log.read_text(encoding="utf-8", errors="replace")
        entries = [e.partition("\n")[2] for e in ("\n" + text).split("\n--- ")[1:]]
        slow = [e for e in entries if e.startswith(HOOK_GAVE_UP) and HOOK_ROW_LATE not in e]
        failed = len(entries) - len(slow)
        where = log.relative_to(store).as_posix()
        if failed or not entries:
            report.findings.append(
                Finding(
                    "warning",
                    "hook_errors",
                    f"{failed or 1} hook failure(s) logged",
                    where,
                    f"read {where}, then `memdir health --clear-errors`",
                )
            )
        if slow:
            report.findings.append(
                Finding(
                    "info",
                    "hook_timeouts",
                    f"{len(slow)} hook(s) ran out of their time budget and failed open, keeping "
                    "their journal and action rows (a busy machine, or a slow disk)",
                    where,
                )
            )
    _sync_findings(store, report)
    refused = layout(store).state_path(txn.REFUSED_INTENT_NAME)
    if refused.exists():
        report.findings.append(
            Finding(
                "warning",
                "intent_refused",
                "an interrupted-write file named paths outside records/ and was not replayed",
                refused.relative_to(store).as_posix(),
                "memdir never writes such a file: check who did, then delete it",
            )
        )
    pycache = Path(__file__).resolve().parent.parent / "kernel" / "__pycache__"
    if not pycache.is_dir():
        report.findings.append(
            Finding(
                "info",
                "no_bytecode",
                "memdir's kernel has no compiled bytecode, so hooks start slower; install with "
                "`pip install --compile` or run `python -m compileall` on the package",
            )
        )


def _proposal_findings(handle: Handle, report: Report) -> None:
    """Name the agent's proposals that await the owner (information, never a failure).

    A proposal whose record changed since it was proposed is not pending work: it is named
    under its own code, ``proposals_obsolete``, with the command that dismisses it.
    """
    from memdir.kernel.base.errors import MemdirError
    from memdir.kernel.storage.authority import pending, pending_count
    from memdir.kernel.storage.lifecycle import proposal_state

    if not pending_count(handle.store):
        return
    waiting, stale = 0, []
    for proposal in pending(handle.store):
        try:
            obsolete = proposal_state(handle, proposal)
        except MemdirError:
            obsolete = None  # an unreadable record is named by the file findings
        if obsolete is None:
            waiting += 1
        else:
            stale.append(proposal.id)
    if waiting:
        report.findings.append(
            Finding(
                "info",
                "proposals_pending",
                f"{waiting} change(s) the agent proposed to your records await your decision",
                fix="memdir review",
            )
        )
    if stale:
        report.findings.append(
            Finding(
                "info",
                "proposals_obsolete",
                f"{len(stale)} proposal(s) no longer apply: their record changed since "
                f"({', '.join(stale[:5])}); `memdir review` says why",
                fix="memdir review " + " ".join(f"--dismiss {p}" for p in stale[:5]),
            )
        )


def _audit_findings(store: Path, report: Report) -> None:
    """Check the audit log against the records: each record's current file has an event.

    A record whose current SHA-256 no audit event names as its ``after`` was changed outside
    memdir (a hand edit, a tool, a copy) or written before the store kept an audit log; it is
    named as information, since people may edit records by hand. A store with no audit log at
    all (made before memdir kept one) gets one line of information instead.
    """
    from memdir.kernel.storage import audit

    _tombstone_findings(store, report)
    events = audit.read(store)
    records = sorted((store / "records").glob("*/*.md"))
    if not events:
        if records:
            report.findings.append(
                Finding(
                    "info",
                    "audit_log_missing",
                    f"{len(records)} record(s) predate the audit log (audit/YYYY-MM.jsonl); "
                    "each change from now on is logged",
                )
            )
        return
    seen = {
        str(r.get("after"))
        for e in events
        for r in e.get("records") or []
        if isinstance(r, dict) and r.get("after")
    }
    unaudited = [p for p in records if audit.file_hash(p) not in seen]
    for path in unaudited[:LISTED_LINES]:
        report.findings.append(
            Finding(
                "info",
                "unaudited_record",
                f"{path.stem}: its current content has no audit event (changed outside "
                "memdir, or written before the audit log existed)",
                path.relative_to(store).as_posix(),
                "memdir sync (commits a hand edit with an audit event); "
                f"memdir audit {path.stem} shows its history",
            )
        )
    if len(unaudited) > LISTED_LINES:
        report.findings.append(
            Finding(
                "info",
                "unaudited_record",
                f"{len(unaudited) - LISTED_LINES} more record(s) have no audit event",
            )
        )


def _tombstone_findings(store: Path, report: Report) -> None:
    """Name each active or candidate record whose value is tombstoned.

    Every memdir write refuses such a value; one can still arrive by a hand edit or a merge of
    another machine's store, and is then named here (the owner rejects it again, or lifts the
    tombstone).
    """
    from memdir.kernel.storage import audit
    from memdir.kernel.storage.recordfile import read_canonical

    live = audit.tombstones(store)
    if not live:
        return
    for path in sorted((store / "records").glob("*/*.md")):
        rel = path.relative_to(store).as_posix()
        try:
            parsed = read_canonical(path.read_text(encoding="utf-8"), Path(rel))
        except (OSError, UnicodeDecodeError):
            continue
        if parsed is None or parsed.record.status not in ("active", "candidate"):
            continue
        entry = live.get(audit.value_key(parsed.record.text))
        if entry is not None:
            report.findings.append(
                Finding(
                    "warning",
                    "tombstoned_value_active",
                    f"{parsed.record.id} states a value that was rejected"
                    + (f" ({entry['record']})" if entry.get("record") else "")
                    + " and is tombstoned; it arrived outside memdir's write path",
                    rel,
                    f"memdir reject {parsed.record.id}, or memdir tombstone lift",
                )
            )


def _scope_findings(handle: Handle, report: Report) -> None:
    """Name records that belong to another store, and a store whose identity is another's.

    A record of another scope, or naming another project's identity (a file copied in from
    another store), is not served here (issue 10, mark 4); this is where it shows. A project
    store whose manifest identity differs from the one its project's git root commits give may
    have been copied from another project wholesale; reads trust the manifest, and the same
    difference follows a rewritten history or an init before the first commit, so it is
    information for a person to look at, not a failure.
    """
    from memdir.kernel.base.validity import in_scope
    from memdir.kernel.storage import identity

    settings = handle.manifest
    mine = settings.project if settings.scope == "project" else None
    for doc in handle.index.list_docs(newest_first=False):
        if in_scope(doc, settings.scope, mine):
            continue
        owner = doc.get("project")
        whose = (
            f"names project {owner} (this store is {settings.project or 'without an identity'})"
            if doc.get("scope", "project") == settings.scope
            else f"has scope {doc.get('scope')!r} (this is a {settings.scope} store)"
        )
        report.findings.append(
            Finding(
                "warning",
                "record_of_another_store",
                f"{doc['id']} {whose}: it was copied in from another store and is not served here",
                f"{StoreLayout.RECORDS}/{doc['kind']}/{doc['id']}.md",
                f"move it to its own store, or memdir forget {doc['id']}",
            )
        )
    if settings.scope != "project" or not settings.project:
        return
    project = identity.project_root(handle.store)
    derived = identity.from_roots(project)
    if derived is not None and derived != settings.project:
        report.findings.append(
            Finding(
                "info",  # also after a rewritten history, or an init before the first commit
                "project_identity_foreign",
                f"this store's identity {settings.project} is not the one this project's git "
                f"root commits give ({derived}): the store was copied from another project, "
                "the project's history was rewritten, or the store was made before the "
                "project's first commit; its records are served here",
                MANIFEST_NAME,
                "if the store came from another project, move it back; if this project's "
                "history was rewritten, the store is still its own",
            )
        )


def _check_read_only(store: Path, index: IndexBackend, settings: Any, report: Report) -> Report:
    """Examine a store this process cannot write: every finding, no repair, no write."""
    report.findings.append(
        Finding(
            "info",
            "read_only",
            "the store cannot be written here (a read-only mount or no permission): it was "
            "examined without repairs, and reads answer from the index as it is",
        )
    )
    if (layout(store).state_path(txn.INTENT_NAME)).exists():
        report.findings.append(
            Finding(
                "error",
                "write_pending",
                "an interrupted write is waiting to be finished, and this process cannot write "
                "the store to finish it",
                f"{STATE_DIRNAME}/{txn.INTENT_NAME}",
                "run `memdir health` where the store is writable",
            )
        )
    try:
        handle = Handle(store, index, settings, read=tolerant_reader(settings.scope))
        _file_findings(handle, report)
        _symlink_findings(store, report)
        _link_findings(handle, report)
        _git_findings(handle, report)
        _log_findings(store, report)
        _audit_findings(store, report)
        _proposal_findings(handle, report)
        _scope_findings(handle, report)
        report.counts = index.count_by("status")
        for found in manifest.budget_warnings(
            settings,
            index.count_by("kind", status="active"),
            report.counts.get("candidate", 0),
            manifest.map_files(store),
        ):
            report.findings.append(
                Finding("warning", found["code"], found["message"], fix=found["fix"])
            )
    finally:
        index.close()
    return report


def _spool_findings(handle: Handle, report: Report) -> None:
    """Store explicit requests a prompt hook ran out of time for; name any still waiting."""
    from memdir.kernel.storage import spool

    if not spool.pending(handle.store):
        return
    try:
        stored = spool.drain(handle)
    except (MemdirError, OSError):
        stored = []
    if stored:
        report.findings.append(
            Finding(
                "info",
                "explicit_requests_stored",
                f"stored {len(stored)} explicit request(s) a prompt hook ran out of time for",
            )
        )
    left = spool.pending(handle.store)
    if left:
        report.findings.append(
            Finding(
                "warning",
                "explicit_requests_pending",
                f"{len(left)} explicit request file(s) from prompts wait to be stored",
                f"{STATE_DIRNAME}/{spool.SPOOL_DIRNAME}",
                "fix what blocks writes (see the other findings); the next run stores them",
            )
        )


def check(store: Path) -> Report:
    """Examine ``store``, make the safe repairs, and return every finding.

    Raises:
        LockTimeoutError: a writer held the store lock for the whole wait.
    """
    report = Report(str(store))
    try:
        settings = manifest.load(store)
    except MemdirError as err:
        report.findings.append(Finding("error", err.code, str(err), "memdir.toml"))
        return report
    index = open_index(store)
    if index.read_only:
        return _check_read_only(store, index, settings, report)
    try:
        handle = Handle(store, index, settings, read=tolerant_reader(settings.scope))
        with store_lock(store, "health", handle.lock_timeout_seconds, queue=handle.lock_queue):
            for path in gitio.remove_stale_locks(store):
                report.findings.append(
                    Finding(
                        "info",
                        "stale_git_lock_removed",
                        "removed a git lock file left by a git process that was killed",
                        path,
                    )
                )
            try:
                if txn.recover(store, index):
                    report.findings.append(
                        Finding(
                            "info",
                            "write_completed",
                            "finished a write that an interrupted process left",
                        )
                    )
            except (GitError, OSError) as err:
                report.findings.append(
                    Finding(
                        "error",
                        "write_pending",
                        str(err)
                        if isinstance(err, GitError)
                        else f"an interrupted write is waiting to be finished and cannot be: {err}",
                        f"{STATE_DIRNAME}/{txn.INTENT_NAME}",
                        "fix what git says; the next write or `memdir health` finishes it",
                    )
                )
            _remove_stale_temps(store, report)
            scanned = scan_records(handle)
            _spool_findings(handle, report)
        if scanned.indexed or scanned.removed:
            report.findings.append(
                Finding(
                    "info",
                    "index_refreshed",
                    f"the index was stale: {scanned.indexed} file(s) re-read, "
                    f"{scanned.removed} removed",
                )
            )
        _file_findings(handle, report)
        _symlink_findings(store, report)
        _link_findings(handle, report)
        _git_findings(handle, report)
        _log_findings(store, report)
        _state_findings(store, report)
        _audit_findings(store, report)
        _proposal_findings(handle, report)
        _scope_findings(handle, report)
        report.counts = index.count_by("status")
        for found in manifest.budget_warnings(
            settings,
            index.count_by("kind", status="active"),
            report.counts.get("candidate", 0),
            manifest.map_files(store),
        ):
            report.findings.append(
                Finding("warning", found["code"], found["message"], fix=found["fix"])
            )
    finally:
        index.close()
    try:
        if gitio.maintain(store):
            report.findings.append(
                Finding("info", "git_packed", "packed the history's loose objects (faster writes)")
            )
    except GitError as err:
        report.findings.append(Finding("warning", "git_maintenance", str(err)))
    return report
