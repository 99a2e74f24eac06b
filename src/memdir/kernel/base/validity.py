"""Valid time: when a belief is true in the world, apart from when memdir recorded it (DESIGN §1).

A record's ``valid_from`` and ``valid_until`` (DESIGN §3) bound the time it is true in the
world; ``valid_until`` is exclusive ("true until March" is ``valid_until: "2026-03-01"``). A
record without ``valid_from`` (every record written before valid time existed) became true when
it was observed (``observed_at``); one without ``valid_until`` is still true. Record time is
separate: ``created_at``/``updated_at`` and the supersession chain say when memdir learned,
changed or retired a belief, and ``recall --believed-at`` reads that from the store's git.

A stored value is a date (``2026-03-01``, read as UTC midnight, as :func:`memdir.kernel.base.clock.
age_days` does) or an instant (``2026-03-01T09:00:00Z``). An instant asked about as a date
(``--as-of 2026-03-01``) is the end of that UTC day, so "what was true on March 1st" includes
a belief that became true that morning.

Imports: standard library only.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, time, timedelta

from memdir.kernel.base.clock import format_instant, parse_instant, utc_now
from memdir.kernel.base.errors import UsageError

TYPE_CHECKING = False  # the hook path never imports typing (start-up cost)
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

_DATE_ONLY = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def clean_when(value: str | None, what: str) -> str | None:
    """Return a person's date or time in the form records keep, or ``None`` for none.

    A date stays a date (``2026-03-01``); a time becomes UTC ISO-8601 with ``Z``. Future values
    are allowed (a rule may start next month).

    Args:
        value: ``YYYY-MM-DD`` or an ISO-8601 time; empty or ``None`` means none.
        what: The option's name, for the error (``--valid-until``).

    Raises:
        UsageError: the value is not a date or an ISO-8601 time.
    """
    if value is None or not value.strip():
        return None
    raw = value.strip()
    if _DATE_ONLY.match(raw):
        try:
            date.fromisoformat(raw)
        except ValueError as exc:
            raise UsageError(f"{what}: {value!r} is not a date (expected YYYY-MM-DD)") from exc
        return raw
    try:
        return format_instant(parse_instant(raw, allow_future=True))
    except UsageError as exc:
        raise UsageError(f"{what}: {exc}") from exc


def stored_instant(value: str | None) -> datetime | None:
    """Return a stored date or instant as an aware UTC datetime (``None`` if absent or bad)."""
    if not value:
        return None
    try:
        if _DATE_ONLY.match(value):
            return datetime.combine(date.fromisoformat(value), time.min, UTC)
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def asked_instant(value: str | None) -> datetime:
    """Return the instant a question is about: now for ``None``; a date means its end (UTC).

    Raises:
        UsageError: the value is not a date or an ISO-8601 time.
    """
    if value is None:
        return utc_now()
    raw = value.strip()
    if _DATE_ONLY.match(raw):
        try:
            day = date.fromisoformat(raw)
        except ValueError as exc:
            raise UsageError(f"{value!r} is not a date (expected YYYY-MM-DD)") from exc
        return datetime.combine(day, time.min, UTC) + timedelta(days=1, microseconds=-1)
    return parse_instant(raw, allow_future=True)


def holds(doc: Mapping[str, Any], at: datetime | None = None) -> bool:
    """Whether the record ``doc`` (its ``--json`` form) is true in the world at ``at``.

    Args:
        doc: A record document: ``valid_from``, ``valid_until``, ``observed_at`` are read.
        at: The instant asked about; now when ``None``.

    Returns:
        True when ``valid_from`` is at or before ``at`` and ``valid_until`` is after it or
        absent. Without ``valid_from`` the start is ``observed_at``, unless that is not before
        ``valid_until`` (a belief recorded after it ended: "it was true until January"), when
        the start is open; an unreadable value counts as open.
    """
    when = at or utc_now()
    end = stored_instant(doc.get("valid_until"))
    start = stored_instant(doc.get("valid_from"))
    if start is None and not doc.get("valid_from"):
        observed = stored_instant(doc.get("observed_at"))
        start = observed if end is None or observed is None or observed < end else None
    if start is not None and start > when:
        return False
    return end is None or when < end


def check_order(valid_from: str | None, valid_until: str | None) -> None:
    """Refuse a ``valid_until`` that is not after ``valid_from``.

    Raises:
        UsageError: both are set and the end is not after the start.
    """
    start, end = stored_instant(valid_from), stored_instant(valid_until)
    if start is not None and end is not None and end <= start:
        raise UsageError(f"valid_until {valid_until} is not after valid_from {valid_from}")


def served(
    doc: Mapping[str, Any],
    *,
    scope: str | None = None,
    at: datetime | None = None,
    past: bool = False,
    statuses: tuple[str, ...] = ("active",),
) -> bool:
    """The one read filter: whether a record document may be served for the instant ``at``.

    Every serving surface (recall, the index, the digest, per-prompt injection, MCP, export)
    applies it on top of its status filter, so a record that slipped past a query (an index
    built before valid time existed, a file of another scope copied in) is still held back.

    Args:
        doc: A record document (``status``, ``scope``, valid time).
        scope: The scope key of the store being read (``project`` or ``user``); a record of
            another scope is not served (``None``: any).
        at: The instant asked about; now when ``None``.
        past: Asking about a past instant (``--as-of``): a record superseded *by time* (a
            correction that gave ``valid_until``) is served when its valid time held then; a
            record superseded because it was wrong never is.
        statuses: The statuses asked for (``active``; with ``candidate`` when asked).

    Returns:
        True when its status, scope and valid time all allow it.
    """
    if scope is not None and doc.get("scope", "project") != scope:
        return False
    status = doc.get("status")
    by_time = past and status == "superseded" and bool(doc.get("valid_until"))
    if status not in statuses and not by_time:
        return False
    return holds(doc, at)
