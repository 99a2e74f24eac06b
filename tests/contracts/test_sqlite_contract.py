"""The import contract "only the index package imports sqlite3" fails on a planted violation.

A contract that cannot fail proves nothing: each test copies the package, plants one import
of ``sqlite3`` outside ``memdir.kernel.index`` and runs ``lint-imports`` on the copy with the
project's own configuration; the same run on the unplanted copy passes.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CONTRACT = "Only the index package imports sqlite3"


def _lint(tmp_path: Path, planted: dict[str, str]) -> subprocess.CompletedProcess[str]:
    shutil.copytree(ROOT / "src" / "memdir", tmp_path / "src" / "memdir")
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    for rel, code in planted.items():
        (tmp_path / "src" / rel).write_text(code, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "src")}
    lint = Path(sys.executable).with_name("lint-imports")
    return subprocess.run(
        [str(lint), "--no-cache"], cwd=tmp_path, env=env, capture_output=True, text=True
    )


@pytest.mark.slow
@pytest.mark.parametrize(
    "module",
    ["memdir/cli/planted.py", "memdir/kernel/planted.py", "memdir/store/planted.py"],
)
def test_an_import_of_sqlite3_outside_the_index_package_breaks_the_contract(
    tmp_path: Path, module: str
) -> None:
    found = _lint(tmp_path, {module: '"""Planted."""\n\nimport sqlite3\n\nDB = sqlite3\n'})
    assert found.returncode != 0
    dotted = module.removesuffix(".py").replace("/", ".")
    assert f"{dotted} -> sqlite3" in found.stdout
    assert f"{CONTRACT}" in found.stdout and "BROKEN" in found.stdout


@pytest.mark.slow
def test_the_unplanted_copy_keeps_the_contract(tmp_path: Path) -> None:
    found = _lint(tmp_path, {})
    assert found.returncode == 0, found.stdout
    assert f"{CONTRACT}" in found.stdout and "KEPT" in found.stdout
