"""Pending threads: per session, the newest user turn that no agent turn answered."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memdir.kernel.base.clock import age_days

if TYPE_CHECKING:
    from memdir.kernel.index.interface import IndexBackend


AGENT_SPEAKERS = ("assistant", "agent", "model", "codex", "claude", "gemini")


def pending(index: IndexBackend, within_minutes: float | None = None) -> list[dict[str, Any]]:
    """Return, newest first, each session whose last user turn has no later agent turn.

    Args:
        index: An index whose journal is up to date.
        within_minutes: Only threads whose user turn is at most this old.
    """
    found = []
    for session, at, who, text, file, line in index.unanswered_turns(AGENT_SPEAKERS):
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
