"""Pending threads: per session, the newest user turn that no agent turn answered."""

from __future__ import annotations

from typing import Any

from memdir.kernel.base.clock import age_days
from memdir.kernel.index import Index

AGENT_SPEAKERS = ("assistant", "agent", "model", "codex", "claude", "gemini")


def pending(index: Index, within_minutes: float | None = None) -> list[dict[str, Any]]:
    """Return, newest first, each session whose last user turn has no later agent turn.

    Args:
        index: An index whose journal is up to date.
        within_minutes: Only threads whose user turn is at most this old.
    """
    marks = ",".join("?" * len(AGENT_SPEAKERS))
    rows = index.conn.execute(
        f"""
        SELECT t.session, t.at, t.who, t.text, t.file, t.line
        FROM turns t
        JOIN (SELECT session, max(rowid) AS last_user FROM turns
              WHERE who NOT IN ({marks}) GROUP BY session) u ON u.last_user = t.rowid
        WHERE NOT EXISTS (
            SELECT 1 FROM turns a
            WHERE a.session = t.session AND a.rowid > t.rowid AND a.who IN ({marks})
        )
        ORDER BY t.at DESC
        """,  # noqa: S608 - only placeholders are interpolated
        (*AGENT_SPEAKERS, *AGENT_SPEAKERS),
    ).fetchall()
    found = []
    for session, at, who, text, file, line in rows:
        minutes = age_days(at) * 24 * 60
        if within_minutes is not None and minutes > within_minutes:
            continue
        found.append(
            {
                "session": session,
                "at": at,
                "who": who,
                "text": text,
                "file": f"journal/{file}",
                "line": line,
                "age_minutes": round(minutes, 1),
            }
        )
    return found
