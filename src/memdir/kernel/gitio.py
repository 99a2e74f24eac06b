"""The store's git history, through the ``git`` command (no GitPython).

Every record write is one commit whose message names the operation, the record id and the
reason (DESIGN §2). Commits skip the user's git hooks (``--no-verify``) and signing, and git
runs with the caller's repository-redirecting variables (``GIT_DIR``, ``GIT_WORK_TREE``,
``GIT_INDEX_FILE``…) removed, so memdir run from inside a project's git hook still writes to
its own store. Author identity is the user's when git knows it; otherwise the store gets a
local ``memdir`` identity at init so commits never fail on a fresh machine.

Imports: standard library only.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from memdir.kernel.errors import GitError, NotFoundError
from memdir.kernel.lock import LOCK_NAME
from memdir.kernel.paths import STATE_DIRNAME

_SCRUB = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR",
    "GIT_NAMESPACE",
    "GIT_PREFIX",
)
IGNORED = ["state/", "index.sqlite", "index.sqlite-*", ".*.tmp", "*.tmp", "backups/"]
"""What the store's own ``.gitignore`` keeps out of history: machine-local and derived files."""

Trailers = Sequence[tuple[str, str]]
"""Git trailers for a commit message: ``(key, value)`` pairs (see :func:`with_trailers`)."""

_FIELD = "\x1f"
_RECORD = "\x1e"


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _SCRUB}
    env.update(LC_ALL="C", LANG="C", GIT_TERMINAL_PROMPT="0", GIT_PAGER="cat", PAGER="cat")
    return env


def git_path() -> str:
    """Return the ``git`` executable.

    Raises:
        GitError: git is not installed or not on ``PATH``.
    """
    found = shutil.which("git")
    if found is None:
        raise GitError("git is not installed or not on PATH; memdir keeps its history in git")
    return found


def run_git(
    store: Path, *args: str, input_bytes: bytes | None = None, check: bool = True
) -> subprocess.CompletedProcess[bytes]:
    """Run ``git -C store args…`` and return the finished process (bytes output).

    Raises:
        GitError: git is missing, or (with ``check``) exited non-zero; the message carries
            git's own error text.
    """
    try:
        done = subprocess.run(
            [git_path(), "-C", str(store), *args],
            input=input_bytes,
            capture_output=True,
            env=_env(),
            check=False,
        )
    except OSError as exc:
        raise GitError(f"cannot run git: {exc}") from exc
    if check and done.returncode != 0:
        message = (
            done.stderr.decode("utf-8", "replace").strip()
            or done.stdout.decode("utf-8", "replace").strip()
        )
        raise GitError(f"git {args[0]} failed: {message}")
    return done


def init_repo(store: Path) -> None:
    """Make ``store`` a git repository with memdir's settings and ``.gitignore``; idempotent.

    Raises:
        GitError: git is missing or refuses.
    """
    if not (store / ".git").exists():
        run_git(store, "init", "-q")
    for key, value in (
        ("commit.gpgsign", "false"),
        ("core.autocrlf", "false"),
        ("core.quotepath", "false"),
        ("gc.auto", "0"),  # never a surprise gc inside a hook; `memdir health` maintains
        ("maintenance.auto", "false"),  # nor a `git maintenance` child after each commit
        # A record write rewrites git's index; at 10,000 records that file is ~1 MB. A split
        # index writes only the changed entries, and version 4 compresses the paths: together
        # they cut the git part of `remember` by about half (benchmarks/scale.py).
        ("core.splitIndex", "true"),
        ("index.version", "4"),
    ):
        run_git(store, "config", key, value)
    known = run_git(store, "config", "user.email", check=False)
    if known.returncode != 0 or not known.stdout.strip():
        run_git(store, "config", "user.name", "memdir")
        run_git(store, "config", "user.email", "memdir@localhost")
    ignore = store / ".gitignore"
    if not ignore.exists():
        ignore.write_text("\n".join(IGNORED) + "\n", encoding="utf-8")


_GIT_LOCKS = ("index.lock", "HEAD.lock", "packed-refs.lock", "config.lock")


def remove_stale_locks(store: Path) -> list[str]:
    """Remove git lock files that a killed git left in the store; return them (store-relative).

    git takes ``.git/index.lock`` (and ``HEAD.lock``, ``refs/…/*.lock``) while it works and
    removes it when done, but a git killed with SIGKILL, say with the process group of a
    hook its host timed out, leaves it, and every later commit then fails until it is removed.
    The caller holds the store lock, and memdir runs git on its store only under that lock,
    so a git lock file older than the moment the store lock was taken belongs to a git that is
    no longer running memdir's work; one made since (a person running git in the store at this
    very moment) is younger and is left alone.
    """
    git_dir = store / ".git"
    try:
        taken = (store / STATE_DIRNAME / LOCK_NAME).stat().st_mtime_ns
    except OSError:
        return []
    candidates = [git_dir / name for name in _GIT_LOCKS]
    for folder, _, files in os.walk(git_dir / "refs"):
        candidates += [Path(folder) / name for name in files if name.endswith(".lock")]
    removed = []
    for path in candidates:
        try:
            if path.stat().st_mtime_ns < taken:
                path.unlink()
                removed.append(path.relative_to(store).as_posix())
        except OSError:
            continue
    return removed


_HASH = re.compile(r"^(?:[0-9a-f]{40}|[0-9a-f]{64})$")


def head_commit(store: Path) -> str:
    """Return the commit ``HEAD`` points at, or ``""`` on an unborn branch.

    Read from ``.git/HEAD`` and the loose or packed ref it names, as git lays them out, which
    saves a ``git rev-parse`` process per write; anything unusual (a worktree's ``.git`` file,
    a symbolic ref elsewhere, reftable) falls back to asking git.

    Raises:
        GitError: git is missing or failed (on the fallback path only).
    """
    git_dir = store / ".git"
    try:
        head = (git_dir / "HEAD").read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        head = ""
    if _HASH.match(head):
        return head  # detached
    ref = head[5:] if head.startswith("ref: refs/heads/") else ""
    if ref and ".." not in ref and (git_dir / "refs").is_dir():
        try:
            value = (git_dir / ref).read_text(encoding="ascii").strip()
            if _HASH.match(value):
                return value
        except FileNotFoundError:
            packed = _packed_ref(git_dir, ref)
            if packed is not None:
                return packed
        except (OSError, UnicodeDecodeError):
            pass
    done = run_git(store, "rev-parse", "--verify", "-q", "HEAD", check=False)
    return done.stdout.decode().strip() if done.returncode == 0 else ""


def _packed_ref(git_dir: Path, ref: str) -> str | None:
    """Return ``ref``'s hash from ``packed-refs``.

    ``""`` when it is absent (an unborn branch); ``None`` when the file cannot be read (then
    git is asked instead).
    """
    try:
        lines = (git_dir / "packed-refs").read_text(encoding="ascii").splitlines()
    except FileNotFoundError:
        return ""
    except (OSError, UnicodeDecodeError):
        return None
    for line in lines:
        value, _, name = line.partition(" ")
        if name == ref and _HASH.match(value):
            return value
    return ""


def commit(store: Path, paths: list[str], message: str, *, trailers: Trailers = ()) -> None:
    """Stage ``paths`` (added, changed or deleted, relative to the store) and commit them.

    ``trailers`` (``(key, value)`` pairs, e.g. ``("Memdir-Origin", "agent")``) end the message
    as git trailers: who made the commit and through which channel (:func:`with_trailers`).

    Only these paths are staged, so a hand edit elsewhere stays uncommitted and visible to
    ``memdir health``. When every path is a file (or a deleted one), as in every record write,
    the commit is made with git's plumbing (``update-index``, ``write-tree``, ``commit-tree``,
    ``update-ref``): unlike ``git commit`` it never stats every tracked file, so its cost stays
    flat as the store grows (at 10,000 records, 17 ms of CPU against 54 ms). Folders go
    through ``git add -A`` and ``git commit``. The caller holds the store lock; git lock files
    a killed git left behind are removed first (:func:`remove_stale_locks`).

    Raises:
        GitError: git failed; the working tree keeps the new files either way.
    """
    message = with_trailers(message, trailers)
    remove_stale_locks(store)
    if any((store / p).is_dir() for p in paths):
        run_git(store, "add", "-A", "--", *paths)
        run_git(store, "commit", "-q", "--no-verify", "--allow-empty", "-m", message)
        return
    if paths:  # on stdin: a bulk import's 100,000 paths would overflow a command line
        listed = b"".join(p.encode("utf-8") + b"\0" for p in paths)
        run_git(store, "update-index", "--add", "--remove", "-z", "--stdin", input_bytes=listed)
    tree = run_git(store, "write-tree").stdout.decode().strip()
    parent = head_commit(store)
    made = run_git(
        store,
        "commit-tree",
        tree,
        *(["-p", parent] if parent else []),
        input_bytes=message.strip().encode("utf-8") + b"\n",
    )
    new = made.stdout.decode().strip()
    subject = message.splitlines()[0] if message else ""
    # Compare-and-swap: refused if HEAD moved since it was read (the store lock should make
    # that impossible; a hand-made commit in between is not silently dropped).
    run_git(store, "update-ref", "-m", f"commit: {subject}", "HEAD", new, parent)


@dataclass(frozen=True, slots=True)
class Commit:
    """One commit of the store's history."""

    hash: str
    at: str  # author date, ISO-8601
    author: str
    subject: str
    body: str

    def to_json(self) -> dict[str, str]:
        """Return the commit as a JSON object."""
        return {
            "commit": self.hash,
            "at": self.at,
            "author": self.author,
            "subject": self.subject,
            "body": self.body,
        }


def log(store: Path, paths: list[str] | None = None, limit: int = 20) -> list[Commit]:
    """Return up to ``limit`` commits, newest first, touching ``paths`` if given.

    Raises:
        GitError: git failed.
    """
    has_head = run_git(store, "rev-parse", "--verify", "-q", "HEAD", check=False)
    if has_head.returncode != 0:
        return []
    args = ["log", f"-n{limit}", f"--format=%H{_FIELD}%aI{_FIELD}%an{_FIELD}%s{_FIELD}%b{_RECORD}"]
    if paths:
        args += ["--", *paths]
    out = run_git(store, *args).stdout.decode("utf-8", "replace")
    commits = []
    for chunk in out.split(_RECORD):
        fields = chunk.strip("\n").split(_FIELD)
        if len(fields) == 5:
            commits.append(Commit(fields[0], fields[1], fields[2], fields[3], fields[4].strip()))
    return commits


def purge_subject(record_id: str) -> str:
    """The start of the message of the commit that purged ``record_id`` (``memdir purge``)."""
    return f"purge {record_id}:"


def purge_commit(store: Path, record_id: str) -> Commit | None:
    """Return the commit that purged ``record_id``, or ``None`` if it never was.

    Raises:
        GitError: git failed.
    """
    subject = purge_subject(record_id)
    done = run_git(
        store,
        "log",
        "-1",
        "-F",
        f"--grep={subject}",
        f"--format=%H{_FIELD}%aI{_FIELD}%an{_FIELD}%s{_FIELD}%b",
        check=False,
    )
    fields = done.stdout.decode("utf-8", "replace").strip("\n").split(_FIELD)
    if done.returncode != 0 or len(fields) != 5 or not fields[3].startswith(subject):
        return None
    return Commit(fields[0], fields[1], fields[2], fields[3], fields[4].strip())


def purged_ids(store: Path) -> set[str]:
    """Return the ids of every record purged from this store (from the purge commits).

    Raises:
        GitError: git failed.
    """
    done = run_git(
        store, "log", "-E", "--grep=^purge [a-z]+-[0-9a-z]+:", "--format=%s", check=False
    )
    found = set()
    for subject in done.stdout.decode("utf-8", "replace").splitlines():
        head = subject.split(":", 1)[0].split(" ")
        if len(head) == 2 and head[0] == "purge":
            found.add(head[1])
    return found


def resolve_commit(store: Path, rev: str) -> str:
    """Return the full hash of commit ``rev``.

    Raises:
        NotFoundError: no such commit in the store.
    """
    if rev.startswith("-"):
        raise NotFoundError(f"no commit {rev!r} in the store")
    done = run_git(store, "rev-parse", "--verify", "-q", f"{rev}^{{commit}}", check=False)
    if done.returncode != 0:
        raise NotFoundError(f"no commit {rev!r} in the store; see `memdir log`")
    return done.stdout.decode().strip()


def changed_paths(store: Path, commit_hash: str) -> list[str]:
    """Return the paths a commit changed (relative to the store)."""
    out = run_git(
        store, "diff-tree", "--no-commit-id", "--name-only", "-r", "--root", "-z", commit_hash
    ).stdout.decode("utf-8", "replace")
    return [p for p in out.split("\0") if p]


def revert(store: Path, commit_hash: str, message: str, *, trailers: Trailers = ()) -> list[str]:
    """Revert one commit with a new commit; return the paths it changed.

    ``trailers`` end the message as in :func:`commit`.

    Raises:
        GitError: the revert conflicts with later changes; nothing is changed (it is aborted).
    """
    message = with_trailers(message, trailers)
    remove_stale_locks(store)
    paths = changed_paths(store, commit_hash)
    done = run_git(store, "revert", "--no-edit", "--no-commit", commit_hash, check=False)
    if done.returncode != 0:
        run_git(store, "revert", "--abort", check=False)
        run_git(store, "reset", "-q", "--merge", check=False)
        detail = done.stderr.decode("utf-8", "replace").strip()
        raise GitError(
            f"cannot roll back {commit_hash[:12]}: later changes touch the same records "
            f"({detail}); roll back the later commits first"
        )
    run_git(store, "commit", "-q", "--no-verify", "--allow-empty", "-m", message)
    return paths


def file_patches(store: Path, path: str, limit: int = 50) -> str:
    """Return ``git log -p`` text for one file, newest first (empty if never committed)."""
    has_head = run_git(store, "rev-parse", "--verify", "-q", "HEAD", check=False)
    if has_head.returncode != 0:
        return ""
    return run_git(
        store, "log", f"-n{limit}", "-p", "--format=commit %H%n%aI  %s%n", "--", path
    ).stdout.decode("utf-8", "replace")


LOOSE_OBJECTS_LIMIT = 1000
"""Loose objects (about 200 record writes: each writes a blob, three trees and a commit) above
which :func:`maintain` packs them. Each record write makes git check that every entry of the
record's kind folder exists; a loose object costs a file lookup where a packed one costs a
binary search in memory, so at 10,000 records a packed store commits ~8x faster in that step."""

PACKS_LIMIT = 20
"""Packs above which :func:`maintain` merges them into one (git's own ``gc.autoPackLimit`` is
50; each pack is one more index to search per lookup)."""


def maintain(store: Path) -> bool:
    """Pack the store's loose git objects when there are many; return whether it packed.

    More than :data:`LOOSE_OBJECTS_LIMIT` loose objects are packed into one new pack
    (``git repack -d``, then ``git prune-packed``); more than :data:`PACKS_LIMIT` packs are
    merged into one (``git repack -a -d``). Unlike ``git gc --auto``, which estimates the loose
    count from one of 256 folders, the count is exact, so the same store always gets the same
    decision. Never called from a hook's hot path (``memdir sync``, bulk import and
    ``memdir health`` call it).

    Raises:
        GitError: git is missing or the repack failed.
    """
    counts: dict[str, int] = {}
    for line in run_git(store, "count-objects", "-v").stdout.decode().splitlines():
        key, _, value = line.partition(":")
        if value.strip().isdigit():
            counts[key.strip()] = int(value)
    if counts.get("packs", 0) > PACKS_LIMIT:
        run_git(store, "repack", "-a", "-d", "-q")
    elif counts.get("count", 0) > LOOSE_OBJECTS_LIMIT:
        run_git(store, "repack", "-d", "-q")
    else:
        return False
    run_git(store, "prune-packed", "-q")
    return True


def changed_since_head(store: Path, paths: list[str]) -> bool:
    """Return whether any of ``paths`` differs from the last commit (or there is none yet).

    Raises:
        GitError: git is missing or failed.
    """
    if run_git(store, "rev-parse", "--verify", "-q", "HEAD", check=False).returncode != 0:
        return True
    out = run_git(store, "status", "--porcelain", "-z", "--untracked-files=all", "--", *paths)
    return bool(out.stdout.strip(b"\0"))


def dirty_paths(store: Path, under: str = "records") -> list[str]:
    """Return paths under ``under`` that differ from the last commit (hand edits, crashes)."""
    out = run_git(
        store, "status", "--porcelain", "-z", "--untracked-files=all", "--", under, check=False
    ).stdout.decode("utf-8", "replace")
    paths = []
    for item in out.split("\0"):
        if len(item) > 3:
            paths.append(item[3:])
    return paths


# --- commit trailers (who made a commit; DESIGN §4) -------------------------------------------


def with_trailers(message: str, trailers: Trailers) -> str:
    """Return ``message`` ending in a paragraph of ``Key: value`` git trailers.

    Keys and values are the caller's (:meth:`memdir.kernel.caller.Caller.trailers` makes them
    one-line); with no trailers the message is returned unchanged.
    """
    if not trailers:
        return message
    block = "\n".join(f"{key}: {value}" for key, value in trailers)
    return f"{message.rstrip()}\n\n{block}"
