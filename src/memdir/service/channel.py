"""Provenance from the channel: who is typing, a person or an agent's shell tool.

A command typed by a person is ``owner``; the same command run by a coding agent through its
shell tool is ``agent`` (DESIGN §4). Agents announce themselves in the environment of the
commands they run; these are the markers each host documents or is known to set. No flag can
turn an agent's command back into the owner's.

It also builds the :class:`~memdir.kernel.base.caller.Caller` of the two edges that read the
environment, the CLI and the MCP server. This is edge code, so it lives above the kernel.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from memdir.kernel.base.caller import Caller

AGENT_MARKERS: tuple[tuple[str, str], ...] = (
    ("CLAUDECODE", "claude-code"),  # Claude Code sets CLAUDECODE=1 in its Bash tool
    ("CLAUDE_CODE_ENTRYPOINT", "claude-code"),
    ("CODEX_THREAD_ID", "codex"),  # Codex CLI's shell tool
    ("CODEX_SANDBOX", "codex"),
    ("CODEX_SANDBOX_NETWORK_DISABLED", "codex"),
    ("GEMINI_CLI", "gemini-cli"),  # Gemini CLI sets GEMINI_CLI=1 for shell commands
    ("OPENCODE", "opencode"),
    ("CURSOR_AGENT", "cursor"),
    ("CLINE_ACTIVE", "cline"),
    ("AI_AGENT", "agent"),  # the vendor-neutral marker some hosts adopted
    ("AGENT", "agent"),  # goose, amp
    ("MEMDIR_AGENT", "agent"),  # set by memdir's own hook commands and tests
)


def detect_agent(env: Mapping[str, str] | None = None) -> str | None:
    """Return the host whose agent is running this process, or ``None`` for a person.

    A host's own marker counts whatever its value: ``CLAUDECODE=0 memdir remember …`` is still
    Claude Code's shell, so an agent cannot turn itself into the owner with one word. Only the
    vendor-neutral ``AI_AGENT`` and ``AGENT``, which other software may set, honour ``0``,
    ``false`` and ``no``. An agent that deletes its markers from the environment is not
    detected: origin is evidence, not authentication, and every write stays in the git history
    (``memdir log``) where the owner can see and roll it back.
    """
    environ = os.environ if env is None else env
    for name, host in AGENT_MARKERS:
        if name not in environ:
            continue
        value = environ[name].strip()
        if host != "agent":
            return host
        if value and value.lower() not in {"0", "false", "no"}:
            return value if name == "AI_AGENT" else host
    return None


def cli_origin(env: Mapping[str, str] | None = None) -> str:
    """Return the origin of a CLI write: ``agent`` inside an agent's session, else ``owner``."""
    return "agent" if detect_agent(env) else "owner"


SESSION_VARIABLES: tuple[str, ...] = ("CLAUDE_CODE_SESSION_ID", "CODEX_THREAD_ID")
"""Environment variables a host's shell carries its session id in (first one set wins): Claude
Code's Bash tool since 2.1.132 (the hooks' ``session_id``), Codex's shell tool (its thread)."""


def cli_caller(env: Mapping[str, str] | None = None) -> Caller:
    """Return the caller of a CLI command: ``agent`` in an agent's shell, else ``owner``.

    The host comes from its environment marker (``CLAUDECODE`` → ``claude-code``); the session
    from the first of :data:`SESSION_VARIABLES` that is set.
    """
    environ = os.environ if env is None else env
    host = detect_agent(environ)
    if host is None:
        return Caller("owner", "cli")
    session = next((environ[v] for v in SESSION_VARIABLES if environ.get(v, "").strip()), None)
    return Caller("agent", "cli", host=host, session=session)


def mcp_caller(env: Mapping[str, str] | None = None) -> Caller:
    """Return the caller of every MCP tool call: always ``agent`` (DESIGN §4), host if known."""
    return Caller("agent", "mcp", host=detect_agent(env))
