"""memdir's index: derived from the records and the journal, the one owner of its queries.

- :mod:`.sqlite`: the SQLite index every machine keeps (``index.sqlite``); the schema, its
  migrations and every SQL statement memdir runs against it.
- :mod:`.interface`: :class:`~memdir.kernel.index.interface.IndexBackend`, every query as a
  typing Protocol; the PostgreSQL index (:mod:`memdir.pgindex`, outside the kernel) implements
  it too.
- :mod:`.rows`: what backends share (a file's stat, a record's document and index columns).
- :mod:`.foreign`: other SQLite files memdir reads (importers' sources, a benchmark's baseline).

Ranking is not here: :mod:`memdir.kernel.index.recall` scores the plain rows these return. Only
this package imports ``sqlite3`` (an import contract in ``pyproject.toml``).

Imports: standard library only.
"""

from memdir.kernel.index.rows import FileStat, doc_record, record_doc
from memdir.kernel.index.sqlite import (
    BACKUP_MAX_BYTES,
    BUSY_TIMEOUT_SECONDS,
    FTS_TOKENIZER,
    INDEX_NAME,
    LATEST_VERSION,
    MIGRATIONS,
    Index,
    IndexCorruptError,
    OperationalError,
    check_index_path,
    max_index_path_bytes,
    operational_cause,
)

__all__ = [
    "BACKUP_MAX_BYTES",
    "BUSY_TIMEOUT_SECONDS",
    "FTS_TOKENIZER",
    "INDEX_NAME",
    "LATEST_VERSION",
    "MIGRATIONS",
    "FileStat",
    "Index",
    "IndexCorruptError",
    "OperationalError",
    "check_index_path",
    "doc_record",
    "max_index_path_bytes",
    "operational_cause",
    "record_doc",
]
