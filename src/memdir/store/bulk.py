"""Bulk export and import of records as JSON Lines: backups, moves between stores, seeding.

``export`` writes one record per line in its ``--json`` shape (DESIGN §3 keys plus ``body``).
``import`` reads such lines, streamed, and writes every new record in one git commit (DESIGN
§2: bulk imports commit once per batch). Each line is checked like a hand-edited file (the
schema of :func:`memdir.kernel.recordfile.build_record`) and by the secret scan; a record whose
id already exists is skipped, so importing the same file twice adds nothing. Provenance comes
from the channel: imported records get origin ``import`` (their original origin is kept in
``source.original_origin``); their status is kept, so a rejected belief stays rejected.
Near-duplicates of existing records are not merged here (``memdir dream`` reports them).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memdir.kernel import gitio, txn
from memdir.kernel.atomic import write_atomic
from memdir.kernel.errors import GitError, MemdirError, RecordParseError, SecretError
from memdir.kernel.frontmatter import extra_problem
from memdir.kernel.index import FileStat, doc_record
from memdir.kernel.lifecycle import Handle
from memdir.kernel.lock import store_lock
from memdir.kernel.model import FIELD_ORDER, relative_path
from memdir.kernel.recordfile import build_record, dump
from memdir.kernel.redact import check_text, redact

BATCH = 5000
"""Records written and indexed per batch; the git commit comes once, at the end."""


@dataclass
class BulkImported:
    """What a bulk import did."""

    imported: int = 0
    existing: int = 0
    refused: list[dict[str, Any]] = field(default_factory=list)  # {"line", "why"}

    def to_json(self) -> dict[str, Any]:
        """Return the counts and refusals as a JSON object."""
        return {"imported": self.imported, "existing": self.existing, "refused": self.refused}


def _masked(record: Any) -> Any:
    """Return ``record`` with secrets masked in every text it carries.

    memdir never writes a secret into a record, but a person may type one into a file by
    hand; an export is a capture path and never carries it out (DESIGN §4).
    """
    return dataclasses.replace(
        record,
        text=redact(record.text),
        aliases=tuple(redact(a) for a in record.aliases),
        tags=tuple(redact(t) for t in record.tags),
        body=redact(record.body),
        reason=redact(record.reason) if record.reason else record.reason,
        extra=tuple((key, redact(raw)) for key, raw in record.extra),
    )


def export_lines(handle: Handle, statuses: Iterable[str] = ()) -> Iterator[str]:
    """Yield every record (of ``statuses``, or all) as one JSON line, oldest first.

    Secrets typed into a record by hand are masked (:func:`memdir.kernel.redact.redact`).
    """
    for doc in handle.index.list_docs(statuses=list(statuses), newest_first=False):
        record = _masked(doc_record(doc))
        out = record.to_json()
        if record.extra:
            out["extra"] = dict(record.extra)  # other keys (a bug's signature), raw YAML text
        yield json.dumps(out, ensure_ascii=False) + "\n"


def _record(value: Any, scope: str) -> Any:
    if not isinstance(value, dict):
        raise RecordParseError("not a JSON object")
    values = {key: value[key] for key in FIELD_ORDER if key in value}
    body = value["body"] if isinstance(value.get("body"), str) else ""
    raw_extra: dict[str, Any] = value["extra"] if isinstance(value.get("extra"), dict) else {}
    extra = tuple(
        (str(k), str(v)) for k, v in raw_extra.items() if k not in FIELD_ORDER and k != "body"
    )
    for key, raw in extra:
        problem = extra_problem(key, raw)
        if problem:  # raw YAML text must not add or override a field (origin: owner, say)
            raise RecordParseError(problem)
    record = build_record(values, body=body, path=None, default_scope=scope, extra=extra)
    check_text(
        "\n".join(
            [
                record.text,
                *record.aliases,
                *record.tags,
                record.body,
                *(raw for _, raw in record.extra),
            ]
        )
    )
    source = dict(record.source)
    source["original_origin"] = record.origin
    source["channel"] = "import"
    return dataclasses.replace(record, origin="import", source=source)


def import_lines(handle: Handle, lines: Iterable[str]) -> BulkImported:
    """Import records from JSON lines; one commit for all of them.

    Raises:
        LockTimeoutError: another writer held the store.
        GitError: the final commit failed (the files are written and indexed; `memdir sync`
            commits them).
    """
    result = BulkImported()
    batch: list[Any] = []
    batch_ids: set[str] = set()
    written: list[str] = []
    with store_lock(handle.store, "import", handle.lock_timeout_seconds, queue=handle.lock_queue):
        txn.recover(handle.store, handle.index)
        gitio.check_writable(handle.store)  # a merge in progress, a detached HEAD…: refused
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                record = _record(json.loads(line), handle.manifest.scope)
            except (ValueError, RecursionError, RecordParseError, SecretError) as err:
                why = err.code if isinstance(err, MemdirError) else "not JSON"
                result.refused.append({"line": number, "why": why})
                continue
            target = relative_path(record)
            if (
                record.id in batch_ids
                or handle.index.get_path(record.id) is not None
                or (handle.store / target).exists()  # e.g. a quarantined hand edit: kept
            ):
                result.existing += 1
                continue
            written.append(target)
            batch.append(record)
            batch_ids.add(record.id)
            if len(batch) >= BATCH:
                _write(handle, batch)
                result.imported += len(batch)
                batch, batch_ids = [], set()
        if batch:
            _write(handle, batch)
            result.imported += len(batch)
        if result.imported:
            # Only the imported files: a hand edit elsewhere in records/ stays for health.
            try:
                gitio.commit(handle.store, written, f"import {result.imported} records (bulk)")
            except GitError as err:
                _undo(handle, written)  # refused and absent, never failed yet live
                err.args = (f"nothing was imported: {err}",)
                raise
    if result.imported:
        gitio.maintain(handle.store)  # pack the new objects so later commits stay fast
    return result


def _write(handle: Handle, records: list[Any]) -> None:
    for record in records:
        write_atomic(
            handle.store / relative_path(record), dump(record).encode("utf-8"), durable=False
        )
    with handle.index.write():
        for record in records:
            rel = relative_path(record)
            handle.index.upsert_record(record, rel, FileStat.of(handle.store / rel), [])


def _undo(handle: Handle, written: list[str]) -> None:
    """Remove the files of an import git refused, and their index rows."""
    for rel in written:
        with contextlib.suppress(FileNotFoundError):
            (handle.store / rel).unlink()
    with handle.index.write():
        for rel in written:
            handle.index.forget_path(rel)


def read_jsonl(path: Path) -> Iterator[str]:
    """Yield a file's lines, streamed."""
    with path.open(encoding="utf-8", errors="replace") as fh:
        yield from fh
