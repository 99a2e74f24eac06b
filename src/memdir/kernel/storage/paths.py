"""Where stores live: discovery from the working directory, the user store, containment.

A project store is the ``.memdir`` folder at the root of the *main* worktree of the git
repository holding the working directory, so every worktree of a repository shares one
memory (DESIGN §2). Discovery walks up from the working directory and takes the first
``.memdir`` folder that holds a ``memdir.toml``, looking at each level both beside the
directory and at the main worktree root of any repository found there; a nested repository
without a store of its own (a submodule, a vendored checkout) therefore uses the enclosing
project's store (case B18). Git metadata is read from files, not by running git, because hooks
call this on every tool call.

``--store DIR`` and ``MEMDIR_STORE`` name the store folder itself and win over discovery.
The user store is ``$MEMDIR_HOME`` or the platform data directory.

Imports: standard library only.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path, PureWindowsPath

from memdir.kernel.base.errors import StoreLayoutError, StoreNotFoundError
from memdir.kernel.base.layout import HOOK_ERROR_LOG as HOOK_ERROR_LOG
from memdir.kernel.base.layout import MANIFEST_NAME as MANIFEST_NAME
from memdir.kernel.base.layout import STATE_DIRNAME as STATE_DIRNAME
from memdir.kernel.base.layout import STORE_DIRNAME as STORE_DIRNAME
from memdir.kernel.base.layout import STORE_ENTRIES as STORE_ENTRIES
from memdir.kernel.base.layout import StoreLayout as StoreLayout
from memdir.kernel.base.layout import check_layout as check_layout
from memdir.kernel.base.layout import is_within as is_within
from memdir.kernel.base.layout import layout as layout
from memdir.kernel.base.layout import state_dir as state_dir
from memdir.kernel.lang.redact import is_secret_path

HOOK_ERROR_LOG_MAX_BYTES = 1024 * 1024
"""Past this size the hook error log keeps its newest half: a broken hook cannot fill a disk."""
HOOK_GAVE_UP = "gave up after the"
"""How the log entry of a hook that overran its time budget begins. It failed open by design
and kept its row, so ``memdir health`` reports it as information, not as a failure."""
HOOK_ROW_LATE = "its row was not written in time"
"""Added to a give-up entry when the event's journal turn or action row was not written."""


def is_store(path: Path) -> bool:
    """Return whether ``path`` is a store folder (it holds ``memdir.toml``)."""
    return (path / MANIFEST_NAME).is_file()


def _read_gitdir_file(dot_git: Path) -> Path | None:
    try:
        content = dot_git.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return None
    if not content.startswith("gitdir:"):
        return None
    target = Path(content[len("gitdir:") :].strip())
    return target if target.is_absolute() else (dot_git.parent / target)


def git_main_root(directory: Path) -> Path | None:
    """Return the main worktree root of the repository whose ``.git`` is in ``directory``.

    Returns ``None`` when ``directory`` holds no ``.git``. For a linked worktree (a ``.git``
    file pointing at ``<repo>/.git/worktrees/<name>`` with a ``commondir``) this is the main
    repository's root; for a submodule it is ``directory`` itself.
    """
    dot_git = directory / ".git"
    if dot_git.is_dir():
        return directory
    if not dot_git.is_file():
        return None
    gitdir = _read_gitdir_file(dot_git)
    if gitdir is None:
        return directory
    commondir_file = gitdir / "commondir"
    try:
        common = (gitdir / commondir_file.read_text(encoding="utf-8").strip()).resolve()
    except OSError:
        return directory  # a submodule or a separate git dir: its own root
    return common.parent if common.name == ".git" else directory


def _ancestors(start: Path) -> list[Path]:
    start = start.resolve()
    return [start, *start.parents]


def discover_store(cwd: Path) -> Path | None:
    """Return the nearest existing store for ``cwd`` by DESIGN §2's rules, or ``None``."""
    for directory in _ancestors(cwd):
        here = directory / STORE_DIRNAME
        if is_store(here):
            return here
        main = git_main_root(directory)
        if main is not None and main != directory and is_store(main / STORE_DIRNAME):
            return main / STORE_DIRNAME
    return None


def project_root_for(cwd: Path) -> Path:
    """Return the directory where ``memdir init`` creates the store for ``cwd``.

    The main worktree root of the innermost repository holding ``cwd``; outside git, ``cwd``.
    """
    for directory in _ancestors(cwd):
        main = git_main_root(directory)
        if main is not None:
            return main
    return cwd.resolve()


def resolve_store(
    explicit: str | os.PathLike[str] | None = None,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
) -> Path:
    """Return the store a command acts on: ``--store``, then ``MEMDIR_STORE``, then discovery.

    Raises:
        StoreNotFoundError: no store is named or found; the message says how to create one.
    """
    environ = os.environ if env is None else env
    named = explicit if explicit not in (None, "") else environ.get("MEMDIR_STORE") or None
    if named is not None:
        path = Path(named).expanduser()
        if is_store(path):
            check_layout(path.resolve())
            return path.resolve()
        source = "--store" if explicit not in (None, "") else "MEMDIR_STORE"
        raise StoreNotFoundError(
            f"{path} is not a memdir store (no {MANIFEST_NAME}) named by {source}; "
            + _store_advice(path)
        )
    found = discover_store(cwd or Path.cwd())
    if found is None:
        raise StoreNotFoundError(
            "no memdir store here or in any parent directory; "
            "run `memdir init` in the project, or pass --store DIR"
        )
    check_layout(found)
    return found


def _store_advice(path: Path) -> str:
    """What to do about ``--store PATH`` that is not a store (case B60).

    ``--store`` names the ``.memdir`` folder itself; a folder that already holds files (a
    project) is pointed at its ``.memdir`` folder, never told to become a store itself, which
    would commit memory into the project's history. A missing or empty folder can become one.
    """
    inner = path / STORE_DIRNAME
    if is_store(inner):
        return f"did you mean --store {inner}? (--store names the {STORE_DIRNAME} folder)"
    try:
        occupied = path.is_dir() and any(path.iterdir())
    except OSError:
        occupied = True
    if not occupied or (path.name == STORE_DIRNAME and not (path / ".git").exists()):
        return f"create it with `memdir init --store {path}`"
    return (
        f"--store names the {STORE_DIRNAME} folder itself, not the project: to create the "
        f"store of a project at {path}, run `memdir init` there (it creates {inner}), then "
        f"pass --store {inner}"
    )


def user_store_dir(env: Mapping[str, str] | None = None) -> Path:
    """Return the user store folder: ``$MEMDIR_HOME`` or the platform's user data directory."""
    environ = os.environ if env is None else env
    if environ.get("MEMDIR_HOME"):
        return Path(environ["MEMDIR_HOME"]).expanduser()
    home = Path(environ.get("HOME") or Path.home())
    if sys.platform == "win32":  # pragma: no cover - Windows only
        base = Path(environ.get("LOCALAPPDATA") or home / "AppData" / "Local")
    elif sys.platform == "darwin":  # pragma: no cover - macOS only
        base = home / "Library" / "Application Support"
    else:
        base = Path(environ.get("XDG_DATA_HOME") or home / ".local" / "share")
    return base / "memdir"


def project_relative(
    project: Path, path: str, *, store_name: str = STORE_DIRNAME, base: Path | None = None
) -> str | None:
    """Return ``path`` relative to ``project``, or ``None`` when memdir must not record it.

    The one rule for "nothing outside the project is read or recorded" (DESIGN §10.4, §10.5):
    hooks (tool paths), the bug log (``--file``) and importers (file maps) all ask here.

    Args:
        project: The project root.
        path: A path as a tool, a person or a file named it: absolute, relative to ``base``
            (default the project), or a ``file://`` URL.
        store_name: The store folder's name inside the project (never recorded).
        base: The folder a relative ``path`` is relative to.

    Returns:
        The POSIX path inside the project, or ``None`` for: a path outside it (symlinks
        resolved), the project itself, anything inside the store, a secret file (``.env``, a
        key), a URL other than ``file://``, a path no file can have (NUL), and a Windows drive,
        UNC share or backslashed ``..`` on every platform (case B05).
    """
    if not path or "\x00" in path:
        return None
    if "://" in path:  # a URL: only a file URL names a file, by its path
        if not path.startswith("file://"):
            return None
        path = path[len("file://") :].removeprefix("localhost")
    windows = PureWindowsPath(path)
    if windows.drive or ("\\" in path and ".." in windows.parts):
        return None
    candidate = Path(path)
    if not candidate.is_absolute():
        candidate = (base or project) / candidate
    try:
        resolved = candidate.resolve()
        root = project.resolve()
    except (OSError, RuntimeError):
        return None
    if not resolved.is_relative_to(root):
        return None
    rel = resolved.relative_to(root).as_posix()
    if rel == "." or rel.split("/")[0] == store_name or is_secret_path(rel):
        return None
    if is_secret_path(candidate.name):
        return None
    return rel


def log_hook_error(store: Path | None, event: str, text: str) -> None:
    """Append a hook failure to ``state/hook-errors.log``; never raises.

    Without a store (the failure happened before one was found) the entry goes to the user
    store's state folder, so ``memdir health`` can still show it.
    """
    from memdir.kernel.base import appendlog  # errors are rare: import only when one happens
    from memdir.kernel.base.clock import now_iso
    from memdir.kernel.base.errors import LockTimeoutError
    from memdir.kernel.lang.redact import redact

    try:
        target_store = store if store is not None else user_store_dir()
        try:
            log = layout(target_store).in_state(HOOK_ERROR_LOG)
        except StoreLayoutError:  # never write through a link out of the store
            text = f"{text.rstrip()}\n(store {target_store} links outside itself)"
            log = state_dir(user_store_dir()) / HOOK_ERROR_LOG
        entry = f"--- {now_iso()} {event}\n{redact(text.rstrip())}\n"
        size = log.stat().st_size if log.exists() else 0
        if size > HOOK_ERROR_LOG_MAX_BYTES:
            appendlog.drop_head(log, size // 2, wait=appendlog.APPEND_WAIT_SECONDS)
        appendlog.append(log, entry.encode("utf-8"))
    except (OSError, LockTimeoutError, StoreLayoutError):
        pass  # the error log is best effort: a hook must never fail because of it
