"""``memdir hook EVENT [--host HOST]``: the host-facing hot path.

Contract (DESIGN §7): standard library and ``memdir.kernel`` only; always exit 0; stdout is
empty or exactly one JSON object; failures go to ``state/hook-errors.log`` (and ``memdir
health``), never to the host. Each event has a time budget well under the host's timeout; a
watchdog timer ends a handler that overruns it, silently (fail open).

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

GUARD = "MEMDIR_IN_HOOK"
DEFAULT_BUDGET_SECONDS = 2.0
"""Well under the 10 s timeout memdir installs, and under Claude Code's UserPromptSubmit 30 s."""
BUDGET_SECONDS = {"SessionEnd": 1.0, "PreToolUse": 1.5}
"""SessionEnd hooks share Claude Code's 1.5 s end-of-session budget; PreToolUse delays a tool."""

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


def _watchdog(store: Path | None, event: str, budget: float) -> None:
    """End a hook that overran its budget: log it and exit 0 with nothing on stdout.

    Every file memdir writes is replaced atomically and every lock is released by the operating
    system, so stopping at any instant leaves nothing half-done.
    """
    paths.log_hook_error(store, event, f"gave up after the {budget:g} s budget (fail open)")
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
    timer = threading.Timer(budget * 1.5, lambda: _watchdog(store, event_arg, budget))
    timer.daemon = True
    timer.start()
    try:
        payload, problem = hookio.read_payload(sys.stdin.buffer)
        event = normalise(host, event_arg, payload)
        store = _find_store(event.cwd)
        if store is not None:
            paths.check_layout(store)  # a store folder linking outside: log it, touch nothing
        if problem:
            paths.log_hook_error(store, event_arg or "?", f"ignored input: {problem}")
            return 0
        if store is None or not event.name or event.name not in HANDLERS:
            return 0  # not a memdir project, or an event memdir does not handle: stay silent
        project = (
            store.parent if store.name == paths.STORE_DIRNAME else Path(event.cwd or os.getcwd())
        )
        context = Context(store, project, deadline)
        try:
            result: HookResult | None = importlib.import_module(HANDLERS[event.name]).handle(
                event, context
            )
        finally:
            context.close()
        response = render(host, event, result) if result is not None else None
        if response is not None:
            hookio.write_response(1, response)
    except Exception:  # noqa: BLE001 - the fail-open boundary: a hook never breaks its host
        import traceback

        paths.log_hook_error(store, event_arg, traceback.format_exc())
    finally:
        timer.cancel()
    return 0
