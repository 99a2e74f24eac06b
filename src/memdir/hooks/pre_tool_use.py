"""PreToolUse: the duplicate-read gate (DESIGN §7).

A full read (no ``offset``/``limit``) of a file this session already read in full, unchanged on
disk since (same size, modification time, inode and content hash: a rewrite that restores the
modification time is a change), in the current context generation (no compaction
or /clear since), by the main agent (not a subagent), is refused once per file. The reason tells
the agent to reuse its earlier read or pass ``offset``/``limit``, and that a retry passes, so the
gate can never deadlock a real need. ``[hooks] duplicate_read`` is ``deny`` (default), ``warn``
(allow, with a note) or ``off``.

The refusal travels on the host's JSON channel with exit 0, never as an exit code a host might
ignore (case B35).

Imports: standard library and the kernel only.
"""

from __future__ import annotations

import os

from memdir.hooks.context import Context
from memdir.hooks.payload import HookEvent, HookResult
from memdir.kernel import session


def handle(event: HookEvent, context: Context) -> HookResult | None:
    """Refuse (or warn about) a duplicate full read; otherwise stay silent."""
    if event.tool != "Read" or event.subagent:
        return None
    mode = context.settings.duplicate_read
    if mode == "off":
        return None
    if any(event.tool_input.get(key) not in (None, "", 0) for key in ("offset", "limit", "pages")):
        return None  # a ranged read is always allowed
    rel = context.relative(event.file_path)
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
    if not session.deny_applies(state, deny):
        return None
    offset = session.record(context.store, event.session, deny)
    # Judged again on the state just before this event, as the fold judges it: two hooks
    # racing on one file refuse it once.
    before = session.load(context.store, event.session, before=offset)
    if not session.deny_applies(before, deny):
        return None
    tokens = int(before["reads"][rel].get("tokens", 0))
    from memdir.kernel.fence import neutralise  # only when refusing: a rare, slower path

    shown = neutralise(rel)  # a file name is text from the project: shown like memory
    message = (
        f"memdir: {shown} was already read in full in this session and has not changed on disk "
        f"since (~{tokens} tokens). Reuse the earlier read, or pass offset/limit to read part of "
        "it. Retrying the same full read is allowed."
    )
    if mode == "warn":
        return HookResult(context=message)
    return HookResult(deny_reason=message)
