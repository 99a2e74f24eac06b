"""``memdir maintain``: the store's upkeep without a daemon to babysit.

Tasks (each when due, or all with ``due_only=False``): an observer pass (``observe``), a commit
of the journal, action and audit logs and the map (``logs``), a stale-gated rescan of the file
map when there is one (``scan``), and the hygiene report written to ``state/dream.json``
(``hygiene``). Nothing is deleted: the report is written beside the evidence, never over it.

One owner at a time: ``state/maintain.lock`` is held for the whole run, and
``state/maintain.pid`` names the running process, which :func:`memdir.kernel.storage.upkeep.
proven_owner` proves is ``memdir maintain`` before anyone names it. A second run finds the
lock taken and returns ``busy`` with the proven owner (or none), having done nothing.
Hooks start it in the background when a task is due (``[maintenance] from_hooks``); cron can
run ``memdir maintain --if-due`` instead.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from memdir.kernel.base.atomic import write_text_atomic
from memdir.kernel.base.errors import LockTimeoutError, MemdirError
from memdir.kernel.storage import manifest, upkeep
from memdir.kernel.storage.lock import file_lock
from memdir.kernel.storage.paths import layout


def run(store: Path, *, due_only: bool, tasks: dict[str, Any]) -> dict[str, Any]:
    """Run the due (or all) upkeep tasks under the maintenance lock.

    Args:
        store: The store folder.
        due_only: Only tasks whose interval has passed and is not 0 (``--if-due``); else
            every task.
        tasks: Task name → a callable taking the store and returning a JSON-able summary.

    Returns:
        ``{"ran": {task: summary}, "errors": {task: message}, "busy": bool, "owner": pid|None,
        "skipped": [...]}``.
    """
    settings = manifest.load(store)
    wanted = upkeep.due(store, settings) if due_only else list(upkeep.TASKS)
    out: dict[str, Any] = {"ran": {}, "errors": {}, "busy": False, "owner": None, "skipped": []}
    where = layout(store)
    try:
        with file_lock(where.state_path(upkeep.LOCK), "maintain", 0.2):
            pid_file = where.state_path(upkeep.PID)
            write_text_atomic(
                pid_file,
                json.dumps({"pid": os.getpid(), "started": time.time(), "argv": "memdir maintain"}),
            )
            try:
                state = upkeep.load(store)
                for task in wanted:
                    try:
                        out["ran"][task] = tasks[task](store)
                    except (MemdirError, OSError) as err:
                        out["errors"][task] = str(err)
                    state["last"][task] = time.time()  # a failing task waits its interval too
                    write_text_atomic(where.state_path(upkeep.STATE), json.dumps(state, indent=1))
            finally:
                pid_file.unlink(missing_ok=True)
    except LockTimeoutError:
        out["busy"] = True
        out["owner"] = upkeep.proven_owner(store)
    out["skipped"] = [t for t in upkeep.TASKS if t not in wanted]
    return out
