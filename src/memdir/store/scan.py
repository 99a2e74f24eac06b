"""Opening a store, and keeping its index in step with the files on disk.

The CLI notices records edited, added or deleted by hand with a stat scan before it answers
(DESIGN §5): a file whose modification time, size or inode differs from what the index
recorded is read again with the tolerant codec; a file that cannot be read is quarantined
(out of recall, named by ``memdir health``) and never rewritten; a file that disappeared
leaves the index (case B22: ``git rm`` outside memdir). Hooks never scan.

``reindex`` rebuilds the index from ``records/`` and ``journal/`` alone, inside one
transaction, so readers see the old index until the new one is complete.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memdir.kernel.base.atomic import write_text_atomic
from memdir.kernel.base.errors import IndexFormatError, RecordParseError
from memdir.kernel.base.layout import StoreLayout, layout
from memdir.kernel.index import INDEX_NAME, FileStat, Index, IndexCorruptError
from memdir.kernel.storage import journal, manifest, paths
from memdir.kernel.storage.lifecycle import Handle, Reader
from memdir.kernel.storage.lock import store_lock
from memdir.kernel.storage.recordfile import Parsed
from memdir.records import codec

TYPE_CHECKING = False
if TYPE_CHECKING:
    from memdir.kernel.index.interface import IndexBackend

RECORDS_DIR = "records"


@dataclass(frozen=True, slots=True)
class ScanReport:
    """What one scan changed in the index."""

    indexed: int  # files read and indexed (new or changed)
    removed: int  # files gone from disk, dropped from the index
    quarantined: int  # files that could not be read
    turns: int = 0  # journal turns indexed

    def to_json(self) -> dict[str, int]:
        """Return the counts as a JSON object."""
        return {
            "indexed": self.indexed,
            "removed": self.removed,
            "quarantined": self.quarantined,
            "turns": self.turns,
        }


def record_files(store: Path, folders: dict[str, list[int]] | None = None) -> dict[str, Path]:
    """Return every record file under ``records/``: store-relative path → absolute path.

    Dot-prefixed files and folders (temporary files, editor swap files) are never records.
    Symlinks are not followed out of the store. ``folders`` gets each folder walked
    (store-relative): its modification time, taken before it was listed, and its entries.
    """
    return {rel: path for rel, (path, _) in _walk(store, folders).items()}


def _walk(
    store: Path, folders: dict[str, list[int]] | None = None
) -> dict[str, tuple[Path, tuple[int, int, int] | None]]:
    """:func:`record_files` with each file's (mtime_ns, size, ino), or None when unknown."""
    root = store / RECORDS_DIR
    found: dict[str, tuple[Path, tuple[int, int, int] | None]] = {}
    resolved_store: Path | None = None
    pending = [root]
    while pending:
        folder = pending.pop()
        try:
            before = os.stat(folder).st_mtime_ns
            entries = list(os.scandir(folder))
        except OSError:
            continue
        if folders is not None:
            folders[folder.relative_to(store).as_posix()] = [before, len(entries)]
        for entry in entries:
            name = entry.name
            if name.startswith("."):
                continue
            if entry.is_dir(follow_symlinks=False):
                pending.append(folder / name)
                continue
            if not name.endswith(".md"):
                continue
            path = folder / name
            if entry.is_symlink():
                if entry.is_dir():
                    continue
                resolved_store = resolved_store or store.resolve()
                if not path.resolve().is_relative_to(resolved_store):
                    continue
                found[path.relative_to(store).as_posix()] = (path, None)
                continue
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            rel = f"{RECORDS_DIR}/{path.relative_to(root).as_posix()}"
            found[rel] = (path, (st.st_mtime_ns, st.st_size, st.st_ino))
    return found


STAMP_NAME = StoreLayout.RECORDS_STAMP
"""``state/``: the record folders' modification times at the last full pass, and when."""
FULL_PASS_SECONDS = 600.0
"""A quick open still stats every record file when the last full pass is older than this."""
_verified: set[str] = set()
"""Stores whose index this process found in step with ``records/`` (see :func:`restamp`)."""


def _index_identity(store: Path) -> list[int] | None:
    try:
        st = os.stat(store / INDEX_NAME)
    except OSError:
        return None
    return [st.st_dev, st.st_ino]


def _read_stamp(store: Path) -> dict[str, Any] | None:
    try:
        data = json.loads((layout(store).state_path(STAMP_NAME)).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and isinstance(data.get("folders"), dict) else None


RACY_NS = 1_000_000_000
"""A folder changed this close to its stamp may have changed again within one tick of the
file system's clock: its entries are counted too (git's "racy" rule)."""


def _write_stamp(store: Path, folders: dict[str, list[int]], full_at: float) -> None:
    stamp = {
        "folders": folders,
        "full_at": full_at,
        "at": time.time_ns(),
        "index": _index_identity(store),
    }
    with contextlib.suppress(OSError):  # a read-only store just scans every time
        write_text_atomic(
            layout(store).in_state(STAMP_NAME), json.dumps(stamp, sort_keys=True), durable=False
        )


def _entries(folder: Path) -> int:
    return len(os.listdir(folder))  # a C loop: 3× a scandir counted in Python


def _folders_now(store: Path, stamp: dict[str, Any]) -> dict[str, list[int]] | None:
    """Return the stamp's folders as they are now: time, and entries where it matters."""
    now: dict[str, list[int]] = {}
    racy = int(stamp.get("at", 0)) - RACY_NS
    for name, seen in stamp["folders"].items():
        try:
            mtime = os.stat(store / name).st_mtime_ns
            if not isinstance(seen, list) or len(seen) != 2:
                return None
            count = seen[1] if mtime == seen[0] and mtime < racy else _entries(store / name)
        except OSError:
            return None
        now[name] = [mtime, count]
    return now


def _in_step(store: Path) -> bool:
    """Whether nothing under ``records/`` changed since the last pass (folder times only).

    Files added, deleted or renamed (by git, an editor that saves by renaming, ``cp``, ``rm``)
    change their folder's time (a folder changed within a tick of its stamp has its entries
    counted as well). A file rewritten in place does not: that is caught by
    :func:`verify_files` for the records an answer uses, and by the full pass every
    :data:`FULL_PASS_SECONDS`.
    """
    stamp = _read_stamp(store)
    if stamp is None or stamp.get("index") != _index_identity(store):
        return False
    full_at = stamp.get("full_at")
    if not isinstance(full_at, int | float) or not 0 <= time.time() - full_at < FULL_PASS_SECONDS:
        return False
    if _folders_now(store, stamp) != stamp["folders"]:
        return False
    # A folder written within a tick of the stamp had its entries counted just now; once its
    # time is a tick in the past, a fresh stamp lets later opens trust the time alone (else
    # every recall after a remember would count the 14,000 files of a kind folder).
    counted = [
        seen[0] for seen in stamp["folders"].values() if seen[0] >= stamp.get("at", 0) - RACY_NS
    ]
    if counted and max(counted) < time.time_ns() - RACY_NS:
        _write_stamp(store, stamp["folders"], float(full_at))
    return True


def restamp(store: Path) -> None:
    """After this process's own writes, record the record folders' state as in step.

    Only for a store this process found in step when it opened it; a hand edit made during
    the command itself is then left for the next full pass.
    """
    key = str(store)
    stamp = _read_stamp(store)
    if key not in _verified or stamp is None:
        return
    now = _folders_now(store, stamp)
    if now is None or now == stamp["folders"]:
        return
    changed = [name for name, seen in now.items() if stamp["folders"].get(name) != seen]
    while changed:  # a folder memdir just created (a record of a new kind) is watched too
        name = changed.pop()
        with contextlib.suppress(OSError):
            if os.stat(store / name).st_nlink == 2:  # POSIX: "." and its name, no subfolder
                continue  # (a kind folder of 100,000 records is not listed on every write)
        with contextlib.suppress(OSError), os.scandir(store / name) as listing:
            for entry in listing:
                sub = f"{name}/{entry.name}"
                fresh = sub not in now and not entry.name.startswith(".")
                if fresh and entry.is_dir(follow_symlinks=False):
                    now[sub] = [os.stat(store / sub).st_mtime_ns, _entries(store / sub)]
                    changed.append(sub)
    _write_stamp(store, now, float(stamp.get("full_at", 0)))


def verify_files(handle: Handle, record_ids: Iterable[str]) -> bool:
    """Re-read the files of ``record_ids`` that changed in place since the last full pass.

    Returns:
        Whether any was re-indexed (or is gone: then a full pass ran), so an answer built
        from them must be computed again.
    """
    store, index = handle.store, handle.index
    if index.read_only:
        return False
    stamp = _read_stamp(store)
    since = int(float(stamp.get("full_at", 0)) * 1e9) if stamp else 0
    seen: dict[str, list[int]] = stamp.get("seen", {}) if stamp else {}
    changed: list[tuple[str, Path, FileStat]] = []
    for record_id in record_ids:
        rel = index.get_path(record_id)
        if rel is None:
            continue
        path = store / rel
        try:
            st = os.stat(path)
        except OSError:
            scan_records(handle)
            return True
        mark = [st.st_mtime_ns, st.st_size, st.st_ino]
        if st.st_mtime_ns >= since - 2_000_000_000 and seen.get(rel) != mark:
            changed.append((rel, path, FileStat(*mark)))
            seen[rel] = mark
    if not changed:
        return False
    known = index.file_stats() if len(changed) > 3 else None
    stale = [item for item in changed if known is None or known.get(item[0], (None,))[0] != item[2]]
    _index_files(handle, stale, [])
    if stamp is not None:
        stamp["seen"] = seen
        with contextlib.suppress(OSError):
            write_text_atomic(
                layout(store).in_state(STAMP_NAME),
                json.dumps(stamp, sort_keys=True),
                durable=False,
            )
    return bool(stale)


def tolerant_reader(scope: str) -> Reader:
    """Return a :data:`memdir.kernel.storage.lifecycle.Reader` that uses the tolerant codec."""

    def read(path: Path, rel: str) -> Parsed:
        return codec.read_file(path, rel, scope)

    return read


def _problems(parsed: Parsed) -> list[dict[str, str]]:
    return [{"level": p.level, "code": p.code, "message": p.message} for p in parsed.warnings]


def scan_records(handle: Handle, *, quick: bool = False) -> ScanReport:
    """Bring the index up to date with ``records/`` by a stat scan; return what changed.

    With ``quick``, nothing is read when the record folders' times say nothing was added,
    removed or renamed since the last pass (see :func:`_in_step`): opening a store then costs
    the same at 100 records or 100,000.
    """
    store, index = handle.store, handle.index
    local = isinstance(index, Index)
    if quick and local and _in_step(store) and not index.is_empty():  # empty: a new index
        _verified.add(str(store))
        return ScanReport(0, 0, 0)
    started = time.time()
    folders: dict[str, list[int]] = {}
    on_disk = _walk(store, folders)
    known = index.file_stats()
    stale: list[tuple[str, Path, FileStat]] = []
    for rel, (path, mark) in on_disk.items():
        if mark is None:
            try:
                stat = FileStat.of(path)
            except OSError:
                continue
        else:
            stat = FileStat(*mark)
        if rel not in known or known[rel][0] != stat:
            stale.append((rel, path, stat))
    gone = [rel for rel in known if rel not in on_disk]
    quarantined = _index_files(handle, stale, gone) if stale or gone else 0
    if local:
        if quick or stale or gone:  # a plain read leaves every file as it was
            _write_stamp(store, folders, started)
        _verified.add(str(store))
    return ScanReport(len(stale) - quarantined, len(gone), quarantined)


def _index_files(handle: Handle, stale: list[tuple[str, Path, FileStat]], gone: list[str]) -> int:
    """Read ``stale`` files into the index and drop ``gone`` ones; return how many failed."""
    index = handle.index
    quarantined = 0
    with index.write():
        for rel in gone:
            index.forget_path(rel)
        for rel, path, stat in sorted(stale):
            try:
                parsed = codec.read_file(path, rel, handle.manifest.scope)
            except (RecordParseError, OSError) as exc:
                index.quarantine(
                    rel, stat, [{"level": "error", "code": "unreadable", "message": str(exc)}]
                )
                quarantined += 1
                continue
            index.upsert_record(parsed.record, rel, stat, _problems(parsed))
    return quarantined


def _remove_index_files(store: Path) -> None:
    # The quick-open stamp describes the index being removed; a new index file may even get
    # the old one's inode number, so the stamp goes first.
    with contextlib.suppress(FileNotFoundError):
        (layout(store).state_path(STAMP_NAME)).unlink()
    for suffix in ("", "-wal", "-shm"):
        with contextlib.suppress(FileNotFoundError):
            (store / (INDEX_NAME + suffix)).unlink()


def writable(store: Path) -> bool:
    """Whether this process may write the store (False on a read-only mount or without leave).

    Root passes permission bits but not a read-only mount; both are what ``access`` reports.
    """
    folders = [store / sub for sub in ("", StoreLayout.RECORDS, StoreLayout.STATE)]
    return all(os.access(folder, os.W_OK) for folder in folders if folder.exists())


def open_index(store: Path, *, rebuild_broken: bool = True) -> Index:
    """Open the store's index; a corrupt one is replaced by a fresh one (it is derived data).

    A store this process cannot write gets its index opened read-only (and never rebuilt).

    Raises:
        IndexFormatError: the index is from a newer memdir (only ``reindex`` replaces it).
        IndexCorruptError: it is corrupt and ``rebuild_broken`` is False.
    """
    if not writable(store):
        return Index(store, read_only=True)  # reads answer; nothing is written (case B57)
    try:
        return Index(store)
    except IndexCorruptError:
        if not rebuild_broken:
            raise
        with store_lock(store, "reindex"):
            _remove_index_files(store)
        sys.stderr.write(f"memdir: {store / INDEX_NAME} was unreadable; rebuilding it\n")
        return Index(store)


def open_backend(store: Path, uri: str = "") -> IndexBackend:
    """Open the index ``uri`` names (``[index] backend``): "" is the local SQLite index.

    A ``postgres://`` URI opens the team's PostgreSQL index (:mod:`memdir.pgindex`, imported
    only then: psycopg is an optional extra).

    Raises:
        UsageError: psycopg is not installed.
        StorageError: the PostgreSQL server cannot be reached.
    """
    if uri.startswith(manifest.POSTGRES_SCHEMES):
        from memdir.pgindex import open_postgres

        return open_postgres(store, uri)
    return open_index(store)


def fill(index: IndexBackend, store: Path, settings: manifest.Manifest) -> ScanReport:
    """Empty ``index`` and index every record and journal line again, in one transaction.

    Readers keep seeing the old contents until the new ones are committed.
    """
    with index.write():
        index.clear()
        handle = Handle(store, index, settings, read=tolerant_reader(settings.scope))
        report = scan_records(handle)
        turns = journal.sync_journal(index, store)
    return ScanReport(report.indexed, report.removed, report.quarantined, turns)


def open_handle(
    store: Path, *, scan: bool = True, backend: str | None = None, quick: bool = False
) -> Handle:
    """Open ``store`` for lifecycle operations, with its index brought up to date.

    ``quick`` skips the stat of every record file when the record folders say nothing was
    added, removed or renamed (:func:`scan_records`); recall and remember open stores so.

    The index is the manifest's ``[index] backend`` unless ``backend`` names another ("" or
    ``sqlite``: the local SQLite index; ``postgres://…``: a PostgreSQL index).

    Raises:
        StoreLayoutError: a store folder is a symlink leading out of the store.
        ManifestError: ``memdir.toml`` is missing or invalid.
        IndexFormatError: the store or index is from a newer memdir.
    """
    paths.check_layout(store)
    settings = manifest.load(store)
    uri = settings.index_backend if backend is None else backend
    index = open_backend(store, "" if uri == "sqlite" else uri)
    handle = Handle(store, index, settings, read=tolerant_reader(settings.scope))
    if scan and not index.read_only:
        scan_records(handle, quick=quick)
    return handle


def reindex(store: Path) -> ScanReport:
    """Rebuild the index from ``records/`` and ``journal/`` alone; return what it holds now.

    Raises:
        ManifestError: ``memdir.toml`` is missing or invalid.
        LockTimeoutError: another writer held the store.
    """
    settings = manifest.load(store)
    with store_lock(store, "reindex"):
        try:
            index = Index(store)
        except (IndexCorruptError, IndexFormatError):
            _remove_index_files(store)
            index = Index(store)
        try:
            # One transaction: a reindex killed at any instant leaves the old index whole, and
            # readers that never scan (hooks) never see it empty.
            return fill(index, store, settings)
        finally:
            index.close()
