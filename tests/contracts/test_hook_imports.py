"""What each hook event imports at run time, through the installed launcher (issue 16).

Each event runs as a host runs it: the installed command (``python -I -S -X utf8
…/memdir/hookrun.py EVENT``, here with ``-X importtime`` added and the resident helper off, so
the process imports everything itself), a real payload on stdin, a real store. Python reports
every module the process imported, the handler's lazy imports included; each event must import
its handler and nothing heavy, and the tool-call events nothing they do not use.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from memdir.hosts import install
from memdir.service import project as project_service
from tests.conftest import run_cli

HEAVY = {"click", "yaml", "mcp", "pydantic", "httpx", "anyio", "starlette", "jinja2", "tomlkit"}
UPPER = ("memdir.cli", "memdir.service", "memdir.store", "memdir.records", "memdir.mcp")
STARTUP = {"site", "runpy", "importlib.util", "_distutils_hack"}
"""What ``python -m`` and ``site`` load, which the launcher skips."""
TOOL_CALL_NEVER = {
    "typing",
    "dataclasses",
    "inspect",
    "sqlite3",
    "subprocess",
    "signal",
    "memdir.kernel.index",
    "memdir.kernel.storage.lifecycle",
}
"""Never loaded by a tool-call hook: no annotations, no index, no child process, no writer."""

EVENTS: dict[str, tuple[str, dict[str, Any], str, set[str]]] = {
    # name: (event, payload fields, handler module, modules it must not import)
    "SessionStart": (
        "SessionStart",
        {"source": "startup"},
        "memdir.hooks.session_start",
        {"typing", "dataclasses", "subprocess", "memdir.kernel.filemap.anatomy"},
    ),
    "UserPromptSubmit": (
        "UserPromptSubmit",
        {"prompt": "how do the deploys retry?"},
        "memdir.hooks.prompt_submit",
        {"subprocess", "memdir.kernel.filemap.anatomy", "memdir.kernel.storage.gitio"},
    ),
    "PreToolUse": (
        "PreToolUse",
        {"tool_name": "Read", "tool_input": {"file_path": "README.md"}},
        "memdir.hooks.pre_tool_use",
        TOOL_CALL_NEVER
        | {"hashlib", "memdir.kernel.filemap.anatomy", "memdir.kernel.storage.journal"},
    ),
    "PostToolUse (Read)": (
        "PostToolUse",
        {"tool_name": "Read", "tool_input": {"file_path": "README.md"}, "tool_response": {}},
        "memdir.hooks.post_tool_use",
        TOOL_CALL_NEVER | {"memdir.kernel.filemap.anatomy"},
    ),
    "PostToolUse (Edit)": (
        "PostToolUse",
        {"tool_name": "Edit", "tool_input": {"file_path": "src/app.py"}, "tool_response": {}},
        "memdir.kernel.filemap.anatomy",
        TOOL_CALL_NEVER,
    ),
    "PostToolBatch": ("PostToolBatch", {"tool_calls": []}, "memdir.hooks.post_tool_batch", set()),
    "Stop": (
        "Stop",
        {"stop_hook_active": False, "last_assistant_message": "done"},
        "memdir.hooks.stop",
        {"typing", "dataclasses", "memdir.kernel.filemap.anatomy"},
    ),
    "PreCompact": ("PreCompact", {"trigger": "auto"}, "memdir.hooks.compaction", set()),
    "SessionEnd": ("SessionEnd", {"reason": "exit"}, "memdir.hooks.session_end", set()),
}


def _imported(command: list[str], payload: dict[str, Any], cwd: Path) -> set[str]:
    args = [command[0], "-X", "importtime", *command[1:]]
    env = {**os.environ, "MEMDIR_HOOK_HELPER": "0", "CLAUDE_PROJECT_DIR": str(cwd)}
    done = subprocess.run(
        args, input=json.dumps(payload).encode(), cwd=cwd, capture_output=True, env=env, timeout=60
    )
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stderr.decode().splitlines()
    return {line.split("|")[-1].strip() for line in lines if line.startswith("import time:")}


@pytest.fixture(scope="module")
def mapped(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project with a store of a few records and a scanned file map."""
    root = tmp_path_factory.mktemp("imports") / "project"
    (root / "src").mkdir(parents=True)
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    (root / "README.md").write_text("# demo\n")
    (root / "src" / "app.py").write_text('"""The app."""\n\ndef main():\n    pass\n')
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    for args in (["init"], ["remember", "Deploys retry three times"]):
        subprocess.run([sys.executable, "-m", "memdir", *args], cwd=root, env=env, check=True)
    project_service.scan(root / ".memdir")
    return root


@pytest.mark.slow
@pytest.mark.parametrize("name", list(EVENTS))
def test_each_event_imports_its_handler_and_nothing_it_does_not_use(
    mapped: Path, name: str
) -> None:
    event, fields, handler, never = EVENTS[name]
    payload = {"session_id": "s1", "hook_event_name": event, "cwd": str(mapped), **fields}
    for key in ("file_path",):
        if key in payload.get("tool_input", {}):
            payload["tool_input"] = {key: str(mapped / payload["tool_input"][key])}
    command = [sys.executable, *install.LAUNCH_FLAGS, str(install.launcher()), event]
    _imported(command, payload, mapped)  # the first builds caches (path-scoped beliefs)
    loaded = _imported(command, payload, mapped)  # the steady state: every later event
    assert handler in loaded  # the run really reached the event's work
    assert {m.split(".")[0] for m in loaded} & HEAVY == set()
    assert not any(m.startswith(UPPER) for m in loaded), sorted(loaded)
    assert loaded & STARTUP == set()
    assert loaded & never == set(), sorted(loaded & never)


def test_the_installed_hook_command_is_the_launcher(store: Path) -> None:
    assert run_cli("install", "--host", "claude-code").exit_code == 0
    settings = json.loads((store.parent / ".claude" / "settings.local.json").read_text())
    command = settings["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
    assert command == install.hook_command("PreToolUse", "claude-code")
    assert " -I -S -X utf8 " in command and command.endswith("memdir/hookrun.py PreToolUse")
    # compiled bytecode is there for every hook module, written by the install
    for module in ("dispatch", "launch", "pre_tool_use", "post_tool_use"):
        source = install.launcher().parent / "hooks" / f"{module}.py"
        cached = source.parent / "__pycache__" / f"{module}.{sys.implementation.cache_tag}.pyc"
        assert cached.stat().st_mtime >= source.stat().st_mtime
