"""``memdir dream``: a read-only hygiene report. It never writes; each finding names a command.

Findings:

- **near_duplicate**: two active records whose texts are similar (shingle similarity at or above
  0.5, below the 0.7 that would have merged them on remember).
- **conflict**: two active records of the same kind about the same subject (most of their words
  shared) that say different things (word order or a negation differs): one is probably wrong.
- **stale**: importance 3 or less and untouched for ``[policy] stale_days``.
- **sunk**: the forgetting curve has brought its weight below 0.1 (shown whether or not decay
  is on for recall).
- **cites_changed_file**: the record names a project file that changed after the record was last
  updated, so it may no longer be true.
- **waiting_candidate**: a candidate awaiting review for more than 14 days.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from memdir.kernel.clock import age_days
from memdir.kernel.lifecycle import Handle, find_similar
from memdir.kernel.recall import half_life_days
from memdir.kernel.text import similarity, words

NEAR_DUPLICATE = 0.5
SUBJECT_OVERLAP = 0.6
SUNK_WEIGHT = 0.1
CANDIDATE_WAIT_DAYS = 14
_PATHLIKE = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)*[\w-]+\.[A-Za-z0-9]{1,8})(?![\w/])")


def _finding(code: str, message: str, ids: list[str], fix: str) -> dict[str, Any]:
    return {"code": code, "message": message, "ids": ids, "fix": fix}


def _pairs(handle: Handle, docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    seen: set[tuple[str, str]] = set()
    for doc in docs:
        for score, other in find_similar(handle.index, doc["text"], 0.0, ("active",)):
            pair = tuple(sorted((doc["id"], other["id"])))
            if other["id"] == doc["id"] or pair in seen:
                continue
            seen.add((pair[0], pair[1]))

            mine, theirs = set(words(doc["text"])), set(words(other["text"]))
            overlap = len(mine & theirs) / max(len(mine | theirs), 1)
            if score >= NEAR_DUPLICATE:
                found.append(
                    _finding(
                        "near_duplicate",
                        f"{doc['id']} and {other['id']} say nearly the same ({score:.2f})",
                        list(pair),
                        f"`memdir forget {pair[1]} --reason duplicate`",
                    )
                )
            elif doc["kind"] == other["kind"] and overlap >= SUBJECT_OVERLAP:
                found.append(
                    _finding(
                        "conflict",
                        f"{doc['id']} and {other['id']} are about the same thing but differ: "
                        f'"{doc["text"]}" / "{other["text"]}"',
                        list(pair),
                        f"`memdir reject {pair[0]} --reason …` or `memdir reject {pair[1]} …`",
                    )
                )
    return found


def _changed_files(project: Path, doc: dict[str, Any]) -> list[str]:
    cited = {m.group(1) for m in _PATHLIKE.finditer(f"{doc['text']}\n{doc.get('body', '')}")}
    changed = []
    for rel in sorted(cited):
        path = project / rel
        try:
            modified_days = age_days_of_mtime(path)
        except OSError:
            continue
        if modified_days < age_days(doc.get("updated_at")):
            changed.append(rel)
    return changed


def age_days_of_mtime(path: Path) -> float:
    """Return how many days ago ``path`` was modified."""
    import time

    return max(time.time() - path.stat().st_mtime, 0.0) / 86400.0


def report(handle: Handle, project: Path) -> dict[str, Any]:
    """Return the hygiene report of a store: ``{"findings": [...], "counts": {...}}``."""
    active = handle.index.list_docs(statuses=("active",))
    findings = _pairs(handle, active)
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
    counts: dict[str, int] = {}
    for finding in findings:
        counts[finding["code"]] = counts.get(finding["code"], 0) + 1
    return {"findings": findings, "counts": counts, "active": len(active)}


__all__ = ["report", "similarity"]
