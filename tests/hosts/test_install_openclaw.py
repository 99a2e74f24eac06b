"""OpenClaw install and ``memdir doctor``, offline: the plugin, its manifest, the block, the
operator's gates read from ``~/.openclaw/openclaw.json``, and an exact uninstall.

OpenClaw has no project MCP file (its servers live in its own config, set by hand with
``openclaw mcp set``), so doctor must never fail it for a missing one; what decides whether
OpenClaw runs memdir is the operator's config, which memdir reads and never writes. The real
binary runs in tests/hosts/conformance/test_openclaw.py.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import git, project_files, run_cli

PLUGIN = ".openclaw/extensions/memdir/index.js"
MANIFEST = ".openclaw/extensions/memdir/openclaw.plugin.json"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A git project with AGENTS.md; ``memdir`` on PATH (OpenClaw's plugin runs it from PATH)."""
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    root = tmp_path / "proj"
    root.mkdir()
    git(root, "init", "-q")
    (root / "AGENTS.md").write_text("# Agents\n\nBe kind.\n")
    return root


def _operator_config(workspace: Path | None, consent: bool) -> Path:
    """Write ``~/.openclaw/openclaw.json`` as an operator would (with a ``//`` comment line)."""
    entry: dict[str, Any] = {"enabled": True}
    if consent:
        entry["hooks"] = {"allowConversationAccess": True}
    config: dict[str, Any] = {"plugins": {"entries": {"memdir": entry}}}
    if workspace is not None:
        config["agents"] = {"defaults": {"workspace": str(workspace)}}
    path = Path(os.environ["HOME"]) / ".openclaw" / "openclaw.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("// my OpenClaw\n" + json.dumps(config, indent=2))
    return path


def _doctor(project: Path) -> tuple[int, dict[str, Any]]:
    done = run_cli("doctor", "--dir", str(project), "--json")
    report = next(r for r in json.loads(done.stdout)["results"] if r["host"] == "openclaw")
    return done.exit_code, report


def test_install_writes_plugin_manifest_and_block_and_uninstall_restores_bytes(
    project: Path,
) -> None:
    """Install adds the plugin, its manifest and the block; uninstall leaves every byte."""
    before = project_files(project)
    done = run_cli("install", "--host", "openclaw", "--dir", str(project), "--json")
    assert done.exit_code == 0, done.stdout + done.stderr
    assert (project / PLUGIN).read_text().startswith("// memdir")
    manifest = json.loads((project / MANIFEST).read_text())
    assert manifest["id"] == "memdir"
    assert "memdir" in (project / "AGENTS.md").read_text()
    assert run_cli("uninstall", "--host", "openclaw", "--dir", str(project)).exit_code == 0
    assert project_files(project) == before


def test_doctor_never_fails_openclaw_for_a_project_mcp_file_it_does_not_have(
    project: Path,
) -> None:
    """With the operator's gates set, doctor says OpenClaw works (exit 0): the plugin, its
    command and the block are checked, and no "mcp entry" check asks for a file OpenClaw has
    not got."""
    assert run_cli("install", "--host", "openclaw", "--dir", str(project)).exit_code == 0
    _operator_config(project, consent=True)
    code, report = _doctor(project)
    checks = {c["check"]: c for c in report["checks"]}
    assert "mcp entry" not in checks
    assert checks["plugin"]["ok"] is True and checks["instructions"]["ok"] is True
    assert checks["workspace (openclaw.json)"]["ok"] is True
    assert checks["plugin consent (openclaw.json)"]["ok"] is True
    assert report["ok"] is True and code == 0


def test_doctor_names_the_operator_gate_that_stops_openclaw(project: Path) -> None:
    """Without conversation access, or with another workspace, OpenClaw never runs memdir's
    hook: doctor fails (exit 1) naming the setting; with no config at all it cannot tell."""
    assert run_cli("install", "--host", "openclaw", "--dir", str(project)).exit_code == 0
    code, report = _doctor(project)
    assert report["ok"] is None and code == 0  # no ~/.openclaw/openclaw.json: unknown, not a pass

    config = _operator_config(project, consent=False)
    code, report = _doctor(project)
    consent = next(c for c in report["checks"] if c["check"].startswith("plugin consent"))
    assert consent["ok"] is False and "allowConversationAccess" in consent["fix"]
    assert str(config) in consent["fix"]
    assert report["ok"] is False and code == 1

    _operator_config(project.parent, consent=True)
    code, report = _doctor(project)
    workspace = next(c for c in report["checks"] if c["check"].startswith("workspace"))
    assert workspace["ok"] is False and str(project) in workspace["fix"]
    assert code == 1
