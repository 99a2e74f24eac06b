"""A seeded store for the review page: owner beliefs, observer candidates, an agent proposal."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from memdir import service
from memdir.kernel.base.caller import Caller
from memdir.kernel.storage import session
from memdir.service import memory


@dataclass
class Seeded:
    """The store and the ids the tests act on."""

    store: Path
    decision: str  # an active owner belief
    fact: str  # another active owner belief, linked from the decision
    candidates: list[str]  # observer candidates, oldest first
    proposal: str  # the agent's proposal to correct ``fact``


@pytest.fixture
def seeded(store: Path) -> Seeded:
    """The ``store`` fixture with two beliefs, three candidates, a proposal and a session."""
    fact = service.remember(store, "The staging database is Postgres 15", kind="fact").record.id
    decision = service.remember(
        store, "We use bun, not npm, for every package script", kind="decision", links=[fact]
    ).record.id
    service.journal_append(store, "user", "hello, starting on the API today", session="s-1")
    service.journal_append(store, "user", "remember that the API port is 8080", session="s-1")
    service.journal_append(store, "user", "remember that deploys happen on Fridays", session="s-1")
    service.journal_append(
        store, "user", "remember that the cache TTL is 60 seconds", session="s-1"
    )
    service.journal_append(store, "assistant", "noted, all three", session="s-1")
    memory.observe_once(store, from_start=True, offline=True)
    candidates = [d["id"] for d in memory.review_list(store)]
    agent = Caller("agent", "mcp", host="claude-code")
    proposed = service.correct(store, fact, "The staging database is Postgres 16", caller=agent)
    assert proposed.proposal is not None
    session.record(store, "s-1", {"e": "start", "source": "startup", "at": "2026-12-03T10:00:00Z"})
    session.record(
        store, "s-1", {"e": "inject", "ids": [decision], "tokens": 42, "at": "2026-12-03T10:00:01Z"}
    )
    read = {"rel": "src/app.py", "size": 10, "mtime_ns": 1, "ino": 1, "sha": "ab", "full": True}
    session.record(store, "s-1", {"e": "tool", "read": {**read, "tokens": 300}})
    session.record(store, "s-1", {"e": "deny", **read, "count": True})
    session.record(store, "s-1", {"e": "tool", "wrote": "src/server.py"})
    return Seeded(store, decision, fact, candidates, proposed.proposal.id)
