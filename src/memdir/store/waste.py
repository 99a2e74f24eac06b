"""The waste report: where a session's tokens went without need (``memdir stats --waste``).

Read-only, from evidence memdir already keeps: the action log (``actions/*.jsonl``: every read,
write and shell command, with ``out_tokens`` and ``shown_tokens`` for shell output), the session
states (full reads, refused re-reads, injected records) and the index. Each finding names its
evidence (session, file or command, counts, tokens) and the setting or habit that fixes it, and
only ever names mechanisms memdir has: the duplicate-read gate (``[hooks] duplicate_read``), the
shell output governor (``[governor]``), path-scoped beliefs (``--paths``), the Stop reminder and
the observer (``[observer] observe_every_seconds``). Tokens are ceil(UTF-8 bytes / 4).

Findings (``code``):

- ``repeated_read``: a file read in full three or more times in one session with no write of it
  in between;
- ``large_unedited_read``: a file over :data:`LARGE_TOKENS` read in full and never edited in the
  window;
- ``retried_refusal``: a full re-read memdir refused, read in full again in the same session;
- ``noisy_command``: a shell command whose output put over :data:`NOISY_TOKENS` into the context;
- ``unused_injection``: a belief injected in :data:`UNUSED_SESSIONS` or more sessions and never
  opened, corrected or cited by a tool call since;
- ``stale_store``: sessions worked in the window but no belief was written or changed.
"""

from __future__ import annotations

import json
import os
from collections import defaultdict
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memdir.kernel.storage import session
from memdir.kernel.storage.lifecycle import Handle

if TYPE_CHECKING:
    from memdir.kernel.storage.session import SessionState

LARGE_TOKENS = 2_000
NOISY_TOKENS = 1_500
REPEATS = 3
UNUSED_SESSIONS = 3
STALE_SESSIONS = 3


def _rows(store: Path, days: int) -> list[dict[str, Any]]:
    """Action-log rows of the last ``days`` days (UTC file dates), in file order."""
    since = (datetime.now(UTC) - timedelta(days=days)).strftime("%Y-%m-%d")
    rows: list[dict[str, Any]] = []
    folder = store / "actions"
    try:
        names = sorted(n for n in os.listdir(folder) if n.endswith(".jsonl") and n[:10] >= since)
    except OSError:
        return rows
    for name in names:
        try:
            text = (folder / name).read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        for line in text.splitlines():
            try:
                row = json.loads(line)
            except ValueError:
                continue
            if isinstance(row, dict):
                rows.append(row)
    return rows


def _finding(
    code: str, message: str, evidence: dict[str, Any], fix: str, tokens: int
) -> dict[str, Any]:
    return {"code": code, "message": message, "evidence": evidence, "fix": fix, "tokens": tokens}


def _size_tokens(project: Path, rel: str) -> int:
    try:
        return -(-os.stat(project / rel).st_size // 4)
    except OSError:
        return 0


def _full_reads(row: dict[str, Any]) -> list[str]:
    """The files a row read in full: a Read tool row's path, a shell read's ``reads``."""
    if not row.get("ok", True):
        return []
    if row.get("tool") == "Read" and isinstance(row.get("path"), str):
        return [row["path"]]
    reads = row.get("reads")
    if row.get("tool") == "Bash" and isinstance(reads, list):
        command = str(row.get("command", ""))
        if command.startswith(("cat ", "bat ")):
            return [r for r in reads if isinstance(r, str)]
    return []


def report(  # noqa: C901 - one pass over the sessions, one branch per kind of waste
    handle: Handle, project: Path, *, days: int = 30
) -> dict[str, Any]:
    """Return the waste report: ``{"findings": [...], "counts": {...}, "tokens": N, "days": N}``.

    Args:
        handle: The open store.
        project: The project folder (file sizes are read from it).
        days: How many days of the action log to read.
    """
    store = handle.store
    rows = _rows(store, days)
    findings: list[dict[str, Any]] = []
    edited: set[str] = set()
    per_session: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        per_session[str(row.get("session", ""))].append(row)
        if row.get("tool") in ("Write", "Edit", "MultiEdit", "NotebookEdit", "Delete") and row.get(
            "path"
        ):
            edited.add(str(row["path"]))
    states = {str(s.get("id")): s for s in session.all_states(store)}
    duplicate_mode = handle.manifest.duplicate_read
    read_counts: dict[tuple[str, str], int] = {}
    large: dict[str, dict[str, Any]] = {}
    for sid, srows in per_session.items():
        streak: dict[str, int] = defaultdict(int)
        worst: dict[str, int] = defaultdict(int)
        for row in srows:
            path = row.get("path")
            if row.get("tool") in ("Write", "Edit", "MultiEdit", "NotebookEdit") and path:
                streak[str(path)] = 0
            for rel in _full_reads(row):
                streak[rel] += 1
                worst[rel] = max(worst[rel], streak[rel])
                read_counts[(sid, rel)] = read_counts.get((sid, rel), 0) + 1
                if rel not in edited:
                    entry = large.setdefault(rel, {"reads": 0, "sessions": set()})
                    entry["reads"] += 1
                    entry["sessions"].add(sid)
        for rel, times in sorted(worst.items()):
            if times >= REPEATS:
                cost = _size_tokens(project, rel)
                gate = (
                    "memdir refuses an unchanged full re-read once (`[hooks] duplicate_read = "
                    '"deny"`, the default)'
                    if duplicate_mode == "deny"
                    else f'`[hooks] duplicate_read` is "{duplicate_mode}": set it to "deny" to '
                    "refuse an unchanged full re-read once"
                )
                findings.append(
                    _finding(
                        "repeated_read",
                        f"{rel} was read in full {times} times in session {sid} with no edit "
                        f"between (~{cost} tokens each)",
                        {"session": sid, "file": rel, "reads": times},
                        f"{gate}; reuse the earlier read or pass offset/limit for the part needed",
                        cost * (times - 1),
                    )
                )
        state = states.get(sid)
        for rel, seen in sorted((state["reads"] if state else {}).items()):
            if (
                isinstance(seen, dict)
                and seen.get("denied")
                and read_counts.get((sid, rel), 0) >= 2
            ):
                cost = int(seen.get("tokens", 0) or _size_tokens(project, rel))
                findings.append(
                    _finding(
                        "retried_refusal",
                        f"{rel}: memdir refused a full re-read in session {sid} and it was read in "
                        "full again",
                        {"session": sid, "file": rel},
                        "the refusal says to reuse the earlier read or read a range; the retry "
                        "passes by design. If retries are the habit, `[hooks] duplicate_read = "
                        '"warn"` costs a note instead of a refusal and a retry',
                        cost,
                    )
                )
    for rel, entry in sorted(large.items()):
        cost = _size_tokens(project, rel)
        if cost >= LARGE_TOKENS:
            findings.append(
                _finding(
                    "large_unedited_read",
                    f"{rel} (~{cost} tokens) was read in full {entry['reads']} time(s) in "
                    f"{len(entry['sessions'])} session(s) and never edited",
                    {"file": rel, "reads": entry["reads"], "sessions": len(entry["sessions"])},
                    "find the part needed first (`memdir find QUERY`, `grep -n`), then read a "
                    "range (offset/limit, `sed -n 'A,Bp'`)",
                    cost * entry["reads"],
                )
            )
    noisy: dict[str, dict[str, int]] = {}
    for row in rows:
        if row.get("tool") != "Bash":
            continue
        shown = row.get("shown_tokens", row.get("out_tokens"))
        if isinstance(shown, int) and shown >= NOISY_TOKENS:
            command = str(row.get("command", ""))[:120]
            entry = noisy.setdefault(command, {"runs": 0, "tokens": 0})
            entry["runs"] += 1
            entry["tokens"] += shown
    governor = handle.manifest.governor
    for command, entry in sorted(noisy.items(), key=lambda kv: -kv[1]["tokens"]):
        fix = (
            "shell output is shortened only where the host lets a hook replace it (Claude Code); "
            "elsewhere use a bounded form (a quiet flag, `| tail -n 60`, `git log -n 20`)"
            if governor == "shape"
            else f'`[governor] mode` is "{governor}": "shape" shortens successful noisy output '
            "on Claude Code; or use a bounded form"
        )
        findings.append(
            _finding(
                "noisy_command",
                f"`{command}` put ~{entry['tokens']} tokens of output into the context in "
                f"{entry['runs']} run(s)",
                {"command": command, "runs": entry["runs"]},
                fix,
                entry["tokens"],
            )
        )
    findings += _unused(handle, rows, states)
    findings += _stale(handle, per_session)
    counts: dict[str, int] = {}
    for finding in findings:
        counts[finding["code"]] = counts.get(finding["code"], 0) + 1
    return {
        "findings": findings,
        "counts": counts,
        "tokens": sum(f["tokens"] for f in findings),
        "days": days,
        "sessions": len(per_session),
    }


def _unused(
    handle: Handle, rows: list[dict[str, Any]], states: dict[str, SessionState]
) -> list[dict[str, Any]]:
    """Beliefs injected in several sessions and never opened, corrected or cited since."""
    injected: dict[str, int] = defaultdict(int)
    for state in states.values():
        for rid in set(state.get("injected") or ()):
            injected[str(rid)] += 1
    mentioned = " ".join(str(r.get("command", "")) + str(r.get("tool", "")) for r in rows)
    found = []
    for rid, sessions in sorted(injected.items()):
        if sessions < UNUSED_SESSIONS or rid in mentioned:
            continue
        doc = handle.index.get_doc(rid)
        if doc is None or doc.get("status") != "active" or "pinned" in (doc.get("tags") or ()):
            continue
        cost = -(-len(str(doc.get("text", "")).encode("utf-8")) // 4) + 12
        found.append(
            _finding(
                "unused_injection",
                f"{rid} was injected in {sessions} sessions and never opened, corrected or "
                "cited by a tool call",
                {"record": rid, "sessions": sessions},
                f"if it no longer matters, `memdir forget {rid}`; if it matters only for some "
                "files, scope it (`memdir correct` it with tags `path:GLOB`, or remember it "
                "again with `--paths`); or lower its importance",
                cost * sessions,
            )
        )
    return found


def _stale(handle: Handle, per_session: dict[str, list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """Sessions worked in the window, but no belief was written or changed."""
    newest = max(
        (str(d.get("updated_at", "")) for d in handle.index.list_docs(limit=1)), default=""
    )
    last = newest[:19]  # records keep whole seconds; a row in that second counts as since
    since = [
        sid
        for sid, srows in per_session.items()
        if sid and any(str(r.get("at", ""))[:19] >= last for r in srows)
    ]
    if len(since) < STALE_SESSIONS:
        return []
    every = handle.manifest.observe_every_seconds
    observer = (
        f"the observer runs after a turn every {every} s (`[observer] observe_every_seconds`); "
        "`memdir review` promotes its candidates"
        if every > 0
        else "the background observer is off (`[observer] observe_every_seconds = 0`): set it "
        "to 300 to distil candidates from the journal"
    )
    day = newest[:10] or "never"
    return [
        _finding(
            "stale_store",
            f"{len(since)} sessions have worked since the last belief was written ({day})",
            {"sessions": len(since), "last_write": newest or None},
            "save what a session learned (`memdir remember`, the memory_remember tool; the Stop "
            f"hook reminds once when files changed and nothing was saved); {observer}",
            0,
        )
    ]
