"""Time: the one place memdir reads the clock, and its one timestamp format.

Every instant memdir stores is UTC, written ``YYYY-MM-DDTHH:MM:SSZ`` (seconds precision) or,
for journal turns, with milliseconds (``…SS.mmmZ``). Day buckets (journal and action file
names) are the UTC day of the instant (DESIGN §2). Input with an explicit offset is converted
to UTC; input without one ("naive") is read as the machine's local time, which is the documented
rule for ``--at`` (case B39). Comparisons are always between aware datetimes, so they never raise.

Tests freeze time with :func:`freeze`. Imports: standard library only.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta

from memdir.kernel.base.errors import UsageError

_frozen: datetime | None = None

FUTURE_TOLERANCE = timedelta(days=1)
"""How far past the clock an explicit time may lie before it is refused as skew (case B38)."""


def freeze(at: datetime | None) -> None:
    """Make :func:`utc_now` return ``at`` (aware) until called again with ``None``."""
    global _frozen
    _frozen = at.astimezone(UTC) if at is not None else None


def utc_now() -> datetime:
    """Return the current instant as an aware UTC datetime."""
    return _frozen if _frozen is not None else datetime.now(UTC)


def format_instant(at: datetime, *, millis: bool = False) -> str:
    """Format an aware datetime as UTC ISO-8601 with a ``Z`` suffix.

    Args:
        at: An aware datetime; naive values are rejected by :func:`parse_instant` before here.
        millis: Keep milliseconds (journal turns) instead of whole seconds (records).
    """
    utc = at.astimezone(UTC)
    if millis:
        return utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z"
    return utc.strftime("%Y-%m-%dT%H:%M:%SZ")


def now_iso(*, millis: bool = False) -> str:
    """Return :func:`utc_now` formatted by :func:`format_instant`."""
    return format_instant(utc_now(), millis=millis)


def today_iso() -> str:
    """Return the current UTC date as ``YYYY-MM-DD``."""
    return utc_now().date().isoformat()


_DATE_ONLY = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def parse_instant(text: str, *, allow_future: bool = False) -> datetime:
    """Parse an ISO-8601 time into an aware UTC datetime.

    Accepts ``2026-04-16``, ``2026-04-16T06:00``, ``…:00Z`` and ``…+08:00``. A value without an
    offset is local time (B39). A date alone is local midnight.

    Raises:
        UsageError: the text is not ISO-8601, or (unless ``allow_future``) it lies more than
            :data:`FUTURE_TOLERANCE` after the clock, which means clock skew (B38).
    """
    raw = text.strip()
    try:
        if _DATE_ONLY.match(raw):
            parsed = datetime.combine(date.fromisoformat(raw), datetime.min.time())
        else:
            parsed = datetime.fromisoformat(raw.replace("z", "Z"))
    except ValueError as exc:
        raise UsageError(
            f"not an ISO-8601 time: {text!r} (expected e.g. 2026-04-16T06:00:00Z)"
        ) from exc
    parsed = parsed.astimezone(UTC) if parsed.tzinfo else local_to_utc(parsed)
    if not allow_future and parsed > utc_now() + FUTURE_TOLERANCE:
        raise UsageError(
            f"time {format_instant(parsed)} is in the future; check the clock or the value"
        )
    return parsed


def local_to_utc(naive: datetime) -> datetime:
    """Read a naive datetime as the machine's local time and return it as aware UTC.

    Any legal ``TZ`` works, including POSIX offsets of a whole day or more (``TZ=UTC+24``),
    which :meth:`datetime.astimezone` refuses because a ``timezone`` offset must lie strictly
    within 24 hours (case B57): those fall back to the C library's ``mktime``.

    Args:
        naive: A datetime without ``tzinfo``, in local wall-clock time.

    Returns:
        The same instant as an aware UTC datetime.
    """
    try:
        return naive.astimezone(UTC)
    except (ValueError, OverflowError):
        import time

        seconds = time.mktime(naive.timetuple())  # honours any TZ the C library accepts
        return datetime.fromtimestamp(seconds, UTC).replace(microsecond=naive.microsecond)


def day_of(instant_iso: str) -> str:
    """Return the UTC day (``YYYY-MM-DD``) of a stored instant string."""
    return instant_iso[:10]


def age_days(instant_iso: str | None, now: datetime | None = None) -> float:
    """Return days between a stored instant (or date) and now; 0 for missing or future values."""
    if not instant_iso:
        return 0.0
    try:
        if _DATE_ONLY.match(instant_iso):
            then = datetime.combine(date.fromisoformat(instant_iso), datetime.min.time(), UTC)
        else:
            then = datetime.fromisoformat(instant_iso.replace("Z", "+00:00"))
            if then.tzinfo is None:
                then = then.replace(tzinfo=UTC)
    except ValueError:
        return 0.0
    delta = (now or utc_now()) - then
    return max(delta.total_seconds() / 86400.0, 0.0)
