"""The stale-gated file map (item 8) and maintenance without a daemon (item 9)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memdir import service
from memdir.kernel.storage import upkeep
from memdir.kernel.storage.lock import file_lock
from tests.conftest import git, run_cli
from tests.hooks.conftest import run_hook


def _scan(*args: str) -> dict[str, object]:
    result = run_cli("scan", "--json", *args)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_scan_reads_only_what_changed_and_names_changes_made_outside(store: Path) -> None:
    project = store.parent
    for name in ("billing.py", "cart.py", "old.py"):
        (project / name).write_text(f'"""The {name} module."""\n\ndef run():\n    return 1\n')
    git(project, "add", ".")
    git(project, "commit", "-qm", "files")
    first = _scan()
    assert first["counts"] == {"changed": 0, "added": 4, "removed": 0}  # README.md too
    # Outside the agent: an editor changes one file, a pull adds one and removes one.
    (project / "cart.py").write_text('"""The cart, rewritten."""\n\ndef total():\n    return 2\n')
    (project / "tax.py").write_text('"""Tax rules."""\n')
    git(project, "add", "tax.py")
    git(project, "rm", "-q", "old.py")
    second = _scan()
    assert second["unchanged"] == 2  # README.md and billing.py were not read again
    assert (second["changed"], second["added"], second["removed"]) == (
        ["cart.py"],
        ["tax.py"],
        ["old.py"],
    )
    found = {r["path"]: r for r in service_find(store, "cart rewritten")}
    assert "cart.py" in found  # the changed file's new description is in the map
    assert _scan("--full")["unchanged"] == 0  # --full reads every file again
    assert "billing.py" in json.loads((store / "anatomy.json").read_text())["files"]


def service_find(store: Path, query: str) -> list[dict[str, object]]:
    from memdir.service import project

    return project.find(store, query)


def test_maintain_runs_each_task_once_then_only_when_due_and_deletes_nothing(
    store: Path,
) -> None:
    service.journal_append(store, "user", "We decided to release on Mondays.", session="s")
    journal = next((store / "journal").glob("*.jsonl"))
    before = journal.read_bytes()
    result = run_cli("maintain", "--json")
    assert result.exit_code == 0, result.output
    done = json.loads(result.stdout)
    assert set(done["ran"]) == {"observe", "logs", "scan", "hygiene"} and not done["errors"]
    assert json.loads((store / "state" / "dream.json").read_text())["findings"] is not None
    assert journal.read_bytes() == before  # evidence is never rewritten
    assert "We decided to release on Mondays" in {r.text for r in service.list_records(store)}
    assert git(store, "status", "--porcelain", "journal") == ""  # the logs were committed
    again = json.loads(run_cli("maintain", "--if-due", "--json").stdout)
    assert again["ran"] == {}  # nothing due: each interval restarted
    state = upkeep.load(store)
    state["last"]["scan"] = 0
    (store / "state" / upkeep.STATE).write_text(json.dumps(state))
    assert set(json.loads(run_cli("maintain", "--if-due", "--json").stdout)["ran"]) == {"scan"}


def test_one_owner_at_a_time_and_only_a_proven_pid_is_named(store: Path) -> None:
    ours = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(30)", "memdir", "maintain"]
    )
    other = subprocess.Popen(["sleep", "30"])
    try:
        with file_lock(store / "state" / upkeep.LOCK, "test", 1):
            for proc, named in ((ours, ours.pid), (other, None)):
                (store / "state" / upkeep.PID).write_text(json.dumps({"pid": proc.pid}))
                busy = json.loads(run_cli("maintain", "--json").stdout)
                assert busy["busy"] is True and busy["ran"] == {}
                assert busy["owner"] == named
    finally:
        for proc in (ours, other):
            proc.kill()
            proc.wait()
    assert json.loads(run_cli("maintain", "--json").stdout)["busy"] is False


@pytest.mark.slow
def test_a_hook_starts_maintenance_in_the_background_when_due(store: Path) -> None:
    project = store.parent
    payload = {
        "session_id": "s1",
        "hook_event_name": "Stop",
        "cwd": str(project),
        "last_assistant_message": "done",
    }
    run_hook("Stop", payload, cwd=project)  # a fresh store starts its clocks: nothing due
    state = upkeep.load(store)
    assert state["last"] and not (store / "state" / "dream.json").exists()
    state["last"]["hygiene"] = 0
    (store / "state" / upkeep.STATE).write_text(json.dumps(state))
    run_hook("Stop", payload, cwd=project)
    deadline = time.monotonic() + 60
    while not (store / "state" / "dream.json").exists() and time.monotonic() < deadline:
        time.sleep(0.5)
    assert (store / "state" / "dream.json").exists()
