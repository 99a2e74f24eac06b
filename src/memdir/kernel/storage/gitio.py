"""The store's git history, through the ``git`` command (no GitPython).

git is memdir's own engine here, whatever the user configured (DESIGN §2, invariant 9):

- **Pinned settings.** Every git call carries the settings memdir relies on as command-scope
  configuration (``GIT_CONFIG_COUNT``/``GIT_CONFIG_KEY_n``/``GIT_CONFIG_VALUE_n``, which win
  over the system, user and repository files): no hooks at all (``core.hooksPath`` is
  ``/dev/null``, so no ``pre-commit``, ``prepare-commit-msg``, ``reference-transaction``…
  ever runs), no signing, no line-ending conversion, no user-wide ignore or attributes file,
  no fsmonitor, no pager or colour, UTF-8 messages, no automatic gc. See :data:`PINNED`.
- **Scrubbed environment.** Every ``GIT_*`` variable leaking in from the caller (a git hook
  that runs memdir, an IDE, ``git -c``) is dropped, except the identity
  (``GIT_AUTHOR_NAME``… :data:`KEPT`), the location of the user's own config files and the
  transport (ssh, askpass, proxies) that a ``sync`` to a remote needs. git never looks above
  the folder it is run in (``GIT_CEILING_DIRECTORIES``), so a store without a repository of
  its own can never commit into the project around it.
- **An identity fallback.** When git knows no identity (no ``HOME``, a container, ``sudo``,
  CI) the commit is made as ``memdir <memdir@localhost>`` instead of failing.
- **memdir's own index.** Commits are built in memdir's own index file
  (``<git dir>/memdir/index``), never in the one a person stages into, so nothing a person
  staged or an earlier failure left is swept into a commit, and a failure at any step leaves
  nothing staged. The person's index is brought up to date for the committed paths after the
  commit is made.
- **Store states.** A write is refused (:class:`GitStateError`) while the store's git is in a
  state a commit would harm: an old commit checked out, a merge, rebase, cherry-pick, revert or
  bisect in progress, unmerged paths, no repository of its own (:func:`check_writable`).

Imports: standard library only.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from memdir.kernel.base.errors import GitError, GitStateError, NotFoundError
from memdir.kernel.base.layout import layout
from memdir.kernel.storage.lock import LOCK_NAME

PINNED: tuple[tuple[str, str], ...] = (
    ("core.hooksPath", os.devnull),  # no hook of any kind ever runs for memdir's git calls
    ("commit.gpgSign", "false"),
    ("tag.gpgSign", "false"),
    ("tag.forceSignAnnotated", "false"),
    ("push.gpgSign", "false"),
    ("log.showSignature", "false"),  # gpg output would land inside `git log` output
    ("core.autocrlf", "false"),
    ("core.safecrlf", "false"),
    ("core.eol", "lf"),
    ("core.excludesFile", os.devnull),  # a user-wide `*.md` ignore must not hide records
    ("core.attributesFile", os.devnull),  # nor a user-wide filter or eol attribute
    ("core.fsmonitor", "false"),
    ("core.quotePath", "false"),
    ("core.pager", "cat"),
    ("color.ui", "never"),
    ("color.diff", "never"),
    ("color.status", "never"),
    ("diff.noprefix", "false"),
    ("log.follow", "false"),
    ("status.renames", "false"),
    ("i18n.commitEncoding", "UTF-8"),
    ("i18n.logOutputEncoding", "UTF-8"),
    ("gc.auto", "0"),  # never a surprise gc inside a hook; `memdir health` maintains
    ("maintenance.auto", "false"),
    ("advice.detachedHead", "false"),
    ("advice.statusHints", "false"),
    ("advice.addEmbeddedRepo", "false"),
    ("advice.ignoredHook", "false"),
)
"""What every git call memdir makes is pinned to, whatever the system, user or store says."""

KEPT = frozenset(
    {
        "GIT_AUTHOR_NAME",
        "GIT_AUTHOR_EMAIL",
        "GIT_COMMITTER_NAME",
        "GIT_COMMITTER_EMAIL",
        "GIT_CONFIG_GLOBAL",
        "GIT_CONFIG_SYSTEM",
        "GIT_CONFIG_NOSYSTEM",
        "GIT_EXEC_PATH",
        "GIT_SSH",
        "GIT_SSH_COMMAND",
        "GIT_SSH_VARIANT",
        "GIT_ASKPASS",
        "GIT_PROXY_COMMAND",
    }
)
"""The ``GIT_*`` variables passed through: who the person is, where their config files are,
and how to reach a remote. Every other ``GIT_*`` variable is dropped (``GIT_DIR``,
``GIT_INDEX_FILE``, ``GIT_CONFIG_PARAMETERS``, ``GIT_TRACE``, dates, templates…)."""

_KEPT_PREFIXES = ("GIT_SSL_", "GIT_HTTP_", "GIT_PROXY_")

FALLBACK_NAME = "memdir"
FALLBACK_EMAIL = "memdir@localhost"
IGNORED = [
    "state/",
    "index.sqlite",
    "index.sqlite-*",
    ".*.tmp",
    "*.tmp",
    "backups/",
    "records/index.json",
]
"""What the store's own ``.gitignore`` keeps out of history: machine-local and derived files."""

Trailers = Sequence[tuple[str, str]]
"""Git trailers for a commit message: ``(key, value)`` pairs (see :func:`with_trailers`)."""

_FIELD = "\x1f"
_RECORD = "\x1e"


SPLIT_INDEX: tuple[tuple[str, str], ...] = (("core.splitIndex", "true"),)
"""Settings for memdir's own index file (and the person's, when memdir updates it) in a large
store: a split index, so a commit writes only the entries changed since the shared part was
last written (git rewrites that part once a fifth of the entries changed). At 100,000 records
the whole index is 6.9 MB: written whole, each of a commit's three index writes took 40-90 ms,
and ``remember`` five times as long (``benchmarks/scale.py``). The shared part is a file git
expires two weeks after its last use; :func:`commit` rebuilds memdir's index when git can no
longer read it. A small store keeps whole indexes (:data:`SPLIT_FROM_BYTES`)."""
SPLIT_FROM_BYTES = 512 * 1024
"""memdir's index file past this size (about 7,500 records) is split, and stays so (a marker
beside it): below it a write is cheap, and a split index of a few entries would rewrite its
shared part on nearly every commit (a fifth of them changed), leaving a file behind each time."""
WHOLE_INDEX: tuple[tuple[str, str], ...] = (("core.splitIndex", "false"),)
"""Settings for memdir's own index file in a store not (yet) split, and for a throwaway index
file (``memdir sync``'s merge): written whole, so deleting it leaves no shared part behind."""


def git_env(
    folder: Path | None = None,
    *,
    extra: dict[str, str] | None = None,
    config: tuple[tuple[str, str], ...] = (),
) -> dict[str, str]:
    """Return the environment every git call of memdir runs with (see the module docstring).

    Args:
        folder: The folder git runs in; git does not look for a repository above it. ``None``
            lets git search upwards (only to find out which repository holds a folder).
        extra: Further variables (memdir's own index file, the fallback identity).
        config: Further pinned settings, after :data:`PINNED`.

    Returns:
        A complete environment for :func:`subprocess.run`.
    """
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("GIT_") or k in KEPT or k.startswith(_KEPT_PREFIXES)
    }
    env.update(LC_ALL="C", LANG="C", GIT_TERMINAL_PROMPT="0", GIT_PAGER="cat", PAGER="cat")
    pinned = PINNED + config
    env["GIT_CONFIG_COUNT"] = str(len(pinned))
    for number, (key, value) in enumerate(pinned):
        env[f"GIT_CONFIG_KEY_{number}"] = key
        env[f"GIT_CONFIG_VALUE_{number}"] = value
    if folder is not None:
        with contextlib.suppress(OSError, RuntimeError):
            env["GIT_CEILING_DIRECTORIES"] = str(folder.resolve().parent)
    if extra:
        env.update(extra)
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
    store: Path,
    *args: str,
    input_bytes: bytes | None = None,
    check: bool = True,
    env: dict[str, str] | None = None,
    discover: bool = False,
    config: tuple[tuple[str, str], ...] = (),
) -> subprocess.CompletedProcess[bytes]:
    """Run ``git -C store args…`` with memdir's pinned settings; return the finished process.

    Args:
        store: The folder git runs in.
        *args: git's arguments.
        input_bytes: What to write to git's stdin.
        check: Raise when git exits non-zero.
        env: Further environment variables (added to :func:`git_env`'s).
        discover: Let git look for a repository above ``store`` (off: a store's git is its own).
        config: Further pinned settings for this call.

    Raises:
        GitError: git is missing, or (with ``check``) exited non-zero; the message carries
            git's own error text.
    """
    try:
        done = subprocess.run(
            [git_path(), "-C", str(store), *args],
            input=input_bytes,
            capture_output=True,
            env=git_env(None if discover else store, extra=env, config=config),
            check=False,
        )
    except OSError as exc:
        raise GitError(f"cannot run git: {exc}") from exc
    if check and done.returncode != 0:
        raise GitError(f"git {args[0]} failed: {_text(done)}")
    return done


def _text(done: subprocess.CompletedProcess[bytes]) -> str:
    return (
        done.stderr.decode("utf-8", "replace").strip()
        or done.stdout.decode("utf-8", "replace").strip()
        or f"exit status {done.returncode}"
    )


def git_dir(store: Path) -> Path:
    """Return the store's git directory: ``.git``, or where a ``.git`` file points.

    Read from files (no git process). A ``.git`` that is neither is returned as is (git then
    says what is wrong).
    """
    dot_git = store / ".git"
    if dot_git.is_file():
        try:
            content = dot_git.read_text(encoding="utf-8", errors="replace").strip()
        except OSError:
            return dot_git
        if content.startswith("gitdir:"):
            target = Path(content[len("gitdir:") :].strip())
            return target if target.is_absolute() else store / target
    return dot_git


def _common_dir(gitdir: Path) -> Path:
    try:
        common = (gitdir / "commondir").read_text(encoding="utf-8").strip()
    except OSError:
        return gitdir
    return gitdir / common


@dataclass(frozen=True, slots=True)
class GitState:
    """A state of the store's git in which memdir does not commit."""

    code: str  # stable slug: detached_head, merge_in_progress, …
    message: str  # what the state is
    fix: str  # the commands that end it

    def error(self, store: Path) -> GitStateError:
        """Return the error a write refused in this state raises."""
        return GitStateError(
            f"the store's git {self.message}; memdir does not write until that is finished, "
            f"so nothing was stored. Fix: {self.fix} (store: {store})",
            state=self.code,
        )


_OPERATIONS = (
    ("rebase-merge", "rebase_in_progress", "is in the middle of a rebase", "rebase"),
    ("rebase-apply", "rebase_in_progress", "is in the middle of a rebase (or `git am`)", "rebase"),
    ("MERGE_HEAD", "merge_in_progress", "is in the middle of a merge", "merge"),
    ("CHERRY_PICK_HEAD", "cherry_pick_in_progress", "is mid cherry-pick", "cherry-pick"),
    ("REVERT_HEAD", "revert_in_progress", "is in the middle of a revert", "revert"),
)


def git_state(store: Path, *, unmerged: bool | None = None) -> GitState | None:
    """Return the state that stops memdir committing in ``store``, or ``None`` when it may.

    Files in the git directory are read (no process), except for unmerged paths: those are
    asked of git (``git ls-files -u``) when ``unmerged`` is True, or, when it is ``None``, only
    if the person's git index changed since memdir last wrote it.

    Raises:
        GitError: git is missing or failed while listing unmerged paths.
    """
    quoted = _quote(store)
    dot_git = store / ".git"
    if not dot_git.exists():
        return GitState(
            "no_repository",
            "is missing: the store has no git repository of its own (no .git in it)",
            f"`memdir init --store {quoted}` makes one, keeping the records",
        )
    gitdir = git_dir(store)
    for name, code, message, command in _OPERATIONS:
        if (gitdir / name).exists():
            return GitState(
                code,
                message,
                f"finish it (`git -C {quoted} {command} --continue`) or abandon it "
                f"(`git -C {quoted} {command} --abort`)",
            )
    if (gitdir / "BISECT_LOG").exists():
        return GitState(
            "bisect_in_progress",
            "is in the middle of a bisect",
            f"`git -C {quoted} bisect reset`",
        )
    try:
        head = (gitdir / "HEAD").read_text(encoding="ascii", errors="replace").strip()
    except OSError:
        head = "ref: "
    if _HASH.match(head):
        return GitState(
            "detached_head",
            f"has an old commit checked out (detached HEAD at {head[:12]}), so a commit would "
            "land on no branch and be lost",
            f"go back to the branch: `git -C {quoted} switch -` (or `git -C {quoted} switch "
            "<branch>`)",
        )
    if unmerged is None:
        unmerged = _index_changed_since_memdir(gitdir)
    if unmerged:
        paths = _unmerged_paths(store)
        if paths:
            listed = ", ".join(paths[:3]) + (" …" if len(paths) > 3 else "")
            return GitState(
                "unmerged_paths",
                f"has unmerged paths ({listed}) from a merge that was not finished",
                f"resolve them (edit, then `git -C {quoted} add` them and commit), or discard "
                f"the merge with `git -C {quoted} reset --merge`",
            )
    return None


def check_writable(store: Path) -> None:
    """Refuse a write while the store's git is in a state a commit would harm.

    Raises:
        GitStateError: the message names the state and the commands that end it.
        GitError: git failed while looking.
    """
    state = git_state(store)
    if state is not None:
        raise state.error(store)


def _quote(path: Path) -> str:
    text = str(path)
    return text if re.fullmatch(r"[\w@%+=:,./-]+", text) else "'" + text.replace("'", "'\\''") + "'"


def _unmerged_paths(store: Path) -> list[str]:
    out = run_git(store, "ls-files", "-u", "-z").stdout.decode("utf-8", "replace")
    paths: list[str] = []
    for item in out.split("\0"):
        path = item.partition("\t")[2]
        if path and path not in paths:
            paths.append(path)
    return paths


def _own_index(gitdir: Path) -> tuple[Path, Path]:
    """Return memdir's own index file and the file naming the commit it mirrors."""
    folder = gitdir / "memdir"
    return folder / "index", folder / "index.head"


def _index_changed_since_memdir(gitdir: Path) -> bool:
    """Whether the person's index was written after memdir last committed (or is unknown)."""
    _, marker = _own_index(gitdir)
    try:
        return (gitdir / "index").stat().st_mtime_ns > marker.stat().st_mtime_ns
    except FileNotFoundError:
        return (gitdir / "index").exists()
    except OSError:
        return True


def init_repo(store: Path) -> None:
    """Make ``store`` a git repository with memdir's ``.gitignore``; idempotent.

    The settings memdir relies on are pinned on every call (:data:`PINNED`), so a store reached
    any other way (a clone, a copy) behaves the same; the few written here only make a person's
    own git commands in the store behave like memdir's.

    Raises:
        GitError: git is missing or refuses.
    """
    if not (store / ".git").exists():
        run_git(store, "init", "-q")
    for key, value in (
        ("commit.gpgsign", "false"),
        ("core.autocrlf", "false"),
        ("core.quotepath", "false"),
        ("gc.auto", "0"),
        ("maintenance.auto", "false"),
        ("index.version", "4"),  # the person's index: paths compressed
    ):
        run_git(store, "config", key, value)
    ignore = store / ".gitignore"
    if not ignore.exists():
        ignore.write_text("\n".join(IGNORED) + "\n", encoding="utf-8")
    # The audit log and the tombstone ledger are append-only: two machines' appends merge by
    # keeping both sides' lines (git's built-in union driver), never as a conflict.
    attributes = store / ".git" / "info" / "attributes"
    if (store / ".git").is_dir() and UNION_ATTRIBUTE not in _read_text(attributes):
        attributes.parent.mkdir(parents=True, exist_ok=True)
        with attributes.open("a", encoding="utf-8") as out:
            out.write(UNION_ATTRIBUTE + "\n")


UNION_ATTRIBUTE = "audit/*.jsonl merge=union"


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (FileNotFoundError, UnicodeDecodeError):
        return ""


_GIT_LOCKS = (
    "index.lock",
    "HEAD.lock",
    "packed-refs.lock",
    "config.lock",
    "memdir/index.lock",
    "memdir/sync-index.lock",  # memdir sync's merge index (store/teamsync.py)
)


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
    gitdir = git_dir(store)
    try:
        taken = (layout(store).state_path(LOCK_NAME)).stat().st_mtime_ns
    except OSError:
        return []
    candidates = [gitdir / name for name in _GIT_LOCKS]
    for folder, _, files in os.walk(_common_dir(gitdir) / "refs"):
        candidates += [Path(folder) / name for name in files if name.endswith(".lock")]
    removed = []
    for path in candidates:
        try:
            if path.stat().st_mtime_ns < taken:
                path.unlink()
                removed.append(os.path.relpath(path, store).replace(os.sep, "/"))
        except OSError:
            continue
    return removed


_HASH = re.compile(r"^(?:[0-9a-f]{40}|[0-9a-f]{64})$")


def head_commit(store: Path) -> str:
    """Return the commit ``HEAD`` points at, or ``""`` on an unborn branch.

    Read from ``HEAD`` and the loose or packed ref it names, as git lays them out, which
    saves a ``git rev-parse`` process per write; anything unusual (a symbolic ref elsewhere,
    reftable) falls back to asking git.

    Raises:
        GitError: git is missing or failed (on the fallback path only).
    """
    gitdir = git_dir(store)
    common = _common_dir(gitdir)
    try:
        head = (gitdir / "HEAD").read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        head = ""
    if _HASH.match(head):
        return head  # detached
    ref = head[5:] if head.startswith("ref: refs/heads/") else ""
    if ref and ".." not in ref and (common / "refs").is_dir():
        try:
            value = (common / ref).read_text(encoding="ascii").strip()
            if _HASH.match(value):
                return value
        except FileNotFoundError:
            packed = _packed_ref(common, ref)
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


def commit(store: Path, paths: list[str], message: str, *, trailers: Trailers = ()) -> str:
    """Commit ``paths`` (added, changed or deleted, relative to the store) as they are on disk.

    The commit is built in memdir's own index file, a copy of the last commit's tree plus
    ``paths`` (files with ``git update-index``; folders with ``git add -A``, which honours the
    store's ``.gitignore``), then written with git's plumbing (``write-tree``, ``commit-tree``,
    and a compare-and-swap ``update-ref``), so nothing a person staged, and nothing outside
    ``paths``, is swept in; no hook runs. A failure at any step discards memdir's index and
    leaves ``HEAD``, the person's index and the files as they were. After the commit the
    person's index is brought up to date for ``paths`` (best effort: the commit is already
    durable). The caller holds the store lock; git lock files a killed git left behind are
    removed first (:func:`remove_stale_locks`).

    Args:
        store: The store folder.
        paths: Store-relative files or folders to commit.
        message: The commit message (subject, blank line, details).
        trailers: ``(key, value)`` pairs, e.g. ``("Memdir-Origin", "agent")``, ending the
            message as git trailers: who made the commit and through which channel
            (:func:`with_trailers`).

    Returns:
        The new commit's hash.

    Raises:
        GitStateError: the store's git is in a state memdir does not commit in (nothing done).
        GitError: a git step failed; nothing was committed and nothing is staged.
    """
    message = with_trailers(message, trailers)
    remove_stale_locks(store)
    check_writable(store)
    gitdir = git_dir(store)
    index, marker = _own_index(gitdir)
    config = _index_config(index)
    parent = head_commit(store)
    try:
        mirrored = marker.read_text(encoding="ascii").strip()
    except OSError:
        mirrored = None
    folders = any((store / p).is_dir() for p in paths)
    listed = b"".join(p.encode("utf-8") + b"\0" for p in paths)
    try:
        index.parent.mkdir(exist_ok=True)
        with contextlib.suppress(FileNotFoundError):
            marker.unlink()  # until the commit is made, memdir's index mirrors nothing
        fresh = mirrored != parent or not index.exists()
        try:
            tree = _stage(store, index, parent, paths, listed, fresh=fresh, config=config)
        except GitError:
            if fresh:
                raise
            # memdir's index unreadable (its shared part expired, a torn write): rebuilt
            tree = _stage(store, index, parent, paths, listed, fresh=True, config=config)
        new = _commit_tree(store, tree, parent, message.strip())
        subject = message.strip().splitlines()[0] if message.strip() else ""
        # Compare-and-swap: refused if HEAD moved since it was read (a commit a person made
        # in between is never silently dropped).
        run_git(store, "update-ref", "-m", f"commit: {subject}", "HEAD", new, parent)
    except BaseException:
        with contextlib.suppress(OSError):
            index.unlink()
        raise
    # The commit is durable; what follows only keeps the person's view in step with it.
    if folders:
        run_git(store, "add", "-A", "--", *paths, check=False, config=config)
    elif paths:
        run_git(
            store, "update-index", "--add", "--remove", "-z", "--stdin",
            input_bytes=listed, check=False, config=config,
        )  # fmt: skip
    with contextlib.suppress(OSError):
        marker.write_text(new + "\n", encoding="ascii")
    return new


def _index_config(index: Path) -> tuple[tuple[str, str], ...]:
    """:data:`SPLIT_INDEX` once memdir's ``index`` passed :data:`SPLIT_FROM_BYTES`, else whole."""
    marker = index.with_name("split")
    if marker.exists():
        return SPLIT_INDEX
    try:
        large = index.stat().st_size > SPLIT_FROM_BYTES
    except OSError:
        large = False
    if large:
        with contextlib.suppress(OSError):
            marker.touch()
        return SPLIT_INDEX
    return WHOLE_INDEX


def _stage(
    store: Path,
    index: Path,
    parent: str,
    paths: list[str],
    listed: bytes,
    *,
    fresh: bool,
    config: tuple[tuple[str, str], ...],
) -> str:
    """Bring memdir's ``index`` to ``parent`` plus ``paths``; return the tree it makes.

    ``fresh``: the index is rebuilt from ``parent`` first (it mirrors another commit, or is
    missing or unreadable). ``config``: :data:`SPLIT_INDEX` or :data:`WHOLE_INDEX`.

    Raises:
        GitError: a git step failed.
    """
    own = {"GIT_INDEX_FILE": str(index)}
    if fresh:
        old = _shared_index(store, index) if index.exists() else None
        with contextlib.suppress(FileNotFoundError):
            index.unlink()
        if parent:
            run_git(store, "read-tree", parent, env=own, config=config)
        if old is not None and old not in (_shared_index(store, index), _shared_index(store)):
            # its shared part, now used by no index (a 100,000-record store: 6.9 MB each time
            # HEAD moved under it, e.g. every sync, until git expired it two weeks later)
            with contextlib.suppress(OSError):
                (store / old).unlink()
    if any((store / p).is_dir() for p in paths):
        run_git(store, "add", "-A", "--", *paths, env=own, config=config)
    elif paths:  # on stdin: a bulk import's 100,000 paths would overflow a command line
        run_git(
            store, "update-index", "--add", "--remove", "-z", "--stdin",
            input_bytes=listed, env=own, config=config,
        )  # fmt: skip
    return run_git(store, "write-tree", env=own, config=config).stdout.decode().strip()


def _shared_index(store: Path, index: Path | None = None) -> str | None:
    """The store-relative shared part of a split index (the person's by default), or None."""
    env = {"GIT_INDEX_FILE": str(index)} if index is not None else None
    done = run_git(store, "rev-parse", "--shared-index-path", env=env, check=False)
    found = done.stdout.decode("utf-8", "replace").strip()
    return found if done.returncode == 0 and found.startswith(".git/sharedindex.") else None


def _commit_tree(store: Path, tree: str, parent: str, message: str) -> str:
    """Write a commit object; fall back to memdir's identity when git knows none."""
    return commit_tree(store, tree, [parent] if parent else [], message)


def commit_tree(store: Path, tree: str, parents: list[str], message: str) -> str:
    """Write a commit object of ``tree`` with ``parents`` (a merge: two); return its hash.

    Falls back to memdir's identity when git knows none. Nothing but the object is written.

    Raises:
        GitError: git refused.
    """
    args = ["commit-tree", tree, *(arg for parent in parents for arg in ("-p", parent))]
    data = message.encode("utf-8") + b"\n"
    done = run_git(store, *args, input_bytes=data, check=False)
    if done.returncode != 0:
        fallback = {
            key: value
            for key, value in (
                ("GIT_AUTHOR_NAME", FALLBACK_NAME),
                ("GIT_COMMITTER_NAME", FALLBACK_NAME),
                ("GIT_AUTHOR_EMAIL", FALLBACK_EMAIL),
                ("GIT_COMMITTER_EMAIL", FALLBACK_EMAIL),
            )
            if not os.environ.get(key)
        }
        retry = run_git(store, *args, input_bytes=data, check=False, env=fallback)
        if retry.returncode != 0:
            raise GitError(f"git commit-tree failed: {_text(done)}")
        done = retry
    return done.stdout.decode().strip()


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


_ZERO = re.compile(r"^0+$")


def _blob(store: Path, sha: str | None) -> bytes | None:
    if sha is None:
        return None
    return run_git(store, "cat-file", "blob", sha).stdout


def _tree_entries(store: Path, rev: str, paths: list[str]) -> dict[str, str]:
    """``path -> blob hash`` of ``paths`` in ``rev`` (absent paths are left out)."""
    out = run_git(store, "ls-tree", "-z", "--full-tree", rev, "--", *paths).stdout
    found = {}
    for item in out.decode("utf-8", "replace").split("\0"):
        meta, _, path = item.partition("\t")
        parts = meta.split()
        if path and len(parts) == 3:
            found[path] = parts[2]
    return found


def file_at(store: Path, rev: str, path: str) -> bytes | None:
    """Return the bytes of ``path`` (relative to the store) in commit ``rev``; ``None`` if absent.

    Raises:
        GitError: git failed.
    """
    return _blob(store, _tree_entries(store, rev, [path]).get(path))


def revert_contents(
    store: Path, commit_hash: str, *, keep: tuple[str, ...] = ()
) -> dict[str, bytes | None]:
    """Return the file contents that undo ``commit_hash`` on top of ``HEAD``.

    Paths starting with one of ``keep`` (append-only logs such as ``audit/``) are left out:
    undoing a change never takes a line out of them.

    Nothing is written: the caller applies the contents (``None`` deletes the file) and
    commits them like any other write, so a failure leaves nothing staged. A file changed again
    since the commit is merged three ways (``git merge-file``); a file already back as it was
    is left out.

    ``trailers`` end the message as in :func:`commit`.

    Raises:
        GitError: a later change to the same file conflicts with undoing this one.
    """
    raw = run_git(
        store, "diff-tree", "-r", "-z", "--no-renames", "--no-commit-id", "--root", commit_hash
    ).stdout.decode("utf-8", "replace")
    items = raw.split("\0")
    changes: dict[str, tuple[str | None, str | None]] = {}
    for meta, path in zip(items[0::2], items[1::2], strict=False):
        parts = meta.lstrip(":").split()
        if len(parts) >= 4 and path:
            before = None if _ZERO.match(parts[2]) else parts[2]
            after = None if _ZERO.match(parts[3]) else parts[3]
            changes[path] = (before, after)
    head = _tree_entries(store, "HEAD", list(changes)) if changes else {}
    result: dict[str, bytes | None] = {}
    conflicts = []
    for path, (before, after) in changes.items():
        if keep and path.startswith(keep):
            continue
        now = head.get(path)
        if now == after:
            result[path] = _blob(store, before)
        elif now == before:
            continue  # already as it was before the commit
        elif now is not None and before is not None and after is not None:
            ours, base, theirs = (_blob(store, sha) for sha in (now, after, before))
            merged = _merge_file(store, ours, base, theirs)
            if merged is None:
                conflicts.append(path)
            else:
                result[path] = merged
        else:
            conflicts.append(path)
    if conflicts:
        raise GitError(
            f"cannot roll back {commit_hash[:12]}: later changes touch the same records "
            f"({', '.join(conflicts)}); roll back the later commits first. Nothing was changed"
        )
    return result


def _merge_file(
    store: Path, ours: bytes | None, base: bytes | None, theirs: bytes | None
) -> bytes | None:
    """Three-way merge of one file's contents; ``None`` when they conflict."""
    return merge_file(store, ours, base, theirs)


def merge_file(
    store: Path, ours: bytes | None, base: bytes | None, theirs: bytes | None
) -> bytes | None:
    """Three-way merge of one file's contents (``git merge-file``); ``None`` when they conflict.

    Args:
        store: The store (temporary files go to its ``state/``).
        ours: One side's bytes (``None``: no file).
        base: Their common ancestor's bytes (``None``: none).
        theirs: The other side's bytes.

    Returns:
        The merged bytes, or ``None`` when the same lines changed differently on both sides.

    Raises:
        GitError: git is missing.
    """
    folder = layout(store).state_path()
    folder.mkdir(exist_ok=True)
    names = []
    try:
        for label, content in (("ours", ours), ("base", base), ("theirs", theirs)):
            path = folder / f".merge-{os.getpid()}-{label}.tmp"
            path.write_bytes(content or b"")
            names.append(str(path))
        done = run_git(store, "merge-file", "-p", *names, check=False)
    finally:
        for name in names:
            with contextlib.suppress(OSError):
                os.unlink(name)
    return done.stdout if done.returncode == 0 else None


def file_patches(store: Path, path: str, limit: int = 50) -> str:
    """Return ``git log -p`` text for one file, newest first (empty if never committed)."""
    has_head = run_git(store, "rev-parse", "--verify", "-q", "HEAD", check=False)
    if has_head.returncode != 0:
        return ""
    return run_git(
        store,
        "log",
        f"-n{limit}",
        "-p",
        "--no-ext-diff",
        "--no-textconv",
        "--no-color",
        "--format=commit %H%n%aI  %s%n",
        "--",
        path,
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

    Keys and values are the caller's (:meth:`memdir.kernel.base.caller.Caller.trailers` makes them
    one-line); with no trailers the message is returned unchanged.
    """
    if not trailers:
        return message
    block = "\n".join(f"{key}: {value}" for key, value in trailers)
    return f"{message.rstrip()}\n\n{block}"
