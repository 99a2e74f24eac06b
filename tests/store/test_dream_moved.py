"""B56: `memdir dream` reports beliefs citing a project file that was moved or deleted.

Real git in the project; each report is paired with a record citing an unchanged file that is
not reported, and dream stays read-only (no commit, no file change in store or project).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memdir import service
from memdir.service import memory
from tests.conftest import git, run_cli

OLD = "src/payments/retry.py"
NEW = "src/billing/retry.py"


def _project_with_code(project: Path) -> None:
    for rel in (OLD, "src/payments/charge.py"):
        (project / rel).parent.mkdir(parents=True, exist_ok=True)
        (project / rel).write_text("def run():\n    return 1\n")
    git(project, "add", "src")
    git(project, "commit", "-qm", "code")


def _snapshot(store: Path, project: Path) -> tuple[str, str, dict[Path, bytes]]:
    files = {p: p.read_bytes() for p in project.rglob("*") if p.is_file()}
    return git(store, "rev-parse", "HEAD"), git(project, "status", "--porcelain"), files


def _gone(report: dict) -> dict[str, list[dict]]:
    found: dict[str, list[dict]] = {}
    for f in report["findings"]:
        if f["code"] in ("cites_moved_file", "cites_missing_file"):
            found.setdefault(f["ids"][0], []).append({"code": f["code"], "files": f["files"]})
    return found


@pytest.mark.parametrize("committed", [True, False], ids=["committed", "staged"])
def test_a_moved_file_is_reported_with_its_new_path(
    store: Path, project: Path, committed: bool
) -> None:
    _project_with_code(project)
    moved = service.remember(store, f"Retries live in {OLD}; back off 3 times").record
    kept = service.remember(store, "Charging lives in src/payments/charge.py").record
    (project / "src/billing").mkdir()
    git(project, "mv", OLD, NEW)
    if committed:
        git(project, "commit", "-qm", "move retry")
    before = _snapshot(store, project)
    out = run_cli("dream", "--json")
    assert out.exit_code == 0, out.output
    gone = _gone(json.loads(out.stdout))
    assert gone == {moved.id: [{"code": "cites_moved_file", "files": [{"old": OLD, "new": NEW}]}]}
    assert kept.id not in gone
    assert _snapshot(store, project) == before  # read-only: no commit, no file change
    assert f"moved to {NEW}" in run_cli("dream").stdout


def test_a_deleted_file_is_reported_missing_and_untracked_names_are_not(
    store: Path, project: Path
) -> None:
    _project_with_code(project)
    deleted = service.remember(store, f"Retries live in {OLD}").record
    kept = service.remember(store, "Charging lives in src/payments/charge.py").record
    never = service.remember(store, "The web app runs on Node.js and reads config.yaml").record
    git(project, "rm", "-q", OLD)
    git(project, "commit", "-qm", "drop retry")
    before = _snapshot(store, project)
    gone = _gone(memory.dream(store))
    assert gone == {
        deleted.id: [{"code": "cites_missing_file", "files": [{"old": OLD, "new": None}]}]
    }
    assert kept.id not in gone and never.id not in gone
    assert _snapshot(store, project) == before
