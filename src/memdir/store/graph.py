"""The link graph: front matter ``links`` and ``[[id]]`` references in bodies, both directions.

Only active and candidate records of the store's own scope and project, holding no tombstoned
value, show their text (the store's read filter, :class:`memdir.kernel.base.validity.Served`).
A link to a record that was forgotten, rejected, superseded or purged is shown by id and
status alone (``dangling`` when the record is gone or forgotten), so retired text is never
reachable through the records that link to it.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from memdir.kernel.base.errors import NotFoundError
from memdir.kernel.base.ids import check_id

if TYPE_CHECKING:
    from memdir.kernel.base.validity import Served
    from memdir.kernel.index.interface import IndexBackend


VISIBLE = ("active", "candidate")
DANGLING = ("forgotten",)


def node(index: IndexBackend, record_id: str, served: Served | None = None) -> dict[str, Any]:
    """Return a graph node: id, status, and kind/text only when the record may be shown.

    ``served``: the store's read filter; a record it does not admit (another store's, a
    tombstoned value) shows no text. Its statuses and valid time are not applied: a graph
    shows :data:`VISIBLE` records of any time.
    """
    doc = index.get_doc(record_id)
    if doc is None:
        return {"id": record_id, "status": "missing", "dangling": True}
    out: dict[str, Any] = {"id": record_id, "status": doc["status"], "kind": doc["kind"]}
    shown = served is None or served.but(statuses=VISIBLE, timed=False).admits(doc)
    if doc["status"] in VISIBLE and shown:
        out["text"] = doc["text"]
    out["dangling"] = doc["status"] in DANGLING
    if doc.get("superseded_by"):
        out["superseded_by"] = doc["superseded_by"]
    return out


@dataclass(frozen=True, slots=True)
class Graph:
    """Nodes and edges around one record."""

    root: str
    nodes: list[dict[str, Any]]
    edges: list[dict[str, str]]  # {"src", "dst", "via"}

    def to_json(self) -> dict[str, Any]:
        """Return the graph as a JSON object."""
        return {"root": self.root, "nodes": self.nodes, "edges": self.edges}


def graph(
    index: IndexBackend, record_id: str, depth: int = 1, served: Served | None = None
) -> Graph:
    """Return the records within ``depth`` links of ``record_id``, following both directions.

    Links are only followed through records that may be shown, so a forgotten record's own
    links do not lead on. ``served`` is the store's read filter (:func:`node`).

    Raises:
        NotFoundError: ``record_id`` names no record.
    """
    root = check_id(record_id)
    if index.get_doc(root) is None:
        raise NotFoundError(f"no record {record_id!r}", record_id=root)
    seen = {root: node(index, root, served)}
    edges: set[tuple[str, str, str]] = set()
    queue = deque([(root, 0)])
    while queue:
        current, level = queue.popleft()
        if level >= depth or (current != root and seen[current].get("text") is None):
            continue
        for src, dst, via in index.links_of(current):
            edges.add((src, dst, via))
            other = dst if src == current else src
            if other not in seen:
                seen[other] = node(index, other, served)
                queue.append((other, level + 1))
    return Graph(
        root,
        list(seen.values()),
        [{"src": s, "dst": d, "via": v} for s, d, v in sorted(edges)],
    )
