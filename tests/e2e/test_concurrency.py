"""Many real `memdir` processes writing one store: nothing lost, nothing torn (DESIGN §10.2)."""

import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from memdir import service
from memdir.records.codec import read_file
from tests.conftest import git


def _remember(store: Path, n: int) -> dict:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "memdir",
            "remember",
            f"Concurrent belief number {n} about topic{n}",
            "--store",
            str(store),
            "--json",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _check_store(store: Path, acknowledged: list[dict]) -> None:
    files = sorted((store / "records" / "fact").glob("*.md"))
    assert {p.stem for p in files} == {doc["id"] for doc in acknowledged}
    for path in files:
        read_file(path, f"records/fact/{path.name}")  # every file parses
    subjects = git(store, "log", "--format=%s").splitlines()
    assert sum(s.startswith("remember ") for s in subjects) == len(acknowledged)
    assert git(store, "status", "--porcelain", "--", "records") == ""
    listed = {r.id for r in service.list_records(store)}
    assert listed == {doc["id"] for doc in acknowledged}


@pytest.mark.parametrize("workers", [2])
def test_two_processes_remembering_at_once_lose_nothing(store: Path, workers: int) -> None:
    with ThreadPoolExecutor(workers) as pool:
        acknowledged = list(pool.map(lambda n: _remember(store, n), range(workers * 5)))
    _check_store(store, acknowledged)


@pytest.mark.slow
def test_two_hundred_processes_remembering_at_once_lose_nothing(store: Path) -> None:
    with ThreadPoolExecutor(200) as pool:
        acknowledged = list(pool.map(lambda n: _remember(store, n), range(200)))
    _check_store(store, acknowledged)
