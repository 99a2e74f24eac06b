"""When the store's upkeep is due, read cheaply enough for a hook (``memdir maintain``).

``state/maintain.json`` records when each task last ran: ``{"last": {task: epoch seconds}}``.
A task is due when its interval (``[maintenance]`` in the manifest; the observer's is
``[observer] observe_every_seconds``) has passed; an interval of 0 turns the task off.

Imports: standard library only (and the manifest's settings object).
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from memdir.kernel.base.layout import StoreLayout, layout

TYPE_CHECKING = False  # the hook path never imports typing (start-up cost)
if TYPE_CHECKING:
    from typing import Any

STATE = StoreLayout.MAINTAIN
LOCK = StoreLayout.MAINTAIN_LOCK
PID = StoreLayout.MAINTAIN_PID
SPAWNED = StoreLayout.MAINTAIN_SPAWNED
TASKS = ("observe", "logs", "scan", "hygiene")
SPAWN_SPACING_SECONDS = 60
"""Hooks start at most one background ``memdir maintain`` a minute."""


def intervals(settings: Any) -> dict[str, int]:
    """Return each task's interval in seconds (0: off) from the manifest's settings."""
    return {
        "observe": int(settings.observe_every_seconds),
        "logs": int(settings.maintain_logs_seconds),
        "scan": int(settings.maintain_scan_seconds),
        "hygiene": int(settings.maintain_hygiene_seconds),
    }


def load(store: Path) -> dict[str, Any]:
    """Return ``state/maintain.json`` (``{"last": {}}`` when missing or unreadable)."""
    try:
        with open(layout(store).state_path(STATE), encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError):
        return {"last": {}}
    if not isinstance(data, dict) or not isinstance(data.get("last"), dict):
        return {"last": {}}
    return data


def due(store: Path, settings: Any, now: float | None = None) -> list[str]:
    """Return the tasks whose interval has passed since they last ran, in :data:`TASKS` order."""
    now = time.time() if now is None else now
    last = load(store)["last"]
    every = intervals(settings)
    return [
        task
        for task in TASKS
        if every[task] > 0 and now - float(last.get(task, 0) or 0) >= every[task]
    ]


def claim_spawn(store: Path) -> bool:
    """Whether a hook may start a background ``memdir maintain`` now; claims the minute if so."""
    mark = layout(store).state_path(SPAWNED)
    try:
        if time.time() - mark.stat().st_mtime < SPAWN_SPACING_SECONDS:
            return False
    except FileNotFoundError:
        pass
    except OSError:
        return False
    try:
        mark.parent.mkdir(parents=True, exist_ok=True)
        mark.touch()
        os.utime(mark)
    except OSError:
        return False
    return True


def proven_owner(store: Path) -> int | None:
    """Return the pid in ``state/maintain.pid`` when that process is memdir's maintenance.

    Proven as OpenWolf proves its daemon: the process exists and its command line is
    ``… memdir maintain …`` (Linux ``/proc``); a pid reused by another program is not ours.
    ``None`` when there is no pid file, the process is gone, or it is not memdir's.
    """
    try:
        data = json.loads((layout(store).state_path(PID)).read_text(encoding="utf-8"))
        pid = int(data["pid"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            argv = fh.read().split(b"\0")
    except OSError:
        return None
    joined = b" ".join(argv)
    return pid if b"memdir" in joined and b"maintain" in argv else None


def spawn_if_due(store: Path, settings: Any) -> bool:
    """From a hook: start ``memdir maintain --if-due`` detached when upkeep is due.

    Due means a task other than the observer (the Stop hook starts observer passes itself) has
    passed its interval, and no hook started one in the last minute. A store never maintained
    starts its clocks now (``state/maintain.json``): a fresh store is not due at once.

    Returns:
        Whether a process was started.
    """
    if not settings.maintain_from_hooks:
        return False
    if not (layout(store).state_path(STATE)).exists():
        now = time.time()
        try:
            with open(layout(store).state_path(STATE), "x", encoding="utf-8") as fh:
                json.dump({"last": dict.fromkeys(TASKS, now)}, fh)
        except OSError:
            pass  # another hook wrote it first, or a read-only store
        return False
    if not [t for t in due(store, settings) if t != "observe"] or not claim_spawn(store):
        return False
    import subprocess  # only when upkeep is due
    import sys

    subprocess.Popen(
        [sys.executable, "-m", "memdir", "maintain", "--if-due", "--store", str(store)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        env={**os.environ},
    )
    return True
