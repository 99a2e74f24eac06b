"""Host installers: personal or shared, minimal, reversible byte for byte (B06, B34, B41, B47, B48)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from memdir import service
from memdir.hosts import install as installer
from tests.conftest import git, project_files, run_cli

VENV_BIN = str(Path(sys.executable).parent)


@pytest.fixture
def odd_project(tmp_path: Path) -> Path:
    """A git project whose path has a space, a quote and an ampersand (B06)."""
    root = tmp_path / "dir with 'quote' & amp" / "proj (copy)"
    root.mkdir(parents=True)
    git(root, "init", "-q")
    return root


@pytest.fixture
def memdir_on_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Put a `memdir` command on PATH (as `pipx install` would), and nothing else of the venv."""
    bin_dir = tmp_path / "pipx-bin"
    bin_dir.mkdir()
    script = Path(VENV_BIN) / "memdir"
    (bin_dir / "memdir").symlink_to(script)
    monkeypatch.setenv(
        "PATH", os.pathsep.join([str(bin_dir), "/usr/local/bin", "/usr/bin", "/bin"])
    )
    return bin_dir


@pytest.fixture
def no_memdir_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """A PATH on which no `memdir` can be found."""
    monkeypatch.setenv("PATH", os.pathsep.join(["/usr/bin", "/bin"]))
    assert shutil.which("memdir") is None


def _install(project: Path, host: str = "claude-code", *args: str) -> dict:
    result = run_cli("install", "--host", host, "--dir", str(project), "--json", *args)
    assert result.exit_code == 0, result.stdout + result.stderr
    return json.loads(result.stdout)


def _uninstall(project: Path, host: str = "claude-code") -> dict:
    result = run_cli("uninstall", "--host", host, "--dir", str(project), "--json")
    assert result.exit_code == 0, result.stdout + result.stderr
    return json.loads(result.stdout)


def _committable(root: Path) -> list[str]:
    """The files `git add -A` would commit (tracked or not ignored)."""
    out = git(root, "ls-files", "--cached", "--others", "--exclude-standard")
    return [line for line in out.splitlines() if line and not line.startswith(".memdir/")]


def _commands(settings: dict) -> list[str]:
    return [
        h["command"] for groups in settings["hooks"].values() for g in groups for h in g["hooks"]
    ]


# --- personal (the default) ---------------------------------------------------------------


def test_personal_claude_install_writes_only_files_nobody_commits(odd_project: Path) -> None:
    out = _install(odd_project)
    assert out["scope"] == "personal"
    local = json.loads((odd_project / ".claude" / "settings.local.json").read_text())
    assert set(local["hooks"]) >= {"SessionStart", "UserPromptSubmit", "PreToolUse", "Stop"}
    assert local["hooks"]["PreToolUse"][0]["matcher"] == "^(Read|Bash)$"
    for command in _commands(local):  # this machine's interpreter: fine in a personal file
        assert command.startswith(installer.hook_command("X", "claude-code").removesuffix(" X"))
        done = subprocess.run(
            ["sh", "-c", command], input=b"{}", cwd=odd_project, capture_output=True, check=False
        )
        assert done.returncode == 0, (command, done.stderr)
    for group in local["hooks"].values():
        assert group[0]["hooks"][0]["timeout"] == 10  # seconds, as Claude Code reads them (B34)
    claude_json = json.loads((Path.home() / ".claude.json").read_text())
    server = claude_json["projects"][str(odd_project.resolve())]["mcpServers"]["memdir"]
    assert server["args"] == ["-m", "memdir", "serve"]
    block = (odd_project / "CLAUDE.local.md").read_text()
    assert block.startswith(installer.BLOCK_BEGIN) and block.endswith(installer.BLOCK_END + "\n")
    # nothing a team commits was written, and git would commit no file naming this venv
    assert not (odd_project / ".claude" / "settings.json").exists()
    assert not (odd_project / ".mcp.json").exists() and not (odd_project / "CLAUDE.md").exists()
    committable = _committable(odd_project)
    assert ".claude/settings.local.json" not in committable
    for rel in committable:
        assert VENV_BIN not in (odd_project / rel).read_text(errors="replace"), rel
    assert (odd_project / ".memdir" / "memdir.toml").is_file()


def test_a_personal_install_of_every_host_leaves_no_machine_path_in_committedproject_files(
    project: Path,
) -> None:
    for host in ("claude-code", "codex", "gemini"):
        _install(project, host)
    committable = _committable(project)
    assert {".codex/hooks.json", ".codex/config.toml", ".gemini/settings.json"} <= set(committable)
    for rel in committable:
        text = (project / rel).read_text(errors="replace")
        assert VENV_BIN not in text and sys.executable not in text, rel
    codex = json.loads((project / ".codex" / "hooks.json").read_text())
    assert all(c.startswith("memdir hook ") for c in _commands(codex))


# --- shared -------------------------------------------------------------------------------


@pytest.mark.slow
def test_a_shared_install_works_in_a_clone_at_another_path_with_no_edit(
    tmp_path: Path, project: Path, memdir_on_path: Path
) -> None:
    for host in ("claude-code", "codex", "gemini"):
        out = _install(project, host, "--shared")
        assert out["scope"] == "shared" and out["warnings"] == []
    for rel in _committable(project):
        assert VENV_BIN not in (project / rel).read_text(errors="replace"), rel
    clone = tmp_path / "elsewhere" / "teammate clone"
    shutil.copytree(project, clone, ignore=shutil.ignore_patterns(".memdir"))
    (clone / ".git" / "info" / "exclude").write_text("")
    env = {**os.environ, "HOME": str(tmp_path / "teammate-home")}
    ran = 0
    for settings, host in (
        (".claude/settings.json", "claude-code"),
        (".codex/hooks.json", "codex"),
        (".gemini/settings.json", "gemini"),
    ):
        data = json.loads((clone / settings).read_text())
        for event, groups in data["hooks"].items():
            if event not in ("SessionStart", "UserPromptSubmit", "PreToolUse", "BeforeAgent"):
                continue
            command = groups[0]["hooks"][0]["command"]
            payload = {"session_id": f"s-{host}", "cwd": str(clone), "hook_event_name": event}
            done = subprocess.run(
                ["sh", "-c", command],
                input=json.dumps(payload).encode(),
                cwd=clone,
                env=env,
                capture_output=True,
                check=False,
                timeout=60,
            )
            assert done.returncode == 0, (command, done.stderr)
            assert not done.stdout.strip() or json.loads(done.stdout)
            ran += 1
    assert ran >= 6
    mcp = json.loads((clone / ".mcp.json").read_text())["mcpServers"]["memdir"]
    gemini = json.loads((clone / ".gemini" / "settings.json").read_text())["mcpServers"]["memdir"]
    assert mcp["command"] == gemini["command"] == "memdir"
    assert gemini["timeout"] == 30_000  # milliseconds
    assert shutil.which(mcp["command"], path=os.environ["PATH"])
    assert 'command = "memdir"' in (clone / ".codex" / "config.toml").read_text()


def test_shared_files_carry_the_path_command_and_switching_scope_moves_the_wiring(
    project: Path,
) -> None:
    _install(project)
    _install(project, "claude-code", "--shared")
    shared = json.loads((project / ".claude" / "settings.json").read_text())
    assert all(c.startswith("memdir hook ") for c in _commands(shared))
    assert json.loads((project / ".mcp.json").read_text())["mcpServers"]["memdir"]["command"] == (
        "memdir"
    )
    assert "## Project memory (memdir)" in (project / "CLAUDE.md").read_text()
    # the personal wiring was taken out, so hooks do not run twice
    assert not (project / ".claude" / "settings.local.json").exists()
    assert not (project / "CLAUDE.local.md").exists()
    assert not (Path.home() / ".claude.json").exists()
    assert "settings.local.json" not in (project / ".git" / "info" / "exclude").read_text()


def test_install_warns_when_memdir_is_not_on_path(project: Path, no_memdir_on_path: None) -> None:
    out = _install(project, "codex")
    assert any("not on PATH" in w and "pipx install" in w for w in out["warnings"])
    human = run_cli("install", "--host", "codex", "--dir", str(project))
    assert "warning: `memdir` is not on PATH" in human.stdout


def test_no_path_warning_when_memdir_is_on_path(project: Path, memdir_on_path: Path) -> None:
    assert _install(project, "codex")["warnings"] == []


# --- idempotence and byte-for-byte round trips ---------------------------------------------


@pytest.mark.parametrize("scope", [(), ("--shared",)], ids=["personal", "shared"])
def test_install_twice_changes_nothing(odd_project: Path, scope: tuple[str, ...]) -> None:
    for host in ("claude-code", "codex", "gemini"):
        _install(odd_project, host, *scope)
    before = project_files(odd_project)
    home = (Path.home() / ".claude.json").read_bytes() if not scope else b""
    for host in ("claude-code", "codex", "gemini"):
        assert _install(odd_project, host, *scope)["changed"] == []
    assert project_files(odd_project) == before
    if not scope:
        assert (Path.home() / ".claude.json").read_bytes() == home


USER_FILES = {
    ".claude/settings.json": (
        b'{\n    "permissions": {"allow": ["Bash(ls)"]},\n    "model": "opus",\n    "hooks": {\n'
        b'        "Stop": [\n            {"hooks": [{"type": "command", "command": "echo mine"}]}\n'
        b"        ]\n    }\n}\n"
    ),
    ".claude/settings.local.json": b'{\n\t"env": {\n\t\t"A": "1"\n\t}\n}',
    ".mcp.json": b'{"mcpServers": {"other": {"command": "x"}}}',
    "CLAUDE.md": b"# My project\r\nNotes without a final newline",
    "CLAUDE.local.md": b"my own notes\n",
    "AGENTS.md": b"# Agents\n\nBe brief.\n",
    ".codex/hooks.json": b'{\n  "hooks": {}\n}\n',
    ".codex/config.toml": b'# codex\nmodel = "o3"   # mine\n\n[mcp_servers.other]\ncommand = "x"\n',
    ".gemini/settings.json": b'{"ui": {"theme": "dark"}, "hooks": {"BeforeTool": []}}\n',
}


def _write_userproject_files(project: Path) -> None:
    service.init(project)  # the store's own line in .git/info/exclude comes first
    for rel, content in USER_FILES.items():
        path = project / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)


@pytest.mark.parametrize("scope", [(), ("--shared",)], ids=["personal", "shared"])
def test_uninstall_restores_every_user_file_byte_for_byte(
    project: Path, scope: tuple[str, ...]
) -> None:
    _write_userproject_files(project)
    exclude = (project / ".git" / "info" / "exclude").read_bytes()
    before = project_files(project)
    for host in ("claude-code", "codex", "gemini"):
        _install(project, host, *scope)
    after_install = project_files(project)
    assert after_install != before
    # the user's own entries are all still there, in their own formatting
    settings = (project / ".claude" / "settings.json").read_text()
    assert '    "permissions": {"allow": ["Bash(ls)"]},\n    "model": "opus",' in settings
    assert '# codex\nmodel = "o3"   # mine\n' in (project / ".codex" / "config.toml").read_text()
    for host in ("claude-code", "codex", "gemini"):
        _uninstall(project, host)
    assert project_files(project) == before
    assert (project / ".git" / "info" / "exclude").read_bytes() == exclude


def test_uninstall_keeps_edits_the_user_made_after_install(project: Path) -> None:
    _write_userproject_files(project)
    _install(project, "claude-code", "--shared")
    path = project / ".claude" / "settings.json"
    edited = path.read_text().replace('    "model": "opus",', '    "model": "opus",\n    "x": 1,')
    path.write_text(edited)
    _uninstall(project)
    expected = USER_FILES[".claude/settings.json"].replace(
        b'    "model": "opus",', b'    "model": "opus",\n    "x": 1,'
    )
    assert path.read_bytes() == expected


def test_uninstall_removes_files_and_folders_install_created(project: Path) -> None:
    for scope in ((), ("--shared",)):
        _install(project, "claude-code", *scope)
        _install(project, "gemini", *scope)
        _uninstall(project)
        _uninstall(project, "gemini")
        assert project_files(project) == {"README.md": b"# demo project\n"}
        assert not (project / ".claude").exists() and not (project / ".gemini").exists()
    assert not (Path.home() / ".claude.json").exists()


def test_an_upgrade_reinstall_changes_only_memdirs_own_entries(project: Path) -> None:
    old_command = f"{sys.executable} -m memdir hook SessionStart"  # what 0.1 wrote
    settings = {
        "hooks": {
            "SessionStart": [
                {"hooks": [{"type": "command", "command": "echo before"}]},
                {"hooks": [{"type": "command", "command": old_command, "timeout": 5}]},
                {"hooks": [{"type": "command", "command": "echo after"}]},
            ]
        }
    }
    path = project / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text(json.dumps(settings, indent=2) + "\n")
    _install(project, "claude-code", "--shared")
    groups = json.loads(path.read_text())["hooks"]["SessionStart"]
    assert [g["hooks"][0]["command"] for g in groups] == [
        "echo before",
        "echo after",
        "memdir hook SessionStart",
    ]
    _uninstall(project)
    left = json.loads(path.read_text())["hooks"]["SessionStart"]
    assert [g["hooks"][0]["command"] for g in left] == ["echo before", "echo after"]


# --- B47: a user's hook in memdir's matcher group ------------------------------------------


def test_a_users_hook_sharing_memdirs_group_survives_reinstall_and_uninstall(
    project: Path,
) -> None:
    _install(project, "claude-code", "--shared")
    path = project / ".claude" / "settings.json"
    settings = json.loads(path.read_text())
    mine = {"type": "command", "command": "echo user-session-start"}
    settings["hooks"]["SessionStart"][0]["hooks"].append(mine)
    path.write_text(json.dumps(settings, indent=2) + "\n")
    again = _install(project, "claude-code", "--shared")
    assert again["changed"] == []  # memdir's own entry is intact: nothing to redo
    group = json.loads(path.read_text())["hooks"]["SessionStart"][0]["hooks"]
    assert mine in group and any(installer.is_our_handler(h) for h in group)
    _uninstall(project)
    # the file install created is kept: it holds the user's hook, and only that
    left = json.loads(path.read_text())
    assert left == {"hooks": {"SessionStart": [{"hooks": [mine]}]}}


# --- B48: symlinked instruction and settings files -----------------------------------------


def test_symlinked_files_stay_links_and_their_targets_get_and_lose_memdirs_parts(
    project: Path, tmp_path: Path
) -> None:
    (project / "AGENTS.md").write_bytes(b"# Shared instructions\n")
    (project / "CLAUDE.md").symlink_to("AGENTS.md")
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    target = dotfiles / "claude-settings.json"
    target.write_bytes(b'{\n  "model": "opus"\n}\n')
    (project / ".claude").mkdir()
    (project / ".claude" / "settings.json").symlink_to(target)
    _install(project, "claude-code", "--shared")
    assert (project / "CLAUDE.md").is_symlink() and (project / ".claude/settings.json").is_symlink()
    assert installer.BLOCK_BEGIN in (project / "AGENTS.md").read_text()
    assert "memdir hook SessionStart" in target.read_text()
    _uninstall(project)
    assert (project / "CLAUDE.md").is_symlink() and (project / ".claude/settings.json").is_symlink()
    assert (project / "AGENTS.md").read_bytes() == b"# Shared instructions\n"
    assert target.read_bytes() == b'{\n  "model": "opus"\n}\n'


# --- B41: malformed user files -------------------------------------------------------------


@pytest.mark.parametrize(
    ("rel", "content", "host", "scope"),
    [
        (".claude/settings.json", b'{"hooks": {"Stop": []},}\n', "claude-code", "--shared"),
        (".claude/settings.json", b"// comment\n{}\n", "claude-code", "--shared"),
        (".claude/settings.json", b"[1, 2]\n", "claude-code", "--shared"),
        (".claude/settings.json", b'{"hooks": {"Stop": "x"}}\n', "claude-code", "--shared"),
        (".claude/settings.local.json", b'{"a": 1,}', "claude-code", ""),
        (".codex/hooks.json", b'# mine\n{"hooks": {}}\n', "codex", ""),
        (".codex/config.toml", b"model = \n", "codex", ""),
        (".gemini/settings.json", b'{"hooks": {"BeforeTool": [1,]}}', "gemini", ""),
    ],
    ids=["trailing-comma", "comment", "array", "bad-hooks", "local", "codex-json", "toml", "gem"],
)
def test_a_malformed_host_file_is_left_byte_identical(
    project: Path, rel: str, content: bytes, host: str, scope: str
) -> None:
    (project / rel).parent.mkdir(parents=True, exist_ok=True)
    (project / rel).write_bytes(content)
    before = project_files(project)
    result = run_cli("install", "--host", host, "--dir", str(project), *([scope] if scope else []))
    assert result.exit_code == 1
    assert Path(rel).name in result.stderr and "unchanged" in result.stderr
    assert "Traceback" not in result.stderr
    assert project_files(project) == before
    assert not (Path.home() / ".claude.json").exists()


def test_a_foreign_mcp_server_named_memdir_is_not_overwritten(project: Path) -> None:
    original = b'{"mcpServers": {"memdir": {"command": "someone-else"}}}\n'
    (project / ".mcp.json").write_bytes(original)
    result = run_cli("install", "--host", "claude-code", "--shared", "--dir", str(project))
    assert result.exit_code == 1
    assert (project / ".mcp.json").read_bytes() == original


def test_a_host_rewriting_settings_is_repaired_by_reinstall(project: Path) -> None:
    _install(project, "claude-code", "--shared")
    path = project / ".claude" / "settings.json"
    settings = json.loads(path.read_text())
    settings["hooks"].pop("PreToolUse")  # the host dropped entries it did not recognise
    path.write_text(json.dumps(settings))
    again = _install(project, "claude-code", "--shared")
    assert [c["path"] for c in again["changed"]] == [".claude/settings.json"]
    assert "PreToolUse" in json.loads(path.read_text())["hooks"]


# --- --dir and subfolders ------------------------------------------------------------------


def test_install_and_uninstall_with_dir_subfolder_are_a_pair(project: Path) -> None:
    sub = project / "packages" / "api"
    sub.mkdir(parents=True)
    service.init(project)
    before = project_files(project)
    exclude = (project / ".git" / "info" / "exclude").read_bytes()
    for host in ("claude-code", "codex"):
        _install(sub, host)
    assert (sub / ".claude" / "settings.local.json").is_file()
    # Claude Code files local-scope servers under the checkout's top, even from a subfolder
    projects = json.loads((Path.home() / ".claude.json").read_text())["projects"]
    assert list(projects) == [str(project.resolve())]
    assert (
        "/packages/api/.claude/settings.local.json"
        in (project / ".git" / "info" / "exclude").read_text()
    )
    assert not (project / ".claude").exists()
    for host in ("claude-code", "codex"):
        out = _uninstall(sub, host)
        assert out["changed"]
    assert project_files(project) == before
    assert (project / ".git" / "info" / "exclude").read_bytes() == exclude


def test_install_from_a_subfolder_wires_the_checkout_and_uninstall_there_undoes_it(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sub = project / "src"
    sub.mkdir()
    monkeypatch.chdir(sub)
    before = project_files(project)
    assert run_cli("install", "--host", "gemini").exit_code == 0
    assert (project / ".gemini" / "settings.json").is_file() and not (sub / ".gemini").exists()
    assert run_cli("uninstall", "--host", "gemini").exit_code == 0
    assert project_files(project) == before


# --- hosts, refusals -------------------------------------------------------------------------


def test_codex_and_gemini_get_their_own_files_units_and_mcp_entries(project: Path) -> None:
    _install(project, "codex")
    _install(project, "gemini")
    codex = json.loads((project / ".codex" / "hooks.json").read_text())["hooks"]
    assert "SessionEnd" not in codex and "PostToolBatch" not in codex
    assert "--host codex" in codex["SessionStart"][0]["hooks"][0]["command"]
    toml = (project / ".codex" / "config.toml").read_text()
    assert '[mcp_servers.memdir]\ncommand = "memdir"\nargs = ["serve"]' in toml
    gemini = json.loads((project / ".gemini" / "settings.json").read_text())
    assert set(gemini["hooks"]) >= {"BeforeAgent", "BeforeTool", "AfterTool", "AfterAgent"}
    assert gemini["hooks"]["BeforeAgent"][0]["hooks"][0]["timeout"] == 10_000  # ms (B34)
    assert gemini["mcpServers"]["memdir"] == {
        "command": "memdir",
        "args": ["serve"],
        "timeout": 30_000,
    }
    assert "## Project memory (memdir)" in (project / "AGENTS.md").read_text()
    assert "## Project memory (memdir)" in (project / "GEMINI.md").read_text()


def test_install_and_hosts_say_codex_runs_hooks_only_once_trusted(project: Path) -> None:
    out = run_cli("install", "--host", "codex", "--dir", str(project))
    assert "/hooks" in out.stdout and "trust" in out.stdout
    rows = {r["host"]: r for r in json.loads(run_cli("hosts", "--json").stdout)["results"]}
    assert any("/hooks" in g for g in rows["codex"]["gates"])
    assert any("Pending approval" in g for g in rows["claude-code"]["gates"])
    assert "/hooks" in run_cli("hosts").stdout


def test_hosts_lists_every_host_and_what_it_lacks() -> None:
    result = run_cli("hosts", "--json")
    rows = {r["host"]: r for r in json.loads(result.stdout)["results"]}
    assert {"claude-code", "codex", "gemini", "cursor", "copilot", "opencode", "cline"} <= set(rows)
    assert rows["claude-code"]["installable"]
    assert rows["claude-code"]["personal"]["hooks"] == ".claude/settings.local.json"
    assert rows["codex"]["events"]["SessionEnd"] is None
    assert rows["cursor"]["installable"]


def test_hosts_names_each_file_once_and_labels_projectproject_files(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shown = run_cli("hosts").stdout
    assert "    default:  .gemini/settings.json, GEMINI.md (project files: " in shown
    assert ".gemini/settings.json, .gemini/settings.json" not in shown
    assert "    personal: .claude/settings.local.json, ~/.claude.json, CLAUDE.local.md" in shown
    monkeypatch.chdir(project)
    done = run_cli("install", "--host", "gemini")
    assert done.exit_code == 0, done.stderr
    assert "(project files: Gemini CLI has no personal project scope)" in done.stdout
    assert "(personal files)" not in done.stdout


def test_a_refused_install_creates_nothing(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # every host in the table is installable now: a listed-only host is made for this test
    from dataclasses import replace

    from memdir.hosts import registry

    listed = replace(registry.HOSTS["openclaw"], installable=False, notes="listed only")
    monkeypatch.setitem(registry.HOSTS, "openclaw", listed)
    monkeypatch.chdir(project)
    exclude = (project / ".git" / "info" / "exclude").read_bytes()
    before = sorted(p.name for p in project.iterdir())
    refused = run_cli("install", "--host", "openclaw")
    assert refused.exit_code == 2
    assert "cannot install OpenClaw: memdir has no OpenClaw adapter yet" in refused.stderr
    assert sorted(p.name for p in project.iterdir()) == before
    unwired = run_cli("uninstall", "--host", "openclaw")
    assert unwired.exit_code == 2
    assert "cannot uninstall OpenClaw: memdir has no OpenClaw adapter" in unwired.stderr
    assert "install into" not in unwired.stderr
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
    after_uninstall = project_files(project)
    for host in ("codex", "claude-code", "gemini"):
        again = run_cli("uninstall", "--host", host, "--json")
        assert again.exit_code == 0, again.output
        assert json.loads(again.stdout)["changed"] == []
    assert project_files(project) == after_uninstall
    assert not (project / ".claude").exists() and not (project / "AGENTS.md").exists()


def test_unknown_host_is_a_usage_error() -> None:
    assert run_cli("install", "--host", "vim").exit_code == 2


# --- doctor (B41: a host rewrote its settings) ---------------------------------------------

HOSTS_BIN = Path(os.environ.get("MEMDIR_HOSTS_PREFIX", "/opt/memdir-hosts")) / "node_modules/.bin"


def _doctor(project: Path) -> tuple[int, dict]:
    result = run_cli("doctor", "--dir", str(project), "--json", "--timeout", "60")
    return result.exit_code, json.loads(result.stdout)


def test_doctor_finds_wiring_a_host_dropped_and_says_how_to_repair(
    project: Path, no_memdir_on_path: None
) -> None:
    _install(project, "claude-code", "--shared")
    path = project / ".claude" / "settings.json"
    settings = json.loads(path.read_text())
    settings["hooks"].pop("PreToolUse")  # the host reserialised, keeping what it recognised
    path.write_text(json.dumps(settings))
    code, report = _doctor(project)
    assert code == 1
    (claude,) = report["results"]
    hooks = next(c for c in claude["checks"] if c["check"] == "hooks")
    assert hooks["ok"] is False and "PreToolUse" in hooks["detail"]
    assert hooks["fix"] == "memdir install --host claude-code --shared"
    human = run_cli("doctor", "--dir", str(project))
    assert (
        "WILL NOT WORK" in human.stdout and "fix: memdir install --host claude-code" in human.stdout
    )
    # the repair it names works, and then the wiring checks pass
    _install(project, "claude-code", "--shared")
    code, report = _doctor(project)
    checks = {c["check"]: c for c in report["results"][0]["checks"]}
    assert checks["hooks"]["ok"] is True and checks["mcp entry"]["ok"] is True
    # with `memdir` and `claude` off PATH it says it cannot run or ask, never "works"
    assert checks["command"]["ok"] is False
    asked = checks["asked the host"]
    assert asked["ok"] is None and "not on PATH" in asked["detail"]
    assert report["results"][0]["ok"] is False


def test_doctor_that_could_not_ask_the_host_says_so_and_exits_0(
    project: Path, no_memdir_on_path: None
) -> None:
    assert shutil.which("claude") is None
    _install(project, "claude-code")  # personal: hooks run this interpreter by absolute path
    code, report = _doctor(project)
    checks = {c["check"]: c for c in report["results"][0]["checks"]}
    assert checks["command"]["ok"] is True and checks["hooks"]["ok"] is True
    assert checks["asked the host"]["ok"] is None  # not a pass ...
    assert report["results"][0]["ok"] is None and code == 0  # ... nor a definite failure
    human = run_cli("doctor", "--dir", str(project))
    assert human.exit_code == 0
    assert "Claude Code (personal install): UNKNOWN: could not ask the host" in human.stdout
    assert "could not ask Claude Code: `claude` is not on PATH" in human.stdout
    assert "fix: put `claude` on PATH and run `memdir doctor` again" in human.stdout
    assert ": works" not in human.stdout


def test_doctor_reports_nothing_installed(project: Path) -> None:
    code, report = _doctor(project)
    assert code == 0 and report["results"] == []


@pytest.mark.slow
def test_doctor_asks_the_real_hosts_and_never_trusts_for_the_user(
    project: Path, memdir_on_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not (HOSTS_BIN / "codex").exists():
        pytest.skip(f"HOST CLIS MISSING at {HOSTS_BIN}: run .ci/install-hosts")
    monkeypatch.setenv("PATH", os.pathsep.join([os.environ["PATH"], str(HOSTS_BIN)]))
    for host in ("claude-code", "codex", "gemini"):
        _install(project, host)
    home = Path.home()
    (home / ".codex").mkdir(exist_ok=True)
    trust = f'[projects."{project.resolve()}"]\ntrust_level = "trusted"\n'
    (home / ".codex" / "config.toml").write_text(trust)  # the user trusted the project
    code, report = _doctor(project)
    assert code == 1
    by_host = {r["host"]: {c["check"]: c for c in r["checks"]} for r in report["results"]}
    assert by_host["claude-code"]["server (claude mcp get memdir)"]["ok"] is True
    hooks = by_host["codex"]["hooks trusted (codex app-server hooks/list)"]
    assert hooks["ok"] is False and "untrusted" in hooks["detail"] and "/hooks" in hooks["fix"]
    assert by_host["codex"]["server (codex mcp list)"]["ok"] is True
    gemini = by_host["gemini"]["server (gemini mcp list)"]
    assert gemini["ok"] is False and "trust" in gemini["fix"]  # an untrusted folder
    # memdir never wrote a host's trust: Codex's config is the user's own, byte for byte
    assert (home / ".codex" / "config.toml").read_text() == trust
    assert not (home / ".gemini" / "trustedFolders.json").exists()


def test_the_instruction_block_names_a_command_the_agent_can_run(
    project: Path, no_memdir_on_path: None
) -> None:
    out = _install(project)  # personal, memdir not on PATH: the block names this interpreter
    assert any("not on PATH" in w for w in out["warnings"])
    block = (project / "CLAUDE.local.md").read_text()
    command = installer.agent_command("absolute")
    assert f"`{command} recall" in block and "`memdir recall" not in block
    done = subprocess.run(
        ["sh", "-c", f"{command} --version"], cwd=project, capture_output=True, check=False
    )
    assert done.returncode == 0, done.stderr
    # shared files always name the bare command the teammates install
    _install(project, "claude-code", "--shared")
    assert "`memdir recall" in (project / "CLAUDE.md").read_text()


def test_a_personal_install_never_touches_the_teams_wiring_nor_doubles_it(project: Path) -> None:
    _install(project, "claude-code", "--shared")  # a teammate committed the shared wiring
    team = {rel: (project / rel).read_bytes() for rel in (".claude/settings.json", ".mcp.json")}
    out = _install(project)  # this person then runs a personal install
    assert {rel: (project / rel).read_bytes() for rel in team} == team
    assert not (project / ".claude" / "settings.local.json").exists()  # hooks would run twice
    assert any("already wires memdir for the team" in w for w in out["warnings"])
    # what the team's files lack is still added personally: here nothing, all three are shared
    assert not (Path.home() / ".claude.json").exists()


def test_a_personal_reinstall_takes_an_older_memdirs_machine_paths_out_of_teamproject_files(
    project: Path,
) -> None:
    old = f"{sys.executable} -m memdir hook"  # what memdir 0.1 wrote into the team's files
    settings = {
        "hooks": {
            "SessionStart": [
                {"hooks": [{"type": "command", "command": "echo team-hook"}]},
                {"hooks": [{"type": "command", "command": f"{old} SessionStart", "timeout": 10}]},
            ],
        }
    }
    (project / ".claude").mkdir()
    (project / ".claude" / "settings.json").write_text(json.dumps(settings, indent=2) + "\n")
    server = {"type": "stdio", "command": sys.executable, "args": ["-m", "memdir", "serve"]}
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"memdir": server}}) + "\n")
    _install(project)
    team = json.loads((project / ".claude" / "settings.json").read_text())
    assert _commands(team) == ["echo team-hook"]
    assert "memdir" not in json.loads((project / ".mcp.json").read_text()).get("mcpServers", {})
    for rel in _committable(project):
        assert VENV_BIN not in (project / rel).read_text(errors="replace"), rel
    local = json.loads((project / ".claude" / "settings.local.json").read_text())
    assert "SessionStart" in local["hooks"]


def test_uninstalling_a_personal_install_leaves_the_teams_wiring(project: Path) -> None:
    _install(project, "gemini")  # something personal, so the record says "personal"
    _install(project, "claude-code", "--shared")  # the team's wiring, as committed
    team = {rel: (project / rel).read_bytes() for rel in (".claude/settings.json", ".mcp.json")}
    _install(project)  # this person's personal install: adds nothing the team wires
    _uninstall(project)
    assert {rel: (project / rel).read_bytes() for rel in team} == team
    assert not (project / ".claude" / "settings.local.json").exists()
    # and the uninstall of a shared install takes memdir out of the team's files
    _install(project, "claude-code", "--shared")
    _uninstall(project)
    assert installer.MARKER not in (project / ".claude" / "settings.json").read_text()
    assert '"memdir"' not in (project / ".mcp.json").read_text()
