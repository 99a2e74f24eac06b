"""The host table: one entry per host, read by both the installer and the hook path."""

from __future__ import annotations

import subprocess
import sys

from memdir.hosts import HOSTS
from memdir.kernel.hostio import hosttable
from memdir.kernel.hostio.hosttable import CANONICAL_EVENTS


def test_every_host_maps_only_known_events_and_installable_hosts_say_where_to_write() -> None:
    known = {*CANONICAL_EVENTS, "PostToolUseFailure"}
    for name, entry in hosttable.HOSTS.items():
        assert set(entry["events"]) <= known, name
        assert set(entry.get("matchers", {})) <= set(entry["events"]), name
        if entry["installable"]:
            for scope in ("personal", "shared"):
                files = entry[scope]
                # a plugin host (OpenCode, Kilo) gets memdir's plugin file instead of hooks
                assert (files.get("hooks") or files.get("plugin")) and files["instructions"], (
                    name,
                    scope,
                )
                # only Cline keeps its MCP settings where memdir does not write (the editor's)
                assert files.get("mcp") or name == "cline", (name, scope)
                assert files["command"] in ("absolute", "path")
            # a team file never carries one machine's interpreter
            assert entry["shared"]["command"] == "path"
    assert HOSTS["codex"].events == hosttable.HOSTS["codex"]["events"]


def test_tool_vocabulary_maps_each_host_onto_canonical_tools() -> None:
    assert hosttable.canonical_tool("gemini", "read_file") == "Read"
    assert hosttable.canonical_tool("gemini", "run_shell_command") == "Bash"
    assert hosttable.canonical_tool("codex", "apply_patch") == "Edit"
    assert hosttable.canonical_tool("claude-code", "NotebookEdit") == "Edit"
    assert hosttable.canonical_tool("gemini", "glob") == "glob"
    assert hosttable.canonical_event("gemini", "BeforeAgent") == "UserPromptSubmit"
    assert hosttable.canonical_event("gemini", "Notification") == ""
    assert hosttable.canonical_event("claude-code", "PreCompact") == "PreCompact"


def test_mcp_tool_names_round_trip_for_every_host() -> None:
    assert hosttable.mcp_tool_name("claude-code", "memory_remember") == (
        "mcp__memdir__memory_remember"
    )
    assert hosttable.mcp_tool_name("gemini", "memory_remember") == "mcp_memdir_memory_remember"
    assert hosttable.mcp_tool_name("copilot", "memory_remember") == "memdir-memory_remember"
    for host in hosttable.HOSTS:
        qualified = hosttable.mcp_tool_name(host, "memory_remember")
        if qualified != "memory_remember":
            assert hosttable.memdir_mcp_tool(qualified) == "memory_remember", host
    # another server's tool, or an unknown tool of ours, is not memdir's save
    assert hosttable.memdir_mcp_tool("mcp__github__memory_remember") == ""
    assert hosttable.memdir_mcp_tool("mcp_memdir_rm_rf") == ""


def test_gemini_timeouts_are_milliseconds() -> None:
    assert hosttable.timeout_value("gemini", 10) == 10_000
    assert hosttable.timeout_value("claude-code", 10) == 10


def test_the_table_imports_nothing_beyond_the_standard_library() -> None:
    code = (
        "import sys; before=set(sys.modules); import memdir.kernel.hostio.hosttable; "
        "new=set(sys.modules)-before; "
        "print(sorted(m for m in new if not m.startswith(('memdir', '__future__'))))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"
