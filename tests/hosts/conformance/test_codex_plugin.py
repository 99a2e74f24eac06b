"""memdir's Codex plugin, installed from the repository's marketplace into Codex 0.171.0.

No ``memdir install``: the project has a store and nothing else. In a throwaway ``CODEX_HOME``
a person runs ``codex plugin marketplace add <clone>/plugins/codex`` and ``codex plugin add
memdir@memdir``; Codex copies the plugin into its cache and loads its hooks
(``hooks/hooks.json``, commands under ``${PLUGIN_ROOT}``) and its server (``.mcp.json``). Plugin
hooks are untrusted until the person trusts them in ``/hooks`` (the suite trusts them through
the app-server calls ``/hooks`` makes); then one ``codex exec`` turn reads a file twice.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.hosts.conformance.codex_script import CodexScript, final, shell
from tests.hosts.conformance.conftest import (
    LoopbackServer,
    host_binary,
    make_sandbox,
    read_state,
)
from tests.hosts.conformance.test_codex import AppServer, _codex_home

pytestmark = [pytest.mark.slow, pytest.mark.enable_socket]

MARKETPLACE = Path(__file__).resolve().parents[3] / "plugins" / "codex"
REMEMBER = "Please remember that the release branch is called trunk-stable."


@pytest.fixture(scope="module")
def codex_plugin(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Install the plugin, trust its hooks, run one turn; return what each step showed."""
    binary = str(host_binary("codex"))
    box = make_sandbox(tmp_path_factory.mktemp("codex-plugin"), "codex")
    undo = box.memdir("uninstall", "--host", "codex", "--dir", str(box.project))
    assert undo.returncode == 0, undo.stderr
    script = CodexScript({"t1": [shell("cat notes.txt"), shell("cat notes.txt"), final("Done.")]})
    with LoopbackServer(script) as server:
        home, env = _codex_home(box, server.url)
        (home / "hooks.json").unlink()  # no payload logger: only the plugin's hooks
        setup = [
            box.run([binary, "plugin", "marketplace", "add", str(MARKETPLACE)], env=env),
            box.run([binary, "plugin", "add", "memdir@memdir"], env=env),
        ]
        app = AppServer(Path(binary), box, env)
        try:
            before, _ = app.hooks(box.project)
            app.trust(before)
            after, warnings = app.hooks(box.project)
        finally:
            app.close()
        mcp = box.run([binary, "mcp", "list"], env=env)
        turn = box.run(
            [
                binary,
                "exec",
                "--sandbox",
                "workspace-write",
                "--skip-git-repo-check",
                f"{REMEMBER} Then look at notes.txt. <<t1>>",
            ],
            env=env,
        )
    return {
        "box": box,
        "home": home,
        "setup": setup,
        "before": before,
        "after": after,
        "warnings": warnings,
        "mcp": mcp.stdout + mcp.stderr,
        "turn": turn,
        "script": script,
    }


def test_codex_loads_the_plugin_hooks_from_its_cache(codex_plugin: dict[str, Any]) -> None:
    """Every event's hook comes from the plugin, its command under Codex's plugin cache
    (``${PLUGIN_ROOT}`` expanded), untrusted until the person trusts it, trusted after."""
    for done in codex_plugin["setup"]:
        assert done.returncode == 0, done.stdout + done.stderr
    ours = [h for h in codex_plugin["before"] if "memdir-run" in str(h.get("command"))]
    events = {h["eventName"] for h in ours}
    assert events == {
        "sessionStart",
        "userPromptSubmit",
        "preToolUse",
        "postToolUse",
        "stop",
        "preCompact",
        "postCompact",
    }, events
    cache = str(codex_plugin["home"] / "plugins" / "cache" / "memdir" / "memdir")
    assert all(cache in str(h["command"]) for h in ours), [h["command"] for h in ours]
    assert {h["trustStatus"] for h in ours} == {"untrusted"}
    after = [h for h in codex_plugin["after"] if "memdir-run" in str(h.get("command"))]
    assert {h["trustStatus"] for h in after} == {"trusted"}
    assert codex_plugin["warnings"] == []


def test_codex_lists_the_plugin_server_enabled(codex_plugin: dict[str, Any]) -> None:
    """``codex mcp list`` shows the plugin's memdir server enabled."""
    line = next(ln for ln in codex_plugin["mcp"].splitlines() if ln.startswith("memdir"))
    assert "enabled" in line, codex_plugin["mcp"]


def test_the_plugin_hooks_run_in_a_turn(codex_plugin: dict[str, Any]) -> None:
    """The trusted plugin hooks ran: the stated belief is stored and the second ``cat`` of an
    unchanged file was refused."""
    turn = codex_plugin["turn"]
    assert turn.returncode == 0, turn.stderr[-3000:]
    for event in ("SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop"):
        assert f"hook: {event} Completed" in turn.stderr, event
    state = read_state(codex_plugin["box"].store)
    assert any(r.get("origin") == "owner" for r in state.records_with("trunk-stable"))
    outputs = [
        str(i.get("output"))
        for b in codex_plugin["script"].bodies
        for i in b.get("input", [])
        if isinstance(i, dict) and i.get("type") == "function_call_output"
    ]
    assert any("already read in full" in o for o in outputs), outputs
    assert state.hook_errors == ""
