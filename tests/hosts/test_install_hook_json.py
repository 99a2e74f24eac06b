"""Installing into the hook-JSON hosts: Copilot CLI, Qwen Code, Droid, Cursor, Windsurf, Cline.

Each host's files in its own format (Copilot's flat ``bash``/``timeoutSec`` handlers under
``"version": 1``, Cursor's flat handlers with matchers, Windsurf's ``show_output``, Cline's one
executable per event), next to a user's own entries, and an uninstall that gives every file back
byte for byte.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from memdir import service
from tests.conftest import project_files, run_cli

HOSTS = ("copilot", "qwen", "droid", "cursor", "windsurf", "cline")
USER_FILES = {
    ".github/hooks/lint.json": b'{"version": 1, "hooks": {"postToolUse": []}}\n',
    ".cursor/hooks.json": (
        b'{\n  "version": 1,\n  "hooks": {\n    "afterFileEdit": [{"command": "./fmt.sh"}]\n  }\n}\n'
    ),
    ".qwen/settings.json": b'{\n  "model": {"name": "qwen3-coder"}\n}\n',
    ".factory/mcp.json": b'{"mcpServers": {"github": {"command": "gh-mcp"}}}\n',
    "AGENTS.md": b"# Agents\n\nRun make check.\n",
    ".clinerules/style.md": b"Use tabs.\n",
}


def _install(project: Path, host: str) -> dict:
    result = run_cli("install", "--host", host, "--dir", str(project), "--json")
    assert result.exit_code == 0, result.stdout + result.stderr
    return json.loads(result.stdout)


def _uninstall(project: Path, host: str) -> dict:
    result = run_cli("uninstall", "--host", host, "--dir", str(project), "--json")
    assert result.exit_code == 0, result.stdout + result.stderr
    return json.loads(result.stdout)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A throwaway HOME (Windsurf's MCP config lives there)."""
    folder = tmp_path / "home"
    folder.mkdir()
    monkeypatch.setenv("HOME", str(folder))
    return folder


def test_each_host_gets_its_own_format_and_uninstall_restores_every_byte(
    project: Path, home: Path
) -> None:
    service.init(project)
    for rel, content in USER_FILES.items():
        (project / rel).parent.mkdir(parents=True, exist_ok=True)
        (project / rel).write_bytes(content)
    before = project_files(project)
    for host in HOSTS:
        _install(project, host)
    copilot = json.loads((project / ".github/hooks/memdir.json").read_text())
    assert copilot["version"] == 1
    handler = copilot["hooks"]["preToolUse"][0]
    assert handler == {
        "type": "command",
        "bash": "memdir hook preToolUse --host copilot",
        "timeoutSec": 10,
    }
    cursor = json.loads((project / ".cursor/hooks.json").read_text())
    assert cursor["hooks"]["afterFileEdit"] == [{"command": "./fmt.sh"}]  # the user's, kept
    assert cursor["hooks"]["preToolUse"] == [
        {"command": "memdir hook preToolUse --host cursor", "timeout": 10, "matcher": "Read"}
    ]
    assert "afterAgentResponse" in cursor["hooks"]  # the answer's text: journaled
    qwen = json.loads((project / ".qwen/settings.json").read_text())
    assert qwen["model"] == {"name": "qwen3-coder"}
    assert qwen["hooks"]["PreToolUse"][0]["hooks"][0]["timeout"] == 10  # seconds in 0.24
    assert qwen["mcpServers"]["memdir"]["args"] == ["serve"]
    droid = json.loads((project / ".factory/mcp.json").read_text())
    assert set(droid["mcpServers"]) == {"github", "memdir"}
    windsurf = json.loads((project / ".windsurf/hooks.json").read_text())
    assert {"pre_read_code", "post_write_code", "post_run_command"} <= set(windsurf["hooks"])
    assert (
        "memdir"
        in json.loads((home / ".codeium/windsurf/mcp_config.json").read_text())["mcpServers"]
    )
    script = project / ".clinerules/hooks/PreToolUse"
    assert os.access(script, os.X_OK)
    assert script.read_text().splitlines()[-1] == "exec memdir hook PreToolUse --host cline"
    rule = (project / ".cursor/rules/memdir.mdc").read_text()
    assert rule.startswith("---\ndescription: memdir project memory\nalwaysApply: true\n---\n")
    assert (project / "AGENTS.md").read_text().startswith("# Agents\n\nRun make check.\n")
    again = {host: _install(project, host)["changed"] for host in HOSTS}
    assert again == {host: [] for host in HOSTS}  # a reinstall changes nothing
    for host in HOSTS:
        _uninstall(project, host)
    assert project_files(project) == before
    assert not (home / ".codeium").exists()


def test_a_cline_hook_memdir_did_not_write_is_never_overwritten(project: Path) -> None:
    mine = project / ".clinerules" / "hooks" / "PreToolUse"
    mine.parent.mkdir(parents=True)
    mine.write_text("#!/bin/sh\necho '{}'\n")
    result = run_cli("install", "--host", "cline", "--dir", str(project))
    assert result.exit_code == 1
    assert "is a hook memdir did not write" in result.stderr
    assert mine.read_text() == "#!/bin/sh\necho '{}'\n"
    assert sorted(p.name for p in mine.parent.iterdir()) == ["PreToolUse"]  # nothing half-done


def test_hosts_lists_the_six_as_installable_with_what_each_loses() -> None:
    rows = {r["host"]: r for r in json.loads(run_cli("hosts", "--json").stdout)["results"]}
    for host in HOSTS:
        assert rows[host]["installable"], host
    assert rows["windsurf"]["events"]["SessionStart"] is None
    assert rows["cline"]["events"]["SessionEnd"] is None
    assert rows["droid"]["events"]["PostToolUseFailure"] is None
    assert rows["qwen"]["events"]["PostCompact"] == "PostCompact"
    shown = run_cli("hosts").stdout
    assert "not proven with the binary" in shown


def test_doctor_checks_an_editors_wiring_and_says_it_cannot_ask_it(project: Path) -> None:
    _install(project, "cursor")
    (project / ".cursor" / "mcp.json").unlink()
    result = run_cli("doctor", "--dir", str(project), "--json")
    report = next(r for r in json.loads(result.stdout)["results"] if r["host"] == "cursor")
    checks = {c["check"]: c for c in report["checks"]}
    assert checks["hooks"]["ok"] and checks["instructions"]["ok"]
    assert (
        checks["mcp entry"]["ok"] is False
        and "memdir install --host cursor" in checks["mcp entry"]["fix"]
    )
    assert checks["asked the host"]["ok"] is None
