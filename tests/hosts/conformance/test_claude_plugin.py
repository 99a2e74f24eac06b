"""memdir's Claude Code plugin, installed from the repository's marketplace into Claude Code 2.1.332.

No ``memdir install`` here: the project has a store (``memdir init``) and nothing else. In a
throwaway HOME a person runs ``claude plugin marketplace add <clone>/plugins/claude-code`` and
``claude plugin install memdir@memdir``; then one ``claude -p`` session (stream-json, one prompt
at a time) against the loopback Messages stand-in: a "remember that …" prompt, a full read, the
same read again (refused), and memdir's MCP ``memory_recall`` through the plugin's server. The
hooks and the server run ``${CLAUDE_PLUGIN_ROOT}/bin/memdir-run`` from Claude Code's plugin cache.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.hosts.conformance.conftest import (
    LoopbackServer,
    Sandbox,
    host_binary,
    make_sandbox,
    read_state,
)
from tests.hosts.conformance.test_claude_code import (
    MessagesStandIn,
    StreamSession,
    _env,
    _project_entry,
    text,
    tool,
)

pytestmark = [pytest.mark.slow, pytest.mark.enable_socket]

MARKETPLACE = Path(__file__).resolve().parents[3] / "plugins" / "claude-code"
BELIEF = "The staging database is read-only on Fridays"
RECALL_TOOL = "mcp__plugin_memdir_memdir__memory_recall"
"""How Claude Code names a plugin's MCP tool: ``mcp__plugin_<plugin>_<server>__<tool>``."""
PROMPTS = (
    f"Remember that {BELIEF[0].lower()}{BELIEF[1:]}.\n[[step:remember]]",
    "[[step:read]] Read notes.txt.",
    "[[step:reread]] Read notes.txt again.",
    "[[step:mcp]] Check memory about the staging database.",
)


@dataclass
class PluginRun:
    """What the plugin session left behind."""

    box: Sandbox
    standin: MessagesStandIn
    setup: list[Any]
    stream: list[dict[str, Any]]
    debug: str
    seconds: float

    def tool_results(self, name: str) -> list[dict[str, Any]]:
        """The ``tool_result`` blocks answering calls of ``name``, in order."""
        ids = [
            b["id"]
            for m in self.stream
            if m.get("type") == "assistant"
            for b in m["message"]["content"]
            if b.get("type") == "tool_use" and b.get("name") == name
        ]
        found = [
            b
            for m in self.stream
            if m.get("type") == "user"
            for b in m["message"].get("content", [])
            if isinstance(b, dict) and b.get("type") == "tool_result"
        ]
        return [b for i in ids for b in found if b.get("tool_use_id") == i]


@pytest.fixture(scope="module")
def plugin_run(tmp_path_factory: pytest.TempPathFactory) -> PluginRun:
    """Install the plugin from the marketplace folder and run the scripted session."""
    claude = str(host_binary("claude"))
    root = tmp_path_factory.mktemp("claude-plugin")
    box = make_sandbox(root, "claude-code")
    undo = box.memdir("uninstall", "--host", "claude-code", "--dir", str(box.project))
    assert undo.returncode == 0, undo.stderr  # the store stays; no project wiring is left
    notes = box.project / "notes.txt"
    standin = MessagesStandIn(
        {
            "remember": [[text("Noted.")]],
            "read": [[tool("Read", file_path=str(notes))], [text("Read it.")]],
            "reread": [[tool("Read", file_path=str(notes))], [text("Tried again.")]],
            "mcp": [[tool(RECALL_TOOL, query="staging database Fridays")], [text("Checked.")]],
        }
    )
    started = time.monotonic()
    with LoopbackServer(standin) as server:
        env = _env(server.url)
        setup = [
            box.run([claude, "plugin", "marketplace", "add", str(MARKETPLACE)], env=env),
            box.run([claude, "plugin", "install", "memdir@memdir"], env=env),
            box.run([claude, "plugin", "list"], env=env),
        ]
        _project_entry(box, hasTrustDialogAccepted=True, hasCompletedProjectOnboarding=True)
        settings = box.home / ".claude" / "settings.json"
        data = json.loads(settings.read_text()) if settings.exists() else {}
        data["permissions"] = {"allow": ["Read", RECALL_TOOL]}
        settings.write_text(json.dumps(data, indent=2))
        debug_file = root / "debug.log"
        session = StreamSession(
            box,
            [
                claude,
                "-p",
                "--input-format",
                "stream-json",
                "--output-format",
                "stream-json",
                "--verbose",
                "--debug-file",
                str(debug_file),
            ],
            env,
        )
        try:
            for prompt in PROMPTS:
                session.send(prompt)
        finally:
            session.close()
    return PluginRun(
        box=box,
        standin=standin,
        setup=setup,
        stream=session.messages,
        debug=debug_file.read_text() if debug_file.exists() else "",
        seconds=time.monotonic() - started,
    )


def test_the_plugin_installs_from_the_marketplace_folder(plugin_run: PluginRun) -> None:
    """``marketplace add`` and ``install`` succeed and ``plugin list`` shows memdir enabled."""
    for done in plugin_run.setup:
        assert done.returncode == 0, done.stdout + done.stderr
    listed = plugin_run.setup[-1].stdout
    assert "memdir@memdir" in listed, listed
    settings = json.loads((plugin_run.box.home / ".claude" / "settings.json").read_text())
    assert settings.get("enabledPlugins", {}).get("memdir@memdir") is True, settings
    project = plugin_run.box.project
    assert not (project / ".claude").exists() and not (project / ".mcp.json").exists()


def test_the_plugin_hooks_ran_from_the_plugin_root(plugin_run: PluginRun) -> None:
    """Claude Code ran the plugin's hooks, ``${CLAUDE_PLUGIN_ROOT}/bin/memdir-run`` expanded to
    the installed plugin's folder (for a local marketplace, the folder itself), each exit 0."""
    found = re.findall(
        r'\["([^"]+)/bin/memdir-run" hook (\w+)\] \(plugin memdir@memdir\) finished with '
        r"status (\d+)",
        plugin_run.debug,
    )
    statuses: dict[str, set[str]] = {}
    for root, event, status in found:
        assert Path(root) == MARKETPLACE / "memdir", root
        statuses.setdefault(event, set()).add(status)
    for event in ("SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop"):
        assert statuses.get(event) == {"0"}, (event, statuses)


def test_remember_digest_and_read_gate_work_through_the_plugin(plugin_run: PluginRun) -> None:
    """The prompt's belief is stored; the model is told so; the second full read is refused."""
    shown = json.dumps(plugin_run.standin.by_step.get("remember", []))
    assert "memdir stored" in shown, shown[:2000]
    state = read_state(plugin_run.box.store)
    assert any(r.get("origin") == "owner" for r in state.records_with("read-only on Fridays"))
    first, second = plugin_run.tool_results("Read")[:2]
    assert not first.get("is_error") and "gamma" in json.dumps(first)
    assert second.get("is_error") and "already read in full" in json.dumps(second)
    assert any(r.get("tool") == "Read" for r in state.actions)


def test_the_plugin_mcp_server_answers(plugin_run: PluginRun) -> None:
    """The plugin's own server (``.mcp.json`` in the plugin) answers ``memory_recall``."""
    results = plugin_run.tool_results(RECALL_TOOL)
    assert results, [m for m in plugin_run.stream if m.get("type") == "system"][:1]
    assert "read-only" in json.dumps(results[0]) and not results[0].get("is_error"), results[0]


def test_no_hook_errors_and_short_session(plugin_run: PluginRun) -> None:
    """memdir logged no hook error; the whole plugin run stays short."""
    assert read_state(plugin_run.box.store).hook_errors == ""
    assert plugin_run.seconds < 180, plugin_run.seconds
