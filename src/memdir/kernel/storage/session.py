"""Per-session state for hooks: what was read, written and injected, and the token ledger.

Each host session has its own state, keyed by the host's ``session_id``, so parallel sessions
on one store never reset each other (case B16). A resumed session keeps its state; a compaction
starts a new *generation*, which marks every earlier read evicted without forgetting it (case
B36).

A host runs hooks for parallel tool calls at the same time, hundreds at once on a busy machine,
so no hook ever waits on a lock for this bookkeeping (case B15's class, issue 9 item 4). Every
change is an *event* appended with one ``O_APPEND`` write to ``state/sessions/<key>.events
.jsonl`` (:func:`record`); appenders never wait for each other. The state is the *fold* of the
events over the last snapshot (:func:`load`): each event's effect is decided when it is folded,
in file order, so events need no read-modify-write and a condition ("remind once", "deny once")
is judged against the state just before the event. A hook that must know what its own event
did folds the events before it (``load(..., before=offset)``).

The events are folded into the snapshot ``<key>.json`` once they pass :data:`FOLD_BYTES`, by
whichever hook gets the session's fold lock without waiting (others skip): the live file is
renamed to ``<key>.events.<n>.jsonl`` under the append lock, the snapshot is rewritten with
``folded: n``, and the renamed file is deleted. A crash at any step loses nothing and applies
nothing twice: a renamed file whose number the snapshot has not reached is folded on load, one
it has reached is deleted. A snapshot that cannot be read is kept aside, never silently reset.

Imports: standard library only.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import time
from pathlib import Path

from memdir.kernel.base import appendlog
from memdir.kernel.base.atomic import write_text_atomic
from memdir.kernel.base.clock import now_iso
from memdir.kernel.base.errors import LockTimeoutError
from memdir.kernel.lang.redact import find_secrets
from memdir.kernel.storage.lock import file_lock
from memdir.kernel.storage.paths import StoreLayout, layout

TYPE_CHECKING = False  # the hook path never imports typing (start-up cost)
if TYPE_CHECKING:
    from typing import Any, NotRequired, TypedDict

    class SessionState(TypedDict):
        """One host session's state (the fold of its events; :func:`new_state` makes it)."""

        id: str  # the host's session id
        started_at: str  # ISO-8601 UTC
        updated_at: str
        starts: int  # SessionStart events seen
        generation: int  # bumped by compaction or clear: earlier reads are evicted
        source: str  # the last SessionStart's source (startup, resume, clear, compact)
        reads: dict[str, dict[str, Any]]  # project-relative path -> its last full read
        written: list[str]  # paths this session changed, oldest first
        beliefs: int  # records written this session
        batches: int  # tool batches
        tool_calls: int
        prompts: int
        injected: list[str]  # record ids this session's context already holds
        reminders: list[str]  # queued for the next prompt
        reminded: bool  # the "nothing was remembered" reminder was queued once
        answer: int  # CRC-32 of the last answer journaled (0: none), so none is journaled twice
        failing: list[Any]  # shell commands that failed and have not passed since
        error_prompt: bool  # a prompt carried an error message
        edited_since_error: bool
        fixed: list[Any]  # a command that failed, then passed after an edit
        bug_logged: bool
        bug_nudged: bool
        preambled: bool  # the fence's header was shown in this context
        model: str  # the model the host last named; "" when unknown
        by_model: dict[str, dict[str, int]]  # model -> ledger amounts while it was in use
        compactions: list[Any]
        ends: list[Any]
        ledger: dict[str, int]  # LEDGER_KEYS -> count or tokens
        folded: NotRequired[int]  # the last rotated events file folded into the snapshot
        pending_compact: NotRequired[dict[str, Any]]  # a compaction whose steps are arriving


SESSIONS_DIR = StoreLayout.SESSIONS
EVENTS_SUFFIX = ".events.jsonl"
FOLD_BYTES = 64 * 1024
"""Past this many bytes of events, the next hook that can folds them into the snapshot."""
LISTED_FILES = 5
_SAFE = re.compile(r"^[A-Za-z0-9._-]{1,80}$")
_ROTATED = re.compile(r"^(?P<key>.+)\.events\.(?P<n>\d{1,12})\.jsonl$")
LEDGER_KEYS = (
    "injected_tokens",  # tokens memdir put into the agent's context (estimated)
    "reads",  # full or ranged reads the agent made
    "read_tokens",  # their estimated size
    "denied",  # full re-reads refused by the duplicate-read gate
    "denied_tokens",  # what those re-reads would have cost
    "reread_tokens",  # reads of a refused file that followed the refusal (cancel its saving)
    "withheld_tokens",  # what memdir left out because the context held it (preamble, records)
)


def session_key(session_id: str) -> str:
    """Return a file-safe key for a host session id (the id itself when it is already safe)."""
    if _SAFE.match(session_id) and not session_id.startswith(".") and not find_secrets(session_id):
        return session_id  # a secret pasted as a session id never becomes a file name
    import hashlib  # rare: host session ids are normally file-safe already

    return "h-" + hashlib.sha256(session_id.encode("utf-8", "replace")).hexdigest()[:32]


def new_state(session_id: str) -> SessionState:
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
        "preambled": False,
        "reminders": [],
        "reminded": False,
        "answer": 0,
        "failing": [],  # shell commands that failed and have not passed since
        "error_prompt": False,  # a prompt carried an error message (a traceback, "FAILED")
        "edited_since_error": False,
        "fixed": [],  # what the session fixed: a command that failed, then passed after an edit
        "bug_logged": False,
        "bug_nudged": False,
        "compactions": [],
        "ends": [],
        "ledger": dict.fromkeys(LEDGER_KEYS, 0),
        "model": "",  # the model the host last named (payload ``model``), "" when unknown
        "by_model": {},  # model -> ledger amounts counted while it was the session's model
    }


def _folder(store: Path) -> Path:
    return layout(store).in_state(SESSIONS_DIR)


def _paths(store: Path, session_id: str) -> tuple[Path, Path]:
    """Return the snapshot and the live events file of a session."""
    key = session_key(session_id)
    folder = _folder(store)
    return folder / f"{key}.json", folder / f"{key}{EVENTS_SUFFIX}"


# --- writing: one appended line per change ------------------------------------------------------


def record(store: Path, session_id: str, event: dict[str, Any]) -> int:
    """Append one event to the session's log, without waiting for any other hook.

    Args:
        store: The store folder.
        session_id: The host's session id.
        event: ``{"e": KIND, ...}``; see :func:`apply` for the kinds and their fields.

    Returns:
        The byte offset of the event in the live events file (for ``load(before=...)``).

    Raises:
        OSError: the state folder cannot be written (a read-only store, a full disk).
    """
    _, events = _paths(store, session_id)
    line = json.dumps({"at": now_iso(), **event}, ensure_ascii=False, separators=(",", ":"))
    offset = appendlog.append(events, (line + "\n").encode("utf-8"))
    if offset + len(line) > FOLD_BYTES:
        with contextlib.suppress(OSError, LockTimeoutError):
            fold(store, session_id)
    return offset


# --- reading: the snapshot folded with the events -----------------------------------------------


def _read_snapshot(path: Path, session_id: str) -> SessionState:
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
    state: SessionState = data  # type: ignore[assignment]  # every key checked just above
    return state


def _rotated(store: Path, session_id: str) -> list[tuple[int, Path]]:
    """Return the renamed event files of a session, oldest first."""
    key = session_key(session_id)
    folder = _folder(store)
    found = []
    with contextlib.suppress(OSError):
        for entry in os.scandir(folder):
            match = _ROTATED.match(entry.name)
            if match and match["key"] == key:
                found.append((int(match["n"]), Path(entry.path)))
    return sorted(found)


def _events(data: bytes, before: int | None = None) -> list[dict[str, Any]]:
    """Parse whole event lines (a torn or foreign line is skipped), stopping at ``before``."""
    out = []
    position = 0
    for raw in data.split(b"\n"):
        start, position = position, position + len(raw) + 1
        if before is not None and start >= before:
            break
        if not raw.strip():
            continue
        with contextlib.suppress(ValueError, UnicodeDecodeError):
            value = json.loads(raw)
            if isinstance(value, dict):
                out.append(value)
    return out


def _read_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return b""


def load(store: Path, session_id: str, *, before: int | None = None) -> SessionState:
    """Return the session's state: the snapshot with every event since folded in.

    Args:
        store: The store folder.
        session_id: The host's session id.
        before: Fold only the live events that start before this byte offset (the state just
            before an event :func:`record` returned that offset).

    Returns:
        The state (a new one when nothing was saved); see :func:`new_state` for its keys.
    """
    snapshot, live = _paths(store, session_id)
    rotated = [(n, _read_bytes(path), path) for n, path in _rotated(store, session_id)]
    saved = snapshot.exists()
    state = _read_snapshot(snapshot, session_id)
    folded = int(state.get("folded", 0) or 0)
    events: list[dict[str, Any]] = []
    for n, data, path in rotated:
        if n <= folded:
            with contextlib.suppress(OSError):
                path.unlink()  # folded already; a crash came before its deletion
            continue
        events += _events(data)
    events += _events(_read_bytes(live), before)
    if not saved and events and isinstance(events[0].get("at"), str):
        state["started_at"] = state["updated_at"] = events[0]["at"]
    for event in events:
        apply(state, event)
    return state


def fold(store: Path, session_id: str) -> bool:
    """Fold the session's events into its snapshot, unless another process is doing it.

    Returns:
        Whether this call folded (False: another process holds the fold lock).

    Raises:
        OSError: the state folder cannot be written.
    """
    snapshot, live = _paths(store, session_id)
    try:
        with file_lock(snapshot.with_suffix(".lock"), "session fold", 0.0):
            state = _read_snapshot(snapshot, session_id)
            folded = int(state.get("folded", 0) or 0)
            pending = [(n, p) for n, p in _rotated(store, session_id) if n > folded]
            number = max([folded, *(n for n, _ in pending)]) + 1
            target = live.with_name(f"{session_key(session_id)}.events.{number}.jsonl")
            if appendlog.rotate(live, target):
                pending.append((number, target))
            if not pending:
                return True
            for _, path in pending:
                for event in _events(_read_bytes(path)):
                    apply(state, event)
            state["folded"] = pending[-1][0]
            text = json.dumps(state, ensure_ascii=False, separators=(",", ":"))
            write_text_atomic(snapshot, text, durable=False)  # machine-local and cheap to lose
            for _, path in pending:
                with contextlib.suppress(OSError):
                    path.unlink()
            return True
    except LockTimeoutError:
        return False


def session_ids(store: Path) -> list[str]:
    """Return the key of every session with saved state (snapshot or events)."""
    folder = _folder(store)
    keys: set[str] = set()
    with contextlib.suppress(OSError):
        for entry in os.scandir(folder):
            name = entry.name
            if name.endswith(EVENTS_SUFFIX):
                keys.add(name[: -len(EVENTS_SUFFIX)])
            elif name.endswith(".json"):
                keys.add(name[: -len(".json")])
            elif match := _ROTATED.match(name):
                keys.add(match["key"])
    return sorted(keys)  # a key is its session's id, or stands for it (see session_key)


def all_states(store: Path) -> list[SessionState]:
    """Return every session's state, most recently updated first."""
    states = [load(store, session_id) for session_id in session_ids(store)]
    states.sort(key=lambda s: str(s.get("updated_at", "")), reverse=True)
    return states


# --- the fold: what each event does -------------------------------------------------------------


def same_read(earlier: dict[str, Any] | None, seen: dict[str, Any]) -> bool:
    """Whether a file observed as ``seen`` is the very file an earlier read recorded.

    The size, modification time, inode and content hash must all agree: a rewrite that keeps
    the size and restores the modification time (``os.utime``), or a file replaced by a rename,
    is a different file (case B52's sibling in the read gate). A read recorded without a hash
    (a file too big to hash) never matches.
    """
    return bool(
        earlier
        and earlier.get("sha")
        and all(earlier.get(k) == seen.get(k) for k in ("mtime_ns", "size", "ino", "sha"))
    )


def deny_applies(state: SessionState, event: dict[str, Any]) -> bool:
    """Whether a ``deny`` event refuses its read, judged on the state just before it.

    The file must have been read in full in this context generation, not be denied since, and
    be unchanged (:func:`same_read`).
    """
    earlier = state["reads"].get(str(event.get("rel")))
    return bool(
        earlier
        and earlier.get("full")
        and earlier.get("generation") == state["generation"]
        and not earlier.get("denied")
        and same_read(earlier, event)
    )


def reminder_text(written: list[str]) -> str:
    """Return the reminder queued when a session changed files and saved no memory."""
    shown = ", ".join(written[:LISTED_FILES]) + (" …" if len(written) > LISTED_FILES else "")
    return (
        f"This session changed {len(written)} file(s) ({shown}) and saved no memory. "
        "If you learned something durable (a decision, a rule the person stated, a "
        'gotcha), save it: `memdir remember "…" --kind decision|rule|fact`.'
    )


def model_of(payload: dict[str, Any] | None) -> str:
    """Return the model a host payload names (Claude Code's SessionStart, Codex's every event).

    ``""`` when the payload has no ``model`` string; cut to 80 characters.
    """
    value = (payload or {}).get("model")
    return value.strip()[:80] if isinstance(value, str) else ""


def _add(state: SessionState, key: str, amount: int) -> None:
    """Add ``amount`` to ledger ``key``, in total and under the session's current model."""
    state["ledger"][key] = _count(state["ledger"].get(key)) + amount
    per = state["by_model"].setdefault(state.get("model") or "unknown", {})
    per[key] = _count(per.get(key)) + amount


FAILING_KEPT = 20
"""Failed commands a session remembers while waiting to see them pass."""


def bug_text(fixed: list[str]) -> str:
    """Return the reminder queued when a session fixed an error and logged no bug."""
    what = fixed[0] if len(fixed) == 1 else f"{fixed[0]} (and {len(fixed) - 1} more)"
    return (
        f"This session fixed an error: {what}. If the cause is worth remembering, log it: "
        '`memdir bug log --error "…" --fix "…" [--file PATH]` (the bug_log tool), so the next '
        "session finds it with `memdir bug search`."
    )


def _apply_fixes(state: SessionState, event: dict[str, Any]) -> None:
    """Follow errors and their fixes (the bug nudge, issue 11 item 7)."""
    command = event.get("cmd")
    if event.get("bug") is True:
        state["bug_logged"] = True
    if event.get("wrote") and (state["failing"] or state["error_prompt"]):
        state["edited_since_error"] = True
        if state["error_prompt"] and not state["failing"]:
            state["fixed"].append("an error from the prompt, then an edit")
            state["error_prompt"] = False
    if not isinstance(command, str) or not command:
        return
    if event.get("ok") is False:
        if command not in state["failing"]:
            state["failing"] = [*state["failing"], command][-FAILING_KEPT:]
    elif event.get("ok") is True and command in state["failing"]:
        state["failing"] = [c for c in state["failing"] if c != command]
        if state["edited_since_error"]:
            state["fixed"].append(f"`{command}` failed, then passed after an edit")
        state["edited_since_error"] = bool(state["failing"])


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def apply(state: SessionState, event: dict[str, Any]) -> None:  # noqa: C901 - one branch per event kind, the fold of a log
    """Apply one event to ``state`` in place (events are folded in the order they were written).

    Kinds (``event["e"]``) and their fields:

    - ``tool``: a tool call: ``belief`` (a memory write succeeded), ``bug`` (a bug was logged),
      ``cmd`` and ``ok`` (a shell command and whether it passed: a command that failed, then
      passed after an edit, is a fix, and the next ``stop`` queues the bug nudge once),
      ``read`` (``rel``, ``mtime_ns``, ``size``, ``ino``, ``sha``, ``full``, ``tokens``; or a
      list of them, for a shell command reading several files), ``wrote`` (a path, or a list:
      an ``apply_patch``).
    - ``deny``: the read gate refused ``rel`` (with the file as seen: see :func:`same_read`);
      ``count`` adds it to the ledger (``deny`` mode, not ``warn``).
    - ``start``: SessionStart with ``source``; ``compact``: PreCompact/PostCompact (``name``,
      ``trigger``); ``end``: SessionEnd with ``reason``.
    - ``prompt``: a prompt, with ``beliefs`` stored from it and ``delivered`` reminders;
      ``error``: it carried an error message (an edit after it counts as a fix).
    - ``inject``: ``ids`` shown and ``tokens`` spent (``preamble``: the fence's header was
      in it, so later injections leave it out until a new context); ``batch``: a tool batch;
      ``stop``: a turn ended (``saved``: the MCP server marked a save, so no reminder);
      ``ledger``: ``add`` amounts to ledger keys. SessionStart(compact) and the compaction
      events join one compaction (:func:`join_compaction`).

    An unknown kind, or a field of the wrong type, changes nothing.
    """
    kind = event.get("e")
    at = event.get("at")
    model = event.get("model")
    if isinstance(model, str) and model:
        state["model"] = model[:80]
    if isinstance(at, str) and at > str(state.get("updated_at", "")):
        state["updated_at"] = at
    if kind == "tool":
        state["tool_calls"] += 1
        if event.get("belief") is True:
            state["beliefs"] += 1
        read = event.get("read")
        for one in read if isinstance(read, list) else [read]:  # a shell read names several
            if isinstance(one, dict) and isinstance(one.get("rel"), str):
                _apply_read(state, one)
        wrote = event.get("wrote")
        for path in wrote if isinstance(wrote, list) else [wrote]:  # a patch changes several
            if isinstance(path, str):
                state["reads"].pop(path, None)  # the file changed: a new full read is legitimate
                if path not in state["written"]:
                    state["written"].append(path)
        _apply_fixes(state, event)
    elif kind == "deny":
        if deny_applies(state, event):
            earlier = state["reads"][event["rel"]]
            earlier["denied"] = 1
            if event.get("count") is True:
                _add(state, "denied", 1)
                _add(state, "denied_tokens", _count(earlier.get("tokens")))
    elif kind == "start":
        source = str(event.get("source") or "startup")
        state["starts"] += 1
        state["source"] = source
        if source == "compact":
            join_compaction(state, "SessionStart", "auto", at)  # one checkpoint per compaction
        elif source == "clear":
            state["generation"] += 1  # a cleared context holds none of the earlier reads
        if source != "resume":
            state["injected"] = []
            state["preambled"] = False
    elif kind == "compact":
        _apply_compact(state, event)
        state["preambled"] = False  # the compacted context may have lost the preamble
    elif kind == "end":
        activity = [state["prompts"], state["tool_calls"], state["starts"]]
        ends = state["ends"]
        if not ends or list(ends[-1].get("activity", ())) != activity:
            ends.append({"at": at, "reason": event.get("reason") or "other", "activity": activity})
    elif kind == "prompt":
        state["prompts"] += 1
        state["beliefs"] += _count(event.get("beliefs"))
        if event.get("error") is True:
            state["error_prompt"] = True
        state["reminders"] = state["reminders"][_count(event.get("delivered")) :]
    elif kind == "inject":
        ids = event.get("ids")
        if isinstance(ids, list):
            state["injected"] = list(dict.fromkeys([*state["injected"], *map(str, ids)]))
        if event.get("preamble") is True:
            state["preambled"] = True
        _add(state, "injected_tokens", _count(event.get("tokens")))
        if _count(event.get("withheld")):
            _add(state, "withheld_tokens", _count(event.get("withheld")))
    elif kind == "batch":
        state["batches"] += 1
    elif kind == "stop":
        if isinstance(event.get("answer"), int):
            state["answer"] = event["answer"]
        written = state["written"]
        saved = event.get("saved") is True  # the MCP server marked a save (kernel.saves)
        if written and not state["beliefs"] and not state["reminded"] and not saved:
            state["reminders"].append(reminder_text(written))
            state["reminded"] = True
        if state["fixed"] and not state["bug_logged"] and not state["bug_nudged"]:
            state["reminders"].append(bug_text(state["fixed"]))
            state["bug_nudged"] = True
    elif kind == "ledger":
        added = event.get("add")
        for name, amount in added.items() if isinstance(added, dict) else ():
            if isinstance(name, str):
                _add(state, name, _count(amount))


def _apply_read(state: SessionState, read: dict[str, Any]) -> None:
    rel = read["rel"]
    previous = state["reads"].get(rel, {})
    same = previous.get("generation") == state["generation"] and same_read(previous, read)
    tokens = _count(read.get("tokens"))
    if previous.get("denied") and previous.get("generation") == state["generation"]:
        # The agent read the refused file anyway (a range, or after a change): the refusal
        # saved at most the difference.
        _add(state, "reread_tokens", min(tokens, _count(previous.get("tokens"))))
    state["reads"][rel] = {
        **{k: read.get(k) for k in ("mtime_ns", "size", "ino", "sha")},
        "generation": state["generation"],
        "full": read.get("full") is True or bool(same and previous.get("full")),
        "denied": previous.get("denied", 0) if same else 0,
        "tokens": tokens,
    }
    _add(state, "reads", 1)
    _add(state, "read_tokens", tokens)


def _activity(state: SessionState) -> list[int]:
    return [_count(state["prompts"]), _count(state["tool_calls"])]


def join_compaction(state: SessionState, step: str, trigger: str, at: Any = None) -> bool:
    """Count one event of a compaction (``PreCompact``, ``SessionStart``, ``PostCompact``).

    Hosts fire a compaction's events in different orders (Claude Code PreCompact →
    SessionStart(compact) → PostCompact; Codex PreCompact → PostCompact, then SessionStart
    resume and compact; Gemini CLI PreCompress alone, inside a turn), and may skip PreCompact.
    A compaction is *open* from its first event until the session does something else (a
    prompt or a tool call): every later event of it joins it and records nothing new; a
    PreCompact seen after the open compaction's SessionStart or PostCompact starts the next.

    Returns:
        Whether this event began a compaction (a checkpoint was recorded and the read
        generation moved on, evicting earlier reads).
    """
    pending = state.get("pending_compact")
    if isinstance(pending, dict) and pending.get("activity") == _activity(state):
        steps = pending.setdefault("steps", [])
        if not (step == "PreCompact" and ("PostCompact" in steps or "SessionStart" in steps)):
            if step not in steps:
                steps.append(step)
            return False
    state["generation"] += 1
    checkpoint: dict[str, Any] = {
        "at": at,
        "trigger": trigger or "auto",
        "generation": state["generation"],
        "reads": len(state["reads"]),
        "written": len(state["written"]),
    }
    if step != "PreCompact":
        checkpoint["note"] = "PreCompact did not run"
    state["compactions"].append(checkpoint)
    state["pending_compact"] = {"activity": _activity(state), "steps": [step]}
    return True


def _apply_compact(state: SessionState, event: dict[str, Any]) -> None:
    name = event.get("name")
    step = name if name in ("PreCompact", "PostCompact") else "PreCompact"
    join_compaction(state, step, str(event.get("trigger") or "auto"), event.get("at"))


# --- what a read saw ----------------------------------------------------------------------------

HASH_MAX_BYTES = 8 * 1024 * 1024
"""Files up to this size are hashed when read; a bigger one is never refused as a re-read."""


def observe(path: Path) -> dict[str, Any] | None:
    """Return what identifies a file's content now (size, mtime, inode, SHA-256), or ``None``.

    ``sha`` is empty for a file over :data:`HASH_MAX_BYTES` (it then never matches).
    """
    import hashlib

    try:
        with path.open("rb") as handle:
            stat = os.fstat(handle.fileno())
            digest = ""
            if stat.st_size <= HASH_MAX_BYTES:
                digest = hashlib.sha256(handle.read(HASH_MAX_BYTES + 1)).hexdigest()
    except OSError:
        return None
    return {
        "mtime_ns": stat.st_mtime_ns,
        "size": stat.st_size,
        "ino": stat.st_ino,
        "sha": digest,
    }
