"""A PostgreSQL index for a team that outgrows a local SQLite index (issue 14).

:class:`PostgresIndex` implements :class:`memdir.kernel.index.interface.IndexBackend`, so
recall, search, the digest's queries and per-prompt recall run unchanged on it
(:mod:`memdir.kernel.index.recall` ranks the rows either backend returns). It is derived data like
the SQLite index: the records and the journal stay the truth, and any machine rebuilds it
(``memdir index --backend postgres://…``, :func:`memdir.store.scan.fill`).

How it matches SQLite's results:

- The same terms. Each full-text column holds memdir's own index terms (NFKC, case-folded,
  diacritics removed, Porter-stemmed; CJK runs as bigrams plus the last character:
  :func:`memdir.kernel.lang.text.terms`), and the ``tsvector`` is built from them with
  ``array_to_tsvector`` and queried with a ``tsquery`` of quoted lexemes. PostgreSQL's parser
  and dictionaries never see the text, so a word matches in PostgreSQL exactly when it
  matches in FTS5. A single CJK character is a prefix query (``'红':*``), as in FTS5.
  PostgreSQL's own language dictionaries (``english``: Snowball) are not used: they stem
  differently from memdir's Porter stemmer and its parser splits words differently, so the
  same query would find different records on the two backends.
- The same candidate pool. FTS5 orders matches by its ``bm25()``; PostgreSQL has no BM25
  (``ts_rank`` is a different formula), so the matching rows are fetched and ordered by
  :func:`memdir.kernel.index.recall.fts5_bm25`, FTS5's formula in Python, with FTS5's statistics
  (rows, total terms, rows per term) kept in tables here.
- The same final scores: :func:`memdir.kernel.index.recall.score_records` and ``rank_turns``.

Embeddings: memdir's recall is lexical and stores no embeddings, so pgvector is not used;
:meth:`PostgresIndex.features` says whether the server has it installed.

The hook path never imports this module or a database driver: hooks read the local SQLite
index. ``psycopg`` (3.x) is the optional extra ``postgres``.
"""

from __future__ import annotations

import json
import re
import socket
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from memdir.kernel.base.errors import StorageError, UsageError
from memdir.kernel.base.model import Record
from memdir.kernel.base.validity import Served
from memdir.kernel.index.interface import Problems, RecordRow, TurnRow
from memdir.kernel.index.recall import COLUMN_WEIGHTS, fts5_bm25
from memdir.kernel.index.rows import (
    FileStat,
    record_columns,
    record_doc,
    record_links,
    served_columns,
    served_where,
    turn_terms,
)
from memdir.kernel.lang.text import is_cjk

SCHEMA_VERSION = 1
DEFAULT_SCHEMA = "memdir"
_NAME = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")


def _ddl(schema: str) -> list[str]:
    s = schema
    return [
        f"CREATE SCHEMA IF NOT EXISTS {s}",
        f"CREATE TABLE IF NOT EXISTS {s}.meta (key text PRIMARY KEY, value text NOT NULL)",
        f"""CREATE TABLE IF NOT EXISTS {s}.records (
            rowid bigserial PRIMARY KEY, id text NOT NULL UNIQUE, kind text NOT NULL,
            status text NOT NULL, origin text NOT NULL, scope text NOT NULL,
            importance integer NOT NULL, created_at text NOT NULL, updated_at text NOT NULL,
            text text NOT NULL, tokens integer NOT NULL, path text NOT NULL UNIQUE,
            doc text NOT NULL, f_text text NOT NULL, f_aliases text NOT NULL,
            f_tags text NOT NULL, f_body text NOT NULL, terms tsvector NOT NULL)""",
        f"""ALTER TABLE {s}.records ADD COLUMN IF NOT EXISTS project text COLLATE "C",
            ADD COLUMN IF NOT EXISTS valid_start text COLLATE "C",
            ADD COLUMN IF NOT EXISTS valid_end text COLLATE "C",
            ADD COLUMN IF NOT EXISTS by_time integer NOT NULL DEFAULT 0,
            ADD COLUMN IF NOT EXISTS value_key text COLLATE "C\"""",
        f"CREATE INDEX IF NOT EXISTS records_terms ON {s}.records USING gin (terms)",
        f"CREATE INDEX IF NOT EXISTS records_by_status ON {s}.records (status, kind, updated_at)",
        f"""CREATE TABLE IF NOT EXISTS {s}.record_df (
            term text COLLATE "C" PRIMARY KEY, docs integer NOT NULL)""",
        f"""CREATE TABLE IF NOT EXISTS {s}.stats (
            name text PRIMARY KEY, docs bigint NOT NULL, tokens bigint NOT NULL)""",
        f"""INSERT INTO {s}.stats VALUES ('records', 0, 0), ('turns', 0, 0)
            ON CONFLICT DO NOTHING""",  # noqa: S608 - the schema name is checked
        f"""CREATE TABLE IF NOT EXISTS {s}.links (
            src text NOT NULL, dst text NOT NULL, via text NOT NULL,
            PRIMARY KEY (src, dst, via))""",
        f"CREATE INDEX IF NOT EXISTS links_by_dst ON {s}.links (dst)",
        f"""CREATE TABLE IF NOT EXISTS {s}.files (
            path text PRIMARY KEY, mtime_ns bigint NOT NULL, size bigint NOT NULL,
            ino bigint NOT NULL, record_id text, state text NOT NULL,
            problems text NOT NULL DEFAULT '[]')""",
        f"""CREATE TABLE IF NOT EXISTS {s}.seen (
            host text NOT NULL, path text NOT NULL, mtime_ns bigint NOT NULL,
            size bigint NOT NULL, ino bigint NOT NULL, PRIMARY KEY (host, path))""",
        f"""CREATE TABLE IF NOT EXISTS {s}.journal_files (
            name text PRIMARY KEY, "offset" bigint NOT NULL, ino bigint NOT NULL,
            lines integer NOT NULL)""",
        f"""CREATE TABLE IF NOT EXISTS {s}.turns (
            rowid bigserial PRIMARY KEY, file text NOT NULL, line integer NOT NULL,
            "offset" bigint NOT NULL, length integer NOT NULL, session text NOT NULL,
            at text NOT NULL, who text NOT NULL, text text NOT NULL, ref text,
            f_text text NOT NULL DEFAULT '', f_date text NOT NULL DEFAULT '',
            f_context text NOT NULL DEFAULT '', tokens integer NOT NULL DEFAULT 0,
            terms tsvector NOT NULL DEFAULT ''::tsvector)""",
        f"CREATE INDEX IF NOT EXISTS turns_terms ON {s}.turns USING gin (terms)",
        f"CREATE INDEX IF NOT EXISTS turns_by_session ON {s}.turns (session, rowid)",
        f"CREATE INDEX IF NOT EXISTS turns_by_file ON {s}.turns (file)",
        f"CREATE INDEX IF NOT EXISTS turns_by_ref ON {s}.turns (ref) WHERE ref IS NOT NULL",
        f"""CREATE TABLE IF NOT EXISTS {s}.turn_df (
            term text COLLATE "C" PRIMARY KEY, rows integer NOT NULL)""",
    ]


def split_dsn(dsn: str) -> tuple[str, str]:
    """Return ``(dsn for libpq, schema)``: a ``schema=NAME`` query parameter is memdir's own.

    ``postgresql://host/db?schema=team_a`` keeps a store's tables in schema ``team_a``
    (default ``memdir``), so one database can hold the indexes of several stores.
    """
    from urllib.parse import parse_qsl, urlencode, urlsplit

    parts = urlsplit(dsn)
    query = parse_qsl(parts.query, keep_blank_values=True)
    schema = next((v for k, v in query if k == "schema"), DEFAULT_SCHEMA)
    rest = urlencode([(k, v) for k, v in query if k != "schema"])
    # Rebuilt by hand: urlunsplit drops the "//" of an empty host (postgresql:///db?host=/run).
    uri = f"{parts.scheme}://{parts.netloc}{parts.path}" + (f"?{rest}" if rest else "")
    return uri, schema


def open_postgres(store: Path, uri: str, *, read_only: bool = False) -> PostgresIndex:
    """Open the PostgreSQL index named by ``uri`` (see :func:`split_dsn`) for ``store``.

    Raises:
        UsageError: psycopg is missing or the schema name is not a plain identifier.
        StorageError: the server cannot be reached.
    """
    dsn, schema = split_dsn(uri)
    return PostgresIndex(store, dsn, schema=schema, read_only=read_only)


def _lexeme(term: str) -> str:
    """Return ``term`` as a quoted tsquery lexeme (a 1-character CJK term: a prefix)."""
    quoted = "'" + term.replace("\\", "\\\\").replace("'", "''") + "'"
    return quoted + ":*" if len(term) == 1 and is_cjk(term) else quoted


def tsquery(terms: Iterable[str]) -> str:
    """Return a ``tsquery`` text matching any of ``terms`` (OR), each a literal lexeme."""
    return " | ".join(_lexeme(t) for t in terms)


def _distinct(*columns: str) -> list[str]:
    return sorted({t for column in columns for t in column.split()})


def _prefix_end(term: str) -> str:
    return term + "\U0010ffff"


class PostgresIndex:
    """A store's index in PostgreSQL (an :class:`~memdir.kernel.index.interface.IndexBackend`).

    Use as a context manager or call :meth:`close`.
    """

    def __init__(
        self,
        store: Path,
        dsn: str,
        *,
        schema: str = DEFAULT_SCHEMA,
        read_only: bool = False,
        host: str = "",
    ) -> None:
        """Connect to ``dsn`` and create the tables in ``schema`` if they are missing.

        Args:
            store: The store this index is derived from.
            dsn: A libpq connection string or ``postgresql://`` URI.
            schema: The PostgreSQL schema holding this store's tables (one per store).
            read_only: Never write (reads only).
            host: This machine's name in the ``seen`` table (default: the host name).

        Raises:
            UsageError: ``psycopg`` is not installed, or the schema name is not a plain
                lower-case identifier.
            StorageError: the server cannot be reached or refuses the connection.
        """
        try:
            import psycopg
        except ImportError as exc:
            raise UsageError(
                "the PostgreSQL index needs psycopg: pip install 'memdir[postgres]'"
            ) from exc
        if not _NAME.match(schema):
            raise UsageError(f"schema {schema!r}: use a lower-case identifier (a-z, 0-9, _)")
        self.store = store
        self.read_only = read_only
        self.schema = schema
        self.host = host or socket.gethostname()
        self._depth = 0
        try:
            self._conn = psycopg.connect(dsn, autocommit=True)
        except psycopg.Error as exc:
            raise StorageError(f"cannot connect to the PostgreSQL index: {exc}") from exc
        if not read_only:
            with self.write():
                self._conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (schema,))
                for statement in _ddl(schema):
                    self._conn.execute(statement)
                self._conn.execute(
                    f"INSERT INTO {schema}.meta VALUES ('schema_version', %s)"  # noqa: S608
                    " ON CONFLICT (key) DO NOTHING",
                    (str(SCHEMA_VERSION),),
                )
                self._fill_served_columns()

    def _fill_served_columns(self) -> None:
        """Fill the read filter's columns of rows indexed before they existed (from ``doc``)."""
        rows = self._all(f"SELECT rowid, doc FROM {self._t('records')} WHERE value_key IS NULL")  # noqa: S608
        self._many(
            f"UPDATE {self._t('records')} SET project = %s, valid_start = %s, valid_end = %s,"  # noqa: S608
            " by_time = %s, value_key = %s WHERE rowid = %s",
            [(*served_columns(json.loads(doc)), rowid) for rowid, doc in rows],
        )

    # --- plumbing ----------------------------------------------------------------------------

    def _t(self, table: str) -> str:
        return f"{self.schema}.{table}"

    def _one(self, sql: str, params: Iterable[Any] = ()) -> tuple[Any, ...] | None:
        return self._conn.execute(sql, tuple(params)).fetchone()

    def _all(self, sql: str, params: Iterable[Any] = ()) -> list[tuple[Any, ...]]:
        return self._conn.execute(sql, tuple(params)).fetchall()

    def _run(self, sql: str, params: Iterable[Any] = ()) -> None:
        self._conn.execute(sql, tuple(params))

    def _many(self, sql: str, rows: Iterable[Iterable[Any]]) -> None:
        batch = [tuple(r) for r in rows]
        if batch:
            with self._conn.cursor() as cursor:
                cursor.executemany(sql, batch)

    def close(self) -> None:
        """Close the connection."""
        self._conn.close()

    def __enter__(self) -> PostgresIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def in_transaction(self) -> bool:
        """Whether a transaction is open on this connection."""
        return self._depth > 0

    @contextmanager
    def write(self) -> Iterator[None]:
        """Run the body in one transaction (a savepoint inside an open one); roll back on error.

        psycopg's ``transaction()`` issues ``BEGIN``/``COMMIT`` at the outermost level and
        ``SAVEPOINT``/``RELEASE`` inside; a failed ``COMMIT`` leaves the connection idle, so
        the next write starts a new transaction.
        """
        self._depth += 1
        try:
            with self._conn.transaction():
                yield
        finally:
            self._depth -= 1

    def features(self) -> dict[str, Any]:
        """Return what the server offers: its version, and whether pgvector is installed."""
        version = self._one("SHOW server_version")
        vector = self._one(
            "SELECT default_version FROM pg_available_extensions WHERE name = 'vector'"
        )
        return {
            "server_version": version[0] if version else "",
            "pgvector": vector[0] if vector else None,
        }

    # --- records: writes ---------------------------------------------------------------------

    def upsert_record(self, record: Record, path: str, stat: FileStat, problems: Problems) -> None:
        """Index ``record`` read from ``path``; a second file with the same id is quarantined."""
        holder = self._one(f"SELECT path FROM {self._t('records')} WHERE id = %s", (record.id,))  # noqa: S608
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
        self._run(
            f"INSERT INTO {self._t('records')} (id, kind, status, origin, scope, importance,"  # noqa: S608
            " created_at, updated_at, text, tokens, path, doc, f_text, f_aliases, f_tags, f_body,"
            " project, valid_start, valid_end, by_time, value_key,"
            " terms) VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,"
            " array_to_tsvector(%s::text[]))",
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
                *columns,
                *served_columns(doc),
                _distinct(*columns),
            ),
        )
        self._many(
            f"INSERT INTO {self._t('record_df')} (term, docs) VALUES (%s, 1)"  # noqa: S608
            " ON CONFLICT (term) DO UPDATE SET docs = record_df.docs + 1",
            [(t,) for t in _distinct(*columns)],
        )
        self._run(
            f"UPDATE {self._t('stats')} SET docs = docs + 1, tokens = tokens + %s"  # noqa: S608
            " WHERE name = 'records'",
            (tokens,),
        )
        self._many(
            f"INSERT INTO {self._t('links')} (src, dst, via) VALUES (%s,%s,%s)"  # noqa: S608
            " ON CONFLICT DO NOTHING",
            [(record.id, dst, via) for dst, via in record_links(record)],
        )
        self._put_file(path, stat, record.id, "ok", problems)

    def _put_file(
        self, path: str, stat: FileStat, record_id: str | None, state: str, problems: Problems
    ) -> None:
        self._run(
            f"INSERT INTO {self._t('files')} (path, mtime_ns, size, ino, record_id, state,"  # noqa: S608
            " problems) VALUES (%s,%s,%s,%s,%s,%s,%s) ON CONFLICT (path) DO UPDATE SET"
            " mtime_ns = EXCLUDED.mtime_ns, size = EXCLUDED.size, ino = EXCLUDED.ino,"
            " record_id = EXCLUDED.record_id, state = EXCLUDED.state,"
            " problems = EXCLUDED.problems",
            (path, stat.mtime_ns, stat.size, stat.ino, record_id, state, json.dumps(problems)),
        )
        self._run(
            f"INSERT INTO {self._t('seen')} (host, path, mtime_ns, size, ino)"  # noqa: S608
            " VALUES (%s,%s,%s,%s,%s) ON CONFLICT (host, path) DO UPDATE SET"
            " mtime_ns = EXCLUDED.mtime_ns, size = EXCLUDED.size, ino = EXCLUDED.ino",
            (self.host, path, stat.mtime_ns, stat.size, stat.ino),
        )

    def quarantine(self, path: str, stat: FileStat, problems: Problems) -> None:
        """Mark ``path`` unreadable: out of recall, listed by ``health``."""
        self._remove_path(path)
        self._put_file(path, stat, None, "quarantined", problems)

    def _remove_path(self, path: str) -> None:
        row = self._one(
            f"DELETE FROM {self._t('records')} WHERE path = %s"  # noqa: S608
            " RETURNING id, tokens, f_text, f_aliases, f_tags, f_body",
            (path,),
        )
        if row is None:
            return
        self._run(f"DELETE FROM {self._t('links')} WHERE src = %s", (row[0],))  # noqa: S608
        self._run(
            f"UPDATE {self._t('stats')} SET docs = docs - 1, tokens = tokens - %s"  # noqa: S608
            " WHERE name = 'records'",
            (row[1],),
        )
        self._run(
            f"UPDATE {self._t('record_df')} SET docs = docs - 1 WHERE term = ANY(%s)",  # noqa: S608
            (_distinct(*row[2:]),),
        )
        self._run(f"DELETE FROM {self._t('record_df')} WHERE docs <= 0")  # noqa: S608

    def forget_path(self, path: str) -> None:
        """Drop everything indexed from ``path``."""
        self._remove_path(path)
        self._run(f"DELETE FROM {self._t('files')} WHERE path = %s", (path,))  # noqa: S608
        self._run(f"DELETE FROM {self._t('seen')} WHERE path = %s", (path,))  # noqa: S608

    def clear(self) -> None:
        """Empty every table (``reindex`` refills them in the same transaction)."""
        for table in (
            "records",
            "record_df",
            "seen",
            "links",
            "files",
            "turns",
            "journal_files",
            "turn_df",
        ):
            self._run(f"DELETE FROM {self._t(table)}")  # noqa: S608
        self._run(f"UPDATE {self._t('stats')} SET docs = 0, tokens = 0")  # noqa: S608

    def scrub(self) -> None:
        """Rewrite the tables that held text (``VACUUM FULL``), so deleted rows leave the files.

        Outside a transaction only (PostgreSQL refuses ``VACUUM`` inside one); a no-op there.
        The server's write-ahead log and its backups keep old pages until they are recycled.
        """
        if self._depth == 0:
            for table in ("records", "turns", "record_df", "turn_df", "links", "files", "seen"):
                self._run(f"VACUUM FULL {self._t(table)}")

    # --- records: reads ----------------------------------------------------------------------

    def file_stats(self) -> dict[str, tuple[FileStat, str]]:
        """Return each record file's stat as this machine last saw it, and its state.

        File stats differ between machines (inodes, times), so each machine compares with its
        own (table ``seen``): a second machine reads every record once, then only changes.
        """
        rows = self._all(
            f"SELECT f.path, s.mtime_ns, s.size, s.ino, f.state FROM {self._t('files')} f"  # noqa: S608
            f" JOIN {self._t('seen')} s ON s.path = f.path AND s.host = %s",
            (self.host,),
        )
        return {r[0]: (FileStat(r[1], r[2], r[3]), r[4]) for r in rows}

    def file_problems(self) -> list[tuple[str, str, Problems]]:
        """Return ``(path, state, problems)`` for every file that has any problem."""
        rows = self._all(
            f"SELECT path, state, problems FROM {self._t('files')}"  # noqa: S608
            " WHERE state != 'ok' OR problems != '[]' ORDER BY path COLLATE \"C\""
        )
        return [(r[0], r[1], json.loads(r[2])) for r in rows]

    def is_empty(self) -> bool:
        """Whether the index knows no record and no record file."""
        for table in ("records", "files"):
            if self._one(f"SELECT 1 FROM {self._t(table)} LIMIT 1") is not None:  # noqa: S608
                return False
        return True

    def get_doc(self, record_id: str) -> dict[str, Any] | None:
        """Return the indexed document of ``record_id``, or ``None``."""
        row = self._one(f"SELECT doc FROM {self._t('records')} WHERE id = %s", (record_id,))  # noqa: S608
        return json.loads(row[0]) if row else None

    def get_path(self, record_id: str) -> str | None:
        """Return the store-relative file of ``record_id``, or ``None``."""
        row = self._one(f"SELECT path FROM {self._t('records')} WHERE id = %s", (record_id,))  # noqa: S608
        return str(row[0]) if row else None

    def _filters(
        self,
        kinds: Iterable[str],
        statuses: Iterable[str],
        prefix: str = "",
        served: Served | None = None,
    ) -> tuple[str, list[Any]]:
        """Return ``(" AND …", params)``; ``served`` (the read filter) replaces ``statuses``."""
        where, params = "", []
        wanted = [("kind", list(kinds))]
        if served is None:
            wanted.append(("status", list(statuses)))
        for column, values in wanted:
            if values:
                where += f" AND {prefix}{column} = ANY(%s)"
                params.append(values)
        if served is not None:
            more, extra = served_where(
                served, table=prefix, mark="%s", keys_in="NOT ({col} = ANY({mark}))"
            )
            where += more
            params += extra
        return where, params

    def list_docs(
        self,
        *,
        kinds: Iterable[str] = (),
        statuses: Iterable[str] = (),
        limit: int | None = None,
        newest_first: bool = True,
        served: Served | None = None,
    ) -> list[dict[str, Any]]:
        """Return records filtered by kind and status, newest ``updated_at`` first.

        Ties within one second go by creation, as in the SQLite index: ``created_at``, the id's
        time part, the id. ``served``: only what the read filter serves, decided in the query.
        """
        where, params = self._filters(kinds, statuses, served=served)
        order = "DESC" if newest_first else "ASC"
        sql = (
            f"SELECT doc FROM {self._t('records')} WHERE true{where}"  # noqa: S608
            f' ORDER BY updated_at COLLATE "C" {order}, created_at COLLATE "C" {order},'
            f' substr(id, strpos(id, \'-\') + 1) COLLATE "C" {order}, id COLLATE "C" {order}'
        )
        if limit is not None:
            sql += " LIMIT %s"
            params.append(limit)
        return [json.loads(r[0]) for r in self._all(sql, params)]

    def count_by(self, column: str, *, status: str | None = None) -> dict[str, int]:
        """Return record counts grouped by ``kind``, ``status`` or ``origin``.

        Raises:
            ValueError: ``column`` is not one of the three.
        """
        if column not in {"kind", "status", "origin"}:
            raise ValueError(column)
        where, args = ("WHERE status = %s", (status,)) if status else ("", ())
        rows = self._all(
            f"SELECT {column}, count(*) FROM {self._t('records')} {where} GROUP BY {column}",  # noqa: S608
            args,
        )
        return {r[0]: int(r[1]) for r in rows}

    def links_of(self, record_id: str) -> list[tuple[str, str, str]]:
        """Return ``(src, dst, via)`` for every link into or out of ``record_id``."""
        rows = self._all(
            f"SELECT src, dst, via FROM {self._t('links')} WHERE src = %s OR dst = %s"  # noqa: S608
            ' ORDER BY src COLLATE "C", dst COLLATE "C"',
            (record_id, record_id),
        )
        return [(r[0], r[1], r[2]) for r in rows]

    def all_links(self) -> list[tuple[str, str, str]]:
        """Return every link as ``(src, dst, via)``."""
        rows = self._all(f"SELECT src, dst, via FROM {self._t('links')}")  # noqa: S608
        return [(r[0], r[1], r[2]) for r in rows]

    def record_statuses(self) -> dict[str, str]:
        """Return id → status for every indexed record."""
        return {r[0]: r[1] for r in self._all(f"SELECT id, status FROM {self._t('records')}")}  # noqa: S608

    def record_texts(self, *, statuses: Iterable[str] = ()) -> list[tuple[str, str, str, str]]:
        """Return ``(id, kind, status, text)`` of every record (of these statuses), by rowid."""
        where, params = self._filters((), statuses)
        rows = self._all(
            f"SELECT id, kind, status, text FROM {self._t('records')} WHERE true{where}"  # noqa: S608
            " ORDER BY rowid",
            params,
        )
        return [(r[0], r[1], r[2], r[3]) for r in rows]

    def _frequencies(self, table: str, column: str, terms: list[str]) -> dict[str, int]:
        found: dict[str, int] = {}
        for term in terms:
            if len(term) == 1 and is_cjk(term):
                row = self._one(
                    f"SELECT coalesce(sum({column}), 0) FROM {self._t(table)}"  # noqa: S608
                    " WHERE term >= %s AND term < %s",
                    (term, _prefix_end(term)),
                )
            else:
                row = self._one(
                    f"SELECT {column} FROM {self._t(table)} WHERE term = %s",  # noqa: S608
                    (term,),
                )
            found[term] = int(row[0]) if row else 0
        return found

    def record_frequencies(self, terms: list[str]) -> dict[str, int]:
        """Return how many records hold each term (a 1-character CJK term: its bigrams)."""
        return self._frequencies("record_df", "docs", terms)

    def record_totals(self) -> tuple[int, int]:
        """Return ``(records, terms in all of them)``: BM25's N and N × avgdl."""
        row = self._one(f"SELECT docs, tokens FROM {self._t('stats')} WHERE name = 'records'")  # noqa: S608
        return (int(row[0]), int(row[1])) if row else (0, 0)

    def _match_counts(self, table: str, terms: list[str]) -> dict[str, int]:
        """Rows matching each term as FTS5 counts a phrase (a prefix: rows holding any)."""
        columns = ", ".join("count(*) FILTER (WHERE terms @@ %s::tsquery)" for _ in terms)
        row = self._one(
            f"SELECT {columns} FROM {self._t(table)} WHERE terms @@ %s::tsquery",  # noqa: S608
            [*(tsquery([t]) for t in terms), tsquery(terms)],
        )
        return {t: int(row[n]) if row else 0 for n, t in enumerate(terms)}

    def record_pool(
        self,
        terms: list[str],
        kinds: list[str],
        statuses: list[str],
        size: int,
        served: Served | None = None,
    ) -> list[RecordRow]:
        """Return the ``size`` records of these kinds and statuses that FTS5's BM25 ranks first.

        Every matching row passing the filters is fetched and ordered by
        :func:`~memdir.kernel.index.recall.fts5_bm25` (then rowid); ``recall`` caps the terms so
        that their rows add up to at most ``CANDIDATE_CAP``. ``served`` puts the read filter in
        the ``WHERE`` (in place of ``statuses``).
        """
        if not terms:
            return []
        where, filters = self._filters(kinds, statuses, served=served)
        rows = self._all(
            "SELECT rowid, doc, importance, updated_at, tokens, f_text, f_aliases, f_tags, f_body"  # noqa: S608
            f" FROM {self._t('records')} WHERE terms @@ %s::tsquery{where}",
            [tsquery(terms), *filters],
        )
        if not rows:
            return []
        docs, total = self.record_totals()
        counts = self._match_counts("records", terms)
        average = total / docs if docs else 1.0
        ranked = sorted(
            rows,
            key=lambda r: (
                fts5_bm25(tuple(r[5:]), terms, counts, docs, average, COLUMN_WEIGHTS),
                r[0],
            ),
        )
        return [
            (int(r[0]), r[1], int(r[2]), r[3], int(r[4]), r[5], r[6], r[7], r[8])
            for r in ranked[:size]
        ]

    def similar_candidates(
        self, terms: list[str], text: str, statuses: list[str], size: int
    ) -> list[dict[str, Any]]:
        """Return the documents a near-duplicate check compares ``text`` with."""
        if terms:
            return [json.loads(row[1]) for row in self.record_pool(terms, [], statuses, size)]
        rows = self._all(
            f"SELECT doc FROM {self._t('records')} WHERE status = ANY(%s) AND text = %s",  # noqa: S608
            (statuses, text),
        )
        return [json.loads(r[0]) for r in rows]

    # --- journal -----------------------------------------------------------------------------

    def journal_position(self, name: str) -> tuple[int, int, int] | None:
        """Return ``(offset, inode, lines)`` indexed so far of ``journal/<name>``, or ``None``."""
        row = self._one(
            f'SELECT "offset", ino, lines FROM {self._t("journal_files")} WHERE name = %s',  # noqa: S608
            (name,),
        )
        return (int(row[0]), int(row[1]), int(row[2])) if row else None

    def set_journal_position(self, name: str, offset: int, ino: int, lines: int) -> None:
        """Record how far ``journal/<name>`` is indexed."""
        self._run(
            f'INSERT INTO {self._t("journal_files")} (name, "offset", ino, lines)'  # noqa: S608
            ' VALUES (%s,%s,%s,%s) ON CONFLICT (name) DO UPDATE SET "offset" = EXCLUDED."offset",'
            " ino = EXCLUDED.ino, lines = EXCLUDED.lines",
            (name, offset, ino, lines),
        )

    def drop_journal_file(self, name: str) -> None:
        """Forget every turn of ``journal/<name>`` and its term counts."""
        gone: dict[str, int] = {}
        tokens = 0
        count = 0
        for text, at, n in self._all(
            f"SELECT text, at, tokens FROM {self._t('turns')} WHERE file = %s",  # noqa: S608
            (name,),
        ):
            count += 1
            tokens += int(n)
            for term in turn_terms(text, at):
                gone[term] = gone.get(term, 0) + 1
        self._many(
            f"UPDATE {self._t('turn_df')} SET rows = rows - %s WHERE term = %s",  # noqa: S608
            [(n, t) for t, n in gone.items()],
        )
        self._run(f"DELETE FROM {self._t('turns')} WHERE file = %s", (name,))  # noqa: S608
        self._run(f"DELETE FROM {self._t('journal_files')} WHERE name = %s", (name,))  # noqa: S608
        self._run(f"DELETE FROM {self._t('turn_df')} WHERE rows <= 0")  # noqa: S608
        self._run(
            f"UPDATE {self._t('stats')} SET docs = docs - %s, tokens = tokens - %s"  # noqa: S608
            " WHERE name = 'turns'",
            (count, tokens),
        )

    def recent_turns(self, session: str, count: int) -> list[tuple[int, str]]:
        """Return the last ``count`` turns of ``session`` as ``(rowid, text)``, oldest first."""
        rows = self._all(
            f"SELECT rowid, text FROM {self._t('turns')} WHERE session = %s"  # noqa: S608
            " ORDER BY rowid DESC LIMIT %s",
            (session, count),
        )
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
        """Store one journal turn's row; return its rowid."""
        row = self._one(
            f'INSERT INTO {self._t("turns")} (file, line, "offset", length, session, at, who,'  # noqa: S608
            " text, ref) VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s) RETURNING rowid",
            (file, line, offset, length, session, at, who, text, ref),
        )
        return int(row[0]) if row else 0

    def add_turn_terms(
        self,
        inserts: list[tuple[int, str, str, str]],
        updates: list[tuple[str, int]],
        frequencies: dict[str, int],
    ) -> None:
        """Index turns' full-text columns and term counts."""
        old = (
            dict(
                self._all(
                    "SELECT rowid, coalesce(array_length(array_remove("  # noqa: S608
                    "string_to_array(f_context, ' '), ''), 1), 0)"
                    f" FROM {self._t('turns')} WHERE rowid = ANY(%s)",
                    ([rowid for _, rowid in updates],),
                )
            )
            if updates
            else {}
        )
        added = 0
        rows = []
        for rowid, text, date, context in inserts:
            tokens = len(text.split()) + len(date.split()) + len(context.split())
            added += tokens
            rows.append((text, date, context, tokens, rowid))
        self._many(
            f"UPDATE {self._t('turns')} SET f_text = %s, f_date = %s, f_context = %s,"  # noqa: S608
            " tokens = %s WHERE rowid = %s",
            rows,
        )
        changes = []
        for context, rowid in updates:
            delta = len(context.split()) - int(old.get(rowid, 0))
            added += delta
            changes.append((context, delta, rowid))
        self._many(
            f"UPDATE {self._t('turns')} SET f_context = %s, tokens = tokens + %s"  # noqa: S608
            " WHERE rowid = %s",
            changes,
        )
        changed = [r for r, *_ in inserts] + [r for _, r in updates]
        if changed:  # the tsvector: every distinct term of the three columns
            self._run(
                f"UPDATE {self._t('turns')} SET terms = array_to_tsvector(ARRAY("  # noqa: S608
                " SELECT DISTINCT t FROM unnest(string_to_array(f_text || ' ' || f_date || ' '"
                " || f_context, ' ')) t WHERE t != '')) WHERE rowid = ANY(%s)",
                (changed,),
            )
        self._many(
            f"INSERT INTO {self._t('turn_df')} (term, rows) VALUES (%s, %s)"  # noqa: S608
            " ON CONFLICT (term) DO UPDATE SET rows = turn_df.rows + EXCLUDED.rows",
            frequencies.items(),
        )
        self._run(
            f"UPDATE {self._t('stats')} SET docs = docs + %s, tokens = tokens + %s"  # noqa: S608
            " WHERE name = 'turns'",
            (len(inserts), added),
        )

    def turn_frequencies(self, terms: list[str]) -> dict[str, int]:
        """Return how many journal turns hold each term in their text or month."""
        return self._frequencies("turn_df", "rows", terms)

    def turn_pool(
        self,
        terms: list[str],
        weights: tuple[float, float, float],
        window: int,
        session: str | None,
        size: int,
    ) -> list[TurnRow]:
        """Return the ``size`` turns holding any term with the best FTS5 ``bm25()``."""
        if not terms:
            return []
        params: list[Any] = [tsquery(terms)]
        sql = (
            f'SELECT rowid, file, line, "offset", session, at, who, text, f_text, f_date,'  # noqa: S608
            f" f_context FROM {self._t('turns')} WHERE terms @@ %s::tsquery ORDER BY rowid DESC"
        )
        if window > 0:
            sql += " LIMIT %s"
            params.append(window)
        rows = self._all(sql, params)
        if session is not None:
            rows = [r for r in rows if r[4] == session]
        if not rows:
            return []
        stats = self._one(f"SELECT docs, tokens FROM {self._t('stats')} WHERE name = 'turns'")  # noqa: S608
        docs, total = (int(stats[0]), int(stats[1])) if stats else (0, 0)
        counts = self._match_counts("turns", terms)
        average = total / docs if docs else 1.0
        scored = [
            (fts5_bm25(tuple(r[8:11]), terms, counts, docs, average, weights), r) for r in rows
        ]
        scored.sort(key=lambda item: (item[0], -item[1][0]))
        return [
            (int(r[0]), r[1], int(r[2]), int(r[3]), r[4], r[5], r[6], r[7], rank)
            for rank, r in scored[:size]
        ]

    def turn_neighbours(self, rowids: list[int], spread: int) -> dict[int, list[str]]:
        """Return the texts of the ``spread`` turns on each side of each turn, same session."""
        out: dict[int, list[str]] = {}
        table = self._t("turns")
        for rowid in rowids:
            found = self._one(f"SELECT session FROM {table} WHERE rowid = %s", (rowid,))  # noqa: S608
            if found is None:
                continue
            before = self._all(
                f"SELECT text FROM {table} WHERE session = %s AND rowid < %s"  # noqa: S608
                " ORDER BY rowid DESC LIMIT %s",
                (found[0], rowid, spread),
            )
            after = self._all(
                f"SELECT text FROM {table} WHERE session = %s AND rowid > %s"  # noqa: S608
                " ORDER BY rowid LIMIT %s",
                (found[0], rowid, spread),
            )
            out[rowid] = [r[0] for r in reversed(before)] + [r[0] for r in after]
        return out

    def has_turn_ref(self, ref: str) -> bool:
        """Whether an imported turn with this source id is indexed."""
        return self._one(f"SELECT 1 FROM {self._t('turns')} WHERE ref = %s", (ref,)) is not None  # noqa: S608

    def turn_count(self) -> int:
        """Return how many journal turns are indexed."""
        row = self._one(f"SELECT count(*) FROM {self._t('turns')}")  # noqa: S608
        return int(row[0]) if row else 0

    def unanswered_turns(
        self, agents: tuple[str, ...]
    ) -> list[tuple[str, str, str, str, str, int]]:
        """Return, per session, its last non-agent turn that no agent turn followed."""
        t = self._t("turns")
        rows = self._all(
            f"""
            SELECT t.session, t.at, t.who, t.text, t.file, t.line FROM {t} t
            JOIN (SELECT session, max(rowid) AS last_user FROM {t}
                  WHERE NOT (who = ANY(%s)) GROUP BY session) u ON u.last_user = t.rowid
            WHERE NOT EXISTS (SELECT 1 FROM {t} a
                WHERE a.session = t.session AND a.rowid > t.rowid AND a.who = ANY(%s))
            ORDER BY t.at COLLATE "C" DESC
            """,  # noqa: S608
            (list(agents), list(agents)),
        )
        return [(r[0], r[1], r[2], r[3], r[4], int(r[5])) for r in rows]

    # --- settings ----------------------------------------------------------------------------

    def get_meta(self, key: str) -> str | None:
        """Return a meta value, or ``None``."""
        row = self._one(f"SELECT value FROM {self._t('meta')} WHERE key = %s", (key,))  # noqa: S608
        return str(row[0]) if row else None

    def set_meta(self, key: str, value: str) -> None:
        """Set a meta value."""
        self._run(
            f"INSERT INTO {self._t('meta')} (key, value) VALUES (%s, %s)"  # noqa: S608
            " ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
            (key, value),
        )
