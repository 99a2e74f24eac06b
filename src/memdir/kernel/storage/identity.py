"""A project store's identity, and the read filter of a store (issue 10, mark 4).

**Identity.** ``project = "prj-…"`` in ``memdir.toml`` names the project a store belongs to.
Every project-scoped record memdir writes carries it (``project:`` in the front matter), and
every read filters on it (:class:`memdir.kernel.base.validity.Served`), so a record file copied
by hand from project A's store into project B's is not served in B.

It is written once, never recomputed: at ``memdir init``, or, for a store made before
identities existed, with that store's first write (:func:`adopt`, committed with the write).
Its value is derived from the project, not from a path: ``prj-`` and the first 16 hex digits of
the SHA-256 of the project's git root commits (sorted, one per line). So every clone of the
project, on every machine, mints the same identity: two teammates who ``memdir init`` before
their first ``memdir sync`` agree, and an old store upgraded on two machines adds the same
line to the shared manifest (git merges it cleanly). An absolute path would differ per clone
and machine and break a store shared through git. A project without git history (or a store
outside any project) gets a random identity. Two projects that share their root commit (a
fork) share an identity, which is the memory they share.

A record without ``project`` (written before identities, or by hand) belongs to the store it
sits in; memdir adds the store's identity the next time it writes that record.

**Read filter.** :func:`read_filter` builds a store's
:class:`~memdir.kernel.base.validity.Served`: its scope and identity, and the values its
tombstone ledger withholds (a tombstoned value that arrived by a hand edit is not served until
the owner lifts the tombstone).

Imports: standard library only; git (``gitio``) only when an identity is derived, so the
hooks' reads (:func:`read_filter`) never load it.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from memdir.kernel.base.validity import Served
from memdir.kernel.storage import audit
from memdir.kernel.storage.manifest import Manifest, project_line
from memdir.kernel.storage.paths import MANIFEST_NAME, STORE_DIRNAME

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from datetime import datetime

    from memdir.kernel.base.model import Record

_SCOPE_LINE = re.compile(r"^scope\s*=.*$", re.MULTILINE)
_TABLE_LINE = re.compile(r"^\s*\[", re.MULTILINE)


def project_root(store: Path) -> Path | None:
    """Return the project a store belongs to: the folder holding ``.memdir`` (else ``None``)."""
    return store.parent if store.name == STORE_DIRNAME else None


def from_roots(project: Path | None) -> str | None:
    """Return the identity the project's git root commits give, or ``None`` when it has none.

    Args:
        project: The project root, or ``None`` (a store outside any project).

    Returns:
        ``prj-`` and the first 16 hex digits of the SHA-256 of the root commits' ids (sorted,
        one per line); ``None`` outside git or before the first commit.
    """
    from memdir.kernel.base.errors import GitError
    from memdir.kernel.storage import gitio  # only writers and health: the hooks' reads never

    roots: list[str] = []
    if project is not None and project.is_dir():
        try:
            done = gitio.run_git(
                project, "rev-list", "--max-parents=0", "HEAD", check=False, discover=True
            )
        except GitError:
            done = None
        if done is not None and done.returncode == 0:
            roots = sorted(done.stdout.decode("ascii", "replace").split())
    if not roots:
        return None
    return "prj-" + hashlib.sha256("\n".join(roots).encode("ascii")).hexdigest()[:16]


def derive(project: Path | None) -> str:
    """Return a new identity for the project at ``project`` (see the module docstring).

    Args:
        project: The project root, or ``None`` (a store outside any project).

    Returns:
        ``prj-`` and 16 hex digits: from the project's git root commits when it has any
        (:func:`from_roots`), else random.
    """
    import secrets

    return from_roots(project) or "prj-" + secrets.token_hex(8)


def with_project(text: str, project: str) -> str:
    """Return the manifest ``text`` with a ``project = "…"`` line added (after ``scope``).

    The line goes after the ``scope`` line when that is a top-level key, else before the first
    table; every other byte is kept.
    """
    line = project_line(project)
    first_table = _TABLE_LINE.search(text)
    limit = first_table.start() if first_table else len(text)
    scope = _SCOPE_LINE.search(text, 0, limit)
    if scope is not None:
        at = scope.end() + 1 if scope.end() < len(text) else len(text)
        head = text[:at] if text[:at].endswith("\n") else text[:at] + "\n"
        return head + line + text[at:]
    head = text[:limit]
    if head and not head.endswith("\n"):
        head += "\n"
    return head + line + text[limit:]


def adopt(store: Path, settings: Manifest) -> tuple[str, str | None]:
    """Return the store's identity and, for a store that has none yet, its new manifest text.

    Called inside a write (the caller holds the store lock) so the line is committed with the
    write that first needs it. A user store has no identity: ``("", None)``.

    Raises:
        OSError: the manifest cannot be read.
    """
    if settings.scope != "project":
        return "", None
    if settings.project:
        return settings.project, None
    project = derive(project_root(store))
    text = (store / MANIFEST_NAME).read_text(encoding="utf-8")
    return project, with_project(text, project)


def stamped(record: Record, project: str) -> Record:
    """Return ``record`` carrying ``project`` when it is project-scoped and names none yet."""
    import dataclasses  # only writers pay for it (the hook path writes rarely)

    if not project or record.scope != "project" or record.project:
        return record
    return dataclasses.replace(record, project=project)


def read_filter(
    store: Path,
    settings: Manifest,
    *,
    at: datetime | None = None,
    past: bool = False,
    statuses: tuple[str, ...] = ("active",),
) -> Served:
    """Return what a reader of ``store`` may be served (:class:`Served`).

    Args:
        store: The store folder (its tombstone ledger is read).
        settings: Its manifest (scope and identity).
        at: The instant asked about (``None``: now).
        past: Asking about a past instant (``--as-of``).
        statuses: The statuses asked for.
    """
    return Served(
        scope=settings.scope,
        project=settings.project if settings.scope == "project" else None,
        at=at,
        past=past,
        statuses=statuses,
        withheld=frozenset(audit.tombstones(store)),
    )


def export_filter(store: Path, settings: Manifest, statuses: Iterable[str] = ()) -> Served:
    """Return the read filter an export of ``store`` queries with (JSON Lines and AMP alike).

    An export keeps to the store's scope and project (a file copied in from another store is
    not this store's to export) and holds every time (``timed=False``: an expired belief is
    history, not hidden). With ``statuses`` (``--status active``: what memdir believes) a
    tombstoned value that came back by hand is withheld, as every other read withholds it;
    without (every status: the owner's copy of the store) nothing is.

    Args:
        store: The store folder (its tombstone ledger is read when ``statuses`` is given).
        settings: Its manifest (scope and identity).
        statuses: The statuses to export; empty: all of them.
    """
    from memdir.kernel.base.model import STATUSES

    wanted = tuple(statuses)
    return Served(
        scope=settings.scope,
        project=settings.project if settings.scope == "project" else None,
        statuses=wanted or STATUSES,
        withheld=frozenset(audit.tombstones(store)) if wanted else frozenset(),
        timed=False,
    )
