"""The SQLite index: derived from records and journal, rebuildable at any time (DESIGN §10.1).

Never the source of truth: deleting ``index.sqlite`` loses nothing, and ``memdir reindex``
rebuilds it from ``records/`` and ``journal/`` alone. It exists so recall never reads Markdown
on the hot path (DESIGN §5). It is the only module that runs SQL against memdir's index
(:class:`~memdir.kernel.index.interface.IndexBackend` lists every query). The database runs
in WAL mode with a busy timeout, so readers never block the writer and concurrent writers wait
instead of failing with "database is locked" (case B15). Writes use ``BEGIN IMMEDIATE`` (a
``SAVEPOINT`` inside an open one) and are idempotent: two processes bringing the same file up
to date end with one copy of it. A failed ``COMMIT`` is rolled back, so no transaction is ever
left open for the next write.

Schema versions are ``PRAGMA user_version`` and the ordered ``MIGRATIONS`` (``mNNN_*``),
applied on open in one transaction each. An index written by a newer memdir is refused with
:class:`IndexFormatError` rather than altered; ``memdir reindex`` replaces it.

Imports: standard library only.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from memdir.kernel.base.errors import IndexFormatError, MemdirError, StorageError
from memdir.kernel.base.layout import StoreLayout, layout
from memdir.kernel.index.rows import (
    SERVED_COLUMNS,
    FileStat,
    record_columns,
    record_doc,
    record_links,
    served_columns,
    served_where,
    turn_terms,
)
from memdir.kernel.lang.text import fts_match, is_cjk

TYPE_CHECKING = False  # the hook path never imports typing or dataclasses (start-up cost)
if TYPE_CHECKING:
    from typing import Any

    from memdir.kernel.base.model import Record
    from memdir.kernel.base.validity import Served
    from memdir.kernel.index.interface import Problems, RecordRow, TurnRow

INDEX_NAME = "index.sqlite"
BUSY_TIMEOUT_SECONDS = 30.0
BACKUP_MAX_BYTES = 128 * 1024 * 1024
"""Indexes larger than this are not copied before a migration: rebuilding one (`memdir reindex`)
is the real safety net, and copying a gigabyte on every upgrade would be a cost with no gain."""
FTS_TOKENIZER = "unicode61 remove_diacritics 0"
"""Columns hold terms already normalised and stemmed by :func:`memdir.kernel.lang.text.terms`."""


def _run_script(conn: sqlite3.Connection, script: str) -> None:
    """Run DDL statement by statement (``executescript`` would commit our transaction)."""
    buffer = ""
    for line in script.splitlines(keepends=True):
        buffer += line
        if sqlite3.complete_statement(buffer):
            conn.execute(buffer)
            buffer = ""


def _m001_initial(conn: sqlite3.Connection) -> None:
    _run_script(
        conn,
        """
        CREATE TABLE meta (
            key   TEXT PRIMARY KEY,                -- setting name
            value TEXT NOT NULL                    -- its value, as text
        );
        CREATE TABLE records (
            rowid      INTEGER PRIMARY KEY,        -- joins records_fts.rowid
            id         TEXT NOT NULL UNIQUE,       -- record id (DESIGN §3)
            kind       TEXT NOT NULL,              -- fact, preference, rule, …
            status     TEXT NOT NULL,              -- candidate, active, superseded, …
            origin     TEXT NOT NULL,              -- owner, agent, observer, import
            scope      TEXT NOT NULL,              -- project or user
            importance INTEGER NOT NULL,           -- 1..10
            created_at TEXT NOT NULL,              -- ISO-8601 UTC
            updated_at TEXT NOT NULL,              -- ISO-8601 UTC; the recency factor reads it
            text       TEXT NOT NULL,              -- the belief, one line or more
            tokens     INTEGER NOT NULL,           -- terms in all its FTS columns (BM25's |D|)
            path       TEXT NOT NULL UNIQUE,       -- file, relative to the store
            doc        TEXT NOT NULL               -- the whole record as JSON (to_json + extra)
        );
        CREATE INDEX records_by_status ON records (status, kind, updated_at);
        CREATE VIRTUAL TABLE records_fts USING fts5(
            text,                                  -- index terms of the belief
            aliases,                               -- index terms of its aliases
            tags,                                  -- index terms of its tags
            body,                                  -- index terms of the longer prose
            tokenize = '{tokenizer}'
        );
        CREATE VIRTUAL TABLE records_terms USING fts5vocab(records_fts, 'row');
        CREATE TABLE fts_stats (
            name   TEXT PRIMARY KEY,               -- "records"
            docs   INTEGER NOT NULL,               -- rows in the FTS table (BM25's N)
            tokens INTEGER NOT NULL                -- terms in all of them (N x avgdl)
        );
        INSERT INTO fts_stats (name, docs, tokens) VALUES ('records', 0, 0);
        CREATE TABLE links (
            src TEXT NOT NULL,                     -- record id that links
            dst TEXT NOT NULL,                     -- record id linked to (may not exist)
            via TEXT NOT NULL,                     -- "links" (front matter) or "body" ([[id]])
            PRIMARY KEY (src, dst, via)
        );
        CREATE INDEX links_by_dst ON links (dst);
        CREATE TABLE files (
            path      TEXT PRIMARY KEY,            -- record file, relative to the store
            mtime_ns  INTEGER NOT NULL,            -- stat when last read; a change means re-read
            size      INTEGER NOT NULL,
            ino       INTEGER NOT NULL,
            record_id TEXT,                        -- the record it holds; NULL if quarantined
            state     TEXT NOT NULL,               -- "ok" or "quarantined"
            problems  TEXT NOT NULL DEFAULT '[]'   -- JSON list of {level, code, message}
        );
        CREATE TABLE journal_files (
            name     TEXT PRIMARY KEY,             -- journal/<name>, e.g. 2026-11-30.jsonl
            offset   INTEGER NOT NULL,             -- bytes indexed so far (complete lines only)
            ino      INTEGER NOT NULL,             -- a new inode means the file was replaced
            lines    INTEGER NOT NULL              -- lines indexed so far (for line numbers)
        );
        CREATE TABLE turns (
            rowid   INTEGER PRIMARY KEY,           -- joins turns_fts.rowid
            file    TEXT NOT NULL,                 -- journal file name
            line    INTEGER NOT NULL,              -- 1-based line number in that file
            offset  INTEGER NOT NULL,              -- byte offset of the line
            length  INTEGER NOT NULL,              -- bytes, newline included
            session TEXT NOT NULL,                 -- session id ("" when none)
            at      TEXT NOT NULL,                 -- ISO-8601 UTC
            who     TEXT NOT NULL,                 -- speaker: user, assistant, a name
            text    TEXT NOT NULL,                 -- the turn's text (already redacted)
            ref     TEXT                           -- source id of an imported turn, for dedup
        );
        CREATE INDEX turns_by_session ON turns (session, rowid);
        CREATE INDEX turns_by_ref ON turns (ref) WHERE ref IS NOT NULL;

        CREATE VIRTUAL TABLE turns_fts USING fts5(
            text,                                  -- index terms of the speaker and the turn
            date,                                  -- index terms of its month ("May 2023")
            context,                               -- index terms of the 2 turns either side
            tokenize = '{tokenizer}'
        );

        """.replace("{tokenizer}", FTS_TOKENIZER),
    )


OperationalError = sqlite3.OperationalError
"""What a busy, full or read-only database raises (see :func:`operational_cause`)."""
COLUMN_WEIGHTS = (4.0, 3.0, 2.0, 1.0)
"""FTS5 ``bm25()`` weights of the records_fts columns: text, aliases, tags, body (the same as
:data:`memdir.kernel.index.recall.COLUMN_WEIGHTS`)."""
POOL_SCAN = 4
"""The record pool is drawn from FTS5's best ``POOL_SCAN × size`` matches (see
:meth:`Index.record_pool`)."""


def operational_cause(error: BaseException) -> str:
    """Return what an :data:`OperationalError` means for a person ("the disk is full"…)."""
    code = (getattr(error, "sqlite_errorcode", None) or 0) & 0xFF
    return {
        sqlite3.SQLITE_FULL: "the disk is full",
        sqlite3.SQLITE_READONLY: "the index cannot be written (is the store read-only?)",
        sqlite3.SQLITE_IOERR: "the index cannot be read or written (I/O error)",
    }.get(code, "the index is busy or unavailable")


def _m002_turn_frequencies(conn: sqlite3.Connection) -> None:
    """Count, per term, the journal turns whose text or month holds it (journal search's pruning).

    FTS5 can only count a term's rows by reading its whole posting list, which takes tens of
    milliseconds for a common word in a million turns; this table answers in microseconds.
    Existing turns are counted here, so an index built before this migration is complete after it.
    """
    _run_script(
        conn,
        """
        CREATE TABLE IF NOT EXISTS turn_df (
            term TEXT PRIMARY KEY,                 -- an index term (normalised, stemmed)
            rows INTEGER NOT NULL                  -- journal turns whose text holds it
        ) WITHOUT ROWID;
        """,
    )
    from memdir.kernel.lang.text import month_words, terms

    counts: dict[str, int] = {}
    for text, at in conn.execute("SELECT text, at FROM turns"):
        for term in {*terms(text), *terms(month_words(at))}:
            counts[term] = counts.get(term, 0) + 1
    conn.execute("DELETE FROM turn_df")
    conn.executemany("INSERT INTO turn_df (term, rows) VALUES (?, ?)", counts.items())


def _m003_served_columns(conn: sqlite3.Connection) -> None:
    """Add the columns the read filter's ``WHERE`` reads, filled from each record's document.

    Issue 10: scope with project identity, valid time, tombstoned values.
    ``project`` (NULL: the record names none), ``valid_start``/``valid_end`` (instants as
    :func:`memdir.kernel.base.validity.bound_text`; NULL is open), ``by_time`` (1: superseded
    with a ``valid_until``), ``value_key`` (:func:`memdir.kernel.base.valuekey.value_key`).
    """
    have = {row[1] for row in conn.execute("PRAGMA table_info(records)")}
    for column, kind in zip(
        SERVED_COLUMNS,
        ("TEXT", "TEXT", "TEXT", "INTEGER NOT NULL DEFAULT 0", "TEXT"),
        strict=True,
    ):
        if column not in have:  # (an index a test turned back to an older version has them)
            conn.execute(f"ALTER TABLE records ADD COLUMN {column} {kind}")
    rows = conn.execute("SELECT rowid, doc FROM records").fetchall()
    conn.executemany(
        "UPDATE records SET project = ?, valid_start = ?, valid_end = ?, by_time = ?,"
        " value_key = ? WHERE rowid = ?",
        [(*served_columns(json.loads(doc)), rowid) for rowid, doc in rows],
    )


MIGRATIONS: tuple[tuple[int, Callable[[sqlite3.Connection], None]], ...] = (
    (1, _m001_initial),
    (2, _m002_turn_frequencies),
    (3, _m003_served_columns),
)
LATEST_VERSION = MIGRATIONS[-1][0]


class IndexCorruptError(MemdirError):
    """``index.sqlite`` is not a readable SQLite database; ``memdir reindex`` rebuilds it."""

    code = "index_corrupt"


def _disk_full(path: Path) -> bool:
    """Whether the file system holding ``path`` has no space left (SQLite then says "I/O")."""
    try:
        found = os.statvfs(path.parent)
    except (OSError, AttributeError):  # pragma: no cover - statvfs is POSIX only
        return False
    return found.f_bavail == 0


def _open_error(path: Path, exc: sqlite3.DatabaseError) -> Exception:
    """Return the error to raise for ``exc``, met while opening the index at ``path``.

    Only a file that is not a database, or a damaged one, is corrupt (and may be rebuilt). A
    full disk, a read-only folder or an I/O error says nothing about the file: it is reported
    as a :class:`StorageError` naming the cause, and the index is left alone. A busy database
    is re-raised as is (the caller's busy timeout already ran out).
    """
    code = (getattr(exc, "sqlite_errorcode", None) or 0) & 0xFF
    if code in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED):
        return exc
    if code == sqlite3.SQLITE_FULL or (code == sqlite3.SQLITE_IOERR and _disk_full(path)):
        return StorageError(f"cannot write the index {path}: the disk is full ({exc})")
    if code in (sqlite3.SQLITE_READONLY, sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_PERM):
        return StorageError(
            f"cannot open the index {path} for writing ({exc}); is the store read-only?"
        )
    if code == sqlite3.SQLITE_IOERR:
        return StorageError(f"cannot read or write the index {path}: I/O error ({exc})")
    return IndexCorruptError(f"{path} is not a readable index ({exc}); run `memdir reindex`")


SQLITE_PATH_BYTES = 512
"""SQLite's longest file name on Unix (``MAX_PATHNAME``), the database's journal suffix included."""
JOURNAL_SUFFIX_BYTES = len("-journal")


def max_index_path_bytes() -> int:
    """Return the longest index path SQLite opens here (its journal's name must fit too)."""
    return SQLITE_PATH_BYTES - JOURNAL_SUFFIX_BYTES


def check_index_path(path: Path) -> None:
    """Refuse an index path SQLite cannot open, naming the reason (case B53).

    Args:
        path: The index file's absolute path.

    Raises:
        StorageError: the path is longer than :func:`max_index_path_bytes`.
    """
    size = len(os.fsencode(path))
    if size > max_index_path_bytes():
        raise StorageError(
            f"the index path {path} is {size} bytes, over the {max_index_path_bytes()} bytes "
            "SQLite can open; move the project to a shorter path, or point --store / "
            "MEMDIR_STORE at a store with a shorter path"
        )


def _open_read_only(path: Path, busy_timeout_seconds: float) -> sqlite3.Connection:
    """Open the index of a store that cannot be written (a read-only mount, no permission).

    ``mode=ro`` first: it reads a write-ahead log the last writer left. When SQLite cannot
    even create the log's shared-memory file there, the file is opened ``immutable`` (no
    locks, no side files); memdir then writes nothing, so nothing changes it meanwhile.

    Raises:
        StorageError: the index cannot be read (missing, or not a database).
        IndexFormatError: it needs a migration, which a read-only store cannot take.
    """
    from urllib.parse import quote

    if not path.is_file():
        raise StorageError(
            f"the store is read-only and has no index ({path}); run `memdir reindex` where it "
            "can be written"
        )
    base = "file:" + quote(str(path))
    last: sqlite3.Error | None = None
    for query in ("?mode=ro", "?mode=ro&immutable=1"):
        try:
            conn = sqlite3.connect(
                base + query,
                uri=True,
                timeout=busy_timeout_seconds,
                isolation_level=None,
                check_same_thread=False,
            )
            version = conn.execute("PRAGMA user_version").fetchone()[0]
        except sqlite3.Error as exc:
            last = exc
            continue
        if version != LATEST_VERSION:
            conn.close()
            raise IndexFormatError(
                f"{path} is index format {version}, this memdir reads {LATEST_VERSION}, and the "
                "store is read-only, so it cannot be migrated; run `memdir reindex` where the "
                "store can be written"
            )
        return conn
    raise StorageError(f"cannot read the index {path} ({last})")


def filter_clause(
    *,
    kinds: Iterable[str] = (),
    statuses: Iterable[str] = (),
    table: str = "",
    served: Served | None = None,
) -> tuple[str, list[Any]]:
    """Return ``(" AND kind IN (?,…) AND status IN (?,…)", params)`` for the given filters.

    ``table`` prefixes the columns (``"r."``). Only ``?`` placeholders enter the SQL text.
    ``served`` adds the read filter (:func:`memdir.kernel.index.rows.served_where`: status,
    scope and project, valid time, tombstoned values) and takes the place of ``statuses``.
    """
    where, params = "", []
    wanted = [("kind", list(kinds))]
    if served is None:
        wanted.append(("status", list(statuses)))
    for column, values in wanted:
        if values:
            where += f" AND {table}{column} IN ({','.join('?' * len(values))})"
            params += values
    if served is not None:
        more, extra = served_where(served, table=table)
        where += more
        params += extra
    return where, params


_POOL_COLUMNS = (
    "r.rowid, r.doc, r.importance, r.updated_at, r.tokens,"
    " records_fts.text, records_fts.aliases, records_fts.tags, records_fts.body"
)


class Index:
    """The SQLite index of a store (an :class:`~memdir.kernel.index.interface.IndexBackend`).

    Use as a context manager or call :meth:`close`.
    """

    def __init__(
        self,
        store: Path,
        *,
        path: Path | None = None,
        busy_timeout_seconds: float = BUSY_TIMEOUT_SECONDS,
        read_only: bool = False,
    ) -> None:
        """Open (creating and migrating as needed) the index of ``store``.

        ``busy_timeout_seconds`` bounds every wait for another writer (hooks pass what is left
        of their deadline).

        Raises:
            IndexFormatError: the index was written by a newer memdir.
            IndexCorruptError: the file is not a SQLite database, or is damaged.
            StorageError: the disk is full, the folder read-only, or reading failed.
            sqlite3.OperationalError: another writer held the database past the busy timeout.
        """
        self.store = store
        self.path = path or store / INDEX_NAME
        self.read_only = read_only
        self._savepoints = 0
        check_index_path(self.path)
        if read_only:
            self._conn = _open_read_only(self.path, busy_timeout_seconds)
            return
        try:
            self._conn = sqlite3.connect(
                self.path,
                timeout=busy_timeout_seconds,
                isolation_level=None,
                check_same_thread=False,
            )
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA synchronous=NORMAL")
            self._migrate()
        except sqlite3.DatabaseError as exc:
            self._close_quietly()
            raise _open_error(self.path, exc) from exc
        except BaseException:  # a newer index, a failed backup: nothing is left open
            self._close_quietly()
            raise

    @property
    def in_transaction(self) -> bool:
        """Whether a transaction is open on this connection."""
        return self._conn.in_transaction

    def _close_quietly(self) -> None:
        with contextlib.suppress(AttributeError, sqlite3.Error):
            self._conn.close()

    def _migrate(self) -> None:
        version = self._conn.execute("PRAGMA user_version").fetchone()[0]
        if version > LATEST_VERSION:
            raise IndexFormatError(
                f"{self.path} was written by a newer memdir (index format {version}, this "
                f"one reads {LATEST_VERSION}); upgrade memdir or run `memdir reindex`"
            )
        if 0 < version < LATEST_VERSION:
            self._backup(version)
        for number, migrate in MIGRATIONS:
            if number <= version:
                continue
            with self.write():
                current = self._conn.execute("PRAGMA user_version").fetchone()[0]
                if current >= number:
                    continue  # another process migrated while we waited
                migrate(self._conn)
                self._conn.execute(f"PRAGMA user_version = {number}")

    def _backup(self, version: int) -> None:
        """Copy the index aside before migrating it (case B40): ``state/backups/index-vN.sqlite``.

        The index is derived data, so this is a convenience for diagnosing an upgrade, not the
        safety net: ``memdir reindex`` rebuilds any index from the records and the journal.
        The copy is made under a temporary name and renamed, so the backup is never half a file;
        a temporary copy a killed process left is replaced, never mistaken for the index.

        Raises:
            StorageError: the copy cannot be made (disk full, read-only); the index is unchanged.
        """
        folder = layout(self.store).state_path(StoreLayout.BACKUPS)
        target = folder / f"index-v{version}.sqlite"
        if target.exists() or self.path.stat().st_size > BACKUP_MAX_BYTES:
            return  # kept by an earlier, interrupted migration; or too big to be worth a copy
        tmp = folder / f".{target.name}.tmp"
        try:
            folder.mkdir(parents=True, exist_ok=True)
            for suffix in ("", "-journal", "-wal", "-shm"):  # a copy a killed process left
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(f"{tmp}{suffix}")
            copy = sqlite3.connect(tmp)
            try:
                self._conn.backup(copy)
            finally:
                copy.close()
            tmp.replace(target)
        except (OSError, sqlite3.Error) as exc:
            raise StorageError(
                f"cannot back up the index to {target} before upgrading it ({exc}); "
                "nothing was changed"
            ) from exc

    def close(self) -> None:
        """Close the connection."""
        self._conn.close()

    def __enter__(self) -> Index:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def write(self) -> Iterator[None]:
        """Run the body in one ``BEGIN IMMEDIATE`` transaction; roll back on any exception.

        Inside an open transaction the body runs in a ``SAVEPOINT``: its failure undoes only its
        own changes (and propagates), and its success is committed with the outer transaction.
        So a caller can make several steps that each write (``reindex``: empty the tables, scan
        the records, sync the journal) one transaction: a process killed half-way leaves the
        index as it was. A ``COMMIT`` that fails (a deferred constraint, an I/O error) is
        rolled back before the error propagates: the next write never joins a dead transaction.
        """
        conn = self._conn
        nested = conn.in_transaction
        if nested:
            self._savepoints += 1
            name = f"memdir_{self._savepoints}"
            try:
                conn.execute(f"SAVEPOINT {name}")
                try:
                    yield
                except BaseException:
                    if conn.in_transaction:
                        conn.execute(f"ROLLBACK TO {name}")
                        conn.execute(f"RELEASE {name}")
                    raise
                conn.execute(f"RELEASE {name}")
            finally:
                self._savepoints -= 1
            return
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        try:
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise

    # --- records: writes ---------------------------------------------------------------------

    def upsert_record(self, record: Record, path: str, stat: FileStat, problems: Problems) -> None:
        """Index ``record`` read from ``path`` (call inside :meth:`write`).

        A different file already holding the same id wins (first come); this file is then
        quarantined with a ``duplicate_id`` problem.
        """
        conn = self._conn
        holder = conn.execute("SELECT path FROM records WHERE id = ?", (record.id,)).fetchone()
        if holder is not None and holder[0] != path:
            self.quarantine(
                path,
                stat,
                [
                    *problems,
                    {
                        "level": "error",
                        "code": "duplicate_id",
                        "message": f"id {record.id} is also used by {holder[0]}",
                    },
                ],
            )
            return
        self._remove_path(path)
        columns = record_columns(record)
        tokens = sum(len(column.split()) for column in columns)
        doc = record_doc(record)
        cursor = conn.execute(
            "INSERT INTO records (id, kind, status, origin, scope, importance, created_at,"
            " updated_at, text, tokens, path, doc, project, valid_start, valid_end, by_time,"
            " value_key) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (
                record.id,
                record.kind,
                record.status,
                record.origin,
                record.scope,
                record.importance,
                record.created_at,
                record.updated_at or record.created_at,
                record.text,
                tokens,
                path,
                json.dumps(doc, ensure_ascii=False),
                *served_columns(doc),
            ),
        )
        conn.execute(
            "INSERT INTO records_fts (rowid, text, aliases, tags, body) VALUES (?,?,?,?,?)",
            (cursor.lastrowid, *columns),
        )
        conn.execute(
            "UPDATE fts_stats SET docs = docs + 1, tokens = tokens + ? WHERE name = 'records'",
            (tokens,),
        )
        conn.executemany(
            "INSERT OR IGNORE INTO links (src, dst, via) VALUES (?,?,?)",
            [(record.id, dst, via) for dst, via in record_links(record)],
        )
        conn.execute(
            "INSERT OR REPLACE INTO files (path, mtime_ns, size, ino, record_id, state, problems)"
            " VALUES (?,?,?,?,?,?,?)",
            (path, stat.mtime_ns, stat.size, stat.ino, record.id, "ok", json.dumps(problems)),
        )

    def quarantine(self, path: str, stat: FileStat, problems: Problems) -> None:
        """Mark ``path`` unreadable: out of recall, listed by ``health`` (inside :meth:`write`)."""
        self._remove_path(path)
        self._conn.execute(
            "INSERT OR REPLACE INTO files (path, mtime_ns, size, ino, record_id, state, problems)"
            " VALUES (?,?,?,?,NULL,'quarantined',?)",
            (path, stat.mtime_ns, stat.size, stat.ino, json.dumps(problems)),
        )

    def _remove_path(self, path: str) -> None:
        conn = self._conn
        row = conn.execute(
            "SELECT rowid, id, tokens FROM records WHERE path = ?", (path,)
        ).fetchone()
        if row is not None:
            conn.execute("DELETE FROM records_fts WHERE rowid = ?", (row[0],))
            conn.execute("DELETE FROM records WHERE rowid = ?", (row[0],))
            conn.execute("DELETE FROM links WHERE src = ?", (row[1],))
            conn.execute(
                "UPDATE fts_stats SET docs = docs - 1, tokens = tokens - ? WHERE name = 'records'",
                (row[2],),
            )

    def forget_path(self, path: str) -> None:
        """Drop everything indexed from ``path`` (the file is gone; inside :meth:`write`)."""
        self._remove_path(path)
        self._conn.execute("DELETE FROM files WHERE path = ?", (path,))

    def clear(self) -> None:
        """Empty every table (``reindex`` refills them in the same transaction; inside write())."""
        for table in (
            "records_fts",
            "records",
            "links",
            "files",
            "turns_fts",
            "turns",
            "journal_files",
            "turn_df",
        ):
            self._conn.execute(f"DELETE FROM {table}")  # noqa: S608 - fixed table names
        self._conn.execute("UPDATE fts_stats SET docs = 0, tokens = 0")

    def scrub(self) -> None:
        """Physically remove deleted text: merge FTS segments, VACUUM, truncate the WAL.

        FTS5 keeps deleted tokens in its segments until they are merged, and SQLite keeps
        deleted rows in free pages; ``purge`` calls this so erased text leaves the file too.
        """
        self._conn.execute("INSERT INTO records_fts (records_fts) VALUES ('optimize')")
        self._conn.execute("INSERT INTO turns_fts (turns_fts) VALUES ('optimize')")
        self._conn.execute("PRAGMA secure_delete = ON")
        self._conn.execute("VACUUM")
        self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    # --- records: reads ----------------------------------------------------------------------

    def file_stats(self) -> dict[str, tuple[FileStat, str]]:
        """Return every known record file's last stat and state (``ok``/``quarantined``)."""
        rows = self._conn.execute("SELECT path, mtime_ns, size, ino, state FROM files")
        return {r[0]: (FileStat(r[1], r[2], r[3]), r[4]) for r in rows}

    def file_problems(self) -> list[tuple[str, str, Problems]]:
        """Return ``(path, state, problems)`` for every file that has any problem."""
        rows = self._conn.execute(
            "SELECT path, state, problems FROM files WHERE state != 'ok' OR problems != '[]'"
            " ORDER BY path"
        )
        return [(r[0], r[1], json.loads(r[2])) for r in rows]

    def is_empty(self) -> bool:
        """Whether the index knows no record and no record file (it was never built)."""
        for table in ("records", "files"):
            if self._conn.execute(f"SELECT 1 FROM {table} LIMIT 1").fetchone() is not None:  # noqa: S608
                return False
        return True

    def get_doc(self, record_id: str) -> dict[str, Any] | None:
        """Return the indexed document of ``record_id``, or ``None``."""
        row = self._conn.execute("SELECT doc FROM records WHERE id = ?", (record_id,)).fetchone()
        return json.loads(row[0]) if row else None

    def get_path(self, record_id: str) -> str | None:
        """Return the store-relative file of ``record_id``, or ``None``."""
        row = self._conn.execute("SELECT path FROM records WHERE id = ?", (record_id,)).fetchone()
        return row[0] if row else None

    def list_docs(
        self,
        *,
        kinds: Iterable[str] = (),
        statuses: Iterable[str] = (),
        limit: int | None = None,
        newest_first: bool = True,
        served: Served | None = None,
    ) -> list[dict[str, Any]]:
        """Return indexed records filtered by kind and status, newest ``updated_at`` first.

        Times have whole seconds, so records written within one second are ordered by when
        they were created: ``created_at``, then the id's time part (milliseconds, after the
        kind prefix: :mod:`memdir.kernel.base.ids`), then the id. ``served``: only what the
        read filter serves, decided in the query (it replaces ``statuses``;
        :func:`memdir.kernel.index.rows.served_where`).
        """
        where, params = filter_clause(kinds=kinds, statuses=statuses, served=served)
        order = "DESC" if newest_first else "ASC"
        sql = f"SELECT doc FROM records WHERE 1=1{where}"  # noqa: S608 - placeholders only
        sql += (
            f" ORDER BY updated_at {order}, created_at {order},"
            f" substr(id, instr(id, '-') + 1) {order}, id {order}"
        )
        if limit is not None:
            sql += " LIMIT ?"
            params.append(limit)
        return [json.loads(row[0]) for row in self._conn.execute(sql, params)]

    def count_by(self, column: str, *, status: str | None = None) -> dict[str, int]:
        """Return record counts grouped by ``kind``, ``status`` or ``origin``.

        ``status`` counts only the records of that status (e.g. ``"active"``).

        Raises:
            ValueError: ``column`` is not one of the three.
        """
        if column not in {"kind", "status", "origin"}:
            raise ValueError(column)
        where, args = ("WHERE status = ?", (status,)) if status else ("", ())
        rows = self._conn.execute(
            f"SELECT {column}, count(*) FROM records {where} GROUP BY {column}",  # noqa: S608 - column is checked above
            args,
        )
        return {r[0]: r[1] for r in rows}

    def links_of(self, record_id: str) -> list[tuple[str, str, str]]:
        """Return ``(src, dst, via)`` for every link into or out of ``record_id``."""
        rows = self._conn.execute(
            "SELECT src, dst, via FROM links WHERE src = ? OR dst = ? ORDER BY src, dst",
            (record_id, record_id),
        )
        return [(r[0], r[1], r[2]) for r in rows]

    def all_links(self) -> list[tuple[str, str, str]]:
        """Return every link as ``(src, dst, via)``."""
        return [(r[0], r[1], r[2]) for r in self._conn.execute("SELECT src, dst, via FROM links")]

    def record_statuses(self) -> dict[str, str]:
        """Return id → status for every indexed record."""
        return {r[0]: r[1] for r in self._conn.execute("SELECT id, status FROM records")}

    def record_texts(self, *, statuses: Iterable[str] = ()) -> list[tuple[str, str, str, str]]:
        """Return ``(id, kind, status, text)`` of every record (of these statuses), by rowid."""
        where, params = filter_clause(statuses=statuses)
        rows = self._conn.execute(
            f"SELECT id, kind, status, text FROM records WHERE 1=1{where} ORDER BY rowid",  # noqa: S608 - placeholders only
            params,
        )
        return [(r[0], r[1], r[2], r[3]) for r in rows]

    def record_frequencies(self, terms: list[str]) -> dict[str, int]:
        """Return how many records hold each term (a 1-character CJK term: its bigrams)."""
        found: dict[str, int] = {}
        for term in terms:
            if len(term) == 1 and is_cjk(term):
                row = self._conn.execute(
                    "SELECT coalesce(sum(doc), 0) FROM records_terms WHERE term >= ? AND term < ?",
                    (term, term + "\U0010ffff"),
                ).fetchone()
            else:
                row = self._conn.execute(
                    "SELECT doc FROM records_terms WHERE term = ?", (term,)
                ).fetchone()
            found[term] = int(row[0]) if row else 0
        return found

    def record_totals(self) -> tuple[int, int]:
        """Return ``(records, terms in all of them)``: BM25's N and N × avgdl."""
        row = self._conn.execute(
            "SELECT docs, tokens FROM fts_stats WHERE name = 'records'"
        ).fetchone()
        return int(row[0]), int(row[1])

    def record_pool(
        self,
        terms: list[str],
        kinds: list[str],
        statuses: list[str],
        size: int,
        served: Served | None = None,
    ) -> list[RecordRow]:
        """Return the ``size`` rows of the wanted kinds and statuses that FTS5's BM25 ranks first.

        ``served`` puts the read filter in the ``WHERE`` (in place of ``statuses``), so what
        it leaves out never takes a place in the pool.

        FTS5 ranks its matches alone first (a bounded sort in C), and only the best
        ``POOL_SCAN × size`` are joined to ``records`` to filter them: joining every match before
        ranking cost 2.5x as much at 100,000 records (benchmarks/scale.py). The result is exact:
        when fewer than ``size`` of those pass the filter and FTS5 matched more rows than it
        ranked (a store full of superseded records), the full join runs instead.
        """
        match = fts_match(terms)
        if not match:
            return []
        where, filters = filter_clause(kinds=kinds, statuses=statuses, table="r.", served=served)
        scan = POOL_SCAN * size
        # Only fixed column names and "?" placeholders are interpolated below.
        fast = (
            "WITH ranked AS (SELECT rowid, bm25(records_fts, ?, ?, ?, ?) AS score FROM records_fts"  # noqa: S608
            " WHERE records_fts MATCH ? ORDER BY score LIMIT ?)"
            f" SELECT {_POOL_COLUMNS} FROM ranked JOIN records r ON r.rowid = ranked.rowid"
            " JOIN records_fts ON records_fts.rowid = ranked.rowid"
            f" WHERE 1{where} ORDER BY ranked.score LIMIT ?"
        )
        rows = self._conn.execute(fast, [*COLUMN_WEIGHTS, match, scan, *filters, size]).fetchall()
        if len(rows) == size or not self._matches(match, scan + 1):
            return rows
        exact = (
            f"SELECT {_POOL_COLUMNS} FROM records_fts JOIN records r ON r.rowid = records_fts.rowid"  # noqa: S608
            f" WHERE records_fts MATCH ?{where} ORDER BY bm25(records_fts, ?, ?, ?, ?) LIMIT ?"
        )
        return self._conn.execute(exact, [match, *filters, *COLUMN_WEIGHTS, size]).fetchall()

    def _matches(self, match: str, at_least: int) -> bool:
        """Whether the FTS search matches at least ``at_least`` rows (it stops counting there)."""
        row = self._conn.execute(
            "SELECT count(*) FROM (SELECT 1 FROM records_fts WHERE records_fts MATCH ? LIMIT ?)",
            (match, at_least),
        ).fetchone()
        return bool(row[0] >= at_least)

    def similar_candidates(
        self, terms: list[str], text: str, statuses: list[str], size: int
    ) -> list[dict[str, Any]]:
        """Return the documents a near-duplicate check compares ``text`` with.

        With terms, the ``size`` best matches by BM25 (weights 4, 3, 2, 1); without (emoji,
        symbols), the records whose text is exactly ``text``.
        """
        marks = ",".join("?" * len(statuses))
        if terms:
            rows = self._conn.execute(
                "SELECT r.doc FROM records_fts JOIN records r ON r.rowid = records_fts.rowid"  # noqa: S608
                f" WHERE records_fts MATCH ? AND r.status IN ({marks})"
                " ORDER BY bm25(records_fts, 4, 3, 2, 1) LIMIT ?",
                (fts_match(terms), *statuses, size),
            ).fetchall()
        else:
            rows = self._conn.execute(
                f"SELECT doc FROM records WHERE status IN ({marks}) AND text = ?",  # noqa: S608
                (*statuses, text),
            ).fetchall()
        return [json.loads(row[0]) for row in rows]

    # --- journal -----------------------------------------------------------------------------

    def journal_position(self, name: str) -> tuple[int, int, int] | None:
        """Return ``(offset, inode, lines)`` indexed so far of ``journal/<name>``, or ``None``."""
        row = self._conn.execute(
            "SELECT offset, ino, lines FROM journal_files WHERE name = ?", (name,)
        ).fetchone()
        return (int(row[0]), int(row[1]), int(row[2])) if row else None

    def set_journal_position(self, name: str, offset: int, ino: int, lines: int) -> None:
        """Record how far ``journal/<name>`` is indexed (inside :meth:`write`)."""
        self._conn.execute(
            "INSERT OR REPLACE INTO journal_files (name, offset, ino, lines) VALUES (?,?,?,?)",
            (name, offset, ino, lines),
        )

    def drop_journal_file(self, name: str) -> None:
        """Forget every turn of ``journal/<name>`` and its term counts (inside :meth:`write`)."""
        conn = self._conn
        gone: dict[str, int] = {}
        for text, at in conn.execute("SELECT text, at FROM turns WHERE file = ?", (name,)):
            for term in turn_terms(text, at):
                gone[term] = gone.get(term, 0) + 1
        conn.executemany(
            "UPDATE turn_df SET rows = rows - ? WHERE term = ?", [(n, t) for t, n in gone.items()]
        )
        conn.execute(
            "DELETE FROM turns_fts WHERE rowid IN (SELECT rowid FROM turns WHERE file = ?)", (name,)
        )
        conn.execute("DELETE FROM turns WHERE file = ?", (name,))
        conn.execute("DELETE FROM journal_files WHERE name = ?", (name,))
        conn.execute("DELETE FROM turn_df WHERE rows <= 0")  # no trace of erased words (purge)

    def recent_turns(self, session: str, count: int) -> list[tuple[int, str]]:
        """Return the last ``count`` turns of ``session`` as ``(rowid, text)``, oldest first."""
        rows = self._conn.execute(
            "SELECT rowid, text FROM turns WHERE session = ? ORDER BY rowid DESC LIMIT ?",
            (session, count),
        ).fetchall()
        return [(int(r[0]), r[1]) for r in reversed(rows)]

    def add_turn(
        self,
        file: str,
        line: int,
        offset: int,
        length: int,
        session: str,
        at: str,
        who: str,
        text: str,
        ref: str | None,
    ) -> int:
        """Store one journal turn's row (inside :meth:`write`); return its rowid."""
        cursor = self._conn.execute(
            "INSERT INTO turns (file, line, offset, length, session, at, who, text, ref)"
            " VALUES (?,?,?,?,?,?,?,?,?)",
            (file, line, offset, length, session, at, who, text, ref),
        )
        return int(cursor.lastrowid or 0)

    def add_turn_terms(
        self,
        inserts: list[tuple[int, str, str, str]],
        updates: list[tuple[str, int]],
        frequencies: dict[str, int],
    ) -> None:
        """Index turns' full-text columns and term counts (inside :meth:`write`)."""
        conn = self._conn
        conn.executemany(
            "INSERT INTO turns_fts (rowid, text, date, context) VALUES (?,?,?,?)", inserts
        )
        conn.executemany("UPDATE turns_fts SET context = ? WHERE rowid = ?", updates)
        conn.executemany(
            "INSERT INTO turn_df (term, rows) VALUES (?, ?)"
            " ON CONFLICT (term) DO UPDATE SET rows = rows + excluded.rows",
            frequencies.items(),
        )

    def turn_frequencies(self, terms: list[str]) -> dict[str, int]:
        """Return how many journal turns hold each term in their text or month (``turn_df``)."""
        found: dict[str, int] = {}
        for term in terms:
            if len(term) == 1 and is_cjk(term):
                row = self._conn.execute(
                    "SELECT coalesce(sum(rows), 0) FROM turn_df WHERE term >= ? AND term < ?",
                    (term, term + "\U0010ffff"),
                ).fetchone()
            else:
                row = self._conn.execute(
                    "SELECT rows FROM turn_df WHERE term = ?", (term,)
                ).fetchone()
            found[term] = int(row[0]) if row else 0
        return found

    def turn_pool(
        self,
        terms: list[str],
        weights: tuple[float, float, float],
        window: int,
        session: str | None,
        size: int,
    ) -> list[TurnRow]:
        """Return the ``size`` turns holding any term with the best ``bm25()``, best first.

        ``window`` > 0 ranks only the ``window`` newest matches (FTS5 walks its rowids newest
        first and stops); ``session`` keeps only that session's turns.
        """
        sql = (
            "SELECT t.rowid, t.file, t.line, t.offset, t.session, t.at, t.who, t.text, m.rank"
            " FROM (SELECT rowid, bm25(turns_fts, ?, ?, ?) AS rank FROM turns_fts"
            " WHERE turns_fts MATCH ? ORDER BY rowid DESC LIMIT ?) m"
            " JOIN turns t ON t.rowid = m.rowid"
        )
        params: list[Any] = [*weights, fts_match(terms), window if window > 0 else -1]
        if session is not None:
            sql += " WHERE t.session = ?"
            params.append(session)
        sql += " ORDER BY m.rank LIMIT ?"
        params.append(size)
        return self._conn.execute(sql, params).fetchall()

    def turn_neighbours(self, rowids: list[int], spread: int) -> dict[int, list[str]]:
        """Return the texts of the ``spread`` turns on each side of each turn, same session.

        Keys are the given rowids; values the neighbours' texts, earlier turns first.
        """
        out: dict[int, list[str]] = {}
        for rowid in rowids:
            found = self._conn.execute(
                "SELECT session FROM turns WHERE rowid = ?", (rowid,)
            ).fetchone()
            if found is None:
                continue
            before = self._conn.execute(
                "SELECT text FROM turns WHERE session = ? AND rowid < ? ORDER BY rowid DESC"
                " LIMIT ?",
                (found[0], rowid, spread),
            ).fetchall()
            after = self._conn.execute(
                "SELECT text FROM turns WHERE session = ? AND rowid > ? ORDER BY rowid LIMIT ?",
                (found[0], rowid, spread),
            ).fetchall()
            out[rowid] = [r[0] for r in reversed(before)] + [r[0] for r in after]
        return out

    def has_turn_ref(self, ref: str) -> bool:
        """Whether an imported turn with this source id is indexed."""
        row = self._conn.execute("SELECT 1 FROM turns WHERE ref = ?", (ref,)).fetchone()
        return row is not None

    def turn_count(self) -> int:
        """Return how many journal turns are indexed."""
        return int(self._conn.execute("SELECT count(*) FROM turns").fetchone()[0])

    def unanswered_turns(
        self, agents: tuple[str, ...]
    ) -> list[tuple[str, str, str, str, str, int]]:
        """Return, per session, its last non-agent turn that no agent turn followed.

        Rows ``(session, at, who, text, file, line)``, newest ``at`` first.
        """
        marks = ",".join("?" * len(agents))
        rows = self._conn.execute(
            f"""
            SELECT t.session, t.at, t.who, t.text, t.file, t.line
            FROM turns t
            JOIN (SELECT session, max(rowid) AS last_user FROM turns
                  WHERE who NOT IN ({marks}) GROUP BY session) u ON u.last_user = t.rowid
            WHERE NOT EXISTS (
                SELECT 1 FROM turns a
                WHERE a.session = t.session AND a.rowid > t.rowid AND a.who IN ({marks})
            )
            ORDER BY t.at DESC
            """,  # noqa: S608 - only placeholders are interpolated
            (*agents, *agents),
        ).fetchall()
        return [(r[0], r[1], r[2], r[3], r[4], int(r[5])) for r in rows]

    # --- settings ----------------------------------------------------------------------------

    def get_meta(self, key: str) -> str | None:
        """Return a meta value, or ``None``."""
        row = self._conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def set_meta(self, key: str, value: str) -> None:
        """Set a meta value (its own transaction when none is open)."""
        self._conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))

    def user_version(self) -> int:
        """Return the schema version stored in the database (``PRAGMA user_version``)."""
        return int(self._conn.execute("PRAGMA user_version").fetchone()[0])
