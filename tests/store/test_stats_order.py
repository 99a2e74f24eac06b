"""`memdir stats` lists sessions in one order, whatever second their events fell in."""

from __future__ import annotations

from pathlib import Path

from memdir.kernel.storage import session
from memdir.service import project

SAME_SECOND = "2099-01-01T00:00:00Z"


def test_stats_lists_sessions_newest_started_first_then_by_id(store: Path) -> None:
    # demo-1 ends in the second demo-2 starts: updated in the same second, started earlier
    session.record(store, "demo-1", {"e": "start", "source": "startup", "at": SAME_SECOND})
    session.record(store, "demo-2", {"e": "start", "source": "startup", "at": SAME_SECOND})
    session.record(store, "demo-1", {"e": "end", "reason": "exit", "at": "2099-01-01T00:00:01Z"})
    session.record(store, "demo-0", {"e": "start", "at": "2098-12-31T23:59:59Z"})
    listed = [s["session"] for s in project.stats(store)["sessions"]]
    assert listed == ["demo-2", "demo-1", "demo-0"]
