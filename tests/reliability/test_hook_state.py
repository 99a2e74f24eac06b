"""Session bookkeeping under load, and the read gate against every way a file can change.

Hundreds of hooks of one session run at once when an agent fans out tool calls on a busy
machine. Each is a real ``python -m memdir hook`` process fed through a real pipe. Session
state is an append-only event log folded when read (``memdir.kernel.storage.session``), so no hook
waits on another: nothing is dropped, nothing times out on a lock, ``health`` stays green.
"""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from memdir.kernel.storage import session
from memdir.kernel.storage.paths import HOOK_GAVE_UP, log_hook_error
from tests.hooks.conftest import run_hook

MEMDIR = [sys.executable, "-m", "memdir"]
HOOKS_AT_ONCE = 200


def _payload(project: Path, event: str, sid: str, **fields: Any) -> bytes:
    return json.dumps(
        {"session_id": sid, "hook_event_name": event, "cwd": str(project), **fields}
    ).encode()


def _read_event(project: Path, sid: str, rel: str, **tool_input: Any) -> bytes:
    return _payload(
        project,
        "PostToolUse",
        sid,
        tool_name="Read",
        tool_input={"file_path": str(project / rel), **tool_input},
        tool_response={"type": "text", "file": {"filePath": str(project / rel)}},
    )


def _denied(project: Path, sid: str, rel: str) -> bool:
    pre = run_hook(
        "PreToolUse",
        json.loads(
            _payload(project, "PreToolUse", sid, tool_name="Read", tool_input={"file_path": rel})
        ),
        cwd=project,
    )
    decision = (pre.json or {}).get("hookSpecificOutput", {}).get("permissionDecision")
    return decision == "deny"


def _read(project: Path, sid: str, rel: str) -> None:
    run_hook("PostToolUse", json.loads(_read_event(project, sid, rel)), cwd=project)


def _health(project: Path) -> dict[str, Any]:
    done = subprocess.run(
        [*MEMDIR, "health", "--json"], cwd=project, capture_output=True, check=False
    )
    assert b"Traceback" not in done.stderr, done.stderr
    report = json.loads(done.stdout)
    report["exit"] = done.returncode
    return report


def _action_rows(store: Path, sid: str) -> list[dict[str, Any]]:
    rows = []
    for path in sorted((store / "actions").glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            if row.get("session") == sid:
                rows.append(row)
    return rows


# --- 200 hooks of one session at once ----------------------------------------------------------


@pytest.mark.slow
def test_200_concurrent_post_tool_use_hooks_of_one_session_drop_nothing(
    store: Path, project: Path, tmp_path: Path
) -> None:
    sid = "fanout-session"
    files = [f"src/module_{n:03d}.py" for n in range(HOOKS_AT_ONCE)]
    (project / "src").mkdir()
    for n, rel in enumerate(files):
        (project / rel).write_text(f"def f{n}():\n    return {n}\n" * (n % 7 + 1))

    # A gate holds every hook at the door until all 200 exist, so they really run at once:
    # each is `flock -s GATE python -m memdir hook PostToolUse`, its payload already waiting
    # in its stdin pipe, released together when the test drops its exclusive lock.
    gate = tmp_path / "gate"
    gate.touch()
    held = os.open(gate, os.O_RDONLY)
    fcntl.flock(held, fcntl.LOCK_EX)
    processes = []
    for rel in files:
        process = subprocess.Popen(
            ["flock", "-s", str(gate), *MEMDIR, "hook", "PostToolUse"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=project,
        )
        assert process.stdin is not None
        process.stdin.write(_read_event(project, sid, rel))
        process.stdin.close()
        processes.append(process)
    waiting = sum(process.poll() is None for process in processes)
    started = time.monotonic()
    os.close(held)  # all 200 start now
    outputs = []
    for process in processes:
        assert process.stdout is not None and process.stderr is not None
        outputs.append((process.stdout.read(), process.stderr.read()))
        process.stdout.close()
        process.stderr.close()
        process.wait(timeout=600)
    took = time.monotonic() - started

    assert [p.returncode for p in processes] == [0] * HOOKS_AT_ONCE
    assert all(out == b"" and err == b"" for out, err in outputs)  # PostToolUse answers nothing

    rows = _action_rows(store, sid)
    assert sorted(row["path"] for row in rows) == files  # 200/200 rows in the action log
    state = session.load(store, sid)
    assert waiting == HOOKS_AT_ONCE  # every hook was held at the gate, then all ran at once
    assert state["tool_calls"] == HOOKS_AT_ONCE, took
    assert state["ledger"]["reads"] == HOOKS_AT_ONCE  # 200/200 reads in the session state
    assert sorted(state["reads"]) == files
    assert all(entry["full"] and entry["sha"] for entry in state["reads"].values())

    log = store / "state" / "hook-errors.log"
    entries = log.read_text(encoding="utf-8") if log.exists() else ""
    assert "lock" not in entries.lower(), entries  # no hook waited on a lock
    assert "Traceback" not in entries, entries
    report = _health(project)
    assert report["exit"] == 0 and report["ok"] is True, report
    bad = [f for f in report["findings"] if f["level"] != "info"]
    assert not bad, bad  # green: an overrun on this starved machine is information only

    # The state the fan-out built is the one the read gate uses.
    assert _denied(project, sid, files[7])
    assert not _denied(project, sid, files[7])  # once per file: the retry passes


@pytest.mark.slow
def test_an_overrun_hook_is_information_in_health_not_a_failure(store: Path, project: Path) -> None:
    log_hook_error(store, "PostToolUse", f"{HOOK_GAVE_UP} 2 s budget (fail open)")
    report = _health(project)
    assert report["exit"] == 0
    found = {f["code"]: f["level"] for f in report["findings"]}
    assert found.get("hook_timeouts") == "info"
    assert "hook_errors" not in found

    log_hook_error(store, "PostToolUse", "Traceback (most recent call last): boom")
    found = {f["code"]: f["level"] for f in _health(project)["findings"]}
    assert found.get("hook_errors") == "warning"  # a real failure is still a warning


# --- the read gate never calls a changed file unchanged ----------------------------------------


@pytest.mark.slow
def test_a_rewrite_that_keeps_size_and_restores_mtime_is_not_refused(
    store: Path, project: Path
) -> None:
    path = project / "config.py"
    path.write_text("RETRIES = 3\n")
    _read(project, "g1", "config.py")
    assert _denied(project, "g1", "config.py")  # unchanged: the duplicate read is refused

    _read(project, "g2", "config.py")
    before = os.stat(path)
    path.write_text("RETRIES = 9\n")  # same size
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))  # mtime put back
    after = os.stat(path)
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    assert not _denied(project, "g2", "config.py")  # changed content: the read goes through


@pytest.mark.slow
def test_a_file_replaced_by_rename_is_not_refused(store: Path, project: Path) -> None:
    path = project / "notes.md"
    path.write_text("alpha\n")
    _read(project, "g3", "notes.md")
    stat = os.stat(path)
    replacement = project / ".notes.md.tmp"
    replacement.write_text("omega\n")
    os.utime(replacement, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    os.replace(replacement, path)
    assert not _denied(project, "g3", "notes.md")

    _read(project, "g3", "notes.md")  # read again: now it is the file the agent holds
    assert _denied(project, "g3", "notes.md")


# --- the event log: folded exactly once, whatever crashes --------------------------------------


def test_events_past_the_fold_size_are_folded_into_the_snapshot_exactly(store: Path) -> None:
    sid = "long-session"
    count = 1500  # about 3 folds' worth of events
    for n in range(count):
        session.record(store, sid, {"e": "tool", "wrote": f"f{n % 40}.py"})
    folder = store / "state" / "sessions"
    assert (folder / f"{sid}.json").exists()  # folded at least once
    assert (folder / f"{sid}.events.jsonl").stat().st_size < session.FOLD_BYTES + 200
    state = session.load(store, sid)
    assert state["tool_calls"] == count
    assert state["written"] == [f"f{n}.py" for n in range(40)]


def test_a_fold_interrupted_at_any_step_applies_every_event_once(store: Path) -> None:
    sid = "crashy"
    folder = store / "state" / "sessions"
    for _ in range(3):
        session.record(store, sid, {"e": "batch"})
    assert session.fold(store, sid)
    assert session.load(store, sid)["batches"] == 3

    # Renamed but not yet in the snapshot (a crash after the rename): folded on load.
    for _ in range(2):
        session.record(store, sid, {"e": "batch"})
    (folder / f"{sid}.events.jsonl").rename(folder / f"{sid}.events.9.jsonl")
    session.record(store, sid, {"e": "batch"})
    assert session.load(store, sid)["batches"] == 6

    # In the snapshot but not yet deleted (a crash before the delete): never applied twice.
    assert session.fold(store, sid)
    (folder / f"{sid}.events.10.jsonl").write_text('{"e":"batch"}\n')  # number <= folded
    snapshot = json.loads((folder / f"{sid}.json").read_text())
    assert snapshot["folded"] >= 10
    assert session.load(store, sid)["batches"] == 6
    assert not (folder / f"{sid}.events.10.jsonl").exists()  # the leftover is cleaned up


def test_a_torn_event_line_is_skipped_and_the_rest_is_read(store: Path) -> None:
    sid = "torn"
    session.record(store, sid, {"e": "batch"})
    events = store / "state" / "sessions" / f"{sid}.events.jsonl"
    with events.open("ab") as handle:
        handle.write(b'{"e":"bat')  # a writer killed mid-line
    session.record(store, sid, {"e": "batch"})
    assert session.load(store, sid)["batches"] == 2
