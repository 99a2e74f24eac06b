"""PostToolUse: the action log, the session's read state, the anatomy of changed files.

Every tool event appends one row to ``actions/YYYY-MM-DD.jsonl`` first, with a single
``O_APPEND`` write and no store lock, so a slow or timed-out hook never loses it; a purge
rewriting the file at that moment is waited for briefly (:mod:`memdir.kernel.appendlog`).
Paths are relative to the project; paths outside it (symlinks resolved), inside the store, or
naming secret files are never recorded (DESIGN §10.4, §10.5). Bash commands are redacted and
cut to 300 characters.

A changed file's anatomy entry is updated under the store lock; when the lock is not free in
time, the path goes to ``state/anatomy-spool.jsonl`` and the next update or ``memdir scan``
merges it. Only the merged lines leave the spool (:func:`memdir.kernel.appendlog.drop_head`),
so a path spooled while another hook merges is never deleted unmerged.

Imports: standard library and the kernel only.
"""

from __future__ import annotations

import re

from memdir.hooks.context import Context
from memdir.hooks.payload import HookEvent, HookResult
from memdir.kernel import appendlog, jsonl, session
from memdir.kernel.clock import now_iso
from memdir.kernel.errors import LockTimeoutError
from memdir.kernel.lock import store_lock
from memdir.kernel.paths import state_dir
from memdir.kernel.redact import redact
from memdir.kernel.text import truncate

TYPE_CHECKING = False  # the hook path never imports typing (start-up cost)
if TYPE_CHECKING:
    from typing import Any

FILE_TOOLS = ("Read", "Write", "Edit", "MultiEdit")
CHANGING_TOOLS = ("Write", "Edit", "MultiEdit")
SPOOL = "anatomy-spool.jsonl"
COMMAND_CHARS = 300
_BELIEF_COMMAND = re.compile(r"(?:^|[\s;&|(])memdir\s+(?:remember|correct)\b")
_BELIEF_TOOL = re.compile(r"^mcp__memdir__(?:memory_remember|memory_correct)$")


_SHELL_TRAILER = re.compile(r"^(?:Error|Exit Code|Signal|Background PIDs|Process Group PGID): ")
_SHELL_FAILED = re.compile(r"^(?:Exit Code: (?!0$)|Signal: )")


def _shell_failed(text: str) -> bool:
    """Whether Gemini CLI's shell result text reports a failure.

    Gemini CLI (0.61.0) answers ``run_shell_command`` with ``llmContent`` holding ``Output: …``
    and then trailer lines (``Error:``, ``Exit Code: N`` only when N is not 0, ``Signal:``,
    ``Background PIDs:``, ``Process Group PGID:``), wrapped in ``<untrusted_context>``; no
    field says the command failed. Only the trailer after the output is read: a non-zero exit
    code or a signal is a failure.
    """
    lines = text.rstrip().removesuffix("</untrusted_context>").rstrip().splitlines()
    for line in reversed(lines):
        if not _SHELL_TRAILER.match(line):
            return False
        if _SHELL_FAILED.match(line):
            return True
    return False


def _succeeded(response: Any) -> bool:
    if isinstance(response, dict):
        if response.get("success") is False or response.get("error") or response.get("is_error"):
            return False
        content = response.get("llmContent")
        if isinstance(content, str) and _shell_failed(content):
            return False
        return not response.get("interrupted", False)
    return response is not None


def action_row(event: HookEvent, rel: str | None) -> dict[str, Any] | None:
    """Return the action-log row for a tool event, or ``None`` when nothing may be recorded."""
    row: dict[str, Any] = {
        "at": now_iso(),
        "session": redact(event.session),  # host-supplied strings are capture paths too
        "tool": redact(event.tool),
    }
    if event.subagent:
        row["subagent"] = True
    if event.tool in FILE_TOOLS:
        if rel is None:
            return None  # outside the project, inside the store, or a secret file
        row["path"] = redact(rel)
    elif event.tool == "Bash":
        command = event.tool_input.get("command")
        row["command"] = (
            truncate(redact(command), COMMAND_CHARS) if isinstance(command, str) else ""
        )
    row["ok"] = _succeeded(event.tool_response)
    return row


def _update_anatomy(context: Context, paths: list[str]) -> None:
    from memdir.kernel import anatomy  # only when a file changed

    spool = state_dir(context.store) / SPOOL
    try:
        with store_lock(context.store, "anatomy", context.remaining() / 2, queue=False):
            spooled = jsonl.read_tail(spool, 0)
            pending = [
                *(line.value.get("path") for line in spooled.lines if line.value),
                *paths,
            ]
            data = anatomy.load(context.store)
            for rel in dict.fromkeys(p for p in pending if isinstance(p, str)):
                entry = anatomy.read_entry(context.project, rel)
                if entry is None:
                    data["files"].pop(rel, None)
                else:
                    data["files"][rel] = entry.to_json()
                    anatomy.resolve_entry(data, rel)
            anatomy.save(context.store, data)
            if spooled.next_offset:
                # Only the lines merged here: a path another hook spooled meanwhile stays.
                appendlog.drop_head(spool, spooled.next_offset, wait=context.remaining() / 2)
    except (LockTimeoutError, anatomy.AnatomyUnreadableError):
        for rel in paths:
            jsonl.append_line(spool, {"path": rel, "at": now_iso()})


def handle(event: HookEvent, context: Context) -> HookResult | None:
    """Record one tool event; never answers the host."""
    rel = context.relative(event.file_path) if event.tool in FILE_TOOLS else None
    row = action_row(event, rel)
    if row is not None:
        jsonl.append_line(context.store / "actions" / f"{row['at'][:10]}.jsonl", row)
    ok = bool(row and row["ok"])
    belief = bool(
        (event.tool == "Bash" and _BELIEF_COMMAND.search(str(event.tool_input.get("command", ""))))
        or _BELIEF_TOOL.match(event.tool)
    )
    change: dict[str, Any] = {"e": "tool", "belief": belief and ok}
    if rel is not None and ok and not event.subagent and event.tool == "Read":
        change["read"] = _read(context, event, rel)
    if rel is not None and ok and event.tool in CHANGING_TOOLS:
        change["wrote"] = rel
    # The session's bookkeeping is one appended event, never a locked read-modify-write, so
    # hundreds of hooks of one session at once never wait for each other (issue 9, item 4);
    # the watchdog lets it land like the action row.
    session.record(context.store, event.session, change)
    context.kept()
    if rel is not None and ok and event.tool in CHANGING_TOOLS:
        _update_anatomy(context, [rel])
    return None


def _read(context: Context, event: HookEvent, rel: str) -> dict[str, Any] | None:
    """What the read saw: the file's identity now (see :func:`memdir.kernel.session.observe`)."""
    seen = session.observe(context.project / rel)
    if seen is None:
        return None
    full = all(event.tool_input.get(k) in (None, "", 0) for k in ("offset", "limit", "pages"))
    return {"rel": rel, **seen, "full": full, "tokens": -(-seen["size"] // 4)}
