"""The SQLite index: derived from records and journal, rebuildable at any time (DESIGN §10.1).

Never the source of truth: deleting ``index.sqlite`` loses nothing, and ``memdir reindex``
rebuilds it from ``records/`` and ``journal/`` alone. It exists so recall never reads Markdown
on the hot path (DESIGN §5). The database runs in WAL mode with a busy timeout, so readers
never block the writer and concurrent writers wait instead of failing with "database is
locked" (case B15). Writes use ``BEGIN IMMEDIATE`` and are idempotent: two processes bringing
the same file up to date end with one copy of it.

Schema versions are ``PRAGMA user_version`` and the ordered ``MIGRATIONS`` (``mNNN_*``),
applied on open in one transaction each. An index written by a newer memdir is refused with
:class:`IndexFormatError` rather than altered; ``memdir reindex`` replaces it.

Imports: standard library only.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sqlite3
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from memdir.kernel.base.errors import IndexFormatError, MemdirError, StorageError
from memdir.kernel.lang.text import index_text

TYPE_CHECKING = False  # the hook path never imports typing or dataclasses (start-up cost)
if TYPE_CHECKING:
    from typing import Any

    from memdir.kernel.base.model import Record

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


MIGRATIONS: tuple[tuple[int, Callable[[sqlite3.Connection], None]], ...] = (
    (1, _m001_initial),
    (2, _m002_turn_frequencies),
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


class FileStat:
    """What the index remembers of a record file's stat, to notice changes."""

    __slots__ = ("ino", "mtime_ns", "size")

    def __init__(self, mtime_ns: int, size: int, ino: int) -> None:
        self.mtime_ns = mtime_ns
        self.size = size
        self.ino = ino

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FileStat) and (self.mtime_ns, self.size, self.ino) == (
            other.mtime_ns,
            other.size,
            other.ino,
        )

    def __hash__(self) -> int:
        return hash((self.mtime_ns, self.size, self.ino))

    @classmethod
    def of(cls, path: Path) -> FileStat:
        """Return the stat of ``path``."""
        st = path.stat()
        return cls(st.st_mtime_ns, st.st_size, st.st_ino)


def record_doc(record: Record) -> dict[str, Any]:
    """Return the JSON document the index keeps for a record (its ``--json`` form plus extras)."""
    doc = record.to_json()
    if record.extra:
        doc["extra"] = [list(pair) for pair in record.extra]
    return doc


def doc_record(doc: dict[str, Any]) -> Record:
    """Rebuild a :class:`Record` from :func:`record_doc` output."""
    from memdir.kernel.base.model import Record  # only callers above the hook path build records

    fields = {k: v for k, v in doc.items() if k not in {"extra"}}
    for key in ("aliases", "tags", "links"):
        fields[key] = tuple(fields.get(key) or ())
    fields["extra"] = tuple(tuple(pair) for pair in doc.get("extra", ()))
    return Record(**fields)


BODY_LINK = re.compile(r"\[\[([A-Za-z0-9][A-Za-z0-9._-]{0,127})\]\]")


def filter_clause(
    *, kinds: Iterable[str] = (), statuses: Iterable[str] = (), table: str = ""
) -> tuple[str, list[Any]]:
    """Return ``(" AND kind IN (?,…) AND status IN (?,…)", params)`` for the given filters.

    ``table`` prefixes the columns (``"r."``). Only ``?`` placeholders enter the SQL text.
    """
    where, params = "", []
    for column, values in (("kind", list(kinds)), ("status", list(statuses))):
        if values:
            where += f" AND {table}{column} IN ({','.join('?' * len(values))})"
            params += values
    return where, params


class Index:
    """An open connection to a store's index. Use as a context manager or call :meth:`close`."""

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
        check_index_path(self.path)
        if read_only:
            self.conn = _open_read_only(self.path, busy_timeout_seconds)
            return
        try:
            self.conn = sqlite3.connect(
                self.path,
                timeout=busy_timeout_seconds,
                isolation_level=None,
                check_same_thread=False,
            )
            self.conn.execute("PRAGMA journal_mode=WAL")
            self.conn.execute("PRAGMA synchronous=NORMAL")
            self._migrate()
        except sqlite3.DatabaseError as exc:
            self._close_quietly()
            raise _open_error(self.path, exc) from exc
        except BaseException:  # a newer index, a failed backup: nothing is left open
            self._close_quietly()
            raise

    def _close_quietly(self) -> None:
        with contextlib.suppress(AttributeError, sqlite3.Error):
            self.conn.close()

    def _migrate(self) -> None:
        version = self.conn.execute("PRAGMA user_version").fetchone()[0]
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
                current = self.conn.execute("PRAGMA user_version").fetchone()[0]
                if current >= number:
                    continue  # another process migrated while we waited
                migrate(self.conn)
                self.conn.execute(f"PRAGMA user_version = {number}")

    def _backup(self, version: int) -> None:
        """Copy the index aside before migrating it (case B40): ``state/backups/index-vN.sqlite``.

        The index is derived data, so this is a convenience for diagnosing an upgrade, not the
        safety net: ``memdir reindex`` rebuilds any index from the records and the journal.
        The copy is made under a temporary name and renamed, so the backup is never half a file;
        a temporary copy a killed process left is replaced, never mistaken for the index.

        Raises:
            StorageError: the copy cannot be made (disk full, read-only); the index is unchanged.
        """
        folder = self.store / "state" / "backups"
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
                self.conn.backup(copy)
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
        self.conn.close()

    def __enter__(self) -> Index:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """Run the body in one ``BEGIN IMMEDIATE`` transaction; roll back on any exception.

        Inside an open transaction the body joins it, so a caller can make several steps that
        each write (``reindex``: empty the tables, scan the records, sync the journal) one
        transaction: a process killed half-way leaves the index as it was.
        """
        if self.conn.in_transaction:
            yield self.conn  # the outer write commits or rolls back
            return
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield self.conn
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")

    # --- records ---------------------------------------------------------------------------

    def upsert_record(
        self, record: Record, path: str, stat: FileStat, problems: list[dict[str, str]]
    ) -> None:
        """Index ``record`` read from ``path`` (call inside :meth:`write`).

        A different file already holding the same id wins (first come); this file is then
        quarantined with a ``duplicate_id`` problem.
        """
        conn = self.conn
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
        columns = (
            index_text(record.text),
            index_text(*record.aliases),
            index_text(*record.tags),
            index_text(record.body),
        )
        tokens = sum(len(column.split()) for column in columns)
        cursor = conn.execute(
            "INSERT INTO records (id, kind, status, origin, scope, importance, created_at,"
            " updated_at, text, tokens, path, doc) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
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
                json.dumps(record_doc(record), ensure_ascii=False),
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
        targets = {(dst, "links") for dst in record.links}
        targets |= {(m.group(1), "body") for m in BODY_LINK.finditer(record.body)}
        conn.executemany(
            "INSERT OR IGNORE INTO links (src, dst, via) VALUES (?,?,?)",
            [(record.id, dst, via) for dst, via in sorted(targets) if dst != record.id],
        )
        conn.execute(
            "INSERT OR REPLACE INTO files (path, mtime_ns, size, ino, record_id, state, problems)"
            " VALUES (?,?,?,?,?,?,?)",
            (path, stat.mtime_ns, stat.size, stat.ino, record.id, "ok", json.dumps(problems)),
        )

    def quarantine(self, path: str, stat: FileStat, problems: list[dict[str, str]]) -> None:
        """Mark ``path`` unreadable: out of recall, listed by ``health`` (inside :meth:`write`)."""
        self._remove_path(path)
        self.conn.execute(
            "INSERT OR REPLACE INTO files (path, mtime_ns, size, ino, record_id, state, problems)"
            " VALUES (?,?,?,?,NULL,'quarantined',?)",
            (path, stat.mtime_ns, stat.size, stat.ino, json.dumps(problems)),
        )

    def _remove_path(self, path: str) -> None:
        conn = self.conn
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
        self.conn.execute("DELETE FROM files WHERE path = ?", (path,))

    def file_stats(self) -> dict[str, tuple[FileStat, str]]:
        """Return every known record file's last stat and state (``ok``/``quarantined``)."""
        rows = self.conn.execute("SELECT path, mtime_ns, size, ino, state FROM files")
        return {r[0]: (FileStat(r[1], r[2], r[3]), r[4]) for r in rows}

    def file_problems(self) -> list[tuple[str, str, list[dict[str, str]]]]:
        """Return ``(path, state, problems)`` for every file that has any problem."""
        rows = self.conn.execute(
            "SELECT path, state, problems FROM files WHERE state != 'ok' OR problems != '[]'"
            " ORDER BY path"
        )
        return [(r[0], r[1], json.loads(r[2])) for r in rows]

    def get_doc(self, record_id: str) -> dict[str, Any] | None:
        """Return the indexed document of ``record_id``, or ``None``."""
        row = self.conn.execute("SELECT doc FROM records WHERE id = ?", (record_id,)).fetchone()
        return json.loads(row[0]) if row else None

    def get_path(self, record_id: str) -> str | None:
        """Return the store-relative file of ``record_id``, or ``None``."""
        row = self.conn.execute("SELECT path FROM records WHERE id = ?", (record_id,)).fetchone()
        return row[0] if row else None

    def list_docs(
        self,
        *,
        kinds: Iterable[str] = (),
        statuses: Iterable[str] = (),
        limit: int | None = None,
        newest_first: bool = True,
    ) -> list[dict[str, Any]]:
        """Return indexed records filtered by kind and status, newest ``updated_at`` first."""
        where, params = filter_clause(kinds=kinds, statuses=statuses)
        sql = f"SELECT doc FROM records WHERE 1=1{where}"  # noqa: S608 - placeholders only
        sql += f" ORDER BY updated_at {'DESC' if newest_first else 'ASC'}, id"
        if limit is not None:
            sql += " LIMIT ?"
            params.append(limit)
        return [json.loads(row[0]) for row in self.conn.execute(sql, params)]

    def count_by(self, column: str, *, status: str | None = None) -> dict[str, int]:
        """Return record counts grouped by ``kind``, ``status`` or ``origin``.

        ``status`` counts only the records of that status (e.g. ``"active"``).
        """
        if column not in {"kind", "status", "origin"}:
            raise ValueError(column)
        where, args = ("WHERE status = ?", (status,)) if status else ("", ())
        rows = self.conn.execute(
            f"SELECT {column}, count(*) FROM records {where} GROUP BY {column}",  # noqa: S608 - column is checked above
            args,
        )
        return {r[0]: r[1] for r in rows}

    def links_of(self, record_id: str) -> list[tuple[str, str, str]]:
        """Return ``(src, dst, via)`` for every link into or out of ``record_id``."""
        rows = self.conn.execute(
            "SELECT src, dst, via FROM links WHERE src = ? OR dst = ? ORDER BY src, dst",
            (record_id, record_id),
        )
        return [(r[0], r[1], r[2]) for r in rows]

    def all_links(self) -> list[tuple[str, str, str]]:
        """Return every link as ``(src, dst, via)``."""
        return [(r[0], r[1], r[2]) for r in self.conn.execute("SELECT src, dst, via FROM links")]

    def record_statuses(self) -> dict[str, str]:
        """Return id → status for every indexed record."""
        return {r[0]: r[1] for r in self.conn.execute("SELECT id, status FROM records")}

    def scrub(self) -> None:
        """Physically remove deleted text: merge FTS segments, VACUUM, truncate the WAL.

        FTS5 keeps deleted tokens in its segments until they are merged, and SQLite keeps
        deleted rows in free pages; ``purge`` calls this so erased text leaves the file too.
        """
        self.conn.execute("INSERT INTO records_fts (records_fts) VALUES ('optimize')")
        self.conn.execute("INSERT INTO turns_fts (turns_fts) VALUES ('optimize')")
        self.conn.execute("PRAGMA secure_delete = ON")
        self.conn.execute("VACUUM")
        self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def get_meta(self, key: str) -> str | None:
        """Return a meta value, or ``None``."""
        row = self.conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def set_meta(self, key: str, value: str) -> None:
        """Set a meta value (its own transaction when none is open)."""
        self.conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))
