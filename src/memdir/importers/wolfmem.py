"""Read a wolfmem home (``WOLFMEM_HOME``) into memdir records and journal turns.

wolfmem documents its layout only in its README: one data folder holding a SQLite fact store
("one row per fact", text with a needle tag at its start, an importance, a JSON column of
embedding floats) and ``journal/YYYY-MM-DD.jsonl`` (one conversation turn per line: who,
text, session). The exact table and column names are not documented, so this reader is
defensive: it opens every ``*.db`` / ``*.sqlite`` / ``*.sqlite3`` file in the home read-only,
takes each table that has a text column (``text``, ``content``, ``fact`` or ``memory``), reads
the columns it recognises and reports every other column as not understood.

Mapping: needle tags ``[决定]`` → decision, ``[坑]`` (a pitfall) → rule, ``[偏好]`` → preference,
``[事实]`` → fact, ``[安全]`` / ``[隐私]`` → rule; any other ``[tag]`` → fact. The tag leaves the
text and becomes a tag. wolfmem's importance (1..5) is doubled onto memdir's 1..10.
Embeddings are dropped (memdir recalls lexically; embeddings are recomputed if configured).
Journal lines become memdir journal turns (redacted), each day's file read line by line.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memdir.importers.pipeline import Item, belief_key, make_record, observed_date, skip
from memdir.kernel.base.errors import UsageError
from memdir.kernel.index.foreign import ForeignDatabase, ForeignError
from memdir.kernel.lang.redact import redact

FORMAT = "wolfmem"
TAGS = {
    "决定": "decision",
    "坑": "rule",
    "偏好": "preference",
    "事实": "fact",
    "安全": "rule",
    "隐私": "rule",
}
"""Needle tag → memdir kind."""
TEXT_COLUMNS = ("text", "content", "fact", "memory")
ID_COLUMNS = ("id", "fact_id", "uuid")
IMPORTANCE_COLUMNS = ("importance", "imp", "weight")
TIME_COLUMNS = ("created_at", "created", "ts", "timestamp", "time", "updated_at")
IGNORED_COLUMNS = ("embedding", "vector", "emb", "recall_count", "recalls", "last_recalled_at")
"""Columns read knowingly and dropped (embeddings, usage counters)."""
_NEEDLE = re.compile(r"^\s*[\[【]([^\]】]{1,12})[\]】]\s*")


def _databases(home: Path) -> list[Path]:
    return sorted(
        p for p in home.iterdir() if p.is_file() and p.suffix in (".db", ".sqlite", ".sqlite3")
    )


def read(path: Path, *, scope: str = "project") -> Iterator[Item]:
    """Yield the facts and journal turns of the wolfmem home at ``path``.

    Raises:
        UsageError: ``path`` holds no SQLite file and no ``journal/`` folder.
    """
    if not path.is_dir() or not (_databases(path) or (path / "journal").is_dir()):
        raise UsageError(f"{path} is not a wolfmem home (no *.db file and no journal/ folder)")
    for db in _databases(path):
        yield from read_facts(db, scope=scope)
    journal = path / "journal"
    if journal.is_dir():
        for day_file in sorted(journal.glob("*.jsonl")):
            yield from read_journal(day_file)


def _as_iso(value: Any) -> str | None:
    if value is None or value == "":
        return None
    if isinstance(value, int | float) or (
        isinstance(value, str) and re.fullmatch(r"\d+(\.\d+)?", value)
    ):
        seconds = float(value)
        if seconds > 1e12:  # milliseconds
            seconds /= 1000
        try:
            return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        except (OverflowError, OSError, ValueError):
            return None
    text = str(value).strip()
    return text if observed_date(text) else None


def _first(columns: list[str], names: tuple[str, ...]) -> str | None:
    lowered = {c.lower(): c for c in columns}
    return next((lowered[n] for n in names if n in lowered), None)


def read_facts(db: Path, *, scope: str = "project") -> Iterator[Item]:
    """Yield one item per fact row of every fact-like table in ``db`` (opened read-only)."""
    file = db.name
    try:
        conn = ForeignDatabase(db)
    except ForeignError as err:
        yield skip(file, f"not a readable SQLite database ({err})")
        return
    try:
        try:
            tables = conn.tables()
        except ForeignError as err:
            yield skip(file, f"not a readable SQLite database ({err})")
            return
        for table in tables:
            columns = conn.columns(table)
            text_col = _first(columns, TEXT_COLUMNS)
            if text_col is None:
                yield skip(f"{file}#{table}", f"table {table!r} has no text column")
                continue
            id_col = _first(columns, ID_COLUMNS)
            imp_col = _first(columns, IMPORTANCE_COLUMNS)
            time_col = _first(columns, TIME_COLUMNS)
            known = {c for c in (text_col, id_col, imp_col, time_col) if c}
            known |= {
                c for c in columns if c.lower() in IGNORED_COLUMNS or c.lower() in TIME_COLUMNS
            }
            for column in columns:
                if column not in known:
                    yield skip(f"{file}#{table}.{column}", f"column {column!r} not understood")
            for row in conn.rows(table, with_rowid=True):
                yield _fact(
                    row,
                    file,
                    table,
                    text_col,
                    id_col,
                    imp_col,
                    time_col,
                    scope,
                )
    finally:
        conn.close()


def _fact(
    values: dict[str, Any],
    file: str,
    table: str,
    text_col: str,
    id_col: str | None,
    imp_col: str | None,
    time_col: str | None,
    scope: str,
) -> Item:
    place = f"{file}#{table} row {values['rowid']}"
    raw = values.get(text_col)
    if not isinstance(raw, str) or not raw.strip():
        return skip(place, "a fact without text")
    tag = ""
    text = raw
    needle = _NEEDLE.match(raw)
    if needle:
        tag, text = needle.group(1).strip(), raw[needle.end() :]
    kind = TAGS.get(tag, "fact")
    importance = 5
    if imp_col is not None:
        try:
            number = float(values[imp_col])
            importance = round(number * 2) if number <= 5 else round(number)
        except (TypeError, ValueError):
            pass
    fact_id = values.get(id_col) if id_col else None
    record = make_record(
        fmt=FORMAT,
        kind=kind,
        text=text,
        key=belief_key(FORMAT, kind, text),
        file=file,
        place={
            "row": values["rowid"],
            "table": table,
            **({"key": str(fact_id)} if fact_id is not None else {}),
        },
        observed_at=_as_iso(values.get(time_col)) if time_col else None,
        importance=importance,
        tags=[tag] if tag else [],
        scope=scope,
    )
    return Item(place, record) if record else skip(place, "a fact without text")


def read_journal(path: Path) -> Iterator[Item]:
    """Yield one journal item per line of a wolfmem ``journal/YYYY-MM-DD.jsonl`` file."""
    file = f"journal/{path.name}"
    file_day = observed_date(path.stem)
    with path.open(encoding="utf-8", errors="replace") as fh:
        for number, line in enumerate(fh, 1):
            if not line.strip():
                continue
            place = f"{file}:{number}"
            try:
                value = json.loads(line)
            except ValueError:
                yield skip(place, "a journal line that is not JSON")
                continue
            if not isinstance(value, dict):
                yield skip(place, "a journal line that is not an object")
                continue
            text = next(
                (value[k] for k in ("text", "content", "message") if isinstance(value.get(k), str)),
                None,
            )
            if not text or not text.strip():
                yield skip(place, "a journal line without text")
                continue
            at = next(
                (
                    _as_iso(value[k])
                    for k in ("at", "ts", "time", "timestamp", "created_at")
                    if k in value
                ),
                None,
            )
            day = observed_date(at or "") or file_day
            if day is None:
                yield skip(place, "a journal line without a date")
                continue
            who = next((str(value[k]) for k in ("who", "role", "speaker") if value.get(k)), "user")
            session = next((str(value[k]) for k in ("session", "session_id") if value.get(k)), None)
            row: dict[str, Any] = {
                "at": at if at and "T" in at else f"{day}T00:00:00Z",
                "who": redact(who),
                "text": redact(text),
                "session": redact(session) if session else f"wolfmem-{day}",
                "source": {"format": FORMAT, "file": file, "line": number},
            }
            yield Item(place, evidence={"log": "journal", "day": day, "row": row})
