"""Explicit requests a prompt hook could not store in time: kept, then completed (DESIGN §7/§8).

A "remember that…" in a prompt is the owner speaking. The prompt hook writes the requests it
found to ``state/explicit-spool/<name>.json`` before it tries to store them and removes the
file once every request was stored or refused. When the hook runs out of time (its budget,
the store lock held by another writer, a merge in progress, a kill), the file stays, and the
next hook run of any event, the observer or ``memdir health`` (:func:`drain`) stores each
request as the active ``owner`` record citing the prompt's journal line. A request stored
twice is a near-duplicate, which updates the first record, so a drain that races another is
harmless.

Imports: standard library and the kernel only (the lifecycle lazily, when there is work).
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from pathlib import Path

from memdir.kernel.base.atomic import write_text_atomic
from memdir.kernel.storage.paths import StoreLayout, layout

SPOOL_DIRNAME = StoreLayout.SPOOL
TRANSIENT = ("LockTimeoutError", "GitError", "GitStateError", "IndexColdError", "StorageError")
"""Errors after which a request is kept for the next run; any other refusal drops it."""

TYPE_CHECKING = False
if TYPE_CHECKING:
    from memdir.kernel.storage.lifecycle import Handle, Written


def spool_dir(store: Path) -> Path:
    """Return the folder of pending explicit requests (``state/explicit-spool``)."""
    return layout(store).in_state(SPOOL_DIRNAME)


def add(
    store: Path,
    requests: list[tuple[str, str]],
    *,
    host: str | None,
    session: str | None,
    citation: str,
) -> Path | None:
    """Keep ``requests`` (``(text, kind)`` pairs) until they are stored; return the file.

    Returns ``None`` when the file could not be written (a full or read-only disk): the
    caller then stores what it can as before.
    """
    path = spool_dir(store) / f"{time.time_ns():020d}-{os.getpid()}.json"
    entry = {
        "requests": [{"text": t, "kind": k} for t, k in requests],
        "host": host,
        "session": session,
        "journal": citation,
    }
    try:
        write_text_atomic(path, json.dumps(entry, ensure_ascii=False))
    except OSError:
        return None
    return path


def done(path: Path | None) -> None:
    """Remove a spool file whose requests were all stored or refused; never raise."""
    if path is not None:
        with contextlib.suppress(OSError):
            path.unlink(missing_ok=True)


def pending(store: Path) -> list[Path]:
    """Return the spool files waiting to be stored, oldest first (none when unreadable)."""
    try:
        return sorted(
            Path(e.path) for e in os.scandir(spool_dir(store)) if e.name.endswith(".json")
        )
    except OSError:
        return []


def transient(err: BaseException) -> bool:
    """Whether ``err`` is a passing obstacle (a held lock, git busy) rather than a refusal."""
    return isinstance(err, OSError) or type(err).__name__ in TRANSIENT


def drain(handle: Handle, deadline: float | None = None) -> list[Written]:
    """Store every pending request as the owner's active record; return what was written.

    Args:
        handle: A lifecycle handle of the store.
        deadline: A ``time.monotonic()`` instant after which no new file is started.

    Returns:
        The writes made (a request already stored gives its updated record).
    """
    files = pending(handle.store)
    if not files:
        return []
    from memdir.kernel.base.caller import Caller
    from memdir.kernel.base.errors import MemdirError
    from memdir.kernel.storage import lifecycle

    written: list[Written] = []
    for path in files:
        if deadline is not None and time.monotonic() >= deadline:
            break
        try:
            entry = json.loads(path.read_text(encoding="utf-8"))
            requests = [(str(r["text"]), str(r["kind"])) for r in entry["requests"]]
            host = entry.get("host") if isinstance(entry.get("host"), str) else None
            session = entry.get("session") if isinstance(entry.get("session"), str) else None
            citation = str(entry.get("journal") or "")
        except (ValueError, KeyError, TypeError):
            done(path)  # not one memdir wrote whole: nothing to act on
            continue
        except OSError:
            continue
        caller = Caller("owner", "hook", host, session)
        try:
            for text, kind in requests:
                try:
                    written.append(
                        lifecycle.remember(handle, text, kind=kind, caller=caller, journal=citation)
                    )
                except MemdirError as err:
                    if transient(err):
                        raise
        except (MemdirError, OSError):
            break  # still blocked: the file stays for the next run
        done(path)
    return written
