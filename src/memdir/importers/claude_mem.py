"""Read a claude-mem database (``~/.claude-mem/claude-mem.db``) into candidate records.

claude-mem (a Claude Code plugin) keeps SQLite tables ``observations`` (one row per
compressed tool observation: ``id``, ``memory_session_id`` / ``sdk_session_id``, ``project``,
``type``, ``title``, ``subtitle``, ``narrative``, ``text``, ``facts`` and ``concepts`` as JSON
arrays, ``files_read`` / ``files_modified``, ``created_at`` / ``created_at_epoch``) and
``session_summaries`` (``request``, ``investigated``, ``learned``, ``completed``,
``next_steps``, ``notes``, ``project``, ``created_at``). Columns differ between releases
(migrations added title, narrative and facts); the reader takes what is there.

Mapping: every row becomes a ``candidate`` for review, never an active belief (a model wrote
them). Observation ``type`` ``decision`` → decision, ``bugfix`` → bug, ``discovery`` → fact,
``feature`` / ``refactor`` / ``change`` and anything else → episode. Title (and subtitle) are
the text, narrative, facts and files the body, concepts become tags. A summary becomes one
``episode`` whose text is the request. The claude-mem ``project`` is kept in
``source.project`` and as a ``project:<name>`` tag. Other tables (sessions, prompts, the FTS
shadow tables) are not beliefs and are not read.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from memdir.importers.pipeline import Item, belief_key, make_record, skip
from memdir.kernel.base.errors import UsageError
from memdir.kernel.index.foreign import ForeignDatabase, ForeignError
from memdir.kernel.lang.redact import redact

FORMAT = "claude-mem"
TYPES = {"decision": "decision", "bugfix": "bug", "discovery": "fact"}
SUMMARY_SECTIONS = (
    ("Investigated", "investigated"),
    ("Learned", "learned"),
    ("Completed", "completed"),
    ("Next steps", "next_steps"),
    ("Notes", "notes"),
)


def _database(path: Path) -> Path:
    if path.is_dir():
        path = path / "claude-mem.db"
    if not path.is_file():
        raise UsageError(f"{path} is not a claude-mem database (no claude-mem.db)")
    return path


def _list(value: Any) -> list[str]:
    if value is None or value == "":
        return []
    if isinstance(value, str):
        try:
            loaded = json.loads(value)
        except ValueError:
            return [value]
        value = loaded
    if isinstance(value, list):
        return [str(v) for v in value if v is not None and str(v).strip()]
    return [str(value)]


def _when(row: dict[str, Any]) -> str | None:
    created = row.get("created_at")
    if isinstance(created, str) and created[:4].isdigit():
        return created
    return None


def read(path: Path, *, scope: str = "project") -> Iterator[Item]:
    """Yield candidate items for the observations and summaries of a claude-mem database.

    Args:
        path: ``claude-mem.db`` or the folder holding it.
        scope: The store's scope.

    Raises:
        UsageError: no database there, or not one claude-mem wrote.
    """
    db = _database(path)
    try:
        conn = ForeignDatabase(db)
        tables = set(conn.tables())
    except ForeignError as err:
        raise UsageError(f"{db} is not a readable SQLite database ({err})") from None
    try:
        if not {"observations", "session_summaries"} & tables:
            raise UsageError(f"{db} has no observations or session_summaries table")
        if "observations" in tables:
            for row in conn.rows("observations", order_by="id"):
                yield _observation(row, db.name, scope)
        if "session_summaries" in tables:
            for row in conn.rows("session_summaries", order_by="id"):
                yield _summary(row, db.name, scope)
    finally:
        conn.close()


def _session(row: dict[str, Any]) -> str | None:
    value = row.get("memory_session_id") or row.get("sdk_session_id") or row.get("session_id")
    return str(value) if value else None


def _observation(row: dict[str, Any], file: str, scope: str) -> Item:
    place = f"{file}#observations row {row.get('id')}"
    kind = TYPES.get(str(row.get("type") or "").lower(), "episode")
    title = " — ".join(
        str(row[k]).strip()
        for k in ("title", "subtitle")
        if isinstance(row.get(k), str) and row[k].strip()
    )
    text = title or (row.get("text") if isinstance(row.get("text"), str) else "") or ""
    body_parts = []
    if isinstance(row.get("narrative"), str) and row["narrative"].strip():
        body_parts.append(row["narrative"].strip())
    if title and isinstance(row.get("text"), str) and row["text"].strip() and row["text"] != title:
        body_parts.append(row["text"].strip())
    facts = _list(row.get("facts"))
    if facts:
        body_parts.append("\n".join(f"- {fact}" for fact in facts))
    files = _list(row.get("files_read")) + _list(row.get("files_modified"))
    if files:
        body_parts.append("Files: " + ", ".join(files))
    project = str(row.get("project") or "")
    record = make_record(
        fmt=FORMAT,
        kind=kind,
        text=text,
        key=f"{FORMAT}\nobservation\n{row.get('id')}\n{belief_key(FORMAT, kind, text)}",
        file=file,
        place={"table": "observations", "row": row.get("id")},
        status="candidate",
        observed_at=_when(row),
        tags=[*(_list(row.get("concepts"))[:10]), *([f"project:{project}"] if project else [])],
        body=redact("\n\n".join(body_parts)),  # prose: a secret in it is masked
        extra_source={
            "project": project or None,
            "session": _session(row),
            "type": row.get("type"),
        },
        scope=scope,
    )
    return Item(place, record) if record else skip(place, "an observation without text")


def _summary(row: dict[str, Any], file: str, scope: str) -> Item:
    place = f"{file}#session_summaries row {row.get('id')}"
    request = row.get("request") if isinstance(row.get("request"), str) else ""
    sections = [
        f"{label}: {row[key].strip()}"
        for label, key in SUMMARY_SECTIONS
        if isinstance(row.get(key), str) and row[key].strip()
    ]
    text = (request or "").strip() or (sections[0] if sections else "")
    project = str(row.get("project") or "")
    record = make_record(
        fmt=FORMAT,
        kind="episode",
        text=text,
        key=f"{FORMAT}\nsummary\n{row.get('id')}\n{_session(row)}",
        file=file,
        place={"table": "session_summaries", "row": row.get("id")},
        status="candidate",
        observed_at=_when(row),
        tags=[f"project:{project}"] if project else [],
        body=redact("\n\n".join(sections)),
        extra_source={"project": project or None, "session": _session(row)},
        scope=scope,
    )
    return Item(place, record) if record else skip(place, "a summary without text")
