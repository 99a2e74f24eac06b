"""The Stop hook starts a background observer pass when one is due, at most one per interval."""

from __future__ import annotations

import time
from pathlib import Path

from memdir import service
from tests.conftest import git
from tests.hooks.conftest import run_hook


def test_stop_spawns_one_observer_pass_per_interval(store: Path) -> None:
    manifest = store / "memdir.toml"
    manifest.write_text(
        manifest.read_text().replace("observe_every_seconds = 0", "observe_every_seconds = 300")
    )
    git(store, "commit", "-qam", "observer on")
    payload = {
        "session_id": "o1",
        "cwd": str(store.parent),
        "hook_event_name": "UserPromptSubmit",
        "prompt": "We decided to keep the changelog in Keep a Changelog format.",
    }
    run_hook("UserPromptSubmit", payload, cwd=store.parent)
    stop = {
        "session_id": "o1",
        "cwd": str(store.parent),
        "hook_event_name": "Stop",
        "stop_hook_active": False,
        "last_assistant_message": "Understood.",
    }
    started = time.monotonic()
    run_hook("Stop", stop, cwd=store.parent)
    assert time.monotonic() - started < 5  # the pass runs in the background
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        texts = {r.text: r.status for r in service.list_records(store)}
        if texts:
            break
        time.sleep(0.2)
    assert texts == {"We decided to keep the changelog in Keep a Changelog format": "candidate"}
    mark = (store / "state" / "observer.spawned").stat().st_mtime
    run_hook("Stop", stop, cwd=store.parent)
    assert (store / "state" / "observer.spawned").stat().st_mtime == mark  # not due again yet
