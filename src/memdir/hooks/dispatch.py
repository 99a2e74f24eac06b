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

import os
import sys
import threading
import time
from pathlib import Path

from memdir.hooks.context import Context
from memdir.hooks.payload import (
    EVENT_ALIASES,
    HookEvent,
    HookResult,
    exit_refusal,
    normalise,
    render,
)
from memdir.kernel.hostio import hookio
from memdir.kernel.hostio.hosttable import SELF_TEST, host_entry
from memdir.kernel.storage import paths
from memdir.kernel.storage.lock import quiesce

TYPE_CHECKING = False  # the hook path never imports typing (start-up cost)
if TYPE_CHECKING:
    from typing import Any

GUARD = "MEMDIR_IN_HOOK"
DEFAULT_BUDGET_SECONDS = 2.0
"""Well under the 10 s timeout memdir installs, and under Claude Code's UserPromptSubmit 30 s."""
BUDGET_SECONDS = {"SessionEnd": 1.0, "PreToolUse": 1.5}
"""SessionEnd hooks share Claude Code's 1.5 s end-of-session budget; PreToolUse delays a tool."""
KEEPS = frozenset({"UserPromptSubmit", "PostToolUse", "PostToolUseFailure", "Stop"})
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
    "PostToolUseFailure": "memdir.hooks.post_tool_use",
    "PostToolBatch": "memdir.hooks.post_tool_batch",
    "Stop": "memdir.hooks.stop",
    "PreCompact": "memdir.hooks.compaction",
    "PostCompact": "memdir.hooks.compaction",
    "SessionEnd": "memdir.hooks.session_end",
}
"""Canonical event → module with ``handle(event, ctx) -> HookResult | None``, imported lazily."""


NO_DRAIN = frozenset({"PreToolUse"})
"""Events that never store spooled explicit requests (a tool waits on them)."""


def _deferred(event: HookEvent, store: Path, result: HookResult | None) -> HookResult | None:
    """Keep what a host drops for the next answer it reads (:mod:`memdir.hooks.deferred`).

    Cline CLI 3.x never reads its TaskStart and UserPromptSubmit hooks' output: their context is
    kept and returns ``None``; a later PreToolUse or PostToolUse answer carries it, first.
    """
    from memdir.hooks import deferred  # only for Cline CLI's payloads

    if event.name in deferred.KEEPS_FOR:
        if result is not None and result.context:
            deferred.keep(store, event.session, result.context)
        return None
    if event.name not in deferred.GIVES_ON:
        return result
    kept = deferred.take(store, event.session)
    if not kept:
        return result
    if result is None:
        return HookResult(context=kept)
    result.context = "\n\n".join(text for text in (kept, result.context) if text)
    return result


def _drain_spool(context: Context) -> None:
    """Store explicit requests an earlier hook ran out of time for (see ``kernel.storage.spool``).

    Only with time left and a writable store; a failure leaves them for the next run.
    """
    from memdir.kernel.storage import spool

    if context.read_only or context.expired() or not spool.pending(context.store):
        return
    import contextlib

    from memdir.kernel.base.errors import MemdirError

    with contextlib.suppress(MemdirError, OSError):  # busy or cold: the next run tries again
        spool.drain(context.handle(), context.deadline)


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


def _options(argv: list[str]) -> tuple[str, dict[str, str]]:
    """Return the event argument and the ``--name value`` options (flags get ``"1"``)."""
    event = ""
    options: dict[str, str] = {"host": "claude-code"}
    rest = list(argv)
    while rest:
        item = rest.pop(0)
        if item in ("--preview", "--json"):
            options[item[2:]] = "1"
        elif item.startswith("--") and "=" in item:
            name, value = item[2:].split("=", 1)
            options[name] = value
        elif item.startswith("--") and rest:
            options[item[2:]] = rest.pop(0)
        elif not event:
            event = item
    return event, options


def _arguments(argv: list[str]) -> tuple[str, str]:
    event, options = _options(argv)
    return event, options["host"]


SESSION_ROOTS = paths.StoreLayout.SESSION_ROOTS
SESSION_ROOTS_KEPT = 500


def _roots_dir() -> Path:
    return paths.layout(paths.user_store_dir()).state_path(SESSION_ROOTS)


def _recorded_store(session_id: str) -> Path | None:
    """Return the store recorded for this session at its start, if it still is one."""
    if not session_id or session_id == "default":
        return None
    from memdir.kernel.storage.session import session_key

    try:
        named = Path((_roots_dir() / session_key(session_id)).read_text(encoding="utf-8").strip())
    except (OSError, ValueError):
        return None
    return named if named.is_absolute() and paths.is_store(named) else None


def _record_store(session_id: str, store: Path) -> None:
    """Remember which store this session belongs to (in the user's state, beside no store)."""
    if not session_id or session_id == "default":
        return
    from memdir.kernel.base.atomic import write_text_atomic
    from memdir.kernel.storage.session import session_key

    folder = _roots_dir()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        write_text_atomic(folder / session_key(session_id), str(store), durable=False)
        entries = sorted(os.scandir(folder), key=lambda e: e.stat().st_mtime)
        for entry in entries[:-SESSION_ROOTS_KEPT]:
            os.unlink(entry.path)
    except OSError:
        pass  # routing falls back on the project-dir variable and the payload's cwd


def _find_store(
    host: str, cwd: str, session_id: str = "", *, starting: bool = False, record: bool = True
) -> Path | None:
    """Return the store this hook belongs to (DESIGN §7, case B49), or ``None``.

    In order: ``MEMDIR_STORE``; the host's own project-dir variable (the host table's
    ``project_dir_env``: only the host's own, since a host started from another host's shell
    inherits that one's variables); the store recorded when this session started; the process's
    working directory (hosts launch hooks in the project); only when that has no store, the
    payload's ``cwd`` (a host that starts hooks elsewhere, e.g. from its own folder). A payload
    ``cwd`` that wandered into another repository with its own store never moves the session
    there, and never wins over the project the hook runs in (DESIGN §7). Only a session's start
    (``startup``) records its store; a resume or compaction keeps the recorded one.
    """
    named = os.environ.get("MEMDIR_STORE")
    if named:
        return Path(named) if paths.is_store(Path(named)) else None
    store: Path | None = None
    variable = str(host_entry(host).get("project_dir_env") or "")
    value = os.environ.get(variable) if variable else None
    if value and Path(value).is_absolute():
        try:  # the host named the project: its store or none, never one the cwd wandered into
            store = paths.discover_store(Path(value))
        except OSError:
            return None
        if store is not None and starting and record:
            _record_store(session_id, store)
        return store
    recorded = None if starting else _recorded_store(session_id)
    if store is None:
        store = recorded
    if store is None:
        try:
            store = paths.discover_store(Path(os.getcwd()))
            if store is None and cwd:
                store = paths.discover_store(Path(cwd))
        except OSError:
            return None
    if store is not None and record and (starting or recorded is None):
        _record_store(session_id, store)
    return store


def run_preview(argv: list[str]) -> int:
    """``memdir hook EVENT --preview``: print what the agent would be given; write nothing.

    Prints the injected text (or the refusal a PreToolUse would send) on stdout, or the exact
    JSON the host would read with ``--json``; says so on stderr when the hook would stay silent.

    Returns:
        0 (shown, or nothing to show), 2 (usage: no event, or one memdir does not handle),
        4 (no store here).
    """
    event_arg, options = _options(argv)
    payload: dict[str, object] = {}
    if not sys.stdin.isatty():
        payload, _ = hookio.read_payload(sys.stdin.buffer)
    return show_preview(event_arg, options, payload)


def show_preview(event_arg: str, options: dict[str, str], payload: dict[str, Any]) -> int:
    """Print what the hook for ``event_arg`` would give the agent (see :func:`run_preview`).

    Args:
        event_arg: The event, in memdir's or the host's name.
        options: ``host`` (default ``claude-code``), and optionally ``prompt``, ``source``,
            ``session``, ``json``.
        payload: The host's payload (``{}`` for none).

    Returns:
        The exit status: 0, 2 (usage) or 4 (no store).
    """
    from memdir.hooks.preview import PREVIEWED, preview

    host = options.get("host", "claude-code")
    for name in ("prompt", "source"):
        if name in options:
            payload[name] = options[name]
    if "session" in options:
        payload["session_id"] = options["session"]
    event = normalise(host, event_arg, payload)
    if event.name not in HANDLERS:
        sys.stderr.write(f"memdir: no hook event {event_arg!r}; one of {', '.join(HANDLERS)}\n")
        return 2
    store = _find_store(host, event.cwd, event.session, record=False)
    if store is None:
        sys.stderr.write("memdir: no memdir store for this project (run `memdir init`)\n")
        return 4
    project = store.parent if store.name == paths.STORE_DIRNAME else Path(os.getcwd())
    context = Context(store, project, time.monotonic() + 30)
    context.read_only = True
    try:
        result = preview(event, context) if event.name in PREVIEWED else None
    finally:
        context.close()
    response = render(host, event, result) if result is not None else None
    if response is None or result is None:
        sys.stderr.write(f"memdir: the {event_arg} hook would give the agent nothing now\n")
        return 0
    if "json" in options:
        sys.stdout.write(hookio.encode_response(response).decode("utf-8"))
    else:
        sys.stdout.write((result.context or result.deny_reason) + "\n")
    return 0


USAGE = """\
Usage: memdir hook EVENT [--host HOST] [--preview [--json] [--prompt TEXT]]

  The entry point the coding agent's hooks run: reads the host's JSON payload on stdin,
  prints nothing or one JSON object, always exits 0 (DESIGN §7). `memdir install` wires it.
  An EVENT no host has, typed in a terminal, is refused (exit 2) before anything is read.

  EVENT   SessionStart UserPromptSubmit PreToolUse PostToolUse PostToolUseFailure
          PostToolBatch Stop PreCompact PostCompact SessionEnd (or the host's own names)
  --host  claude-code (default), codex, gemini, ... (`memdir hosts` lists them)
  --preview  print what the agent would be given, writing nothing (`--json`: the exact JSON)
"""
"""Printed for ``memdir hook --help`` (a person asking; hosts never pass it)."""


def known_event(name: str) -> bool:
    """Whether ``name`` is one of memdir's events, any host's own name for one, or the self-test.

    A name no host uses is a person's typo, never a host's call: installed hooks only ever
    name events of the host table (:mod:`memdir.kernel.hostio.hosttable`).
    """
    return (
        name in HANDLERS
        or name == SELF_TEST
        or any(name in table for table in EVENT_ALIASES.values())
    )


def run(argv: list[str]) -> int:
    """Handle one hook invocation; return the process exit status.

    Always 0, except 2 with the reason on stderr when memdir refuses a tool call of a host that
    blocks only by exit code (Windsurf's pre-hooks), and 2 when a person types an event no host
    has (:func:`known_event`; stdin is a terminal): the valid events are named on stderr before
    anything is read or logged. A host is never answered 2 for an unknown event (Claude Code
    would block the prompt or the tool; DESIGN §7, §10 invariant 6): its call reads its payload,
    logs "unknown hook event" with the valid ones to ``state/hook-errors.log`` and exits 0.
    """
    if "--help" in argv or "-h" in argv:
        sys.stdout.write(USAGE)
        return 0
    if "--preview" in argv:
        return run_preview(argv)
    event_arg, host = _arguments(argv)
    unknown = (
        f"unknown hook event {event_arg!r}; memdir handles {', '.join(HANDLERS)} "
        "(or a host's own name for one: see `memdir hosts`)"
        if event_arg and not known_event(event_arg)
        else ""
    )
    if unknown and sys.stdin.isatty():  # a person typing, not a host: say so, wait for nothing
        sys.stderr.write(f"memdir: {unknown}; nothing was read or logged\n")
        return 2
    if os.environ.get(GUARD):
        return 0
    os.environ[GUARD] = "1"
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
        starting = event.name == "SessionStart" and event.source in ("", "startup")
        store = stop.store = _find_store(host, event.cwd, event.session, starting=starting)
        if store is not None:
            paths.check_layout(store)  # a store folder linking outside: log it, touch nothing
        if unknown:  # a host's call: never answered 2 (see the docstring)
            paths.log_hook_error(store, event_arg, unknown)
            return 0
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
            # __import__, not importlib: the hook path never loads importlib (start-up cost)
            module = __import__(HANDLERS[event.name], fromlist=["handle"])
            result: HookResult | None = module.handle(event, context)
            if event.raw.get("cline_cli"):
                result = _deferred(event, store, result)
            if event.name not in NO_DRAIN:
                _drain_spool(context)
        finally:
            stop.kept.set()
            context.close()
        response = render(host, event, result) if result is not None else None
        if response is not None:
            with stop.output:
                hookio.write_response(1, response)
        refusal = exit_refusal(host, result)
        if refusal:  # a host that blocks only by exit code (Windsurf)
            with stop.output:
                os.write(2, (refusal + "\n").encode("utf-8", "replace"))
            return 2
    except Exception:  # noqa: BLE001 - the fail-open boundary: a hook never breaks its host
        import traceback

        paths.log_hook_error(store, event_arg, traceback.format_exc())
    finally:
        stop.kept.set()
        timer.cancel()
    return 0
