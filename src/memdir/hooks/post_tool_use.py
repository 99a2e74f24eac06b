"""PostToolUse: the action log, the session's read state, the anatomy of changed files.

Every tool event appends one row to ``actions/YYYY-MM-DD.jsonl`` first, with a single
``O_APPEND`` write and no store lock, so a slow or timed-out hook never loses it; a purge
rewriting the file at that moment is waited for briefly (:mod:`memdir.kernel.base.appendlog`).
Paths are relative to the project; paths outside it (symlinks resolved), inside the store, or
naming secret files are never recorded (DESIGN §10.4, §10.5). Bash commands are redacted and
cut to 300 characters.

Host vocabulary (:mod:`memdir.hooks.tools`): a Codex ``apply_patch`` becomes one row per file it
added, updated, moved or deleted (``via: apply_patch``), each changed path updating the session's
state and the anatomy; a shell command that reads project files (``cat``, ``sed -n``,
``head``…) lists them under ``reads`` and records them in the session's read state, full or
ranged; ``NotebookEdit`` is an edit; a failed call (``PostToolUseFailure``) is a row with
``ok: false``, ``failed: true`` and the error, cut and redacted, and changes nothing else.

A changed file's anatomy entry is updated under the store lock; when the lock is not free in
time, the path goes to ``state/anatomy-spool.jsonl`` and the next update or ``memdir scan``
merges it. Only the merged lines leave the spool (:func:`memdir.kernel.base.appendlog.drop_head`),
so a path spooled while another hook merges is never deleted unmerged.

Imports: standard library and the kernel only.
"""

from __future__ import annotations

import re
from pathlib import Path

from memdir.hooks import tools
from memdir.hooks.context import Context
from memdir.hooks.payload import HookEvent, HookResult
from memdir.kernel.base import appendlog, jsonl
from memdir.kernel.base.clock import now_iso
from memdir.kernel.base.errors import LockTimeoutError
from memdir.kernel.base.layout import StoreLayout, layout
from memdir.kernel.hostio.hookio import text_field
from memdir.kernel.hostio.hosttable import BELIEF_MCP_TOOLS, memdir_mcp_tool
from memdir.kernel.lang.redact import redact
from memdir.kernel.lang.text import truncate
from memdir.kernel.storage import session
from memdir.kernel.storage.journal import log_name
from memdir.kernel.storage.lock import store_lock

TYPE_CHECKING = False  # the hook path never imports typing (start-up cost)


if TYPE_CHECKING:
    from typing import Any


def _action(store: Path, row: dict[str, Any]) -> None:
    """Append one action row to this machine's log of its UTC day (per machine once shared)."""
    jsonl.append_line(store / "actions" / log_name(store, str(row["at"])[:10]), row)


FILE_TOOLS = ("Read", "Write", "Edit", "MultiEdit", "NotebookEdit")
CHANGING_TOOLS = ("Write", "Edit", "MultiEdit", "NotebookEdit")
PATCH_TOOL = "ApplyPatch"
SPOOL = StoreLayout.ANATOMY_SPOOL
COMMAND_CHARS = 300
ERROR_CHARS = 300
PATCH_OPS = {"add": "Write", "update": "Edit", "move": "Edit", "delete": "Delete"}
"""How each ``apply_patch`` section is logged: one row per file, under the tool it amounts to."""


_SHELL_TRAILER = re.compile(r"^(?:Error|Exit Code|Signal|Background PIDs|Process Group PGID): ")
_SHELL_FAILED = re.compile(r"^(?:Exit Code: (?!0$|\(none\)$)|Signal: (?!\(none\)$))")


def _shell_failed(text: str) -> bool:
    """Whether Gemini CLI's (or Qwen Code's) shell result text reports a failure.

    Gemini CLI (0.61.0) answers ``run_shell_command`` with ``llmContent`` holding ``Output: …``
    and then trailer lines (``Error:``, ``Exit Code: N`` only when N is not 0, ``Signal:``,
    ``Background PIDs:``, ``Process Group PGID:``), wrapped in ``<untrusted_context>``; no
    field says the command failed. Only the trailer after the output is read: a non-zero exit
    code or a signal is a failure. Qwen Code (0.24.4) prints every trailer line, with ``(none)``
    for an empty one (``Exit Code: 0``, ``Signal: (none)``).
    """
    lines = text.rstrip().removesuffix("</untrusted_context>").rstrip().splitlines()
    for line in reversed(lines):
        if not _SHELL_TRAILER.match(line):
            return False
        if _SHELL_FAILED.match(line):
            return True
    return False


def _succeeded(event: HookEvent) -> bool:
    if event.name == "PostToolUseFailure":
        return False
    response = event.tool_response
    status = tools.exit_status(response)  # Codex: "Exit code: N …"
    if status is not None:
        return status == 0
    if isinstance(response, dict):
        if response.get("success") is False or response.get("error") or response.get("is_error"):
            return False
        content = response.get("llmContent")
        if isinstance(content, str) and _shell_failed(content):
            return False
        return not response.get("interrupted", False)
    return response is not None


def _base_row(event: HookEvent, tool: str) -> dict[str, Any]:
    row: dict[str, Any] = {
        "at": now_iso(),
        "session": redact(event.session),  # host-supplied strings are capture paths too
        "tool": redact(tool),
    }
    if event.subagent:
        row["subagent"] = True
    return row


def _finish(event: HookEvent, row: dict[str, Any]) -> dict[str, Any]:
    row["ok"] = _succeeded(event)
    if event.name == "PostToolUseFailure":
        row["failed"] = True
        if event.error:
            row["error"] = truncate(redact(event.error), ERROR_CHARS)
    return row


def action_row(event: HookEvent, rel: str | None) -> dict[str, Any] | None:
    """Return the action-log row for a tool event, or ``None`` when nothing may be recorded."""
    row = _base_row(event, event.tool)
    if event.tool in FILE_TOOLS:
        if rel is None:
            return None  # outside the project, inside the store, or a secret file
        row["path"] = redact(rel)
    elif event.tool == "Bash":
        command = event.tool_input.get("command")
        row["command"] = (
            truncate(redact(command), COMMAND_CHARS) if isinstance(command, str) else ""
        )
    return _finish(event, row)


def _base_dir(event: HookEvent, context: Context) -> Path:
    """The folder a tool's relative paths start from: its ``workdir``, else the payload cwd."""
    for candidate in (text_field(event.tool_input, "workdir", "cwd"), event.cwd):
        if candidate and Path(candidate).is_absolute():
            return Path(candidate)
    return context.project


def _relative_to(context: Context, base: Path, path: str) -> str | None:
    return context.relative(path if Path(path).is_absolute() else str(base / path))


def patch_rows(event: HookEvent, context: Context) -> list[tuple[dict[str, Any], list[str]]]:
    """Return one action row per file an ``apply_patch`` call changed, with the paths changed.

    A moved file changes two paths (the old one is gone); paths outside the project, inside
    the store or naming secret files are left out (DESIGN §10.4, §10.5).
    """
    base = _base_dir(event, context)
    rows = []
    for change in tools.patch_files(tools.patch_text(event.tool_input)):
        rel = _relative_to(context, base, change.path)
        target = _relative_to(context, base, change.to) if change.to else None
        shown = target if change.op == "move" else rel
        if shown is None:
            continue
        row = _base_row(event, PATCH_OPS[change.op])
        row["path"] = redact(shown)
        row["via"] = "apply_patch"
        if change.op == "move" and rel is not None:
            row["from"] = redact(rel)
        rows.append((_finish(event, row), [p for p in (rel, target) if p is not None]))
    return rows


def _update_anatomy(context: Context, paths: list[str]) -> None:
    from memdir.kernel.filemap import anatomy  # only when a file changed

    spool = layout(context.store).in_state(SPOOL)
    try:
        with store_lock(context.store, "anatomy", context.remaining() / 2, queue=False):
            spooled = jsonl.read_tail(spool, 0)
            pending = [
                *(line.value.get("path") for line in spooled.lines if line.value),
                *paths,
            ]
            anatomy.update(
                context.store,
                context.project,
                [p for p in pending if isinstance(p, str)],
            )
            if spooled.next_offset:
                # Only the lines merged here: a path another hook spooled meanwhile stays.
                appendlog.drop_head(spool, spooled.next_offset, wait=context.remaining() / 2)
    except (LockTimeoutError, anatomy.AnatomyUnreadableError):
        for rel in paths:
            jsonl.append_line(spool, {"path": rel, "at": now_iso()})


def _many(event: HookEvent) -> list[str]:
    paths = event.tool_input.get("paths")
    return [p for p in paths if isinstance(p, str)] if isinstance(paths, list) else []


def _many_reads(event: HookEvent, context: Context) -> list[str]:
    """The project files a multi-file read named (glob patterns are not files: left out)."""
    base = _base_dir(event, context)
    named = [p for p in _many(event) if not any(c in p for c in "*?[")]
    rels = [_relative_to(context, base, p) for p in named]
    return list(dict.fromkeys(r for r in rels if r is not None and (context.project / r).is_file()))


def _shell_reads(event: HookEvent, context: Context) -> tuple[list[str], bool]:
    command = event.tool_input.get("command")
    if event.tool != "Bash" or not isinstance(command, str):
        return [], False
    files, full, _ = tools.shell_reads(command)
    base = _base_dir(event, context)
    rels = [rel for rel in (_relative_to(context, base, f) for f in files) if rel is not None]
    return list(dict.fromkeys(rels)), full


def _govern(event: HookEvent, context: Context, ok: bool) -> tuple[int, int, Any]:
    """Shape a successful noisy command's output where the host can replace it.

    Returns ``(tokens produced, tokens shown, the replacement or None)``; tokens are
    ceil(UTF-8 bytes / 4). See :mod:`memdir.hooks.governor`.
    """
    from memdir.hooks import governor

    text = governor.output_text(event.tool_response if ok else event.error)
    produced = -(-len(text.encode("utf-8")) // 4)
    settings = context.settings
    command = event.tool_input.get("command")
    if (
        not ok  # a failed command's output is never shaped: the agent sees all of it
        or settings.governor != "shape"
        or event.host not in governor.REPLACES_OUTPUT
        or not isinstance(event.tool_response, dict)
        or not isinstance(command, str)
        or governor.skipped(command, settings.governor_skip)
        or not (kind := governor.classify(command, context.project))
        # a test run, build or install reporting a failure in its text stays whole (git log and
        # find print names and messages, where "error" is not a failure)
        or (kind in governor.REPORTS_FAILURES and governor.failed_text(text))
    ):
        return produced, produced, None
    response = dict(event.tool_response)
    shown = produced
    saved = ""
    for key in ("stdout", "stderr"):
        value = response.get(key)
        if not isinstance(value, str):
            continue
        if -(-len(value.encode("utf-8")) // 4) <= settings.governor_min_tokens:
            continue
        saved = saved or governor.save_output(context.store, text)
        short = governor.shape(
            value,
            min_tokens=settings.governor_min_tokens,
            head=settings.governor_head,
            tail=settings.governor_tail,
            saved=saved,
        )
        if short is not None:
            shown -= -(-len(value.encode("utf-8")) // 4) - -(-len(short.encode("utf-8")) // 4)
            response[key] = short
    return (produced, shown, response) if shown < produced else (produced, produced, None)


def handle(  # noqa: C901 - one branch per tool kind (read, write, shell, patch); to be split
    event: HookEvent, context: Context
) -> HookResult | None:
    """Record one tool event (or failed tool call); answer only to shape or inject."""
    ok = _succeeded(event)
    produced = shown = 0
    replacement = None
    if event.tool == "Bash" and not event.subagent:
        produced, shown, replacement = _govern(event, context, ok)
    changed: list[str] = []
    reads: list[str] = []
    full_reads = False
    if event.tool == PATCH_TOOL or (event.tool == "Bash" and tools.patch_text(event.tool_input)):
        rows = patch_rows(event, context)
        for row, paths in rows:
            _action(context.store, row)
            changed += paths
        if not rows:  # a patch naming no recordable file is still a tool call
            row = _finish(event, _base_row(event, "apply_patch"))
            _action(context.store, row)
    elif event.tool == "Read" and not event.file_path and _many(event):
        # Gemini CLI's read_many_files: one row listing the files it read whole
        reads, full_reads = _many_reads(event, context), True
        row = _finish(event, _base_row(event, "Read"))
        if reads:
            row["reads"] = [redact(r) for r in reads]
        _action(context.store, row)
    else:
        rel = context.relative(event.file_path) if event.tool in FILE_TOOLS else None
        reads, full_reads = _shell_reads(event, context)
        single = action_row(event, rel)
        if single is not None and event.tool == "Bash":
            single["out_tokens"] = produced
            if shown != produced:
                single["shown_tokens"] = shown
        if single is not None:
            if reads:
                single["reads"] = [redact(r) for r in reads]
            _action(context.store, single)
        if rel is not None and event.tool in CHANGING_TOOLS:
            changed.append(rel)
        if rel is not None and event.tool == "Read":
            reads, full_reads = [rel], _full_read_tool(event)
    command = str(event.tool_input.get("command", ""))
    belief = memdir_mcp_tool(event.tool) in BELIEF_MCP_TOOLS or (
        event.tool == "Bash" and tools.is_save_command(command)
    )
    changed = list(dict.fromkeys(changed)) if ok else []
    change: dict[str, Any] = {"e": "tool", "belief": belief and ok}
    if event.tool == "Bash" and command.strip() and not event.subagent:
        if tools.is_bug_command(command):
            change["bug"] = ok
        elif "memdir" not in command:  # a failing command that later passes is a fix
            change.update(cmd=truncate(redact(" ".join(command.split())), COMMAND_CHARS), ok=ok)
    elif memdir_mcp_tool(event.tool) == "bug_log" and ok:
        change["bug"] = True
    if ok and not event.subagent and reads:
        returned = None if full_reads else _shown_tokens(event.tool_response)
        seen = [
            r for r in (_read(context, rel, full_reads, returned) for rel in reads) if r is not None
        ]
        if seen:
            change["read"] = seen[0] if len(seen) == 1 else seen
    if changed:
        change["wrote"] = changed[0] if len(changed) == 1 else changed
    # The session's bookkeeping is one appended event, never a locked read-modify-write, so
    # hundreds of hooks of one session at once never wait for each other (issue 9, item 4);
    # the watchdog lets it land like the action row.
    session.record(context.store, event.session, change)
    context.kept()
    if changed:
        _update_anatomy(context, changed)
    if produced:
        ledger = {"shell_tokens": produced, "shell_shown_tokens": shown}
        session.record(context.store, event.session, {"e": "ledger", "add": ledger})
    touched = list(dict.fromkeys([*changed, *reads]))
    scoped = _scoped(event, context, touched) if ok and touched and not event.subagent else None
    if replacement is not None:
        return HookResult(context=scoped.context if scoped else "", updated_output=replacement)
    if event.tool == "Bash" and not event.subagent and context.settings.governor != "off":
        from memdir.hooks import governor
        from memdir.hooks.pre_tool_use import governor_note

        note = governor_note(event, context) if event.host in governor.NOTE_AFTER else None
        if note is not None:
            before = scoped.context if scoped is not None else ""
            return HookResult(context="\n".join(t for t in (before, note.context) if t))
    return scoped


def _scoped(event: HookEvent, context: Context, touched: list[str]) -> HookResult | None:
    """Inject the path-scoped beliefs for the files just read or edited, once per session.

    From the list the SessionStart hook keeps (``state/path-scoped.json``), never the index;
    each match is confirmed active in its record file first.
    """
    from memdir.kernel.lang import pathscope

    docs = pathscope.cached_any(context.store)
    if not docs:
        return None
    matching = [d for d in docs if pathscope.matches(d, touched)]
    if not matching:
        return None  # the common case: one read of a small file, no index
    state = session.load(context.store, event.session)
    seen = set(state["injected"])
    matching = [
        d for d in matching if d.get("id") not in seen and pathscope.still_active(context.store, d)
    ]
    if not matching:
        return None
    from memdir.kernel.lang.text import estimate_tokens

    text, ids = pathscope.render(matching, touched, context.settings.rules_tokens)
    if not text:
        return None
    inject = {"e": "inject", "ids": list(ids), "tokens": estimate_tokens(text)}
    session.record(context.store, event.session, inject)
    return HookResult(context=text)


def _full_read_tool(event: HookEvent) -> bool:
    return all(event.tool_input.get(k) in (None, "", 0) for k in tools.RANGE_KEYS)


def _shown_tokens(response: Any) -> int | None:
    """Tokens of the text a ranged read returned, or ``None`` when the payload does not say.

    Claude Code's Read answers ``{"file": {"content": …}}``; other hosts a text or
    ``{"output": …}``. Four bytes a token, as everywhere in the ledger.
    """
    if isinstance(response, dict):
        inner = response.get("file")
        response = inner.get("content") if isinstance(inner, dict) else response.get("output")
    if not isinstance(response, str) or not response:
        return None
    return -(-len(response.encode("utf-8", "surrogateescape")) // 4)


def _read(
    context: Context, rel: str, full: bool, shown: int | None = None
) -> dict[str, Any] | None:
    """What a read saw: the file's identity now (``session.observe``).

    ``tokens`` is the whole file's (size / 4) for a full read, and what a ranged read
    returned (``shown``, at most the whole file's) when the host says.
    """
    seen = session.observe(context.project / rel)
    if seen is None:
        return None
    whole = -(-seen["size"] // 4)
    tokens = whole if full or shown is None else min(shown, whole)
    return {"rel": rel, **seen, "full": full, "tokens": tokens}
