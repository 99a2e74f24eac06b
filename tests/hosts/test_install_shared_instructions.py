"""Hosts that read the same instruction file (AGENTS.md: Codex, OpenCode, Kilo, Droid,
OpenClaw): uninstalling one keeps memdir's block while another installed host still reads it,
and the last uninstall leaves the file as it was. Doctor names a default install into a host
with no personal project scope a "project" install, never a "personal" one.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from memdir.hosts.install import BLOCK_BEGIN
from tests.conftest import git, project_files, run_cli


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    root = tmp_path / "proj"
    root.mkdir()
    git(root, "init", "-q")
    (root / "AGENTS.md").write_text("# Agents\n\nBe kind.\n")
    return root


def _doctor(project: Path) -> dict[str, dict[str, Any]]:
    done = run_cli("doctor", "--dir", str(project), "--json")
    return {r["host"]: r for r in json.loads(done.stdout)["results"]}


@pytest.mark.parametrize(
    ("leaves", "stays"), [("codex", "opencode"), ("opencode", "codex")], ids=["first", "second"]
)
def test_uninstalling_one_host_keeps_the_block_another_host_reads(
    project: Path, leaves: str, stays: str
) -> None:
    """Whichever host leaves first (the one that wrote the block, or the one that found it),
    the other keeps its block, and the last one out restores AGENTS.md byte for byte."""
    before = project_files(project)
    for host in ("codex", "opencode"):
        assert run_cli("install", "--host", host, "--dir", str(project)).exit_code == 0
    done = run_cli("uninstall", "--host", leaves, "--dir", str(project), "--json")
    assert done.exit_code == 0, done.stdout
    out = json.loads(done.stdout)
    # Must not: the block OpenCode reads is taken out with Codex's install.
    assert BLOCK_BEGIN in (project / "AGENTS.md").read_text()
    title = {"codex": "OpenAI Codex CLI", "opencode": "OpenCode"}[stays]
    assert any(f"{title} still reads it" in w for w in out["warnings"]), out
    report = _doctor(project)
    assert leaves not in report
    checks = {c["check"]: c for c in report[stays]["checks"]}
    assert checks["instructions"]["ok"] is True
    # The right thing: the last host out takes the block, and every byte is as it was.
    assert run_cli("uninstall", "--host", stays, "--dir", str(project)).exit_code == 0
    assert BLOCK_BEGIN not in (project / "AGENTS.md").read_text()
    assert project_files(project) == before


def test_doctor_and_uninstall_name_a_project_install_for_hosts_without_personal_files(
    project: Path,
) -> None:
    assert run_cli("install", "--host", "codex", "--dir", str(project)).exit_code == 0
    assert run_cli("install", "--host", "claude-code", "--dir", str(project)).exit_code == 0
    report = _doctor(project)
    assert report["codex"]["scope"] == "project"
    assert report["claude-code"]["scope"] == "personal"  # CLAUDE.local.md, kept out of git
    done = run_cli("uninstall", "--host", "codex", "--dir", str(project), "--json")
    assert json.loads(done.stdout)["scope"] == "project"
    text = run_cli("doctor", "--dir", str(project)).stdout
    assert "Claude Code (personal install)" in text
