"""Saves made through memdir's MCP server, marked so the hooks of the same session see them.

The Stop hook reminds an agent that changed files yet "saved no memory". A save through the MCP
tools must silence it on every host, whatever the host calls the tool and whether or not it
fires a PostToolUse hook for MCP calls. So the server marks each successful
``memory_remember``/``memory_correct`` itself, in ``state/mcp-saves.jsonl`` (machine-local),
with what identifies the session it serves:

- the host's session id when the server's environment carries one (:data:`SESSION_VARIABLES`:
  Claude Code gives stdio servers ``CLAUDE_CODE_SESSION_ID``; ``MEMDIR_SESSION_ID`` for others);
- otherwise the process that started the server (past a wrapper such as ``uv run``): a host
  starts its stdio server and its hooks itself, so the host's process is an ancestor of both
  (read from ``/proc``, Linux only).

:func:`count_for` counts the marks that belong to a session: the same session id; else a shared
host process; else, when neither side could tell, any mark made since the session started.
A mark of *another* known session never counts.

Imports: standard library only.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from memdir.kernel.base import jsonl
from memdir.kernel.base.clock import now_iso
from memdir.kernel.base.errors import MemdirError
from memdir.kernel.base.layout import StoreLayout, layout

TYPE_CHECKING = False  # the hook path never imports typing (start-up cost)
if TYPE_CHECKING:
    from typing import Any

SAVES_FILE = StoreLayout.SAVES
SESSION_VARIABLES = ("MEMDIR_SESSION_ID", "CLAUDE_CODE_SESSION_ID")
"""Environment variables that name the host session an MCP server serves."""
ANCESTORS = 6
TAIL_BYTES = 256 * 1024
"""Only the newest marks are read: a session's saves are recent."""


def ancestors(pid: int | None = None, depth: int = ANCESTORS) -> list[int]:
    """Return the parent process ids above ``pid`` (default: this process), nearest first.

    Read from ``/proc`` (Linux); ``[]`` where it cannot be read. Never includes pid 0 or 1.
    """
    found: list[int] = []
    current = os.getpid() if pid is None else pid
    for _ in range(depth):
        try:
            stat = Path(f"/proc/{current}/stat").read_text(encoding="utf-8", errors="replace")
            parent = int(stat.rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            break
        if parent <= 1:
            break
        found.append(parent)
        current = parent
    return found


WRAPPERS = frozenset({"uv", "uvx", "pipx", "env", "sh", "bash", "dash", "zsh", "timeout", "npx"})
"""Programs a host may start its server through; the host is then the wrapper's parent."""


def _host_pids() -> list[int]:
    """Return the process that started this server, and its parent when that is a wrapper.

    Only these: a farther ancestor (a terminal's shell, a tmux server) is shared by unrelated
    sessions and would make their hooks count this server's saves.
    """
    chain = ancestors(depth=2)
    if not chain:
        return []
    try:
        name = Path(f"/proc/{chain[0]}/comm").read_text(encoding="utf-8").strip()
    except OSError:
        return chain[:1]
    return chain if name in WRAPPERS else chain[:1]


def session_from_env(environ: dict[str, str] | None = None) -> str:
    """Return the host session id named in the environment, or ``""``."""
    env = os.environ if environ is None else environ
    for name in SESSION_VARIABLES:
        value = env.get(name, "").strip()
        if value:
            return value
    return ""


def mark(store: Path, *, tool: str, record_id: str, client: str = "") -> None:
    """Record one successful save made through the MCP server; never raises.

    Args:
        store: The store the record was written to.
        tool: ``memory_remember`` or ``memory_correct``.
        record_id: The id of the record written.
        client: The MCP client's name (``clientInfo.name``), when known.
    """
    from memdir.kernel.lang.redact import redact

    row: dict[str, Any] = {
        "at": now_iso(),
        "session": redact(session_from_env()),
        "pids": _host_pids(),
        "tool": tool,
        "id": record_id,
    }
    if client:
        row["client"] = redact(client)[:80]
    with contextlib.suppress(OSError, ValueError):
        jsonl.append_line(layout(store).in_state(SAVES_FILE), row)


def _belongs(row: dict[str, Any], session: str, since: str, family: set[int]) -> bool:
    marked = row.get("session")
    if isinstance(marked, str) and marked:
        return marked == session
    pids = row.get("pids")
    if isinstance(pids, list) and pids and family:
        return any(isinstance(p, int) and p in family for p in pids)
    return str(row.get("at", "")) >= since


def count_for(store: Path, session: str, since: str) -> int:
    """Return how many MCP saves belong to ``session`` (see the module docstring).

    Args:
        store: The store.
        session: The host's session id, as the hooks see it.
        since: The session's start (ISO 8601 UTC); older marks never count.
    """
    return len(ids_for(store, session, since))


def ids_for(store: Path, session: str, since: str) -> list[str]:
    """Return the ids of the records ``session`` saved through MCP (its context holds them).

    Args:
        store: The store.
        session: The host's session id, as the hooks see it.
        since: The session's start (ISO 8601 UTC); older marks never count.

    Returns:
        One id per mark, in the order they were made ("" for a mark without an id).
    """
    path = layout(store).in_state(SAVES_FILE)
    try:
        size = path.stat().st_size
    except OSError:
        return []
    try:
        tail = jsonl.read_tail(path, max(size - TAIL_BYTES, 0))
    except (OSError, ValueError, MemdirError):
        return []
    family = set(ancestors())
    found = []
    for line in tail.lines:
        row = line.value
        if not isinstance(row, dict) or str(row.get("at", "")) < since:
            continue
        if _belongs(row, session, since, family):
            found.append(str(row.get("id") or ""))
    return found
