"""Importing host session transcripts into the journal: Claude Code JSONL, Codex rollouts.

Files are streamed line by line, so a transcript of any size imports in bounded memory. From
each file come the user's and the assistant's text (with the names of the tools the assistant
used), timestamps, session ids, and token usage, which goes to each session's ledger. Tool
output, system and meta messages, and Codex's encrypted reasoning are never stored. Text is
redacted like every journal turn.

Import is idempotent: every turn carries a ``ref`` (``claude:<uuid>``, or a hash of a Codex
turn's session, time, role and text), and a turn whose ref the journal already has is skipped;
each file's progress is also kept in ``state/imports.json`` so a re-run resumes where the last
one stopped. Lines that are not JSON are counted and reported, never a silent success; a file
that cannot be read raises.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from memdir.kernel.base.atomic import write_text_atomic
from memdir.kernel.base.clock import parse_instant, utc_now
from memdir.kernel.base.errors import MemdirError, UsageError
from memdir.kernel.base.layout import StoreLayout, layout
from memdir.kernel.index import Index
from memdir.kernel.storage import journal, session

PROGRESS_NAME = StoreLayout.IMPORTS
SYNC_EVERY_TURNS = 5000
"""The journal index catches up this often during an import, for cross-file dedup."""


@dataclass
class Imported:
    """What an import did."""

    files: int = 0
    up_to_date: int = 0  # files with nothing new since the last import
    turns: int = 0
    duplicates: int = 0
    bad_lines: int = 0
    sessions: set[str] = field(default_factory=set)
    tokens: dict[str, int] = field(default_factory=lambda: {"input": 0, "output": 0})

    def to_json(self) -> dict[str, Any]:
        """Return the counts as a JSON object."""
        return {
            "files": self.files,
            "up_to_date": self.up_to_date,
            "turns": self.turns,
            "duplicates": self.duplicates,
            "bad_lines": self.bad_lines,
            "sessions": sorted(self.sessions),
            "tokens": self.tokens,
        }


@dataclass
class Turn:
    """One conversation turn found in a transcript."""

    ref: str
    who: str
    text: str
    session: str
    at: datetime
    input_tokens: int = 0
    output_tokens: int = 0


def _instant(value: Any) -> datetime:
    if isinstance(value, str):
        try:
            return parse_instant(value)
        except UsageError:
            pass  # a future or broken time: filed under now (case B38)
    return utc_now()


def _blocks_text(content: Any) -> tuple[str, list[str]]:
    """Return the text and the tool names of a message's content (string or block list)."""
    if isinstance(content, str):
        return content, []
    texts: list[str] = []
    tools: list[str] = []
    if isinstance(content, list):
        for block in content:
            if not isinstance(block, dict):
                continue
            kind = block.get("type")
            if kind in ("text", "input_text", "output_text") and isinstance(block.get("text"), str):
                texts.append(block["text"])
            elif kind == "tool_use" and isinstance(block.get("name"), str):
                tools.append(block["name"])
    return "\n".join(texts), tools


def _with_tools(text: str, tools: list[str]) -> str:
    if not tools:
        return text
    listed = ", ".join(dict.fromkeys(tools))
    return f"{text}\n[tools used: {listed}]" if text.strip() else f"[tools used: {listed}]"


def claude_turns(value: dict[str, Any]) -> Iterator[Turn]:
    """Yield the turn in one line of a Claude Code transcript (none for tool results, meta)."""
    kind = value.get("type")
    message = value.get("message")
    if kind not in ("user", "assistant") or not isinstance(message, dict) or value.get("isMeta"):
        return
    text, tools = _blocks_text(message.get("content"))
    text = _with_tools(text, tools) if kind == "assistant" else text
    if not text.strip() or text.lstrip().startswith(("<command-", "<local-command-", "Caveat:")):
        return
    usage: dict[str, Any] = message["usage"] if isinstance(message.get("usage"), dict) else {}

    uuid = str(value.get("uuid") or "")
    session_id = str(value.get("sessionId") or "")
    ref = (
        f"claude:{uuid}"
        if uuid
        else "claude:" + hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()[:24]
    )
    yield Turn(
        ref,
        kind,
        text,
        session_id,
        _instant(value.get("timestamp")),
        input_tokens=int(usage.get("input_tokens") or 0),
        output_tokens=int(usage.get("output_tokens") or 0),
    )


class CodexReader:
    """Turns of one Codex rollout: messages from ``response_item``; tools from function calls."""

    def __init__(self) -> None:
        self.session = ""
        self.pending_tools: list[str] = []

    def turns(self, value: dict[str, Any]) -> Iterator[Turn]:
        """Yield the turn in one rollout line, if it is one (unknown types are skipped)."""
        kind, payload = value.get("type"), value.get("payload")
        if not isinstance(payload, dict):
            return
        if kind == "session_meta" and isinstance(payload.get("id"), str):
            self.session = payload["id"]
            return
        if kind != "response_item":
            return  # event_msg repeats response_item messages; turn_context, reasoning: skipped
        item = payload.get("type")
        if item in ("function_call", "custom_tool_call") and isinstance(payload.get("name"), str):
            self.pending_tools.append(payload["name"])
            return
        if item != "message" or payload.get("role") not in ("user", "assistant"):
            return
        role = payload["role"]
        text, _ = _blocks_text(payload.get("content"))
        if role == "assistant":
            text, self.pending_tools = _with_tools(text, self.pending_tools), []
        if not text.strip() or text.lstrip().startswith(
            ("<environment_context>", "<user_instructions>")
        ):
            return
        stamp = value.get("timestamp") if isinstance(value.get("timestamp"), str) else ""
        digest = hashlib.sha256(f"{self.session}|{stamp}|{role}|{text}".encode()).hexdigest()[:24]
        yield Turn(f"codex:{digest}", role, text, self.session, _instant(stamp))


HEAD_BYTES = 65536
"""A file's identity: the hash of its first bytes, up to this many (a grown file keeps it)."""


def _head_sha(path: Path, length: int) -> str:
    with path.open("rb") as fh:
        return hashlib.sha256(fh.read(length)).hexdigest()


def _lines(path: Path, offset: int) -> Iterator[tuple[int, bytes]]:
    """Yield ``(end_offset, line)`` for each complete line after ``offset``."""
    with path.open("rb") as fh:
        fh.seek(offset)
        position = offset
        for raw in fh:
            if not raw.endswith(b"\n"):
                return  # a line still being written: the next import takes it
            position += len(raw)
            yield position, raw


class _Dedup:
    """Bounded-memory duplicate check: the journal index plus the refs since its last sync."""

    def __init__(self, store: Path) -> None:
        self.store = store
        self.index = Index(store)
        journal.sync_journal(self.index, store)
        self.recent: set[str] = set()

    def seen(self, ref: str) -> bool:
        if ref in self.recent:
            return True
        return self.index.has_turn_ref(ref)

    def add(self, ref: str) -> None:
        self.recent.add(ref)
        if len(self.recent) >= SYNC_EVERY_TURNS:
            journal.sync_journal(self.index, self.store)
            self.recent.clear()

    def close(self) -> None:
        journal.sync_journal(self.index, self.store)
        self.index.close()


def import_files(store: Path, paths: list[Path], source: str) -> Imported:
    """Import ``claude-transcript`` or ``codex-rollout`` files into the journal.

    Raises:
        UsageError: an unknown source, or a path that is not a readable file.
        OSError: a file failed while being read (what came before it is kept).
    """
    if source not in ("claude-transcript", "codex-rollout"):
        raise UsageError(f"unknown source {source!r}; use claude-transcript or codex-rollout")
    for path in paths:
        if not path.is_file():
            raise UsageError(f"{path} is not a file")
    progress_path = layout(store).in_state(PROGRESS_NAME)
    try:
        progress = json.loads(progress_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        progress = {}
    result = Imported()
    ledgers: dict[str, dict[str, int]] = {}
    dedup = _Dedup(store)
    try:
        for path in paths:
            key = str(path.resolve())
            known = progress.get(key, {})
            head_len = int(known.get("head_len", 0))
            same = head_len > 0 and known.get("head") == _head_sha(path, head_len)
            offset = int(known.get("offset", 0)) if same else 0
            if offset > path.stat().st_size:
                offset = 0
            if offset and offset == path.stat().st_size:
                result.up_to_date += 1
            offset = _import_one(store, path, offset, source, result, ledgers, dedup)
            head_len = min(path.stat().st_size, HEAD_BYTES)
            progress[key] = {
                "head": _head_sha(path, head_len),
                "head_len": head_len,
                "offset": offset,
            }

            write_text_atomic(progress_path, json.dumps(progress, indent=1))
            result.files += 1
    finally:
        dedup.close()
    for session_id, usage in ledgers.items():
        session.record(store, session_id, {"e": "ledger", "add": dict(usage)})
    return result


def _import_one(
    store: Path,
    path: Path,
    offset: int,
    source: str,
    result: Imported,
    ledgers: dict[str, dict[str, int]],
    dedup: _Dedup,
) -> int:
    reader = CodexReader()
    for end, raw in _lines(path, offset):
        try:
            value = json.loads(raw)
        except (ValueError, RecursionError):  # not JSON, or nested too deeply to read
            result.bad_lines += 1
            offset = end
            continue
        if not isinstance(value, dict):
            result.bad_lines += 1
            offset = end
            continue
        turns = claude_turns(value) if source == "claude-transcript" else reader.turns(value)
        for turn in turns:
            if dedup.seen(turn.ref):
                result.duplicates += 1
                continue
            try:
                journal.append_turn(
                    store,
                    turn.who,
                    turn.text,
                    session=turn.session or None,
                    at=turn.at,
                    extra={"ref": turn.ref},
                )
            except MemdirError:
                result.bad_lines += 1  # empty after redaction, or too long for one line
                continue
            dedup.add(turn.ref)
            result.turns += 1
            if turn.session:
                result.sessions.add(turn.session)
                ledger = ledgers.setdefault(
                    turn.session, {"transcript_input_tokens": 0, "transcript_output_tokens": 0}
                )
                ledger["transcript_input_tokens"] += turn.input_tokens
                ledger["transcript_output_tokens"] += turn.output_tokens
            result.tokens["input"] += turn.input_tokens
            result.tokens["output"] += turn.output_tokens
        offset = end
    return offset
