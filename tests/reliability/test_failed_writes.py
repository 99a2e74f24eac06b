"""A write that fails while its process is alive is absent, never live later (invariant 9).

Permission denied on a record folder is the fault: as root the CLI runs without the
override capabilities (``setpriv``), so ``chmod a-w`` stops it as it stops a user.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

MEMDIR = [sys.executable, "-m", "memdir"]
NO_OVERRIDE = [
    "setpriv",
    "--bounding-set",
    "-dac_override,-dac_read_search,-fowner",
    "--inh-caps=-all",
]


def _prefix() -> list[str]:
    if os.geteuid() != 0:
        return []
    if shutil.which("setpriv") is None:
        pytest.skip("root without setpriv: permission bits do not stop this process")
    return NO_OVERRIDE


def _cli(cwd: Path, *args: str, limited: bool = False) -> subprocess.CompletedProcess[str]:
    argv = (_prefix() if limited else []) + MEMDIR + list(args)
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=60)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    assert _cli(tmp_path, "init").returncode == 0
    assert _cli(tmp_path, "remember", "alpha one").returncode == 0
    return tmp_path


def _texts(project: Path) -> list[str]:
    ran = _cli(project, "list", "--json")
    assert ran.returncode == 0, ran.stderr
    return sorted(r["text"] for r in json.loads(ran.stdout)["results"])


@pytest.mark.slow
def test_a_write_denied_on_its_record_folder_stays_absent_after_health(project: Path) -> None:
    folder = project / ".memdir" / "records" / "fact"
    folder.chmod(0o555)
    try:
        failed = _cli(project, "remember", "ro records text", limited=True)
        # While the folder is still read-only, a write of another kind is not held up.
        other = _cli(project, "remember", "--kind", "preference", "tabs not spaces", limited=True)
    finally:
        folder.chmod(0o755)
    assert failed.returncode == 1 and "Traceback" not in failed.stderr
    assert "Permission denied" in failed.stderr
    assert not (project / ".memdir" / "state" / "intent.json").exists()
    health = _cli(project, "health")
    assert health.returncode == 0, health.stdout + health.stderr
    # Must not come back: the write reported failed is not live after health's recovery…
    assert "ro records text" not in _texts(project)
    log = subprocess.run(
        ["git", "-C", str(project / ".memdir"), "log", "-p"], capture_output=True, text=True
    ).stdout
    assert "ro records text" not in log
    # …and the right thing is there: the earlier record, the other write, and a new write.
    assert other.returncode == 0, other.stderr
    assert _cli(project, "remember", "gamma three").returncode == 0
    assert _texts(project) == ["alpha one", "gamma three", "tabs not spaces"]


@pytest.mark.slow
def test_health_on_a_store_it_cannot_write_names_a_pending_intent(project: Path) -> None:
    state = project / ".memdir" / "state"
    intent = {"message": "remember x", "files": {"records/fact/f-x.md": "x"}, "audit": []}
    (state / "intent.json").write_text(json.dumps(intent), encoding="utf-8")
    store = project / ".memdir"
    modes = {p: p.stat().st_mode for p in [store, *store.rglob("*")] if not p.is_symlink()}
    for path in modes:
        path.chmod(path.stat().st_mode & ~0o222)
    try:
        ran = _cli(project, "health", "--json", limited=True)
    finally:
        for path, mode in modes.items():
            path.chmod(mode)
    codes = [f["code"] for f in json.loads(ran.stdout)["findings"]]
    assert "write_pending" in codes, ran.stdout
    # The right thing is there too: the read-only examination itself.
    assert "read_only" in codes
