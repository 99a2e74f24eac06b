"""Per-session state for hooks: what was read, written and injected, and the token ledger.

Each host session has its own file, ``state/sessions/<key>.json``, keyed by the host's
``session_id``, so parallel sessions on one store never reset each other (case B16). A resumed
session keeps its file; a compaction starts a new *generation*, which marks every earlier read
evicted without forgetting it (case B36). All changes are read-modify-write under the session's
own lock (``state/sessions/<key>.lock``), because a host runs hooks for parallel tool calls at
the same time. A state file that cannot be read is kept aside, never silently reset.

Imports: standard library only.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from memdir.kernel.atomic import write_text_atomic
from memdir.kernel.clock import now_iso
from memdir.kernel.lock import file_lock
from memdir.kernel.paths import state_dir
from memdir.kernel.redact import find_secrets

TYPE_CHECKING = False  # the hook path never imports typing (start-up cost)
if TYPE_CHECKING:
    from typing import Any

SESSIONS_DIR = "sessions"
_SAFE = re.compile(r"^[A-Za-z0-9._-]{1,80}$")
LEDGER_KEYS = (
    "injected_tokens",  # tokens memdir put into the agent's context (estimated)
    "reads",  # full or ranged reads the agent made
    "read_tokens",  # their estimated size
    "denied",  # full re-reads refused by the duplicate-read gate
    "denied_tokens",  # what those re-reads would have cost
)


def session_key(session_id: str) -> str:
    """Return a file-safe key for a host session id (the id itself when it is already safe)."""
    if _SAFE.match(session_id) and not session_id.startswith(".") and not find_secrets(session_id):
        return session_id  # a secret pasted as a session id never becomes a file name
    import hashlib  # rare: host session ids are normally file-safe already

    return "h-" + hashlib.sha256(session_id.encode("utf-8", "replace")).hexdigest()[:32]


def new_state(session_id: str) -> dict[str, Any]:
    """Return the state of a session seen for the first time."""
    return {
        "id": session_id,
        "started_at": now_iso(),
        "updated_at": now_iso(),
        "starts": 0,
        "generation": 0,
        "source": "",
        "reads": {},
        "written": [],
        "beliefs": 0,
        "batches": 0,
        "tool_calls": 0,
        "prompts": 0,
        "injected": [],
        "reminders": [],
        "reminded": False,
        "compactions": [],
        "ends": [],
        "ledger": dict.fromkeys(LEDGER_KEYS, 0),
    }


def _path(store: Path, session_id: str) -> Path:
    return state_dir(store) / SESSIONS_DIR / f"{session_key(session_id)}.json"


def load(store: Path, session_id: str) -> dict[str, Any]:
    """Return the session's state (a new one when none is saved or it cannot be read)."""
    path = _path(store, session_id)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return new_state(session_id)
    except (OSError, ValueError):
        with contextlib.suppress(OSError):
            os.replace(path, path.with_name(f"{path.name}.unreadable-{int(time.time())}"))
        return new_state(session_id)
    if not isinstance(data, dict):
        return new_state(session_id)
    fresh = new_state(session_id)
    for key, value in fresh.items():
        if not isinstance(data.get(key), type(value)):
            data[key] = value
    for key in LEDGER_KEYS:
        data["ledger"].setdefault(key, 0)
    return data


@contextmanager
def editing(store: Path, session_id: str, timeout_seconds: float) -> Iterator[dict[str, Any]]:
    """Yield the session's state for changes, saved atomically when the body succeeds.

    Raises:
        LockTimeoutError: another hook of the same session held the state past the timeout.
    """
    path = _path(store, session_id)
    with file_lock(path.with_suffix(".lock"), "session", timeout_seconds):
        state = load(store, session_id)
        before = json.dumps(state, sort_keys=True)
        yield state
        if json.dumps(state, sort_keys=True) == before and path.exists():
            return  # nothing changed: no write
        state["updated_at"] = now_iso()
        text = json.dumps(state, ensure_ascii=False, separators=(",", ":"))
        write_text_atomic(path, text, durable=False)  # machine-local and cheap to lose


def all_states(store: Path) -> list[dict[str, Any]]:
    """Return every saved session state, most recently updated first."""
    folder = store / "state" / SESSIONS_DIR
    states = []
    for path in folder.glob("*.json") if folder.is_dir() else []:
        with contextlib.suppress(OSError, ValueError):
            data = json.loads(path.read_text(encoding="utf-8"))
            if isinstance(data, dict):
                states.append(data)
    states.sort(key=lambda s: str(s.get("updated_at", "")), reverse=True)
    return states
