"""``memdir hook EVENT [--host HOST]``: the host-facing hot path.

Contract (DESIGN §7): standard library and ``memdir.kernel`` only; always exit 0; stdout is
empty or exactly one JSON object; failures go to ``state/hook-errors.log`` (and ``memdir
health``), never to the host. Each event has a time budget well under the host's timeout; a
watchdog timer ends a handler that overruns it, silently (fail open).

The watchdog never cuts a write in half and never drops what must be kept: it first waits (up
to :data:`KEEP_ROW_SECONDS`) for the event's journal turn or action row, which the handler
appends first without any lock (:meth:`Context.kept`), then for every lock this process holds to
be released (a record write and its ``git commit`` finish), and never stops the process while
it writes its answer. On a starved machine a hook may be slow to *start* its work; it must
still never lose the row.

A hook started by another memdir hook (an agent CLI run from a hook, say) does nothing: the
environment variable :data:`GUARD` marks memdir's own children (case B18).

Imports: standard library and the kernel only.
"""

from __future__ import annotations

import importlib
import os
import sys
import threading
import time
from pathlib import Path

from memdir.hooks.context import Context
from memdir.hooks.payload import HookResult, normalise, render
from memdir.kernel import hookio, paths
from memdir.kernel.lock import quiesce

GUARD = "MEMDIR_IN_HOOK"
DEFAULT_BUDGET_SECONDS = 2.0
"""Well under the 10 s timeout memdir installs, and under Claude Code's UserPromptSubmit 30 s."""
BUDGET_SECONDS = {"SessionEnd": 1.0, "PreToolUse": 1.5}
"""SessionEnd hooks share Claude Code's 1.5 s end-of-session budget; PreToolUse delays a tool."""
KEEPS = frozenset({"UserPromptSubmit", "PostToolUse", "Stop"})
"""Events that append a row that must never be lost (journal turn, action row)."""
KEEP_GRACE_SECONDS = 4.0
"""How long an overrun hook still waits for its locks: the watchdog fires at 1.5 x the budget
(3 s), so a hook whose row is written ends within 7 s, under the 10 s timeout memdir installs."""
KEEP_ROW_SECONDS = 60.0
"""How long an overrun hook waits for its must-keep row before giving it up. Ending earlier
would only lose the row: a host that will not wait ends the hook itself at its own timeout.
On a starved machine (hundreds of hooks at once on 2 cores) a hook may need many seconds of
wall time to write its row; it is then reported by ``memdir health`` as information."""

HANDLERS: dict[str, str] = {
    "SessionStart": "memdir.hooks.session_start",
    "UserPromptSubmit": "memdir.hooks.prompt_submit",
    "PreToolUse": "memdir.hooks.pre_tool_use",
    "PostToolUse": "memdir.hooks.post_tool_use",
    "PostToolBatch": "memdir.hooks.post_tool_batch",
    "Stop": "memdir.hooks.stop",
    "PreCompact": "memdir.hooks.compaction",
    "PostCompact": "memdir.hooks.compaction",
    "SessionEnd": "memdir.hooks.session_end",
}
"""Canonical event → module with ``handle(event, ctx) -> HookResult | None``, imported lazily."""


class _Stop:
    """What the watchdog waits for before it ends the process (see the module docstring)."""

    def __init__(self) -> None:
        self.kept = threading.Event()  # set once the must-keep row is written (or there is none)
        self.output = threading.Lock()  # held while the answer is written to stdout
        self.store: Path | None = None


def _watchdog(stop: _Stop, event: str, budget: float) -> None:
    """End a hook that overran its budget: log it and exit 0 with nothing on stdout."""
    started = time.monotonic()
    kept = stop.kept.wait(KEEP_ROW_SECONDS)
    quiesce(max(KEEP_GRACE_SECONDS - (time.monotonic() - started), 0.0))
    stop.output.acquire()
    note = "" if kept else f"; {paths.HOOK_ROW_LATE}"
    text = f"{paths.HOOK_GAVE_UP} {budget:g} s budget (fail open){note}"
    paths.log_hook_error(stop.store, event, text)
    os._exit(0)


def _arguments(argv: list[str]) -> tuple[str, str]:
    event, host = "", "claude-code"
    rest = list(argv)
    while rest:
        item = rest.pop(0)
        if item == "--host" and rest:
            host = rest.pop(0)
        elif item.startswith("--host="):
            host = item.split("=", 1)[1]
        elif not event:
            event = item
    return event, host


def _find_store(cwd: str) -> Path | None:
    named = os.environ.get("MEMDIR_STORE")
    if named:
        return Path(named) if paths.is_store(Path(named)) else None
    start = Path(cwd) if cwd else Path(os.environ.get("CLAUDE_PROJECT_DIR") or os.getcwd())
    try:
        return paths.discover_store(start)
    except OSError:
        return None


def run(argv: list[str]) -> int:
    """Handle one hook invocation; return the process exit status, which is always 0."""
    if os.environ.get(GUARD):
        return 0
    os.environ[GUARD] = "1"
    event_arg, host = _arguments(argv)
    budget = BUDGET_SECONDS.get(event_arg, DEFAULT_BUDGET_SECONDS)
    deadline = time.monotonic() + budget
    store: Path | None = None
    stop = _Stop()
    timer = threading.Timer(budget * 1.5, _watchdog, (stop, event_arg, budget))
    timer.daemon = True
    timer.start()
    try:
        payload, problem = hookio.read_payload(sys.stdin.buffer)
        event = normalise(host, event_arg, payload)
        store = stop.store = _find_store(event.cwd)
        if store is not None:
            paths.check_layout(store)  # a store folder linking outside: log it, touch nothing
        if problem:
            paths.log_hook_error(store, event_arg or "?", f"ignored input: {problem}")
            return 0
        if store is None or not event.name or event.name not in HANDLERS:
            return 0  # not a memdir project, or an event memdir does not handle: stay silent
        if event.name not in KEEPS:
            stop.kept.set()
        project = (
            store.parent if store.name == paths.STORE_DIRNAME else Path(event.cwd or os.getcwd())
        )
        context = Context(store, project, deadline, kept=stop.kept.set)
        try:
            context.settings  # noqa: B018 - a store from a newer memdir is refused before any write
            result: HookResult | None = importlib.import_module(HANDLERS[event.name]).handle(
                event, context
            )
        finally:
            stop.kept.set()
            context.close()
        response = render(host, event, result) if result is not None else None
        if response is not None:
            with stop.output:
                hookio.write_response(1, response)
    except Exception:  # noqa: BLE001 - the fail-open boundary: a hook never breaks its host
        import traceback

        paths.log_hook_error(store, event_arg, traceback.format_exc())
    finally:
        stop.kept.set()
        timer.cancel()
    return 0
