"""Host installers: idempotent, surgical, reversible; malformed configs untouched (B06, B34, B41)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from memdir.hosts import install as installer
from tests.conftest import git, run_cli


@pytest.fixture
def odd_project(tmp_path: Path) -> Path:
    """A git project whose path has a space, a quote and an ampersand (B06)."""
    root = tmp_path / "dir with 'quote' & amp" / "proj (copy)"
    root.mkdir(parents=True)
    git(root, "init", "-q")
    return root


def _install(project: Path, host: str = "claude-code", *args: str) -> dict:
    result = run_cli("install", "--host", host, "--dir", str(project), "--json", *args)
    assert result.exit_code == 0, result.stdout + result.stderr
    return json.loads(result.stdout)


def _uninstall(project: Path, host: str = "claude-code") -> dict:
    result = run_cli("uninstall", "--host", host, "--dir", str(project), "--json")
    assert result.exit_code == 0, result.stdout + result.stderr
    return json.loads(result.stdout)


def test_install_writes_hooks_mcp_and_a_managed_block_and_hooks_run_from_a_shell(
    odd_project: Path,
) -> None:
    _install(odd_project)
    settings = json.loads((odd_project / ".claude" / "settings.json").read_text())
    events = settings["hooks"]
    assert set(events) == {
        "SessionStart",
        "UserPromptSubmit",
        "PreToolUse",
        "PostToolUse",
        "PostToolUseFailure",
        "PostToolBatch",
        "Stop",
        "PreCompact",
        "PostCompact",
        "SessionEnd",
    }
    assert events["PreToolUse"][0]["matcher"] == "Read"
    for groups in events.values():
        for group in groups:
            for hook in group["hooks"]:
                assert hook["timeout"] == 10  # seconds, as Claude Code reads them (B34)
                done = subprocess.run(
                    ["sh", "-c", hook["command"]],
                    input=b"{}",
                    cwd=odd_project,
                    capture_output=True,
                    check=False,
                )
                assert done.returncode == 0, (hook["command"], done.stderr)
    mcp = json.loads((odd_project / ".mcp.json").read_text())
    assert mcp["mcpServers"]["memdir"]["args"] == ["-m", "memdir", "serve"]
    claude_md = (odd_project / "CLAUDE.md").read_text()
    assert claude_md.startswith(installer.BLOCK_BEGIN) and claude_md.endswith(
        installer.BLOCK_END + "\n"
    )
    assert (odd_project / ".memdir" / "memdir.toml").is_file()


def test_install_twice_changes_nothing(odd_project: Path) -> None:
    _install(odd_project)
    before = {
        p: p.read_bytes()
        for p in odd_project.rglob("*")
        if p.is_file() and ".memdir" not in p.parts and ".git" not in p.parts
    }
    again = _install(odd_project)
    assert again["changed"] == []
    after = {p: p.read_bytes() for p in before}
    assert after == before


def test_uninstall_restores_user_files_exactly_and_removes_created_ones(project: Path) -> None:
    (project / ".claude").mkdir()
    original_settings = {
        "permissions": {"allow": ["Bash(ls)"]},
        "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "echo user-hook"}]}]},
    }
    (project / ".claude" / "settings.json").write_text(json.dumps(original_settings, indent=4))
    (project / "CLAUDE.md").write_bytes(b"# My project\r\nNotes without a final newline")
    _install(project)
    settings = json.loads((project / ".claude" / "settings.json").read_text())
    assert settings["hooks"]["Stop"][0] == original_settings["hooks"]["Stop"][0]
    assert len(settings["hooks"]["Stop"]) == 2
    _uninstall(project)
    assert json.loads((project / ".claude" / "settings.json").read_text()) == original_settings
    assert (project / "CLAUDE.md").read_bytes() == b"# My project\r\nNotes without a final newline"
    assert not (project / ".mcp.json").exists()


def test_uninstall_removes_files_and_folders_install_created(project: Path) -> None:
    _install(project)
    _uninstall(project)
    assert not (project / ".claude").exists()
    assert not (project / ".mcp.json").exists()
    assert not (project / "CLAUDE.md").exists()


# B41: a malformed user config is left byte-identical and the command fails clearly.
@pytest.mark.parametrize(
    "content",
    [
        b'{"hooks": {"Stop": []},}\n',
        b"// comment\n{}\n",
        b"[1, 2]\n",
        b'{"hooks": {"Stop": "x"}}\n',
    ],
    ids=["trailing-comma", "comment", "array", "bad-hooks"],
)
def test_a_malformed_settings_file_is_left_byte_identical(project: Path, content: bytes) -> None:
    (project / ".claude").mkdir()
    (project / ".claude" / "settings.json").write_bytes(content)
    result = run_cli("install", "--host", "claude-code", "--dir", str(project))
    assert result.exit_code == 1
    assert "settings.json" in result.stderr and "unchanged" in result.stderr
    assert (project / ".claude" / "settings.json").read_bytes() == content
    assert not (project / ".mcp.json").exists()
    assert not (project / "CLAUDE.md").exists()


def test_a_foreign_mcp_server_named_memdir_is_not_overwritten(project: Path) -> None:
    original = b'{"mcpServers": {"memdir": {"command": "someone-else"}}}\n'
    (project / ".mcp.json").write_bytes(original)
    result = run_cli("install", "--host", "claude-code", "--dir", str(project))
    assert result.exit_code == 1
    assert (project / ".mcp.json").read_bytes() == original


def test_a_host_rewriting_settings_is_repaired_by_reinstall(project: Path) -> None:
    _install(project)
    path = project / ".claude" / "settings.json"
    settings = json.loads(path.read_text())
    settings["hooks"].pop("PreToolUse")  # the host dropped entries it did not recognise
    path.write_text(json.dumps(settings))
    again = _install(project)
    assert [c["path"] for c in again["changed"]] == [".claude/settings.json"]
    assert "PreToolUse" in json.loads(path.read_text())["hooks"]


def test_codex_and_gemini_get_their_own_files_and_units(project: Path) -> None:
    _install(project, "codex")
    _install(project, "gemini")
    codex = json.loads((project / ".codex" / "hooks.json").read_text())["hooks"]
    assert "SessionEnd" not in codex and "PostToolBatch" not in codex
    assert "--host codex" in codex["SessionStart"][0]["hooks"][0]["command"]
    gemini = json.loads((project / ".gemini" / "settings.json").read_text())["hooks"]
    assert set(gemini) >= {"BeforeAgent", "BeforeTool", "AfterTool", "AfterAgent"}
    assert gemini["BeforeAgent"][0]["hooks"][0]["timeout"] == 10_000  # milliseconds (B34)
    assert "## Project memory (memdir)" in (project / "AGENTS.md").read_text()
    assert "## Project memory (memdir)" in (project / "GEMINI.md").read_text()


def test_hosts_lists_every_host_and_what_it_lacks() -> None:
    result = run_cli("hosts", "--json")
    rows = {r["host"]: r for r in json.loads(result.stdout)["results"]}
    assert {
        "claude-code",
        "codex",
        "gemini",
        "cursor",
        "copilot",
        "opencode",
        "cline",
        "windsurf",
    } <= set(rows)
    assert rows["claude-code"]["installable"]
    assert rows["codex"]["events"]["SessionEnd"] is None
    assert not rows["cursor"]["installable"]


def test_a_refused_install_creates_nothing(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(project)
    exclude = (project / ".git" / "info" / "exclude").read_bytes()
    before = sorted(p.name for p in project.iterdir())
    refused = run_cli("install", "--host", "cursor")
    assert refused.exit_code == 2
    assert "cannot install into Cursor yet" in refused.stderr
    assert "memdir: memdir" not in refused.stderr
    assert sorted(p.name for p in project.iterdir()) == before
    assert (project / ".git" / "info" / "exclude").read_bytes() == exclude
    missing = run_cli("install", "--host", "claude-code", "--dir", str(project / "no" / "such"))
    assert missing.exit_code == 2
    assert not (project / "no").exists()


def test_uninstall_where_nothing_is_installed_creates_no_file(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(project)
    first = run_cli("install", "--host", "codex", "--json")
    assert json.loads(first.stdout)["created_store"]
    assert run_cli("uninstall", "--host", "codex").exit_code == 0

    def files() -> list[str]:
        return sorted(
            str(p.relative_to(project))
            for p in project.rglob("*")
            if not {".git", ".memdir"} & set(p.relative_to(project).parts)
        )

    after_uninstall = files()
    for host in ("codex", "claude-code", "gemini"):
        again = run_cli("uninstall", "--host", host, "--json")
        assert again.exit_code == 0, again.output
        assert json.loads(again.stdout)["changed"] == []
    assert files() == after_uninstall
    assert not (project / ".claude").exists() and not (project / "AGENTS.md").exists()


def test_unknown_host_is_a_usage_error() -> None:
    assert run_cli("install", "--host", "vim").exit_code == 2
