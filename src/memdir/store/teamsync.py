"""Sharing a store through a git remote: ``memdir sync`` and ``memdir remote`` (DESIGN §2, §11).

The store's own git repository is pushed to, and pulled from, a branch of any git remote: by
default the project's own ``origin`` on the orphan branch ``memdir``. Where is per machine (the
store's git config keys ``memdir.remote`` and ``memdir.branch``, set by ``memdir remote``);
the transport and the credentials are the person's own git's (ssh keys, credential helpers,
``insteadOf``), memdir has none of its own. Every git call goes through
:func:`memdir.kernel.storage.gitio.run_git`, so a person's git configuration cannot change
what it does.

A sync, under the store lock:

1. finishes a merge a killed sync left half-applied (:data:`PENDING`);
2. commits what is not committed yet (journal, action and audit logs, anatomy, hand edits);
3. fetches the branch into ``refs/memdir/sync/<branch>`` (never touching the store's files);
4. merges it with memdir's own rules (:func:`merge_trees`), building the merged tree and
   commit as git objects first; a conflict they cannot resolve stops here with the store
   unchanged (:class:`SyncConflictError`, named by ``memdir health`` until a sync succeeds);
5. applies the merge to the files (an intent in ``state/`` first, so a kill is finished by
   the next sync), moves the branch with a compare-and-swap, and brings the index up to date
   from what arrived;
6. pushes; a push refused because the remote moved fetches and merges again.

Merge rules (one file per record keeps independent additions apart):

- a path changed on one side takes that side; deleted on either side (purge) stays deleted;
- two different edits of one record resolve by supersession: the later edit keeps the id and
  stays current, the earlier is kept as a new record (a deterministic id, so two machines
  merging the same pair agree) with status ``superseded`` and a reason naming the merge;
  a rejection or a forget wins over a concurrent edit, and a correction over an edit;
- two corrections of one record (one per machine) leave one active belief: the later
  correction stays current, the earlier becomes ``superseded`` by it (:func:`_settle_forks`);
- a pin, tag or importance change of a record corrected on the other machine goes to the
  correction (:func:`_carry_edits`);
- a record whose value a tombstone names (a rejection on another machine) is rejected;
- append-only logs (journal, actions, audit, tombstones) keep every line of both sides;
- a file edited by hand on both sides (no audit event made it) that ``git merge-file`` cannot
  merge, or any other file changed differently on both sides, is a conflict.

Journals and action logs are per machine once a store is shared
(:func:`memdir.kernel.storage.journal.log_name`), so they never conflict.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
import re
import socket
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memdir.kernel.base.atomic import write_atomic
from memdir.kernel.base.caller import Caller
from memdir.kernel.base.clock import parse_instant
from memdir.kernel.base.errors import (
    GitError,
    MemdirError,
    RecordParseError,
    RefusedError,
    UsageError,
)
from memdir.kernel.base.ids import CROCKFORD, KIND_PREFIX
from memdir.kernel.base.layout import StoreLayout, layout
from memdir.kernel.base.model import Record
from memdir.kernel.filemap import anatomy
from memdir.kernel.storage import audit, gitio, journal, manifest
from memdir.kernel.storage.lock import store_lock
from memdir.kernel.storage.recordfile import dump
from memdir.records import codec

DEFAULT_REMOTE = "origin"
DEFAULT_BRANCH = "memdir"
REMOTE_KEY = "memdir.remote"
BRANCH_KEY = "memdir.branch"
TRACKING = "refs/memdir/sync/"
PENDING = StoreLayout.SYNC_PENDING
"""``state/sync-merge.json``: a merge being applied to the files (finished by the next sync)."""
CONFLICT = StoreLayout.SYNC_CONFLICT
"""``state/sync-conflict.json``: the last sync stopped on a conflict (``memdir health``)."""
MERGE_REASON = "sync merge:"
"""How the reason of a record superseded by a merge begins (``memdir review`` lists them)."""
PUSH_ATTEMPTS = 5
LOG_FOLDERS = ("journal/", "actions/", "audit/")
RETIRED = ("rejected", "forgotten")
_ZERO = "0" * 40


class SyncConflictError(MemdirError):
    """Both sides changed a file in ways memdir cannot merge; the store was left unchanged."""

    code = "sync_conflict"
    exit_code = 1


# --- where -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Where:
    """Where a store is shared: a remote (a name of the project's remotes, or a URL) and branch."""

    remote: str
    branch: str
    url: str | None  # None: the named remote does not exist
    configured: bool  # set by `memdir remote` (else the defaults)

    def to_json(self) -> dict[str, Any]:
        """Return the remote, branch, URL and whether they were set."""
        return {
            "remote": self.remote,
            "branch": self.branch,
            "url": self.url,
            "configured": self.configured,
        }


def _config(store: Path, key: str) -> str | None:
    done = gitio.run_git(store, "config", "--get", key, check=False)
    value = done.stdout.decode("utf-8", "replace").strip()
    return value or None


def _looks_like_url(value: str) -> bool:
    return "/" in value or ":" in value or value.startswith(".")


def _project_root(store: Path) -> Path | None:
    """The project around a project store (``<root>/.memdir``), if it is a git checkout."""
    root = store.resolve().parent
    return root if (root / ".git").exists() else None


def resolve_url(store: Path, remote: str) -> str | None:
    """Return the URL that ``remote`` names for ``store``, or ``None`` when it names none.

    A value with ``/`` or ``:`` is a URL or path already; otherwise it is the name of one of
    the project's remotes (``git remote get-url`` in the project, so its ``insteadOf`` applies).
    """
    if _looks_like_url(remote):
        return remote
    root = _project_root(store)
    if root is None:
        return None
    done = gitio.run_git(root, "remote", "get-url", remote, check=False)
    url = done.stdout.decode("utf-8", "replace").strip()
    return url if done.returncode == 0 and url else None


def where(store: Path) -> Where:
    """Return where ``store`` is shared (the defaults when ``memdir remote`` never set it).

    Raises:
        GitError: git is missing.
    """
    remote = _config(store, REMOTE_KEY)
    branch = _config(store, BRANCH_KEY)
    configured = remote is not None or branch is not None
    remote = remote or DEFAULT_REMOTE
    return Where(remote, branch or DEFAULT_BRANCH, resolve_url(store, remote), configured)


def _branch_ok(store: Path, branch: str) -> bool:
    """Whether git takes ``branch`` as a branch name (``git check-ref-format --branch``)."""
    if "@{" in branch or len(branch) > 200:
        return False  # git would read @{-1} as "the branch before"
    done = gitio.run_git(store, "check-ref-format", "--branch", branch, check=False)
    return done.returncode == 0


def set_where(store: Path, remote: str | None, branch: str | None) -> Where:
    """Set where ``store`` is shared (this machine only); return the new setting.

    Args:
        store: The store folder.
        remote: A name of the project's remotes, or a URL or path; ``None`` keeps it.
        branch: The branch on that remote; ``None`` keeps it.

    Raises:
        UsageError: the remote or branch is not usable (empty, a bad branch name, a remote
            name the project does not have).
        GitError: git failed.
    """
    if remote is not None:
        remote = remote.strip()
        if not remote or remote.startswith("-"):
            raise UsageError(f"not a remote: {remote!r}; give a remote's name or a URL")
        if resolve_url(store, remote) is None:
            raise UsageError(
                f"the project has no git remote named {remote!r}; give a URL or path "
                "(e.g. `memdir remote git@host:team/project.git`) or add the remote to the "
                "project first"
            )
    if branch is not None:
        branch = branch.strip()
        if (
            branch in ("HEAD", "")
            or branch.startswith(("refs/", "-"))
            or not _branch_ok(store, branch)
        ):
            raise UsageError(
                f"not a usable branch name: {branch!r} (a short name such as `memdir` or "
                "`team/memory`; not HEAD, not refs/…)"
            )
    manifest.load(store)
    gitio.init_repo(store)
    with store_lock(store, "remote"):
        if remote is not None:
            gitio.run_git(store, "config", REMOTE_KEY, remote)
        if branch is not None:
            gitio.run_git(store, "config", BRANCH_KEY, branch)
        ensure_machine(store)
    return where(store)


def ensure_machine(store: Path) -> str:
    """Return this machine's name for the store's log files, choosing one the first time.

    From then on the journal and action log are written per machine
    (:func:`memdir.kernel.storage.journal.log_name`). The name is the host name (lower case, at most
    20 characters) and 4 random hex digits, kept in the machine-local ``state/machine``.
    """
    found = journal.machine_id(store)
    if found:
        return found
    host = re.sub(r"[^a-z0-9-]+", "-", socket.gethostname().lower()).strip("-")[:20] or "m"
    name = f"{host}-{os.urandom(2).hex()}"
    write_atomic(layout(store).in_state(journal.MACHINE_FILE), (name + "\n").encode("ascii"))
    return name


# --- the outcome -----------------------------------------------------------------------------


@dataclass(slots=True)
class Synced:
    """The outcome of ``memdir sync``."""

    committed: list[str] = field(default_factory=list)
    remote: dict[str, Any] | None = None  # where, when the sync reached a remote
    pulled: str = "none"  # none | up-to-date | fast-forward | merged
    received: int = 0  # files that changed here
    resolved: list[dict[str, str]] = field(default_factory=list)  # automatic resolutions
    pushed: bool = False
    fetched_commits: int = 0  # commits the remote had that this store had not
    pushed_commits: int = 0  # commits the remote branch did not have before this push
    note: str | None = None

    def to_json(self) -> dict[str, Any]:
        """Return the outcome as a JSON object."""
        return dataclasses.asdict(self)


# --- commit, fetch, push ---------------------------------------------------------------------


def commit_local(store: Path, *, logs_only: bool, caller: Caller) -> list[str]:
    """Commit the logs, anatomy (and unless ``logs_only`` hand edits); return the paths.

    Hand edits are the records and the store's shared settings (``memdir.toml``, which
    :func:`sync` has already read and accepted, and ``.gitignore``). The caller holds the store
    lock.

    Raises:
        GitError: git failed.
    """
    folders = ["journal", "actions", "audit", anatomy.ANATOMY_JSON, anatomy.ANATOMY_MD]
    if not logs_only:
        folders += ["records", StoreLayout.MANIFEST, ".gitignore"]
    present = [f for f in folders if (store / f).exists()]
    dirty = [p for f in present for p in gitio.dirty_paths(store, f)]
    if not logs_only:
        _audit_hand_edits(store, dirty, caller)
    if dirty:
        what = "logs" if logs_only else "logs and hand edits"
        gitio.commit(
            store,
            present,
            f"sync: commit {len(dirty)} changed file(s) ({what})",
            trailers=caller.trailers(),
        )
    return sorted(dirty)


def _audit_hand_edits(store: Path, dirty: list[str], caller: Caller) -> None:
    """Log one ``hand_edit`` audit event for the record files about to be committed as edited.

    Each names the record's file hash at ``HEAD`` (``before``, ``None`` for a new file) and now
    (``after``, ``None`` for a deleted one); who ran the sync is who committed it. Without it
    ``memdir health`` named every hand-edited record as unaudited for ever, and its suggested
    ``memdir audit ID`` only showed that no event had it.
    """
    paths = [p for p in dirty if p.startswith("records/") and p.endswith(".md")]
    if not paths:
        return
    shas: dict[str, str] = {}
    for start in range(0, len(paths), 500):  # a command line of file names, in chunks
        listed = gitio.run_git(
            store, "ls-tree", "-z", "HEAD", "--", *paths[start : start + 500], check=False
        ).stdout
        for item in listed.split(b"\0"):
            if b"\t" in item:
                meta, name = item.split(b"\t", 1)
                shas[name.decode("utf-8", "surrogateescape")] = meta.split()[2].decode()
    blobs = _blobs(store, set(shas.values()))
    rows = [
        {
            "id": Path(path).stem,
            "before": audit.content_hash(blobs[shas[path]]) if path in shas else None,
            "after": audit.file_hash(store / path),
        }
        for path in paths
    ]
    who = audit.who_from_trailers(caller.trailers())
    reason = "changed outside memdir; committed by memdir sync"
    audit.append(store, [audit.event("hand_edit", rows, who, reason=reason)])


def _head(store: Path) -> str:
    return gitio.head_commit(store)


def _rev(store: Path, ref: str) -> str | None:
    done = gitio.run_git(store, "rev-parse", "--verify", "-q", ref + "^{commit}", check=False)
    return done.stdout.decode().strip() if done.returncode == 0 else None


def fetch(store: Path, url: str, branch: str) -> str | None:
    """Fetch ``branch`` of ``url`` into the store's tracking ref; return its commit.

    Returns:
        The fetched commit, or ``None`` when the remote has no such branch yet.

    Raises:
        GitError: the remote cannot be reached or refused (git's message included).
    """
    ref = TRACKING + branch
    _remove_ref_lock(store, ref)
    done = gitio.run_git(
        store, "fetch", "--no-tags", "--no-write-fetch-head", "--quiet", "--", url,
        f"+refs/heads/{branch}:{ref}", check=False,
    )  # fmt: skip
    if done.returncode != 0:
        text = done.stderr.decode("utf-8", "replace").strip()
        if "couldn't find remote ref" in text or "could not find remote ref" in text.lower():
            gitio.run_git(store, "update-ref", "-d", ref, check=False)
            return None
        raise GitError(f"cannot fetch {branch} from {url}: {text or 'git fetch failed'}")
    return _rev(store, ref)


def _remove_ref_lock(store: Path, ref: str) -> None:
    """Remove a ref's lock file that a killed fetch left (the store lock is held)."""
    with contextlib.suppress(OSError):
        (gitio.git_dir(store) / (ref + ".lock")).unlink()


def push(store: Path, url: str, branch: str, commit: str) -> bool:
    """Push ``commit`` to ``branch`` of ``url``; return False when the remote moved on.

    Raises:
        GitError: the push failed for any other reason.
    """
    done = gitio.run_git(
        store, "push", "--porcelain", "--quiet", "--", url, f"{commit}:refs/heads/{branch}",
        check=False,
    )  # fmt: skip
    if done.returncode == 0:
        gitio.run_git(store, "update-ref", TRACKING + branch, commit, check=False)
        return True
    text = (done.stdout + done.stderr).decode("utf-8", "replace")
    if "[rejected]" in text or "fetch first" in text or "non-fast-forward" in text:
        return False
    if "[remote rejected]" in text and ("lock" in text or "expected" in text):
        return False  # another push won the race for the remote branch: fetch and merge again
    raise GitError(f"cannot push to {branch} at {url}: {text.strip() or 'git push failed'}")


# --- merging ---------------------------------------------------------------------------------


@dataclass(slots=True)
class _Merge:
    """What a merge writes: path → blob content (``None`` deletes), and what it resolved."""

    files: dict[str, bytes | None] = field(default_factory=dict)
    taken: dict[str, str] = field(default_factory=dict)  # path → a blob one side already has
    resolved: list[dict[str, str]] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)
    forks: list[tuple[str, str, str]] = field(default_factory=list)  # (record, succ, succ)
    carried: list[tuple[str, Record, Record]] = field(default_factory=list)  # (succ, base, edit)


def _tree(store: Path, rev: str | None) -> dict[str, str]:
    """Every file of ``rev``'s tree: path → blob hash (empty for none)."""
    if rev is None:
        return {}
    out = gitio.run_git(store, "ls-tree", "-r", "-z", "--full-tree", rev).stdout
    entries: dict[str, str] = {}
    for item in out.split(b"\0"):
        if not item:
            continue
        meta, _, path = item.partition(b"\t")
        parts = meta.split()
        if len(parts) == 3 and parts[1] == b"blob":
            entries[path.decode("utf-8", "surrogateescape")] = parts[2].decode()
    return entries


def _changed(store: Path, old: str | None, new: str) -> dict[str, str | None]:
    """Paths that differ from ``old`` to ``new``: path → new blob (``None``: deleted)."""
    if old is None:
        return dict(_tree(store, new))
    out = gitio.run_git(
        store, "diff-tree", "-r", "-z", "--no-renames", "--no-commit-id", old, new
    ).stdout
    items = out.split(b"\0")
    changed: dict[str, str | None] = {}
    for meta, path in zip(items[0::2], items[1::2], strict=False):
        parts = meta.split()
        if len(parts) < 5:
            continue
        sha = parts[3].decode()
        changed[path.decode("utf-8", "surrogateescape")] = None if sha == _ZERO else sha
    return changed


def _blobs(store: Path, shas: set[str]) -> dict[str, bytes]:
    """Read blobs by hash with one ``git cat-file --batch``."""
    if not shas:
        return {}
    order = sorted(shas)
    data = gitio.run_git(
        store, "cat-file", "--batch", input_bytes="".join(s + "\n" for s in order).encode()
    ).stdout
    found: dict[str, bytes] = {}
    at = 0
    for sha in order:
        end = data.index(b"\n", at)
        header = data[at:end].split()
        if len(header) != 3:
            raise GitError(f"git cat-file cannot read object {sha}")
        size = int(header[2])
        found[sha] = data[end + 1 : end + 1 + size]
        at = end + 1 + size + 1
    return found


def blob_hash(data: bytes) -> str:
    """Return git's object hash of a blob holding ``data`` (SHA-1 repositories)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


def _union(base: bytes | None, ours: bytes, theirs: bytes) -> bytes:
    """Merge two versions of an append-only log: every line of both sides, none twice.

    Lines the base had and either side dropped (purge) stay dropped; the lines new on either
    side follow the kept ones in byte order, which is time order for memdir's logs (each line
    begins with its time), so both machines merging the same pair write the same bytes.
    """
    base_lines = (base or b"").splitlines(keepends=True)
    mine = ours.splitlines(keepends=True)
    other = theirs.splitlines(keepends=True)
    mine_set, other_set, base_set = set(mine), set(other), set(base_lines)
    kept = [line for line in base_lines if line in mine_set and line in other_set]
    new = sorted((mine_set | other_set) - base_set)
    out = b"".join(line if line.endswith(b"\n") else line + b"\n" for line in kept + new)
    return out


def _parse(data: bytes, path: str) -> Record | None:
    try:
        return codec.parse(data.decode("utf-8"), Path(path)).record
    except (RecordParseError, UnicodeDecodeError, UsageError):
        return None


def _instant(record: Record) -> float:
    for value in (record.updated_at, record.created_at):
        with contextlib.suppress(UsageError, ValueError):
            return parse_instant(value, allow_future=True).timestamp()
    return 0.0


def copy_id(record: Record, data: bytes) -> str:
    """Return the id of the superseded copy a merge keeps of ``record`` (deterministic).

    Its kind prefix, the time of the copied version (as a minted id has) and 4 characters of
    the hash of its bytes: two machines merging the same pair of edits name the copy alike.
    """
    millis = int(_instant(record) * 1000)
    digest = int.from_bytes(hashlib.sha256(data).digest()[:3], "big") >> 4
    prefix = KIND_PREFIX.get(record.kind, "f")
    return f"{prefix}-{_encode(millis, 10)}{_encode(digest, 4)}"


def _encode(value: int, width: int) -> str:
    chars = []
    for _ in range(width):
        chars.append(CROCKFORD[value & 31])
        value >>= 5
    return "".join(reversed(chars))


def _rank(record: Record, data: bytes) -> tuple[int, float, bytes]:
    """Which of two concurrent versions of one record wins: retired, then corrected, then later."""
    lifecycle = 2 if record.status in RETIRED else 1 if record.superseded_by else 0
    return (lifecycle, _instant(record), data)


def _resolve_record(
    path: str,
    base: bytes | None,
    ours: bytes,
    theirs: bytes,
    made_by_memdir: set[str],
    store: Path,
    merge: _Merge,
    label: str,
) -> None:
    """Resolve two different versions of one record file into ``merge`` (see module doc)."""
    mine, other = _parse(ours, path), _parse(theirs, path)
    hand = (
        audit.content_hash(ours) not in made_by_memdir
        and audit.content_hash(theirs) not in made_by_memdir
    )
    if mine is None or other is None or hand or mine.id != other.id:
        merged = gitio.merge_file(store, ours, base, theirs)
        if merged is None:
            merge.conflicts.append(path)
        else:
            merge.files[path] = merged
        return
    (win, win_bytes), (lose, lose_bytes) = sorted(
        ((mine, ours), (other, theirs)), key=lambda pair: _rank(*pair), reverse=True
    )
    if lose.status in RETIRED and win.status in RETIRED:
        merge.files[path] = win_bytes
        return
    forked = bool(win.superseded_by and lose.superseded_by) and win.superseded_by != (
        lose.superseded_by
    )
    if forked:  # corrected on both machines: the two corrections are settled by _settle_forks
        merge.forks.append((win.id, str(win.superseded_by), str(lose.superseded_by)))
        if win.text == lose.text:  # the old belief itself is the same on both: keep one copy
            merge.files[path] = win_bytes
            return
    before = _parse(base, path) if base is not None else None
    if (
        win.superseded_by
        and lose.status == "active"
        and before is not None
        and lose.text == before.text == win.text
    ):  # a pin, tag or importance change here, a correction there: the change follows it
        merge.carried.append((win.superseded_by, before, lose))
        merge.files[path] = win_bytes
        return
    kept_id = copy_id(lose, lose_bytes)
    reason = (
        f"{MERGE_REASON} {win.id} was changed on two machines at once (merged by {label}); "
        f"the {'retirement' if win.status in RETIRED else 'later change'} ({win.status}, "
        f"{win.updated_at}) stays current, this version is kept beside it"
    )
    copy = dataclasses.replace(
        lose,
        id=kept_id,
        status="superseded",
        superseded_by=lose.superseded_by or win.id,  # a correction keeps pointing at its successor
        reason=reason,
    )
    if win.status == "active" and not win.supersedes:
        win = dataclasses.replace(win, supersedes=kept_id)
        win_bytes = dump(win).encode("utf-8")
    merge.files[path] = win_bytes
    merge.files[f"records/{lose.kind}/{kept_id}.md"] = dump(copy).encode("utf-8")
    merge.resolved.append(
        {"record": win.id, "kept_as": kept_id, "current": win.status, "path": path}
    )


def _made_by_memdir(contents: list[bytes]) -> set[str]:
    """The record hashes memdir's own writes produced (``after`` of every audit event).

    A ``hand_edit`` event (:func:`_audit_hand_edits`) only records what a person did outside
    memdir: two such edits of one record still stop the sync for the person to decide.
    """
    hashes: set[str] = set()
    for data in contents:
        for line in data.splitlines():
            if b'"after"' not in line:
                continue
            try:
                item = json.loads(line)
            except ValueError:
                continue
            if isinstance(item, dict) and item.get("op") == "hand_edit":
                continue
            for rec in item.get("records") or [] if isinstance(item, dict) else []:
                if isinstance(rec, dict) and isinstance(rec.get("after"), str):
                    hashes.add(rec["after"])
    return hashes


def _tombstoned(ledger: bytes) -> set[str]:
    live: dict[str, bool] = {}
    for line in ledger.splitlines():
        try:
            item = json.loads(line)
            live[str(item["key"])] = item.get("event") == "add"
        except (ValueError, KeyError, TypeError):
            continue
    return {key for key, on in live.items() if on}


def merge_trees(store: Path, base: str | None, ours: str, theirs: str, label: str) -> _Merge:
    """Merge ``theirs`` into ``ours`` (commits; ``base`` their merge base, if any).

    Returns:
        The files the merged tree changes relative to ``ours`` (new contents, blobs taken
        from ``theirs``, deletions), the automatic resolutions and the conflicts (paths) none
        of the rules resolves.

    Raises:
        GitError: git failed.
    """
    mine, other = _changed(store, base, ours), _changed(store, base, theirs)
    merge = _Merge()
    both = {p for p in mine.keys() & other.keys() if mine[p] != other[p]}
    for path in other.keys() - mine.keys():
        sha = other[path]
        if sha is None:
            merge.files[path] = None
        else:
            merge.taken[path] = sha
    base_tree = _tree(store, base) if both else {}
    ours_tree, theirs_tree = _tree(store, ours), _tree(store, theirs)
    logs = [t[p] for t in (ours_tree, theirs_tree) for p in t if p.startswith("audit/")]
    wanted = {s for p in both for s in (mine[p], other[p], base_tree.get(p)) if s}
    blobs = _blobs(store, wanted | set(logs))
    made = _made_by_memdir([blobs[sha] for sha in logs])
    for path in sorted(both):
        a, b = mine[path], other[path]
        if a is None or b is None:
            merge.files[path] = None  # deleted on one side (purge, git rm): stays deleted
            continue
        old = blobs.get(base_tree[path]) if path in base_tree else None
        if path.startswith(LOG_FOLDERS) and path.endswith(".jsonl"):
            merge.files[path] = _union(old, blobs[a], blobs[b])
        elif path.startswith("records/") and path.endswith(".md"):
            _resolve_record(path, old, blobs[a], blobs[b], made, store, merge, label)
        else:
            merged = gitio.merge_file(store, blobs[a], old, blobs[b])
            if merged is not None:
                merge.files[path] = merged
            elif base is None:
                merge.taken[path] = b  # two stores' first commits: the shared one wins
            else:
                merge.conflicts.append(path)
    _reject_tombstoned(store, ours_tree, mine, other, merge)
    _settle_forks(store, ours_tree, merge, label)
    _carry_edits(store, ours_tree, merge)
    return merge


def _live_ends(
    store: Path, ours_tree: dict[str, str], merge: _Merge
) -> Callable[[str], tuple[str, Record, bytes] | None]:
    """Return a walker of correction chains through the merged tree.

    The walker takes a record id, follows ``superseded_by`` (cycles and missing records end the
    walk) and returns the last record it read with its path and merged bytes, or ``None``.
    """
    by_id = {
        Path(p).stem: p
        for p in (*ours_tree, *merge.taken, *merge.files)
        if p.startswith("records/") and p.endswith(".md")
    }

    def merged(path: str) -> bytes | None:
        if path in merge.files:
            return merge.files[path]
        sha = merge.taken.get(path) or ours_tree.get(path)
        return _blobs(store, {sha}).get(sha) if sha else None

    def live_end(record_id: str) -> tuple[str, Record, bytes] | None:
        seen: set[str] = set()
        end: tuple[str, Record, bytes] | None = None
        while record_id and record_id not in seen and record_id in by_id:
            seen.add(record_id)
            path = by_id[record_id]
            data = merged(path)
            record = _parse(data, path) if data is not None else None
            if record is None or data is None:
                break
            end = (path, record, data)
            record_id = record.superseded_by or ""
        return end

    return live_end


def _carry_edits(store: Path, ours_tree: dict[str, str], merge: _Merge) -> None:
    """Apply a metadata edit made on one machine to the correction made on the other.

    A record pinned, tagged or re-weighted here while it was corrected there: the edit (tags
    added and removed against the merge base, a changed importance) goes to the live end of the
    correction chain, so a pin is not lost to a concurrent correction. The result is the same
    whichever machine merges.
    """
    if not merge.carried:
        return
    live_end = _live_ends(store, ours_tree, merge)
    for successor, before, edited in merge.carried:
        end = live_end(successor)
        if end is None or end[1].status != "active":
            continue
        path, record, _ = end
        added = [t for t in edited.tags if t not in before.tags]
        removed = set(before.tags) - set(edited.tags)
        tags = tuple(t for t in record.tags if t not in removed) + tuple(
            t for t in added if t not in record.tags
        )
        importance = edited.importance if edited.importance != before.importance else None
        if tags == record.tags and (importance is None or importance == record.importance):
            continue
        changed = dataclasses.replace(
            record, tags=tags, importance=record.importance if importance is None else importance
        )
        merge.taken.pop(path, None)
        merge.files[path] = dump(changed).encode("utf-8")


def _settle_forks(store: Path, ours_tree: dict[str, str], merge: _Merge, label: str) -> None:
    """Leave one active belief where two machines corrected the same record at once.

    Each side's correction chain is followed (``superseded_by``) through the merged tree to its
    live end; when both ends are active, the later (its ``updated_at``, then its id, so two
    machines merging the same pair agree) stays current and the earlier becomes ``superseded``
    by it, with a reason naming the merge (``memdir review`` lists it). Nothing is deleted.
    """
    if not merge.forks:
        return
    live_end = _live_ends(store, ours_tree, merge)
    for root, first, second in merge.forks:
        one, two = live_end(first), live_end(second)
        if one is None or two is None or one[1].id == two[1].id:
            continue
        if one[1].status != "active" or two[1].status != "active":
            continue
        (_, win, _), (lose_path, lose, _) = sorted(
            (one, two), key=lambda end: (_instant(end[1]), end[1].id), reverse=True
        )
        settled = dataclasses.replace(
            lose,
            status="superseded",
            superseded_by=win.id,
            reason=(
                f"{MERGE_REASON} {root} was corrected on two machines at once (merged by "
                f"{label}); the later correction {win.id} ({win.updated_at}) stays current, "
                "this one is kept as superseded by it"
            ),
        )
        merge.taken.pop(lose_path, None)
        merge.files[lose_path] = dump(settled).encode("utf-8")
        merge.resolved.append(
            {"record": win.id, "kept_as": lose.id, "current": "active", "path": lose_path}
        )


def _reject_tombstoned(
    store: Path,
    ours_tree: dict[str, str],
    mine: dict[str, str | None],
    other: dict[str, str | None],
    merge: _Merge,
) -> None:
    """Reject the records either side added or changed whose value the merged ledger tombstones.

    A rejection on one machine wins over the same value asserted concurrently on another.
    """
    ledger = merge.files.get(audit.TOMBSTONES)
    if ledger is None:
        sha = merge.taken.get(audit.TOMBSTONES) or ours_tree.get(audit.TOMBSTONES)
        ledger = _blobs(store, {sha})[sha] if sha else b""
    stones = _tombstoned(ledger)
    if not stones:
        return
    paths = {p for p in (*mine, *other, *merge.files, *merge.taken) if p.startswith("records/")}
    shas: dict[str, str] = {}
    for path in paths:
        if path in merge.files:
            continue
        sha = merge.taken.get(path) or mine.get(path) or other.get(path)
        if sha:
            shas[path] = sha
    blobs = _blobs(store, set(shas.values()))
    for path in sorted(paths):
        data = merge.files[path] if path in merge.files else blobs.get(shas.get(path, ""))
        if data is None or not path.endswith(".md"):
            continue
        record = _parse(data, path)
        if record is None or record.status not in ("active", "candidate"):
            continue
        if audit.value_key(record.text) not in stones:
            continue
        rejected = dataclasses.replace(
            record,
            status="rejected",
            reason=f"{MERGE_REASON} this value was rejected on another machine (tombstone)",
        )
        merge.taken.pop(path, None)
        merge.files[path] = dump(rejected).encode("utf-8")
        merge.resolved.append(
            {"record": record.id, "kept_as": "", "current": "rejected", "path": path}
        )


def _write_tree(store: Path, ours: str, merge: _Merge) -> str:
    """Write the tree of ``ours`` with ``merge`` applied; return its hash (objects only)."""
    gitdir = gitio.git_dir(store)
    index = gitdir / "memdir" / "sync-index"
    index.parent.mkdir(exist_ok=True)
    env = {"GIT_INDEX_FILE": str(index)}
    with contextlib.suppress(FileNotFoundError):
        index.unlink()
    try:
        gitio.run_git(store, "read-tree", ours, env=env, config=gitio.WHOLE_INDEX)
        lines = [f"100644 {sha}\t{path}\0" for path, sha in sorted(merge.taken.items())]
        for path, data in sorted(merge.files.items()):
            if data is None:
                lines.append(f"0 {_ZERO}\t{path}\0")
            else:
                done = gitio.run_git(store, "hash-object", "-w", "--stdin", input_bytes=data)
                lines.append(f"100644 {done.stdout.decode().strip()}\t{path}\0")
        if lines:
            gitio.run_git(
                store, "update-index", "-z", "--index-info",
                input_bytes="".join(lines).encode("utf-8", "surrogateescape"),
                env=env, config=gitio.WHOLE_INDEX,
            )  # fmt: skip
        tree = gitio.run_git(store, "write-tree", env=env, config=gitio.WHOLE_INDEX).stdout
        return tree.decode().strip()
    finally:
        with contextlib.suppress(OSError):
            index.unlink()


# --- applying a commit to the files ----------------------------------------------------------


def _apply(store: Path, old: str, new: str) -> int:
    """Make the files and the branch go from commit ``old`` to ``new``; return files changed.

    An intent (``state/sync-merge.json``) is written first, so a kill at any point is finished
    by the next sync (:func:`recover`). A file that is neither as ``old`` nor as ``new`` has it
    was changed meanwhile by hand: nothing is written and the sync stops.

    Raises:
        SyncConflictError: a file to be replaced was changed on disk meanwhile.
        GitError: git failed (the branch did not move).
    """
    olds = _changed(store, new, old)  # path → blob in old
    news = _changed(store, old, new)  # path → blob in new
    touched = []
    for path in sorted(news):
        want, was = news[path], olds.get(path)
        now = _disk_hash(store / path)
        if now == want:
            continue
        if now != was:
            touched.append(path)
            continue
    if touched:
        raise SyncConflictError(
            "sync stopped: these files changed on disk while it ran, so nothing was applied: "
            + ", ".join(touched[:5])
            + (" …" if len(touched) > 5 else "")
            + "; commit or undo the edits and sync again",
        )
    pending = layout(store).in_state(PENDING)
    write_atomic(pending, json.dumps({"from": old, "to": new}).encode("utf-8"))
    count = _write_files(store, news)
    gitio.run_git(store, "update-ref", "-m", "memdir sync", "HEAD", new, old)
    gitio.run_git(store, "reset", "-q", check=False)  # the person's index follows the branch
    with contextlib.suppress(OSError):
        pending.unlink()
    return count


def _disk_hash(path: Path) -> str | None:
    try:
        return blob_hash(path.read_bytes())
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None


def _write_files(store: Path, news: dict[str, str | None]) -> int:
    count = 0
    shas = {s for s in news.values() if s}
    for chunk_start in range(0, len(shas), 2000):
        chunk = set(sorted(shas)[chunk_start : chunk_start + 2000])
        blobs = _blobs(store, chunk)
        for path, sha in news.items():
            if sha in chunk:
                target = store / path
                if _disk_hash(target) != sha:
                    target.parent.mkdir(parents=True, exist_ok=True)
                    write_atomic(target, blobs[sha], durable=False)
                    count += 1
    for path, sha in news.items():
        if sha is None:
            with contextlib.suppress(FileNotFoundError):
                (store / path).unlink()
                count += 1
    return count


def recover(store: Path) -> bool:
    """Finish applying a merge that a killed sync left half-done; return whether there was one.

    The caller holds the store lock.

    Raises:
        GitError: git failed (the intent stays for the next sync).
    """
    pending = layout(store).in_state(PENDING)
    try:
        intent = json.loads(pending.read_text(encoding="utf-8"))
        old, new = str(intent["from"]), str(intent["to"])
    except FileNotFoundError:
        return False
    except (ValueError, KeyError, TypeError, OSError):
        pending.unlink(missing_ok=True)
        return False
    head = _head(store)
    if head == old and _rev(store, new) == new:
        news = _changed(store, old, new)
        olds = _changed(store, new, old)
        safe = {p: s for p, s in news.items() if _disk_hash(store / p) in (s, olds.get(p))}
        _write_files(store, safe)
        gitio.run_git(store, "update-ref", "-m", "memdir sync (finished)", "HEAD", new, old)
        gitio.run_git(store, "reset", "-q", check=False)
    pending.unlink(missing_ok=True)
    return True


def pending_conflict(store: Path) -> dict[str, Any] | None:
    """Return the conflict the last sync stopped on (``memdir health`` names it), or ``None``."""
    try:
        found = json.loads((layout(store).state_path(CONFLICT)).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return found if isinstance(found, dict) else None


# --- sync ------------------------------------------------------------------------------------


def sync(
    store: Path,
    caller: Caller,
    *,
    logs_only: bool = False,
    pull: bool = True,
    push_: bool = True,
    local_only: bool = False,
) -> Synced:
    """Commit, then (unless ``local_only``) pull from and push to where the store is shared.

    Args:
        store: The store folder.
        caller: Who syncs (named in the commits).
        logs_only: Commit only the logs and anatomy, never hand edits; never reaches a remote.
        pull: Fetch and merge the remote branch.
        push_: Push the store's branch to the remote.
        local_only: Only commit (no remote is configured and none was asked for).

    Returns:
        What was committed, pulled, resolved and pushed.

    Raises:
        SyncConflictError: both sides changed a file memdir cannot merge (store unchanged).
        GitError: the remote cannot be reached or git failed (store unchanged).
        UsageError: the remote is not set and the project has none.
        LockTimeoutError: another writer held the store.
    """
    manifest.load(store)  # a store from a newer memdir is refused before anything is written
    out = Synced()
    with store_lock(store, "sync"):
        gitio.remove_stale_locks(store)  # a sync or git killed before left its lock files
        recover(store)
        if logs_only or local_only:
            out.committed = commit_local(store, logs_only=logs_only, caller=caller)
            return out
        place = where(store)
        if place.url is None:
            raise UsageError(
                f"nowhere to sync: the project has no git remote named {place.remote!r}; "
                "set one with `memdir remote URL` (any git URL or path)"
            )
        url = place.url
        ensure_machine(store)
        out.committed = commit_local(store, logs_only=False, caller=caller)
        if push_:
            # Pack many new loose objects once, before pushing: the push then reuses the pack's
            # compressed objects and deltas instead of computing them again (measured: a first
            # push of 1,000,000 turns spent most of its time there).
            gitio.maintain(store)
        out.remote = place.to_json()
        label = f"a sync with {place.remote} (branch {place.branch})"
        for _attempt in range(PUSH_ATTEMPTS):
            if pull:
                _pull(store, url, place.branch, label, out)
            if not push_:
                break
            head = _head(store)
            if _rev(store, TRACKING + place.branch) == head:
                break  # the remote has this commit already: nothing to push
            ahead = _ahead(store, TRACKING + place.branch, head)
            if push(store, url, place.branch, head):
                out.pushed, out.pushed_commits = True, ahead
                break
            if not pull:
                out.note = "the remote has changes this machine does not: sync --pull first"
                break
        else:
            out.note = f"the remote kept moving; {PUSH_ATTEMPTS} attempts; sync again"
        (layout(store).state_path(CONFLICT)).unlink(missing_ok=True)
    return out


def _ahead(store: Path, tracking: str, head: str) -> int:
    """How many commits ``head`` has that ``tracking`` (a ref or commit) has not.

    All of ``head``'s commits when ``tracking`` does not exist (the remote has no such branch
    yet: a first push).
    """
    since = f"{tracking}..{head}" if _rev(store, tracking) else head
    done = gitio.run_git(store, "rev-list", "--count", since, check=False)
    text = done.stdout.decode().strip()
    return int(text) if done.returncode == 0 and text.isdigit() else 0


def _purged(store: Path, rev: str) -> set[str]:
    """The ids of the records ``memdir purge`` erased in ``rev``'s history."""
    done = gitio.run_git(
        store, "log", "-E", "--grep=^purge [a-z]+-[0-9a-z]+:", "--format=%s", rev, check=False
    )
    found = set()
    for subject in done.stdout.decode("utf-8", "replace").splitlines():
        head = subject.split(":", 1)[0].split(" ")
        if len(head) == 2 and head[0] == "purge":
            found.add(head[1])
    return found


def _holds(store: Path, rev: str, record_id: str) -> bool:
    """Whether any commit of ``rev``'s history has a file of record ``record_id``."""
    done = gitio.run_git(
        store, "log", "-1", "--format=%H", rev, "--", f":(glob)records/**/{record_id}.md",
        check=False,
    )  # fmt: skip
    return bool(done.stdout.strip())


def _check_purges(store: Path, ours: str, theirs: str, url: str, branch: str) -> None:
    """Stop a sync that would bring back the text of a purged record (either way).

    ``memdir purge`` rewrites one machine's history; merging a history that still holds the
    record would bring its text back here, or carry it back to the remote.

    Raises:
        SyncConflictError: a record purged on one side is still in the other's history.
    """
    mine, other = _purged(store, ours), _purged(store, theirs)
    for record_id in sorted(mine):
        if _holds(store, theirs, record_id):
            raise SyncConflictError(
                f"sync stopped, nothing changed here: {record_id} was purged on this machine "
                f"but the remote's history still holds it, and a merge would bring its text "
                f"back. To erase it everywhere, replace the remote branch with this machine's "
                f"(`git -C {store} push --force {url} HEAD:refs/heads/{branch}`), then run "
                f"`memdir purge {record_id} --yes` on every other clone before its next sync"
            )
    for record_id in sorted(other - mine):
        if _holds(store, ours, record_id):
            raise SyncConflictError(
                f"sync stopped, nothing changed here: {record_id} was purged on another "
                f"machine and this store's history still holds it; run `memdir purge "
                f"{record_id} --yes` here, then sync again"
            )


def _check_is_store(store: Path, ours: str, theirs: str, url: str, branch: str) -> None:
    """Refuse a remote branch that is not a memdir store (say, the project's own code).

    A store's every commit has ``memdir.toml`` at its root. A branch without it that shares no
    history with this store is someone else's branch of that name: merging it would bring its
    files into the store and push them back.

    Raises:
        RefusedError: the branch is not a store (nothing fetched is merged, nothing changed).
    """
    tree = gitio.run_git(store, "ls-tree", "--name-only", theirs).stdout.decode("utf-8", "replace")
    names = tree.split()
    if StoreLayout.MANIFEST in names:
        return
    if gitio.run_git(store, "merge-base", ours, theirs, check=False).returncode == 0:
        return  # shares history with this store: a store whose manifest was deleted there
    shown = ", ".join(names[:5]) + (" …" if len(names) > 5 else "")
    raise RefusedError(
        f"branch {branch} of {url} is not a memdir store (no {StoreLayout.MANIFEST} at its "
        f"root; it holds {shown or 'nothing'}), so nothing was merged and nothing changed here. "
        "Share the store on another branch: `memdir remote --branch NAME`"
    )


def _pull(store: Path, url: str, branch: str, label: str, out: Synced) -> None:
    theirs = fetch(store, url, branch)
    ours = _head(store)
    if theirs is None or theirs == ours or _is_ancestor(store, theirs, ours):
        out.pulled = "up-to-date" if out.pulled == "none" else out.pulled
        return
    _check_purges(store, ours, theirs, url, branch)
    _check_is_store(store, ours, theirs, url, branch)
    out.fetched_commits += _ahead(store, ours, theirs)
    if _is_ancestor(store, ours, theirs):
        out.received += _apply(store, ours, theirs)
        out.pulled = "fast-forward" if out.pulled != "merged" else "merged"
        _reindex(store)
        return
    found = gitio.run_git(store, "merge-base", ours, theirs, check=False)
    base = found.stdout.decode().strip() if found.returncode == 0 else None
    merge = merge_trees(store, base or None, ours, theirs, label)
    if merge.conflicts:
        message = (
            "sync stopped, nothing changed here: both sides changed "
            + ", ".join(merge.conflicts[:5])
            + (" …" if len(merge.conflicts) > 5 else "")
            + " (edited by hand on both, or not a record memdir can supersede). Make the files "
            "agree on one side (edit, `memdir sync --push` from there) or undo the hand edit "
            "here, then sync again"
        )
        write_atomic(
            layout(store).in_state(CONFLICT),
            json.dumps({"paths": merge.conflicts, "message": message, "theirs": theirs}).encode(),
        )
        raise SyncConflictError(message)
    _audit_merge(store, ours, merge)
    tree = _write_tree(store, ours, merge)
    subject = f"sync: merge {branch} from {url}"
    if merge.resolved:
        subject += f" ({len(merge.resolved)} concurrent edit(s) resolved by supersession)"
    body = "\n".join(
        f"{r['record']}: {r['current']}"
        + (f", the other version kept as {r['kept_as']}" if r["kept_as"] else "")
        for r in merge.resolved
    )
    message = gitio.with_trailers(subject + ("\n\n" + body if body else ""), ())
    commit = gitio.commit_tree(store, tree, [ours, theirs], message)
    out.received += _apply(store, ours, commit)
    out.resolved += merge.resolved
    out.pulled = "merged"
    _reindex(store)


def _audit_merge(store: Path, ours: str, merge: _Merge) -> None:
    """Add one audit event for the record files the merge wrote itself (hashes, no text).

    The event is made of the merge's own content only (its time is the newest record time it
    names), so two machines merging the same pair write the same line and the union keeps one.
    """
    written = {p: d for p, d in merge.files.items() if p.startswith("records/") and d is not None}
    if not written:
        return
    before = _tree(store, ours)
    old = _blobs(store, {before[p] for p in written if p in before})
    rows = []
    times = []
    for path, data in sorted(written.items()):
        sha = before.get(path)
        record = _parse(data, path)
        if record is not None:
            times.append(record.updated_at)
        rows.append(
            {
                "id": Path(path).stem,
                "before": audit.content_hash(old[sha]) if sha else None,
                "after": audit.content_hash(data),
            }
        )
    at = max((t for t in times if t), default="1970-01-01T00:00:00Z")
    event = {
        "id": hashlib.sha256(json.dumps(rows, sort_keys=True).encode()).hexdigest()[:16],
        "at": at,
        "op": "sync_merge",
        "records": rows,
        "origin": None,
        "channel": "sync",
        "host": None,
        "session": None,
        "reason": f"{len(merge.resolved)} concurrent change(s) resolved by the merge",
    }
    rel = audit.log_path(at)
    if rel in merge.files and merge.files[rel] is not None:
        current = merge.files[rel] or b""
    else:
        sha = merge.taken.get(rel) or before.get(rel)
        current = _blobs(store, {sha})[sha] if sha else b""
    line = json.dumps(event, ensure_ascii=True).encode() + b"\n"
    if line not in current.splitlines(keepends=True):
        merge.taken.pop(rel, None)
        merge.files[rel] = current + line


def _is_ancestor(store: Path, older: str, newer: str) -> bool:
    done = gitio.run_git(store, "merge-base", "--is-ancestor", older, newer, check=False)
    return done.returncode == 0


def _reindex(store: Path) -> None:
    """Bring the index up to date with the records that arrived (journal turns: at search)."""
    from memdir.store import scan

    handle = scan.open_handle(store)
    handle.index.close()


def merge_resolutions(store: Path) -> list[dict[str, Any]]:
    """Return the records a sync superseded or rejected automatically, newest first.

    ``memdir review`` lists them: each is a version a merge kept out of the way (its reason
    begins :data:`MERGE_REASON`), with the record that stayed current.
    """
    from memdir.store import scan

    handle = scan.open_handle(store)
    try:
        docs = handle.index.list_docs(statuses=("superseded", "rejected"))
    finally:
        handle.index.close()
    return [d for d in docs if str(d.get("reason") or "").startswith(MERGE_REASON)]


__all__ = [
    "SyncConflictError",
    "Synced",
    "Where",
    "merge_resolutions",
    "pending_conflict",
    "recover",
    "set_where",
    "sync",
    "where",
]
