"""Test isolation: every test gets its own HOME, user store, git identity and no agent markers."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from memdir.service.channel import AGENT_MARKERS


def _find_shared() -> Path:
    """Return the workplace's shared folder (DESIGN.md, cases, data): beside the checkout."""
    candidates = [Path(os.environ["MEMDIR_SHARED"])] if os.environ.get("MEMDIR_SHARED") else []
    candidates += [parent / "shared" for parent in Path(__file__).resolve().parents]
    candidates.append(Path("/work/shared"))
    for candidate in candidates:
        if (candidate / "data" / "locomo").is_dir():
            return candidate
    return candidates[0] if candidates else Path("/work/shared")


SHARED = _find_shared()
"""The workplace's shared folder (read-only test data); set MEMDIR_SHARED to point elsewhere."""


@pytest.fixture(autouse=True)
def isolated_env(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point HOME, MEMDIR_HOME, XDG dirs and git config at a fresh folder; clear agent markers."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("MEMDIR_HOME", str(home / "memdir-user"))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / ".local" / "share"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", os.devnull)
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for name in ("GIT_AUTHOR_NAME", "GIT_COMMITTER_NAME"):
        monkeypatch.setenv(name, "Test Person")
    for name in ("GIT_AUTHOR_EMAIL", "GIT_COMMITTER_EMAIL"):
        monkeypatch.setenv(name, "test@example.invalid")
    monkeypatch.delenv("MEMDIR_STORE", raising=False)
    # A hook helper started by a test's installed hooks goes away a minute after its last event.
    monkeypatch.setenv("MEMDIR_HOOK_HELPER_IDLE", "60")
    # Never the checkout: a test that forgets to pick a folder must not write a store into it.
    monkeypatch.chdir(tmp_path_factory.mktemp("cwd"))

    for name, _ in AGENT_MARKERS:
        monkeypatch.delenv(name, raising=False)
    return home


def git(cwd: Path, *args: str) -> str:
    """Run git in ``cwd`` and return its stdout."""
    return subprocess.run(
        ["git", "-C", str(cwd), *args], check=True, capture_output=True, text=True
    ).stdout


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project folder that is a git repository with one commit."""
    root = tmp_path / "project"
    root.mkdir()
    git(root, "init", "-q")
    (root / "README.md").write_text("# demo project\n")
    git(root, "add", "README.md")
    git(root, "commit", "-qm", "initial")
    return root


@pytest.fixture
def store(project: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An initialised project store; the working directory is the project."""
    from memdir import service

    monkeypatch.chdir(project)
    made = service.init(project).store
    # No background observer from Stop hooks in tests: it would write while tests assert.
    # tests/hooks/test_observer_spawn.py turns it back on to test it.
    manifest = made / "memdir.toml"
    manifest.write_text(
        manifest.read_text().replace("observe_every_seconds = 300", "observe_every_seconds = 0")
    )
    git(made, "commit", "-qam", "tests: no background observer")
    return made


def run_cli(*args: str, input_text: str | None = None) -> Result:
    """Invoke the CLI in-process and return click's result (exit code, stdout, stderr)."""
    from memdir.cli.app import cli

    return CliRunner().invoke(cli, list(args), input=input_text, catch_exceptions=False)


def project_files(root: Path) -> dict[str, bytes]:
    """Every file of a project but memdir's store and git's internals: ``{posix path: bytes}``.

    What install/uninstall tests compare to prove an uninstall leaves every byte as it was.
    """
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not {".memdir", ".git"} & set(p.relative_to(root).parts)
    }


@pytest.fixture
def memdir_exe() -> list[str]:
    """The command that runs memdir in a subprocess, with this interpreter."""
    return [sys.executable, "-m", "memdir"]


def text_of(result: Any) -> str:
    """The text of an MCP tool result's one content block (memdir sends one text block)."""
    from mcp.types import TextContent

    block = result.content[0]
    assert isinstance(block, TextContent), block
    return block.text
