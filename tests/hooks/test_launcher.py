"""The hook launcher and its resident helper (issue 16): same results, faster, never stale.

Every test runs the installed command (``python -I -S -X utf8 …/memdir/hookrun.py EVENT``)
through a real shell, with its own runtime folder, so it gets its own helper.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memdir.hooks import launch
from memdir.hosts import install


@pytest.fixture
def runtime() -> Iterator[Path]:
    """A private runtime folder (short: a socket path has at most 107 bytes)."""
    folder = Path(tempfile.mkdtemp(prefix="mdrt-", dir="/tmp"))
    yield folder
    for pid in _helpers(folder):
        os.kill(pid, signal.SIGKILL)
    shutil.rmtree(folder, ignore_errors=True)


def _helpers(runtime: Path) -> list[int]:
    """The pids of helpers serving sockets under ``runtime`` (from /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if launch.HELPER_FLAG.encode() in cmdline and f"={runtime}\0".encode() in environ:
            found.append(int(entry.name))
    return found


def _run(
    command: str, event: str, payload: dict[str, Any], cwd: Path, runtime: Path, **env: str
) -> subprocess.CompletedProcess[bytes]:
    variables = {**os.environ, "XDG_RUNTIME_DIR": str(runtime), **env}
    done = subprocess.run(
        ["sh", "-c", f"{command} {event}"],
        input=json.dumps(payload).encode(),
        cwd=cwd,
        env=variables,
        capture_output=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return done


def _launcher(root: Path | None = None) -> str:
    script = (root / "memdir" / "hookrun.py") if root else install.launcher()
    return shlex.join([sys.executable, *install.LAUNCH_FLAGS, str(script)])


def _wait_for_helper(runtime: Path, launcher: str, seconds: float = 30) -> None:
    path = Path(str(runtime / "memdir" / "x")).parent
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if list(path.glob("hook-*.sock")) and _helpers(runtime):
            return
        time.sleep(0.05)
    raise AssertionError(f"no helper came up for {launcher}")


def _read(store: Path, n: int) -> dict[str, Any]:
    return {
        "session_id": "s1",
        "hook_event_name": "PostToolUse",
        "cwd": str(store.parent),
        "tool_name": "Read",
        "tool_input": {"file_path": str(store.parent / f"f{n}.txt")},
        "tool_response": {},
    }


def _paths(store: Path) -> list[str]:
    rows = []
    for day in sorted((store / "actions").glob("*.jsonl")):
        rows += [json.loads(line) for line in day.read_text().splitlines()]
    return [row.get("path", "") for row in rows]


def _client_imports(done: subprocess.CompletedProcess[bytes]) -> set[str]:
    lines = done.stderr.decode().splitlines()
    return {line.split("|")[-1].strip() for line in lines if line.startswith("import time:")}


@pytest.mark.slow
def test_events_run_in_the_helper_with_the_callers_folder_and_environment(
    store: Path, runtime: Path
) -> None:
    project = store.parent
    for n in range(4):
        (project / f"f{n}.txt").write_text(f"file {n}\n")
    command = _launcher()
    _run(command, "PostToolUse", _read(store, 0), project, runtime)  # runs here, starts one
    _wait_for_helper(runtime, command)
    # -X importtime: the client itself never imports the hook path when the helper runs it
    traced = command.replace(" -I ", " -X importtime -I ", 1)
    done = _run(traced, "PostToolUse", _read(store, 1), project, runtime)
    assert "memdir.hooks.dispatch" not in _client_imports(done)
    assert "memdir.hooks.launch" in _client_imports(done)
    # the store is found from the caller's folder, and its environment is the event's
    elsewhere = runtime / "elsewhere"
    elsewhere.mkdir()
    _run(
        command, "PostToolUse", _read(store, 2), elsewhere, runtime, CLAUDE_PROJECT_DIR=str(project)
    )
    _run(command, "PostToolUse", _read(store, 3), elsewhere, runtime)  # no store from there
    assert _paths(store) == ["f0.txt", "f1.txt", "f2.txt", "f3.txt"]
    # an answer on stdout reaches the caller: a repeated full read is refused
    pre = {
        "session_id": "s1",
        "hook_event_name": "PreToolUse",
        "cwd": str(project),
        "tool_name": "Read",
        "tool_input": {"file_path": str(project / "f0.txt")},
    }
    full = {**_read(store, 0), "session_id": "s1"}
    _run(command, "PostToolUse", full, project, runtime)
    answer = json.loads(_run(command, "PreToolUse", pre, project, runtime).stdout)
    assert answer["hookSpecificOutput"]["permissionDecision"] == "deny"


@pytest.mark.slow
def test_a_killed_helper_costs_nothing_and_another_takes_its_place(
    store: Path, runtime: Path
) -> None:
    project = store.parent
    for n in range(3):
        (project / f"f{n}.txt").write_text(f"file {n}\n")
    command = _launcher()
    _run(command, "PostToolUse", _read(store, 0), project, runtime)
    _wait_for_helper(runtime, command)
    (first,) = _helpers(runtime)
    os.kill(first, signal.SIGKILL)
    time.sleep(0.2)
    _run(command, "PostToolUse", _read(store, 1), project, runtime)  # its socket refuses: here
    _wait_for_helper(runtime, command)
    assert _helpers(runtime) != [first]
    _run(command, "PostToolUse", _read(store, 2), project, runtime)
    assert _paths(store) == ["f0.txt", "f1.txt", "f2.txt"]


@pytest.mark.slow
def test_a_helper_never_runs_code_that_changed_on_disk(
    store: Path, runtime: Path, tmp_path: Path
) -> None:
    copy = tmp_path / "install"
    shutil.copytree(install.launcher().parent, copy / "memdir")
    project = store.parent
    for n in range(3):
        (project / f"f{n}.txt").write_text(f"file {n}\n")
    command = _launcher(copy)
    _run(command, "PostToolUse", _read(store, 0), project, runtime)
    _wait_for_helper(runtime, command)
    # an upgrade changes the action row's tool name: the next event must see it at once
    handler = copy / "memdir" / "hooks" / "post_tool_use.py"
    handler.write_text(handler.read_text().replace('"tool": redact(tool),', '"tool": "NEW",'))
    _run(command, "PostToolUse", _read(store, 1), project, runtime)
    rows = [
        json.loads(line)
        for day in (store / "actions").glob("*.jsonl")
        for line in day.read_text().splitlines()
    ]
    assert [row["tool"] for row in rows] == ["Read", "NEW"]
    deadline = time.monotonic() + 10
    while _helpers(runtime) and time.monotonic() < deadline:  # the stale helper went away
        time.sleep(0.05)
    assert _helpers(runtime) == []


def test_a_runtime_folder_others_can_enter_is_never_used(store: Path, runtime: Path) -> None:
    (runtime / "memdir").mkdir(mode=0o777)
    os.chmod(runtime / "memdir", 0o777)
    project = store.parent
    (project / "f0.txt").write_text("file\n")
    _run(_launcher(), "PostToolUse", _read(store, 0), project, runtime)
    assert _paths(store) == ["f0.txt"]  # the event ran, in its own process
    assert list((runtime / "memdir").iterdir()) == []  # no socket, no lock, no helper
    assert _helpers(runtime) == []


def test_the_helper_can_be_turned_off(store: Path, runtime: Path) -> None:
    project = store.parent
    (project / "f0.txt").write_text("file\n")
    _run(_launcher(), "PostToolUse", _read(store, 0), project, runtime, MEMDIR_HOOK_HELPER="0")
    assert _paths(store) == ["f0.txt"]
    assert not (runtime / "memdir").exists() or not list((runtime / "memdir").iterdir())
