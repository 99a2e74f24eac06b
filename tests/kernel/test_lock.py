"""The store lock with real processes: read-modify-write never loses an update."""

import subprocess
import sys
import time
from pathlib import Path

import pytest

from memdir.kernel.base.errors import LockTimeoutError
from memdir.kernel.storage.lock import inspect_lock, store_lock

COUNTER = """
import sys
from pathlib import Path
from memdir.kernel.storage.lock import store_lock
store = Path(sys.argv[1])
for _ in range(50):
    with store_lock(store, "test"):
        path = store / "counter"
        value = int(path.read_text()) if path.exists() else 0
        path.write_text(str(value + 1))
"""


def test_read_modify_write_under_the_lock_loses_nothing_across_processes(tmp_path: Path) -> None:
    procs = [subprocess.Popen([sys.executable, "-c", COUNTER, str(tmp_path)]) for _ in range(6)]
    assert [p.wait() for p in procs] == [0] * 6
    assert (tmp_path / "counter").read_text() == "300"


def test_a_held_lock_times_out_with_the_holder_named(tmp_path: Path) -> None:
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys,time; from pathlib import Path; from memdir.kernel.storage.lock import store_lock\n"
            "with store_lock(Path(sys.argv[1]), 'holding'):\n"
            "    print('held', flush=True); time.sleep(30)\n",
            str(tmp_path),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        assert inspect_lock(tmp_path).held
        started = time.monotonic()
        with (
            pytest.raises(LockTimeoutError, match="holding"),
            store_lock(tmp_path, timeout_seconds=0.3),
        ):
            pass
        assert time.monotonic() - started < 2
    finally:
        holder.kill()
        holder.wait()
        if holder.stdout is not None:
            holder.stdout.close()
    # A killed holder leaves no stale lock: the operating system released it.
    assert not inspect_lock(tmp_path).held
    with store_lock(tmp_path, timeout_seconds=1):
        pass


def test_the_lock_is_reentrant_within_a_thread(tmp_path: Path) -> None:
    with store_lock(tmp_path), store_lock(tmp_path, timeout_seconds=0.1):
        pass
