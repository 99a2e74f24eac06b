"""The import contracts can fail: each one is broken on purpose in a copy of the source tree.

``lint-imports`` passing proves nothing unless it would fail on the import a contract exists to
stop. Each case copies ``src/memdir`` and the contracts into a temporary folder, plants one
import that breaks one contract, and runs the real ``lint-imports`` there; the untouched copy is
the paired positive case (every contract kept).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

SQLITE_CONTRACT = "Only the index package imports sqlite3 (it owns all SQL: memdir.kernel.index)"

PLANTED = {
    "an httpx import in the kernel": (
        "kernel/base/clock.py",
        "import httpx  # planted\n",
        "Kernel imports no third-party package BROKEN",
    ),
    "a service module importing a hook": (
        "service/project.py",
        "from memdir.hooks import dispatch  # planted\n",
        "Layers point downward; the edges (CLI, MCP, UI, bench, hooks) sit on top BROKEN",
    ),
    "a hook importing the store package": (
        "hooks/stop.py",
        "from memdir.store import health  # planted\n",
        "Hooks stand directly on the kernel: a new process per tool call imports nothing else BROKEN",
    ),
    "a kernel text module reaching up into storage": (
        "kernel/lang/text.py",
        "from memdir.kernel.storage import paths  # planted\n",
        "Kernel layers point downward BROKEN",
    ),
    "a store module running its own SQLite": (
        "store/threads.py",
        "import sqlite3  # planted\n",
        f"{SQLITE_CONTRACT} BROKEN",
    ),
    "a kernel storage module running its own SQLite": (
        "kernel/storage/journal.py",
        "import sqlite3  # planted\n",
        f"{SQLITE_CONTRACT} BROKEN",
    ),
    "a hook importing the PostgreSQL index": (
        "hooks/stop.py",
        "from memdir import pgindex  # planted\n",
        "Hooks stand directly on the kernel: a new process per tool call imports nothing else BROKEN",
    ),
    "a database driver in the kernel": (
        "kernel/index/sqlite.py",
        "import psycopg  # planted\n",
        "Kernel imports no third-party package BROKEN",
    ),
    "the index's shared rows reaching up into ranking": (
        "kernel/index/rows.py",
        "from memdir.kernel.index import recall  # planted\n",
        "The index package: what the agent is told, over ranking, over the backends and their rows"
        " BROKEN",
    ),
}


def _copy(tmp_path: Path) -> Path:
    """Copy the package and the contracts into ``tmp_path``; return the copied package folder."""
    shutil.copytree(
        ROOT / "src" / "memdir",
        tmp_path / "src" / "memdir",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    return tmp_path / "src" / "memdir"


def _lint(tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """Run the real ``lint-imports`` against the copy (its ``src`` first on the path)."""
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "src")}
    script = "import sys; from importlinter.cli import lint_imports_command; lint_imports_command()"
    return subprocess.run(
        [sys.executable, "-c", script, "--config", str(tmp_path / "pyproject.toml"), "--no-cache"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.slow
def test_the_untouched_copy_keeps_every_contract(tmp_path: Path) -> None:
    _copy(tmp_path)
    result = _lint(tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout
    assert str(tmp_path) in _where_memdir_loads(tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(PLANTED))
def test_a_planted_violation_breaks_its_contract(tmp_path: Path, case: str) -> None:
    package = _copy(tmp_path)
    module, line, expected = PLANTED[case]
    target = package / module
    source = target.read_text(encoding="utf-8")
    head, sep, rest = source.partition("from __future__ import annotations\n")
    target.write_text(head + sep + line + rest if sep else line + source, encoding="utf-8")
    result = _lint(tmp_path)
    assert result.returncode != 0, f"{case} passed lint-imports:\n{result.stdout}"
    assert expected in " ".join(result.stdout.split()), result.stdout


def _where_memdir_loads(tmp_path: Path) -> str:
    """Return the file ``memdir`` imports from with the copy first on the path."""
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "src")}
    out = subprocess.run(
        [sys.executable, "-c", "import memdir; print(memdir.__file__)"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return out.stdout
