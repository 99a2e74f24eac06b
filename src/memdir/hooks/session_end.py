"""SessionEnd: close the session in its state and commit the logs in the background.

Idempotent: a second SessionEnd with nothing in between is a no-op, and a session resumed after
an early end simply ends again later, its state covering both parts (case B37). The journal and
action logs are committed in a batch by a detached ``memdir sync --logs``, never by this hook.

Imports: standard library and the kernel only.
"""

from __future__ import annotations

import os
import subprocess
import sys

from memdir.hooks.context import Context
from memdir.hooks.payload import HookEvent, HookResult
from memdir.kernel.storage import session


def handle(event: HookEvent, context: Context) -> HookResult | None:
    """Mark the session ended (once per stretch of activity); return nothing."""
    offset = session.record(
        context.store, event.session, {"e": "end", "reason": event.source or "other"}
    )
    ends = session.load(context.store, event.session, before=offset)["ends"]
    after = session.load(context.store, event.session)["ends"]
    if len(after) == len(ends):
        return None  # nothing happened since the last end: no second sync
    subprocess.Popen(
        [sys.executable, "-m", "memdir", "sync", "--logs", "--store", str(context.store)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        env={**os.environ},
    )
    return None
