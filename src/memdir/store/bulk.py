"""Bulk export and import of records as JSON Lines: backups, moves between stores, seeding.

``export`` writes one record per line in its ``--json`` shape (DESIGN §3 keys plus ``body``).
``import`` reads such lines, streamed, and writes every new record in one git commit (DESIGN
§2: bulk imports commit once per batch). Each line is checked like a hand-edited file (the
schema of :func:`memdir.kernel.storage.recordfile.build_record`) and by the secret scan; a record
whose
id already exists is skipped, so importing the same file twice adds nothing. Provenance comes
from the channel: imported records get origin ``import`` (their original origin is kept in
``source.original_origin``); their status is kept, so a rejected belief stays rejected.
Near-duplicates of existing records are not merged here (``memdir dream`` reports them).
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from memdir.kernel.base import appendlog
from memdir.kernel.base.atomic import write_atomic
from memdir.kernel.base.errors import GitError, MemdirError, RecordParseError, SecretError
from memdir.kernel.base.model import FIELD_ORDER, Record, relative_path
from memdir.kernel.index import FileStat, doc_record
from memdir.kernel.lang.redact import check_text, redact
from memdir.kernel.lang.text import needle_tags
from memdir.kernel.storage import audit, gitio, identity, lifecycle, txn
from memdir.kernel.storage.frontmatter import extra_problem
from memdir.kernel.storage.lifecycle import Handle
from memdir.kernel.storage.lock import store_lock
from memdir.kernel.storage.recordfile import build_record, dump

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


def masked(record: Any) -> Any:
    """Return ``record`` with secrets masked in every text it carries (for every export).

    Args:
        record: A :class:`memdir.kernel.base.model.Record`.

    Returns:
        A copy whose text, aliases, tags, body, reason and extra keys are redacted.
    """
    return _masked(record)


def export_lines(handle: Handle, statuses: Iterable[str] = ()) -> Iterator[str]:
    """Yield every record (of ``statuses``, or all) as one JSON line, oldest first.

    Secrets typed into a record by hand are masked (:func:`memdir.kernel.lang.redact.redact`).
    Only records of this store's scope and project, decided in the index query
    (:func:`memdir.kernel.storage.identity.export_filter`): a record of another scope or
    project (a file copied in from another store) is not this store's to export (issue 10,
    mark 4); ``memdir health`` is where it shows. With ``statuses``, a tombstoned value that
    came back by hand is withheld too.
    """
    wanted = identity.export_filter(handle.store, handle.manifest, statuses)
    for doc in handle.index.list_docs(newest_first=False, served=wanted):
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
    tags = tuple(dict.fromkeys((*record.tags, *needle_tags(record.text))))  # as remember does
    return dataclasses.replace(record, origin="import", source=source, tags=tags)


def import_lines(
    handle: Handle, lines: Iterable[str], *, trailers: gitio.Trailers = ()
) -> BulkImported:
    """Import records from JSON lines; one commit for all of them.

    ``trailers`` name who ran the import (``Caller.trailers()``) on that commit.

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
        live = audit.tombstones(handle.store)
        # Only a superseded record can be restated: without one (a first import, a store never
        # corrected) no record needs the two near-duplicate searches, each a BM25 query over
        # every record sharing a word (at 10,000 records they were 80 % of the import's time).
        restatable = handle.index.count_by("status").get("superseded", 0) > 0
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                record = _record(json.loads(line), handle.manifest.scope)
            except (ValueError, RecursionError, RecordParseError, SecretError) as err:
                why = err.code if isinstance(err, MemdirError) else "not JSON"
                result.refused.append({"line": number, "why": why})
                continue
            if tombstoned(live, record):
                result.refused.append({"line": number, "why": "tombstoned"})
                continue
            target = relative_path(record)
            if (
                record.id in batch_ids
                or handle.index.get_path(record.id) is not None
                or (handle.store / target).exists()  # e.g. a quarantined hand edit: kept
            ):
                result.existing += 1
                continue
            successor = _restates(handle, record) if restatable else None
            if successor is not None:  # two live, contradicting beliefs otherwise
                result.refused.append({"line": number, "why": "superseded", "by": successor})
                continue
            written.append(target)
            batch.append(record)
            batch_ids.add(record.id)
            if len(batch) >= BATCH:
                restatable = restatable or any(r.status == "superseded" for r in batch)
                _write(handle, batch)
                result.imported += len(batch)
                batch, batch_ids = [], set()
        if batch:
            _write(handle, batch)
            result.imported += len(batch)
        if result.imported:
            # Only the imported files: a hand edit elsewhere in records/ stays for health.
            logged = audit_import(handle.store, written, live, trailers)
            try:
                gitio.commit(
                    handle.store,
                    written + logged.paths,
                    f"import {result.imported} records (bulk)",
                    trailers=trailers,
                )
            except GitError as err:
                _undo(handle, written)  # refused and absent, never failed yet live
                audit.retract(handle.store, logged.events, logged.stones)
                err.args = (f"nothing was imported: {err}",)
                raise
    if result.imported:
        gitio.maintain(handle.store)  # pack the new objects so later commits stay fast
    return result


def _restates(handle: Handle, record: Record) -> str | None:
    """The live successor of a superseded value ``record`` restates, if it does (mark 1).

    As in :func:`memdir.kernel.storage.lifecycle.remember`: a live near-duplicate of the same kind
    makes it a confirmation, not a restatement. An import is not the owner speaking, so a
    restatement is refused with a pointer to the successor, never turned into a correction.
    """
    if record.status not in ("active", "candidate"):
        return None
    found = lifecycle.restated(handle, record.text, record.kind)
    if found is None:  # the common case: one search, not two
        return None
    live = lifecycle.find_similar(
        handle.index, record.text, handle.manifest.near_duplicate, ("active", "candidate")
    )
    if any(doc["kind"] == record.kind for _, doc in live):
        return None
    return found[1]


def tombstoned(live: dict[str, Any], record: Any) -> bool:
    """Whether ``record`` would make a tombstoned value active or candidate again.

    Args:
        live: :func:`memdir.kernel.storage.audit.tombstones` of the store.
        record: The :class:`~memdir.kernel.base.model.Record` about to be written.

    Returns:
        True when the import must refuse it.
    """
    return record.status in ("active", "candidate") and audit.value_key(record.text) in live


@dataclass
class Logged:
    """What :func:`audit_import` appended: files to commit, and what to retract on failure."""

    paths: list[str] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)
    stones: list[str] = field(default_factory=list)


def audit_import(
    store: Path, written: list[str], live: dict[str, Any], trailers: gitio.Trailers
) -> Logged:
    """Log one ``import`` audit event for ``written`` and tombstone its rejected values.

    Every importer's bulk write ends here, just before its commit, so the audit log and the
    tombstone ledger see every imported record (hashes and keys only, never text).

    Args:
        store: The store folder.
        written: Store-relative record files the import wrote.
        live: The tombstones read at the start of the import (updated in place).
        trailers: Who ran the import.

    Returns:
        :class:`Logged`: the audit files to add to the import's commit.

    Raises:
        OSError: the audit folder cannot be written.
    """
    from memdir.kernel.storage.recordfile import read_canonical

    logged = Logged()
    if not written:
        return logged
    who = audit.who_from_trailers(trailers)
    hashes = []
    for rel in written:
        data = (store / rel).read_bytes()
        hashes.append({"id": Path(rel).stem, "before": None, "after": audit.content_hash(data)})
        parsed = read_canonical(data.decode("utf-8", "replace"), Path(rel))
        if parsed is not None and parsed.record.status == "rejected":
            key = audit.value_key(parsed.record.text)
            if key not in live:
                logged.stones.append(audit.tombstone_line(key, "add", who, parsed.record.id))
                live[key] = {"record": parsed.record.id}
    logged.events.append(audit.event("import", hashes, who, count=len(written)))
    logged.paths = audit.append(store, logged.events)
    if logged.stones:
        audit.add_tombstones(store, logged.stones)
        logged.paths.append(audit.TOMBSTONES)
    return logged


def _write(handle: Handle, records: list[Any]) -> None:
    """Write imported records (and index them); each becomes this store's own.

    An import is the owner bringing records in on purpose, so a project-scoped record takes
    this store's project identity, whatever another store's export said
    (:mod:`memdir.kernel.storage.identity`); a store without one yet leaves it unset.
    """
    mine = handle.manifest.project
    records = [
        dataclasses.replace(r, project=mine or None) if r.scope == "project" else r for r in records
    ]
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


class Planned(Protocol):
    """One thing an importer found (``memdir.importers.pipeline.Item``)."""

    @property
    def place(self) -> str:
        """Where in the source: ``cerebrum.md:12``."""

    @property
    def record(self) -> Record | None:
        """The record to write, or ``None`` for a refusal or skip."""

    @property
    def why(self) -> str:
        """Why nothing is written, when ``record`` is ``None``."""

    @property
    def skipped(self) -> bool:
        """True when the reader did not understand the thing (not a policy refusal)."""

    @property
    def evidence(self) -> dict[str, Any] | None:
        """An action-log or journal row, or a file-map entry, instead of a record."""


MAX_LISTED = 200
"""Refusals and skips listed one by one in a report; the rest are only counted."""


@dataclass
class SourceImported:
    """What an import from another tool did (or, on a dry run, would do)."""

    format: str
    dry_run: bool
    created: dict[str, dict[str, int]] = field(default_factory=dict)  # kind → status → count
    existing: int = 0  # already in the store (a second run, or the same belief twice)
    refused: dict[str, int] = field(default_factory=dict)  # why → count
    skipped: dict[str, int] = field(default_factory=dict)  # why → count (not understood)
    listed: list[dict[str, str]] = field(default_factory=list)  # {"place", "why", "outcome"}
    ids: dict[str, str] = field(default_factory=dict)  # id in the source → memdir id (AMP)
    evidence: dict[str, int] = field(default_factory=dict)  # actions / journal / anatomy → count
    commit: str | None = None

    @property
    def imported(self) -> int:
        """How many records were (or would be) created."""
        return sum(sum(by_status.values()) for by_status in self.created.values())

    def note(self, place: str, why: str, outcome: str) -> None:
        """Count a refusal (``outcome`` ``refused``) or skip (``skipped``) at ``place``."""
        counts = self.refused if outcome == "refused" else self.skipped
        counts[why] = counts.get(why, 0) + 1
        if len(self.listed) < MAX_LISTED:
            self.listed.append({"place": place, "why": why, "outcome": outcome})

    def to_json(self) -> dict[str, Any]:
        """Return the report as a JSON object (``--json``)."""
        return {
            "format": self.format,
            "dry_run": self.dry_run,
            "imported": self.imported,
            "created": self.created,
            "existing": self.existing,
            "refused": sum(self.refused.values()),
            "refused_by_reason": self.refused,
            "skipped": sum(self.skipped.values()),
            "skipped_by_reason": self.skipped,
            "details": self.listed,
            "evidence": self.evidence,
            "ids": self.ids,
            "commit": self.commit,
        }


def _key(kind: str, text: str) -> bytes:
    """Return the identity of a belief: a short hash of its kind and normalised text."""
    from memdir.kernel.lang.text import normalized_text

    return hashlib.blake2b(f"{kind}\n{normalized_text(text)}".encode(), digest_size=12).digest()


class _Known:
    """What the store already holds, read once: belief keys, and rejected texts to match.

    A rejected belief is matched as :func:`memdir.kernel.storage.lifecycle.find_similar` matches it
    for ``remember`` (equal normalised text, or a shingle Jaccard similarity at or above the
    manifest's ``near_duplicate`` when the two do not contradict), through an inverted index of
    the rejected records' shingles, so each imported text is compared only with rejected
    records it shares a shingle with.
    """

    def __init__(self, handle: Handle) -> None:
        from memdir.kernel.lang.text import normalized_text, shingles

        self.threshold = handle.manifest.near_duplicate
        self.keys: set[bytes] = set()
        self.exact: dict[str, str] = {}  # normalised rejected text → id
        self.sets: list[tuple[str, set[str], str]] = []  # (id, shingles, text)
        self.by_shingle: dict[str, list[int]] = {}
        for record_id, kind, status, text in handle.index.record_texts():
            if status == "rejected":
                self.exact.setdefault(normalized_text(text), record_id)
                found = shingles(text)
                for shingle in found:
                    self.by_shingle.setdefault(shingle, []).append(len(self.sets))
                self.sets.append((record_id, found, text))
            else:
                self.keys.add(_key(kind, text))

    def rejected(self, text: str) -> str | None:
        """Return the id of a rejected record ``text`` repeats, or ``None``."""
        from memdir.kernel.lang.polarity import opposed
        from memdir.kernel.lang.text import normalized_text, shingles

        if not self.sets:
            return None
        exact = self.exact.get(normalized_text(text))
        if exact is not None:
            return exact
        mine = shingles(text)
        if not mine:
            return None
        for index in sorted({i for s in mine for i in self.by_shingle.get(s, ())}):
            record_id, theirs, said = self.sets[index]
            if (
                theirs
                and len(mine & theirs) / len(mine | theirs) >= self.threshold
                and not opposed(text, said)  # the reverse of a rejected belief is news
            ):
                return record_id
        return None


def import_planned(
    handle: Handle,
    items: Iterable[Planned],
    *,
    fmt: str,
    dry_run: bool = False,
    trailers: gitio.Trailers = (),
) -> SourceImported:
    """Write the records an importer planned, in batches, with one commit at the end.

    Each record passes the write path's gates in DESIGN §4's order: its origin is ``import``
    (set by the importer), the secret scan refuses a record holding a secret, a near-duplicate
    of a ``rejected`` record is refused (an import never re-asserts what the owner rejected),
    and one already in the store (same id, or the same normalised text and kind, whatever its
    status: an import never brings back a value that was superseded or forgotten) is counted
    as existing, so a second run adds nothing. ``dry_run`` runs every check and writes nothing.
    The checks cost one pass over the index at the start and a set lookup per record (not a
    full-text query each: that made a 20,000-bullet import quadratic).

    Args:
        handle: The open store.
        items: The importer's stream; consumed once, one item at a time.
        fmt: The ``--from`` name, for the commit message.
        dry_run: Only count.
        trailers: Who ran the import (``Caller.trailers()``), on the commit.

    Returns:
        :class:`SourceImported`; ``commit`` is the new commit's hash (``None`` when nothing
        was written), which ``memdir rollback`` undoes in one step.

    Raises:
        LockTimeoutError: another writer held the store.
        GitError: the commit failed (files are written and indexed; `memdir sync` commits them).
    """
    result = SourceImported(fmt, dry_run)
    batch: list[Record] = []
    seen: set[bytes] = set()  # ids and text keys of this run (bounded by the source's beliefs)
    written: list[str] = []
    with store_lock(handle.store, "import", handle.lock_timeout_seconds, queue=handle.lock_queue):
        txn.recover(handle.store, handle.index)
        known = _Known(handle)
        evidence = _Evidence(handle, result, trailers)
        live = audit.tombstones(handle.store)
        for item in items:
            record = item.record
            if record is None and item.evidence is not None:
                evidence.add(item.place, item.evidence)
                continue
            if record is None:
                result.note(item.place, item.why, "skipped" if item.skipped else "refused")
                continue
            try:
                check_text("\n".join([record.text, *record.aliases, *record.tags, record.body]))
            except SecretError:
                result.note(item.place, "holds a secret", "refused")
                continue
            text_key = _key(record.kind, record.text)
            id_key = record.id.encode("utf-8")
            target = relative_path(record)
            if (
                id_key in seen
                or text_key in seen
                or text_key in known.keys
                or handle.index.get_path(record.id) is not None
                or (handle.store / target).exists()
            ):
                result.existing += 1
                continue
            rejected = known.rejected(record.text) if record.status != "rejected" else None
            if rejected is not None:
                result.note(item.place, f"repeats rejected {rejected}", "refused")
                continue
            if tombstoned(live, record):  # a look-alike, or its rejected record was purged
                held = live[audit.value_key(record.text)].get("record")
                result.note(item.place, f"repeats rejected {held} (tombstoned value)", "refused")
                continue
            seen.add(id_key)
            seen.add(text_key)
            amp_id = record.source.get("amp_id")
            if isinstance(amp_id, str):
                result.ids[amp_id] = record.id
            by_status = result.created.setdefault(record.kind, {})
            by_status[record.status] = by_status.get(record.status, 0) + 1
            if dry_run:
                continue
            written.append(target)
            batch.append(record)
            if len(batch) >= BATCH:
                _write(handle, batch)
                batch = []
        if batch:
            _write(handle, batch)
        logs = evidence.finish()
        if written or logs:
            logged = audit_import(handle.store, written, live, trailers)
            gitio.commit(
                handle.store,
                written + logs + logged.paths,
                f"import {len(written)} records from {fmt}"
                + "".join(f", {n} {log} entries" for log, n in result.evidence.items()),
                trailers=trailers,
            )
            result.commit = gitio.head_commit(handle.store)
    if written:
        gitio.maintain(handle.store)
    return result


class _Evidence:
    """Writes an importer's evidence: action-log and journal lines, and file-map entries.

    Log lines carry an ``import`` key (a hash of the row), and a line whose key the day's file
    already holds is not written again, so a second import adds nothing. A log file or the
    file map that holds uncommitted lines (hooks append between commits) is committed on its
    own first, so the import commit holds only the import and its rollback removes only that.
    """

    FLUSH_LINES = 1000

    def __init__(self, handle: Handle, result: SourceImported, trailers: gitio.Trailers) -> None:
        self.handle = handle
        self.result = result
        self.trailers = trailers
        self.keys: dict[str, set[str]] = {}  # log file → import keys it holds
        self.pending: dict[str, list[str]] = {}
        self.files: dict[str, str] = {}  # anatomy: path → description
        self.written: list[str] = []

    def _settle(self, rel: str) -> None:
        """Commit ``rel``'s own uncommitted changes before the import touches it."""
        if (self.handle.store / rel).exists() and gitio.changed_since_head(
            self.handle.store, [rel]
        ):
            gitio.commit(self.handle.store, [rel], f"commit {rel} before an import")

    def _load_keys(self, rel: str) -> set[str]:
        keys: set[str] = set()
        path = self.handle.store / rel
        if path.exists():
            with path.open(encoding="utf-8", errors="replace") as fh:
                for line in fh:
                    if '"import"' not in line:
                        continue
                    try:
                        value = json.loads(line).get("import")
                    except (ValueError, AttributeError):
                        continue
                    if isinstance(value, str):
                        keys.add(value)
        return keys

    def add(self, place: str, evidence: dict[str, Any]) -> None:
        """Count, and unless this is a dry run queue, one piece of evidence."""
        log = str(evidence.get("log"))
        row = evidence.get("row")
        if not isinstance(row, dict):
            self.result.note(place, "evidence without a row", "skipped")
            return
        if log == "anatomy":
            path = str(row.get("path") or "")
            if path:
                self.files.setdefault(path, str(row.get("description") or ""))
            return
        day = str(evidence.get("day") or "")
        if log not in ("actions", "journal") or not re.fullmatch(r"\d{4}-\d{2}-\d{2}", day):
            self.result.note(place, f"evidence for an unknown log {log!r}", "skipped")
            return
        rel = f"{log}/{day}.jsonl"
        key = hashlib.sha256(json.dumps(row, sort_keys=True).encode("utf-8")).hexdigest()[:20]
        if rel not in self.keys:
            self.keys[rel] = self._load_keys(rel)
        if key in self.keys[rel]:
            self.result.existing += 1
            return
        self.keys[rel].add(key)
        self.result.evidence[log] = self.result.evidence.get(log, 0) + 1
        if self.result.dry_run:
            return
        line = json.dumps({**row, "import": key}, ensure_ascii=False) + "\n"
        if rel not in self.pending:
            self._settle(rel)
            self.pending[rel] = []
            self.written.append(rel)
        self.pending[rel].append(line)
        if len(self.pending[rel]) >= self.FLUSH_LINES:
            self._flush(rel)

    def _flush(self, rel: str) -> None:
        lines = self.pending.get(rel)
        if lines:
            path = self.handle.store / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            appendlog.append(path, "".join(lines).encode("utf-8"))
            self.pending[rel] = []

    def finish(self) -> list[str]:
        """Write what is queued; return the store paths written (for the import commit)."""
        for rel in list(self.pending):
            self._flush(rel)
        if self.files:
            self._map_files()
        return self.written

    def _map_files(self) -> None:
        from memdir.kernel.filemap import anatomy
        from memdir.kernel.storage.paths import project_relative

        store = self.handle.store
        root = store.parent if store.name == ".memdir" else store
        data = anatomy.load(store)
        known: dict[str, Any] = data["files"]
        added = 0
        for rel, description in sorted(self.files.items()):
            if rel.startswith("/") or project_relative(root, rel, store_name=store.name) != rel:
                self.result.note(rel, "a path memdir does not map", "refused")
            elif rel in known:
                self.result.existing += 1
            elif (entry := anatomy.read_entry(root, rel)) is None:
                self.result.note(rel, "file no longer exists", "skipped")
            else:
                if description:
                    entry.description = redact(description)
                known[rel] = entry.to_json()
                added += 1
        if added:
            self.result.evidence["anatomy"] = added
            if not self.result.dry_run:
                for rel in (anatomy.ANATOMY_JSON, anatomy.ANATOMY_MD):
                    self._settle(rel)
                anatomy.save(store, data)
                self.written += [anatomy.ANATOMY_JSON, anatomy.ANATOMY_MD]
