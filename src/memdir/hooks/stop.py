"""Stop: journal the assistant's last message; queue a reminder to write memory. Never blocks.

Stop fires at the end of every turn. When the session has changed files and no belief was
written (by ``memdir remember``/``correct``, the MCP tools, or an explicit request in a
prompt), a reminder is queued once for the next prompt. Stopping is never blocked: a memory
tool must not hold a person's session hostage.

Imports: standard library and the kernel only.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time

from memdir.hooks.context import Context
from memdir.hooks.payload import HookEvent, HookResult
from memdir.kernel import journal, session
from memdir.kernel.errors import MemdirError


def handle(event: HookEvent, context: Context) -> HookResult | None:
    """Journal the turn's answer and maybe queue a reminder; return nothing."""
    if event.subagent:
        return None
    if event.last_message.strip():
        with contextlib.suppress(MemdirError):  # nothing left after private spans: no turn
            journal.append_turn(
                context.store, "assistant", event.last_message, session=event.session
            )
    context.kept()
    session.record(context.store, event.session, {"e": "stop"})  # the fold queues the reminder
    if event.last_message.strip() and _observer_due(context):
        _spawn_observer(context)
    return None


OBSERVER_MARK = "observer.spawned"


def _observer_due(context: Context) -> bool:
    """Whether a background observer pass is due; claims it (at most one per interval)."""
    every = context.settings.observe_every_seconds
    if every <= 0:
        return False
    mark = context.store / "state" / OBSERVER_MARK
    try:
        if time.time() - mark.stat().st_mtime < every:
            return False
    except FileNotFoundError:
        pass
    mark.touch()
    return True


def _spawn_observer(context: Context) -> None:
    import subprocess  # only when a pass is due

    subprocess.Popen(
        [sys.executable, "-m", "memdir", "observe", "--once", "--store", str(context.store)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        env={**os.environ},
    )
