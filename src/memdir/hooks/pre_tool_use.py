"""PreToolUse: the duplicate-read gate (DESIGN §7).

A full read (no ``offset``/``limit``) of a file this session already read in full, unchanged on
disk since (same size and modification time), in the current context generation (no compaction
or /clear since), by the main agent (not a subagent), is refused once per file. The reason tells
the agent to reuse its earlier read or pass ``offset``/``limit``, and that a retry passes, so the
gate can never deadlock a real need. A shell ``cat FILE`` (one file, no option) is a full read
too and is gated the same way; ranged shell reads never are (the rule is in
:mod:`memdir.hooks.tools`). ``[hooks] duplicate_read`` is ``deny`` (default), ``warn``
(allow, with a note) or ``off``.

A shell command that is not a gated read may get the output governor's note instead
(:mod:`memdir.hooks.governor`): a bounded form for an unbounded noisy command, once per kind of
command in a session.

The refusal travels on the host's JSON channel with exit 0, never as an exit code a host might
ignore (case B35).

Imports: standard library and the kernel only.
"""

from __future__ import annotations

import os
from pathlib import Path

from memdir.hooks import tools
from memdir.hooks.context import Context
from memdir.hooks.payload import HookEvent, HookResult
from memdir.kernel.base.layout import StoreLayout, layout
from memdir.kernel.hostio.hookio import text_field
from memdir.kernel.storage import session


def _target(event: HookEvent, context: Context) -> tuple[str | None, str]:
    """Return the file a gated full read names, relative to the project, and how it reads.

    A ``Read`` without ``offset``/``limit``, or a shell ``cat FILE`` (the rule in
    :mod:`memdir.hooks.tools`); ``(None, "")`` for anything else.
    """
    if event.tool == "Read":
        if any(event.tool_input.get(k) not in (None, "", 0) for k in tools.RANGE_KEYS):
            return None, ""  # a ranged read is always allowed
        return context.relative(event.file_path), "read"
    command = event.tool_input.get("command")
    if event.tool != "Bash" or not isinstance(command, str):
        return None, ""
    files, _, gated = tools.shell_reads(command)
    if not gated:
        return None, ""
    base = text_field(event.tool_input, "workdir") or event.cwd
    path = files[0]
    if not Path(path).is_absolute() and base and Path(base).is_absolute():
        path = str(Path(base) / path)
    return context.relative(path), "cat"


def refusal(rel: str, tokens: int, how: str) -> str:
    """Return the reason given to the agent for refusing a repeated full read of ``rel``.

    Args:
        rel: The file, relative to the project.
        tokens: The estimated size of the earlier read.
        how: ``read`` (the Read tool) or ``cat`` (a shell read), for the advice given.
    """
    from memdir.kernel.lang.fence import neutralise  # only when refusing: a rare, slower path

    shown = neutralise(rel)  # a file name is text from the project: shown like memory
    advice = (
        "pass offset/limit to read part of it."
        if how == "read"
        else "read part of it (sed -n 'FROM,TOp' FILE, head, tail)."
    )
    return (
        f"memdir: {shown} was already read in full in this session and has not changed on disk "
        f"since (~{tokens} tokens). Reuse the earlier read, or {advice} Retrying the same full "
        "read is allowed."
    )


def handle(event: HookEvent, context: Context) -> HookResult | None:
    """Refuse (or warn about) a duplicate full read; note an unbounded noisy command."""
    if event.tool not in ("Read", "Bash") or event.subagent:
        return None
    gated = _gate(event, context)
    if gated is None and event.tool == "Bash" and context.settings.governor != "off":
        return governor_note(event, context)
    return gated


NOTED = StoreLayout.GOVERNOR_NOTED
"""``state/`` folder: per session, the kinds of noisy command already noted (once each)."""


def governor_note(event: HookEvent, context: Context) -> HookResult | None:
    """The shell governor's note on an unbounded noisy command, once per kind a session.

    Given before the command where the host's PreToolUse can add context (Claude Code, Codex),
    after it where only the tool's result can carry it (Gemini CLI's AfterTool).
    """
    from memdir.hooks import governor

    command = event.tool_input.get("command")
    if not isinstance(command, str) or not command.strip():
        return None
    settings = context.settings
    if governor.skipped(command, settings.governor_skip):
        return None
    base = text_field(event.tool_input, "workdir") or event.cwd
    kind = governor.classify(command, Path(base) if base else context.project)
    if not kind or governor.bounded(command, kind):
        return None
    folder = layout(context.store).state_path(NOTED)
    marker = folder / session.session_key(event.session)
    try:
        noted = marker.read_text(encoding="utf-8").splitlines()
    except OSError:
        noted = []
    if kind in noted:
        return None
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with marker.open("a", encoding="utf-8") as fh:
            fh.write(kind + "\n")
    except OSError:
        pass
    return HookResult(context=governor.suggestion(command, kind))


def _gate(event: HookEvent, context: Context) -> HookResult | None:
    """The duplicate-read gate (see the module docstring)."""
    mode = context.settings.duplicate_read
    if mode == "off":
        return None
    rel, how = _target(event, context)
    if rel is None:
        return None
    try:
        stat = os.stat(context.project / rel)
    except OSError:
        return None
    state = session.load(context.store, event.session)
    earlier = state["reads"].get(rel)
    quick = {"mtime_ns": stat.st_mtime_ns, "size": stat.st_size, "ino": stat.st_ino}
    if not earlier or any(earlier.get(k) != v for k, v in quick.items()):
        return None  # the common case decides on a stat alone
    seen = session.observe(context.project / rel)  # same stat: the content decides (a hash)
    if seen is None:
        return None
    deny = {"e": "deny", "rel": rel, **seen, "count": mode == "deny"}
    if session.model_of(event.raw):
        deny["model"] = session.model_of(event.raw)  # the saving is priced at this model
    if not session.deny_applies(state, deny):
        return None
    offset = session.record(context.store, event.session, deny)
    # Judged again on the state just before this event, as the fold judges it: two hooks
    # racing on one file refuse it once.
    before = session.load(context.store, event.session, before=offset)
    if not session.deny_applies(before, deny):
        return None
    tokens = int(before["reads"][rel].get("tokens", 0))
    message = refusal(rel, tokens, how)
    if mode == "warn":
        return HookResult(context=message)
    return HookResult(deny_reason=message)
