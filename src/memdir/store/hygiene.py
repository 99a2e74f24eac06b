"""``memdir dream``: a read-only hygiene report. It never writes; each finding names a command.

Findings:

- **near_duplicate**: two active records that say the same: their texts are similar (shingle
  similarity at or above 0.5, below the 0.7 that would have merged them on remember) and do
  not contradict, or they are directives with the same stance in other words ("Use bun, not
  npm" / "Prefer bun over npm"). The fix forgets one.
- **conflict**: two active records of opposite polarity on the same subject ("Always use tabs…"
  / "Never use tabs…", "Use bun, not npm" / "Use npm for installs"; see
  :mod:`memdir.kernel.lang.polarity`), or two plain statements of the same kind that share most
  of their words in another order. One is probably wrong: the fix corrects the one the owner no
  longer holds to the other's text, which supersedes it.
- **stale**: importance 3 or less and untouched for ``[policy] stale_days``.
- **sunk**: the forgetting curve has brought its weight below 0.1 (shown whether or not decay
  is on for recall).
- **cites_changed_file**: the record names a project file that changed after the record was last
  updated, so it may no longer be true.
- **cites_moved_file** / **cites_missing_file**: the record names a project file that git knew
  and that is gone: moved (git's rename detection, committed or staged, gives the new path) or
  deleted. The finding's ``files`` lists ``{"old", "new"}`` (``new`` is ``None`` when deleted).
  A cited name git never tracked (``Node.js``) is not reported.
- **waiting_candidate**: a candidate awaiting review for more than 14 days.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from pathlib import Path
from typing import Any

from memdir.kernel.base.clock import age_days
from memdir.kernel.index.recall import half_life_days
from memdir.kernel.lang.polarity import agree, is_directive
from memdir.kernel.lang.text import similarity, words
from memdir.kernel.storage import hits, manifest
from memdir.kernel.storage.lifecycle import Handle, compare

NEAR_DUPLICATE = 0.5
SUBJECT_OVERLAP = 0.6
SUNK_WEIGHT = 0.1
CANDIDATE_WAIT_DAYS = 14
_PATHLIKE = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)*[\w-]+\.[A-Za-z0-9]{1,8})(?![\w/])")


def _finding(code: str, message: str, ids: list[str], fix: str) -> dict[str, Any]:
    return {"code": code, "message": message, "ids": ids, "fix": fix}


def _pair_code(score: float, against: bool, doc: dict[str, Any], other: dict[str, Any]) -> str:
    """Label one pair of active records: ``near_duplicate``, ``conflict`` or ``""`` (neither).

    Polarity first, as on remember (:func:`memdir.kernel.storage.lifecycle.find_similar`): a
    pair of opposite polarity on one subject is a conflict however many words it shares, and
    two directives with the same stance are near-duplicates however they are worded
    (:mod:`memdir.kernel.lang.polarity`). Two plain statements of the same kind that share
    most of their words in another order ("Alice reports to Bob" / "Bob reports to Alice")
    are still reported as a conflict; two directives that neither agree nor oppose are not.
    """
    a, b = doc["text"], other["text"]
    if against:
        return "conflict"
    if score >= NEAR_DUPLICATE or agree(a, b):
        return "near_duplicate"
    if doc["kind"] != other["kind"] or (is_directive(a) and is_directive(b)):
        return ""
    mine, theirs = set(words(a)), set(words(b))
    overlap = len(mine & theirs) / max(len(mine | theirs), 1)
    return "conflict" if overlap >= SUBJECT_OVERLAP else ""


def _pairs(handle: Handle, docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    seen: set[tuple[str, str]] = set()
    for doc in docs:
        for score, against, other in compare(handle.index, doc["text"], ("active",)):
            pair = tuple(sorted((doc["id"], other["id"])))
            if other["id"] == doc["id"] or pair in seen:
                continue
            seen.add((pair[0], pair[1]))
            code = _pair_code(score, against, doc, other)
            if code == "near_duplicate":
                found.append(
                    _finding(
                        "near_duplicate",
                        f"{doc['id']} and {other['id']} say "
                        + (
                            f"nearly the same ({score:.2f})"
                            if score >= NEAR_DUPLICATE
                            else "the same in other words"
                        )
                        + f': "{doc["text"]}" / "{other["text"]}"',
                        list(pair),
                        f"`memdir forget {pair[1]} --reason duplicate` (keep {pair[0]})",
                    )
                )
            elif code == "conflict":
                found.append(
                    _finding(
                        "conflict",
                        f"{doc['id']} and {other['id']} contradict each other: "
                        f'"{doc["text"]}" / "{other["text"]}"',
                        list(pair),
                        _conflict_fix(doc, other),
                    )
                )
    return found


def _conflict_fix(doc: dict[str, Any], other: dict[str, Any]) -> str:
    """The commands that settle a conflict: supersede the one the owner no longer wants."""
    return (
        f"keep the one that holds: `memdir correct {doc['id']} --text "
        f"{shlex.quote(other['text'])}` keeps {other['id']}, `memdir correct {other['id']} "
        f"--text {shlex.quote(doc['text'])}` keeps {doc['id']} (or `memdir reject` the wrong one)"
    )


def _cited(doc: dict[str, Any]) -> list[str]:
    return sorted({m.group(1) for m in _PATHLIKE.finditer(f"{doc['text']}\n{doc.get('body', '')}")})


def _changed_files(project: Path, doc: dict[str, Any]) -> list[str]:
    changed = []
    for rel in _cited(doc):
        path = project / rel
        try:
            modified_days = age_days_of_mtime(path)
        except OSError:
            continue
        if modified_days < age_days(doc.get("updated_at")):
            changed.append(rel)
    return changed


def _project_git(project: Path, *args: str) -> list[str]:
    """Run a read-only git command in the project; its ``-z`` fields, ``[]`` on any failure."""
    env = {**os.environ, "GIT_OPTIONAL_LOCKS": "0"}  # never refresh the project's index
    try:
        done = subprocess.run(
            ["git", "-C", str(project), "-c", "core.quotepath=false", *args],
            capture_output=True,
            check=False,
            timeout=20,
            env=env,
        )
    except (OSError, subprocess.TimeoutExpired):
        return []
    if done.returncode != 0:
        return []
    return [f.strip("\n") for f in done.stdout.decode("utf-8", "surrogateescape").split("\0")]


def _apply_moves(fields: list[str], moves: dict[str, str | None]) -> None:
    """Fold ``--name-status -z`` fields (one change set, any order) into ``moves``."""
    i = 0
    while i < len(fields):
        status = fields[i]
        if status[:1] in ("R", "C") and i + 2 < len(fields):
            if status[:1] == "R":
                moves[fields[i + 1]] = fields[i + 2]
            i += 3
        elif status[:1] == "D" and i + 1 < len(fields):
            moves[fields[i + 1]] = None
            i += 2
        else:
            i += 1 if not status else 2


def project_moves(project: Path) -> dict[str, str | None]:
    """Return what git knows of files gone from ``project``: old path → new path or ``None``.

    Read-only: the committed history (``git log -M``, oldest change first) and then what is
    staged or changed in tracked files (``git diff -M HEAD``). Paths are relative to the
    project's top. Any git failure (no repository, no commit) gives what was found so far.
    """
    moves: dict[str, str | None] = {}
    rename = ("-c", "diff.renames=true")
    history = _project_git(
        project, *rename, "log", "-M", "--name-status", "-z", "--format=%x00@", "-n", "2000"
    )
    commits: list[list[str]] = [[]]
    for f in history:
        if f == "@":
            commits.append([])
        elif f:
            commits[-1].append(f)
    for fields in reversed(commits):
        _apply_moves(fields, moves)
    now = _project_git(project, *rename, "diff", "-M", "--name-status", "-z", "HEAD")
    _apply_moves([f for f in now if f], moves)
    return moves


def _gone_files(
    project: Path, doc: dict[str, Any], moves: dict[str, str | None]
) -> list[dict[str, str | None]]:
    """Return ``{"old", "new"}`` per cited file git knew that is no longer there."""
    gone: list[dict[str, str | None]] = []
    for rel in _cited(doc):
        if rel not in moves or (project / rel).exists():
            continue
        new: str | None = rel
        seen = {rel}
        while new is not None and new in moves and not (project / new).exists():
            new = moves[new]
            if new in seen:
                new = None
                break
            if new is not None:
                seen.add(new)
        if new is not None and not (project / new).exists():
            new = None
        gone.append({"old": rel, "new": new})
    return gone


def _gone_finding(record_id: str, gone: dict[str, str | None]) -> dict[str, Any]:
    fix = f"`memdir correct {record_id} --text …`"
    if gone["new"] is None:
        found = _finding(
            "cites_missing_file",
            f"{record_id} cites {gone['old']}, which was deleted",
            [record_id],
            f"{fix} or `memdir forget {record_id} --reason gone`",
        )
    else:
        found = _finding(
            "cites_moved_file",
            f"{record_id} cites {gone['old']}, moved to {gone['new']}",
            [record_id],
            f"{fix} naming {gone['new']}",
        )
    found["files"] = [gone]
    return found


def age_days_of_mtime(path: Path) -> float:
    """Return how many days ago ``path`` was modified."""
    import time

    return max(time.time() - path.stat().st_mtime, 0.0) / 86400.0


UNUSED_DAYS = 90
"""An active belief at least this old that no recall returned in this many days is unused."""
LISTED = 5


def _listed(ids: list[str]) -> str:
    return ", ".join(ids[:LISTED]) + (f" and {len(ids) - LISTED} more" if len(ids) > LISTED else "")


def _unused(doc: dict[str, Any], stats: dict[str, dict[str, object]]) -> bool:
    """Whether ``doc`` is old enough and no recall returned it in :data:`UNUSED_DAYS` days."""
    if age_days(doc.get("created_at")) < UNUSED_DAYS:
        return False
    seen = stats.get(doc["id"])
    return not seen or age_days(str(seen.get("last_hit") or "")) >= UNUSED_DAYS


def _usage_findings(handle: Handle, active: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Beliefs never recalled in :data:`UNUSED_DAYS` days, and ``max_active`` demotions."""
    from memdir.store import capacity

    stats = hits.fold(handle.store, save=False)
    unused = [doc["id"] for doc in active if _unused(doc, stats)]
    found = []
    if unused:
        found.append(
            _finding(
                "never_recalled",
                f"{len(unused)} active belief(s) not recalled or injected per prompt in "
                f"{UNUSED_DAYS} days: {_listed(unused)}",
                unused,
                "check them with `memdir get ID`; `memdir forget ID` the ones no longer true",
            )
        )
    for kind, entry in capacity.compute(handle, save_stats=False).by_kind.items():
        if entry["demoted"]:
            found.append(
                _finding(
                    "demoted",
                    f"{entry['active']} active {kind} beliefs pass [policy] max_active.{kind} = "
                    f"{entry['cap']}; {len(entry['demoted'])} (least important, least recalled) "
                    f"are kept out of injection but still recalled: {_listed(entry['demoted'])}",
                    entry["demoted"],
                    f"consolidate them (`memdir correct`, `memdir forget`) or raise "
                    f"max_active.{kind} in memdir.toml",
                )
            )
    return found


def report(handle: Handle, project: Path) -> dict[str, Any]:
    """Return the hygiene report of a store: ``{"findings": [...], "counts": {...}}``.

    Read-only: neither the store nor the project changes (git runs with no optional locks).
    """
    active = handle.index.list_docs(statuses=("active",))
    findings = _pairs(handle, active)
    moves: dict[str, str | None] | None = None
    for doc in active:
        age = age_days(doc.get("updated_at"))
        importance = int(doc.get("importance", 5))
        if importance <= 3 and age >= handle.manifest.stale_days:
            findings.append(
                _finding(
                    "stale",
                    f"{doc['id']} (importance {importance}) untouched for {age:.0f} days",
                    [doc["id"]],
                    f"`memdir forget {doc['id']} --reason stale`",
                )
            )
        weight = 0.5 ** (age / half_life_days(importance))
        if weight < SUNK_WEIGHT:
            findings.append(
                _finding(
                    "sunk",
                    f"{doc['id']} has decayed to weight {weight:.3f}",
                    [doc["id"]],
                    f"`memdir get {doc['id']}`; confirm it with `memdir remember` or forget it",
                )
            )
        changed = _changed_files(project, doc)
        if changed:
            findings.append(
                _finding(
                    "cites_changed_file",
                    f"{doc['id']} cites {', '.join(changed)}, changed since it was written",
                    [doc["id"]],
                    f"check it, then `memdir correct {doc['id']} --text …` if needed",
                )
            )
        if any(not (project / rel).exists() for rel in _cited(doc)):
            if moves is None:
                moves = project_moves(project)
            for gone in _gone_files(project, doc, moves):
                findings.append(_gone_finding(doc["id"], gone))
    for doc in handle.index.list_docs(statuses=("candidate",)):
        waited = age_days(doc.get("created_at"))
        if waited > CANDIDATE_WAIT_DAYS:
            findings.append(
                _finding(
                    "waiting_candidate",
                    f"{doc['id']} has waited {waited:.0f} days for review",
                    [doc["id"]],
                    "`memdir review`",
                )
            )
    findings += _usage_findings(handle, active)
    for found in manifest.budget_warnings(
        handle.manifest,
        handle.index.count_by("kind", status="active"),
        handle.index.count_by("status").get("candidate", 0),
        manifest.map_files(handle.store),
    ):
        findings.append(_finding(found["code"], found["message"], [], found["fix"]))
    counts: dict[str, int] = {}
    for finding in findings:
        counts[finding["code"]] = counts.get(finding["code"], 0) + 1
    return {"findings": findings, "counts": counts, "active": len(active)}


__all__ = ["report", "similarity"]
