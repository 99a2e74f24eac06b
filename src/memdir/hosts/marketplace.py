"""memdir's Claude Code and Codex plugins: the hook files, generated from the host table.

The repository ships two marketplaces (``plugins/claude-code/`` and ``plugins/codex/``), each
with one plugin ``memdir`` (hooks, MCP server, instructions as a skill). Their hook files are
what :func:`plugin_hooks` returns for the host; ``tests/hosts/test_marketplace.py`` fails when
the shipped files drift from the table. Every command runs ``bin/memdir-run`` from the plugin's
own root (``${CLAUDE_PLUGIN_ROOT}`` in Claude Code, ``${PLUGIN_ROOT}`` in Codex), never an
absolute path: it runs ``memdir`` from PATH, or ``python3 -m memdir``, or stays silent.
"""

from __future__ import annotations

import json
from typing import Any

from memdir.hosts.install import HOOK_TIMEOUT_SECONDS
from memdir.kernel.hostio.hosttable import HOSTS

ROOT_VARIABLE = {"claude-code": "${CLAUDE_PLUGIN_ROOT}", "codex": "${PLUGIN_ROOT}"}
"""How each host names the installed plugin's folder inside a hook command."""


def plugin_hooks(host: str) -> dict[str, Any]:
    """Return the plugin's ``hooks/hooks.json`` for ``host`` (``claude-code`` or ``codex``).

    Args:
        host: a host with a plugin system and Claude-style hook files.

    Returns:
        ``{"hooks": {event: [{"matcher"?, "hooks": [{"type", "command", "timeout"}]}]}}``,
        one group per event the host has, matchers as ``memdir install`` writes them.

    Raises:
        KeyError: ``host`` has no plugin.
    """
    root = ROOT_VARIABLE[host]
    entry = HOSTS[host]
    suffix = "" if host == "claude-code" else f" --host {host}"
    hooks: dict[str, Any] = {}
    for canonical, own in entry["events"].items():
        group: dict[str, Any] = {}
        matcher = entry.get("matchers", {}).get(canonical)
        if matcher:  # a plugin's MCP tools are named mcp__plugin_<plugin>_<server>__<tool>
            group["matcher"] = matcher.replace("mcp__memdir__", "mcp__(plugin_memdir_)?memdir__")
        group["hooks"] = [
            {
                "type": "command",
                "command": f'"{root}/bin/memdir-run" hook {own}{suffix}',
                "timeout": HOOK_TIMEOUT_SECONDS,
            }
        ]
        hooks[own] = [group]
    return {"hooks": hooks}


def render(value: dict[str, Any]) -> str:
    """Return ``value`` as the shipped files hold JSON (two spaces, final newline)."""
    return json.dumps(value, indent=2) + "\n"
