"""The plugin hosts (OpenCode, Kilo Code) and memdir's Claude Code and Codex plugins, offline.

Install and uninstall for OpenCode and Kilo (the plugin file, the ``mcp`` entry, the block),
the plugin template, ``memdir doctor``'s wiring checks, and the shipped marketplaces checked
against the host table. The real binaries run in tests/hosts/conformance/.
"""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path

import pytest

from memdir import __version__
from memdir.hosts import install as installer
from memdir.hosts.marketplace import plugin_hooks, render
from tests.conftest import git, project_files, run_cli

REPO = Path(__file__).resolve().parents[2]
PLUGIN_FILES = {"opencode": ".opencode/plugins/memdir.js", "kilo": ".kilo/plugins/memdir.js"}
CONFIG_FILES = {"opencode": "opencode.json", "kilo": "kilo.json"}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A git project with a user's own config (odd formatting) and AGENTS.md."""
    root = tmp_path / "proj"
    root.mkdir()
    git(root, "init", "-q")
    return root


@pytest.mark.slow
@pytest.mark.parametrize("host", ["opencode", "kilo"])
def test_install_writes_plugin_server_and_block_and_uninstall_restores_bytes(
    project: Path, host: str
) -> None:
    """Install adds the plugin, ``mcp.memdir`` and the block; uninstall leaves every byte."""
    config = project / CONFIG_FILES[host]
    config.write_text(
        '{\n    "model":   "x/y",\n    "mcp": {"other": {"type": "local", '
        '"command": ["other"]}}\n}\n'
    )
    (project / "AGENTS.md").write_text("# Agents\n\nBe kind.\n")
    before = project_files(project)
    done = run_cli("install", "--host", host, "--dir", str(project), "--json")
    assert done.exit_code == 0, done.stdout + done.stderr
    plugin = (project / PLUGIN_FILES[host]).read_text()
    assert plugin.startswith(installer.PLUGIN_MARK)
    assert 'const COMMAND = ["memdir"]; // memdir:command' in plugin
    assert f'const HOST = "{host}"; // memdir:host' in plugin
    data = json.loads(config.read_text())
    assert data["mcp"]["memdir"] == {
        "type": "local",
        "command": ["memdir", "serve"],
        "enabled": True,
    }
    assert data["mcp"]["other"] == {"type": "local", "command": ["other"]}
    assert '    "model":   "x/y",' in config.read_text()  # the user's formatting stays
    assert installer.BLOCK_BEGIN in (project / "AGENTS.md").read_text()
    again = run_cli("install", "--host", host, "--dir", str(project), "--json")
    assert json.loads(again.stdout)["changed"] == []  # a reinstall changes nothing
    undone = run_cli("uninstall", "--host", host, "--dir", str(project), "--json")
    assert undone.exit_code == 0, undone.stdout + undone.stderr
    assert project_files(project) == before


@pytest.mark.slow
def test_install_refuses_a_plugin_file_that_is_not_memdirs(project: Path) -> None:
    """A user's own ``.opencode/plugins/memdir.js`` is never overwritten; nothing is written."""
    mine = project / ".opencode" / "plugins" / "memdir.js"
    mine.parent.mkdir(parents=True)
    mine.write_text("export const Mine = async () => ({})\n")
    before = project_files(project)
    done = run_cli("install", "--host", "opencode", "--dir", str(project))
    assert done.exit_code == 1
    assert "is not memdir's plugin" in done.stdout + done.stderr
    assert project_files(project) == before


@pytest.mark.slow
def test_install_refuses_a_foreign_memdir_server(project: Path) -> None:
    """An ``mcp.memdir`` entry memdir did not write is left alone and named."""
    config = project / "opencode.json"
    config.write_text('{"mcp": {"memdir": {"type": "remote", "url": "https://example.invalid"}}}')
    before = project_files(project)
    done = run_cli("install", "--host", "opencode", "--dir", str(project))
    assert done.exit_code == 1
    assert "did not write" in done.stdout + done.stderr
    assert project_files(project) == before


@pytest.mark.slow
def test_doctor_reports_a_missing_plugin(project: Path) -> None:
    """Doctor sees memdir's plugin, server and block; once the plugin is deleted it fails and
    says how to repair it."""
    assert run_cli("install", "--host", "opencode", "--dir", str(project)).exit_code == 0
    done = run_cli("doctor", "--dir", str(project), "--json")
    report = next(r for r in json.loads(done.stdout)["results"] if r["host"] == "opencode")
    checks = {c["check"]: c for c in report["checks"]}
    assert checks["plugin"]["ok"] is True and checks["mcp entry"]["ok"] is True
    assert checks["instructions"]["ok"] is True
    (project / PLUGIN_FILES["opencode"]).unlink()
    done = run_cli("doctor", "--dir", str(project), "--json")
    report = next(r for r in json.loads(done.stdout)["results"] if r["host"] == "opencode")
    plugin = next(c for c in report["checks"] if c["check"] == "plugin")
    assert plugin["ok"] is False and "memdir install --host opencode" in plugin["fix"]
    assert done.exit_code == 1


def test_the_plugin_template_is_packaged_and_names_every_event() -> None:
    """The JS plugin ships as package data and calls every event the host table lists."""
    text = installer.plugin_text("opencode", "path")
    for event in (
        "SessionStart",
        "UserPromptSubmit",
        "PreToolUse",
        "PostToolUse",
        "PostToolUseFailure",
        "Stop",
        "PreCompact",
        "PostCompact",
        "SessionEnd",
    ):
        assert re.search(rf'hook\(\s*"{event}"', text), event
    absolute = installer.plugin_text("kilo", "absolute")
    assert '"-m", "memdir"]; // memdir:command' in absolute
    assert 'const HOST = "kilo"' in absolute


# --------------------------------------------------------------------------- marketplaces


@pytest.mark.parametrize(
    ("host", "folder"),
    [("claude-code", "plugins/claude-code/memdir"), ("codex", "plugins/codex/memdir")],
)
def test_shipped_plugin_hooks_match_the_host_table(host: str, folder: str) -> None:
    """The plugin's hooks.json is what the host table gives (regenerate it when this fails)."""
    shipped = (REPO / folder / "hooks" / "hooks.json").read_text()
    assert shipped == render(plugin_hooks(host))


def test_shipped_plugins_use_the_plugin_root_never_an_absolute_path() -> None:
    """Every command runs from the plugin's root variable or a ``./`` path; versions match."""
    claude = json.loads((REPO / "plugins/claude-code/memdir/hooks/hooks.json").read_text())
    codex = json.loads((REPO / "plugins/codex/memdir/hooks/hooks.json").read_text())
    for hooks, root in ((claude, "${CLAUDE_PLUGIN_ROOT}"), (codex, "${PLUGIN_ROOT}")):
        commands = [h["command"] for g in hooks["hooks"].values() for x in g for h in x["hooks"]]
        assert commands and all(c.startswith(f'"{root}/bin/memdir-run" hook ') for c in commands)
    claude_mcp = json.loads((REPO / "plugins/claude-code/memdir/.mcp.json").read_text())
    assert claude_mcp["mcpServers"]["memdir"]["command"] == "${CLAUDE_PLUGIN_ROOT}/bin/memdir-run"
    codex_mcp = json.loads((REPO / "plugins/codex/memdir/.mcp.json").read_text())
    assert codex_mcp["mcpServers"]["memdir"]["command"] == "./bin/memdir-run"
    for manifest in (
        "plugins/claude-code/memdir/.claude-plugin/plugin.json",
        "plugins/codex/memdir/.codex-plugin/plugin.json",
    ):
        assert json.loads((REPO / manifest).read_text())["version"] == __version__
    for folder in ("plugins/claude-code/memdir", "plugins/codex/memdir"):
        runner = REPO / folder / "bin" / "memdir-run"
        assert runner.stat().st_mode & stat.S_IXUSR
        text = "".join(p.read_text() for p in (REPO / folder).rglob("*") if p.is_file())
        assert "/home/" not in text and "/tmp/" not in text and "/work/" not in text


def test_the_plugin_runner_is_silent_for_a_hook_without_memdir(tmp_path: Path) -> None:
    """Without memdir installed, a plugin hook reads its payload and exits 0 printing nothing;
    the server exits 1 saying how to install memdir."""
    import subprocess

    runner = REPO / "plugins/claude-code/memdir/bin/memdir-run"
    env = {"PATH": str(tmp_path), "HOME": str(tmp_path)}
    os.symlink("/bin/sh", tmp_path / "sh")
    os.symlink("/bin/cat", tmp_path / "cat")
    hook = subprocess.run(
        [str(runner), "hook", "SessionStart"],
        input=b"{}",
        env=env,
        capture_output=True,
        check=False,
    )
    assert hook.returncode == 0 and hook.stdout == b""
    serve = subprocess.run([str(runner), "serve"], env=env, capture_output=True, check=False)
    assert serve.returncode == 1 and b"pipx install memdir" in serve.stderr
