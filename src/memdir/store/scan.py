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
import os
import sys
from dataclasses import dataclass
from pathlib import Path

from memdir.kernel.base.errors import IndexFormatError, RecordParseError
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


def record_files(store: Path) -> dict[str, Path]:
    """Return every record file under ``records/``: store-relative path → absolute path.

    Dot-prefixed files and folders (temporary files, editor swap files) are never records.
    Symlinks are not followed out of the store.
    """
    root = store / RECORDS_DIR
    found: dict[str, Path] = {}
    if not root.is_dir():
        return found
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        for name in files:
            if name.startswith(".") or not name.endswith(".md"):
                continue
            path = Path(folder) / name
            if path.is_symlink() and not path.resolve().is_relative_to(store.resolve()):
                continue
            found[path.relative_to(store).as_posix()] = path
    return found


def tolerant_reader(scope: str) -> Reader:
    """Return a :data:`memdir.kernel.storage.lifecycle.Reader` that uses the tolerant codec."""

    def read(path: Path, rel: str) -> Parsed:
        return codec.read_file(path, rel, scope)

    return read


def _problems(parsed: Parsed) -> list[dict[str, str]]:
    return [{"level": p.level, "code": p.code, "message": p.message} for p in parsed.warnings]


def scan_records(handle: Handle) -> ScanReport:
    """Bring the index up to date with ``records/`` by a stat scan; return what changed."""
    store, index = handle.store, handle.index
    on_disk = record_files(store)
    known = index.file_stats()
    stale: list[tuple[str, Path, FileStat]] = []
    for rel, path in on_disk.items():
        try:
            stat = FileStat.of(path)
        except OSError:
            continue
        if rel not in known or known[rel][0] != stat:
            stale.append((rel, path, stat))
    gone = [rel for rel in known if rel not in on_disk]
    if not stale and not gone:
        return ScanReport(0, 0, 0)
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
    return ScanReport(len(stale) - quarantined, len(gone), quarantined)


def _remove_index_files(store: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        with contextlib.suppress(FileNotFoundError):
            (store / (INDEX_NAME + suffix)).unlink()


def writable(store: Path) -> bool:
    """Whether this process may write the store (False on a read-only mount or without leave).

    Root passes permission bits but not a read-only mount; both are what ``access`` reports.
    """
    folders = [store / sub for sub in ("", "records", "state")]
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


def open_handle(store: Path, *, scan: bool = True, backend: str | None = None) -> Handle:
    """Open ``store`` for lifecycle operations, with its index brought up to date.

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
        scan_records(handle)
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
