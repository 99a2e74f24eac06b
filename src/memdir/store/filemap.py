"""Ranking the file map for people: search by name and the central-files map.

Only the CLI and the MCP server ask for these (``memdir anatomy find``, ``memdir map``); the hook
path never does, so they live above the kernel's :mod:`memdir.kernel.filemap.anatomy`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from memdir.kernel.lang.text import estimate_tokens, terms


def find(
    data: dict[str, Any], query: str, limit: int = 20
) -> list[tuple[str, dict[str, Any], float]]:
    """Return files whose path, description or symbols match ``query``, best first."""
    wanted = set(terms(query))
    if not wanted:
        return []
    scored = []
    for rel, entry in data["files"].items():
        path_terms = set(terms(rel.replace("/", " ").replace("_", " ").replace(".", " ")))
        symbol_terms = set(terms(" ".join(entry.get("symbols", []))))
        desc_terms = set(terms(entry.get("description", "")))
        score = 3.0 * len(wanted & path_terms) + 2.0 * len(wanted & symbol_terms)
        score += 1.0 * len(wanted & desc_terms)
        if score:
            scored.append((rel, entry, score))
    scored.sort(key=lambda item: (-item[2], item[0]))
    return scored[:limit]


DAMPING = 0.85
"""PageRank's damping factor (Brin & Page 1998): the chance of following an edge vs. restarting."""
ITERATIONS = 40


def rank(data: dict[str, Any], seeds: Iterable[str] = ()) -> dict[str, float]:
    """Return personalised PageRank over import edges (importer → imported), summing to 1.

    Restarts go to ``seeds`` (the files this session touched) when any are in the map, else to
    every file, so a file many seeds depend on ranks high. Dangling files restart too.
    """
    files = data["files"]
    nodes = sorted(files)
    if not nodes:
        return {}
    seeded = [s for s in seeds if s in files]
    restart = dict.fromkeys(nodes, 0.0)
    for node in seeded or nodes:
        restart[node] += 1.0 / len(seeded or nodes)
    scores = dict(restart)
    for _ in range(ITERATIONS):
        following = {n: (1 - DAMPING) * restart[n] for n in nodes}
        lost = 0.0
        for node in nodes:
            targets = [t for t in files[node].get("imports", []) if t in files]
            if targets:
                share = DAMPING * scores[node] / len(targets)
                for target in targets:
                    following[target] += share
            else:
                lost += DAMPING * scores[node]
        for node in nodes:
            following[node] += lost * restart[node]
        scores = following
    return scores


def central_map(
    data: dict[str, Any], seeds: Iterable[str] = (), budget_tokens: int = 1000
) -> list[tuple[str, str, float]]:
    """Return ``(path, line, score)`` for the most central files whose lines fit the budget.

    A line is ``path — description (~N tok)``; the budget counts the lines' own tokens.
    """
    scores = rank(data, seeds)
    chosen = []
    used = 0
    for rel in sorted(scores, key=lambda n: (-scores[n], n)):
        if scores[rel] <= 0:
            break
        entry = data["files"][rel]

        desc = f" — {entry['description']}" if entry.get("description") else ""
        line = f"{rel}{desc} (~{entry.get('tokens', 0)} tok)"
        cost = estimate_tokens(line) + 1
        if used + cost > budget_tokens:
            continue
        chosen.append((rel, line, scores[rel]))
        used += cost
    return chosen
