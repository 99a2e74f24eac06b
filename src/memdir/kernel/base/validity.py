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


def bounds(doc: Mapping[str, Any]) -> tuple[datetime | None, datetime | None]:
    """Return when the record ``doc`` starts and stops being true: ``(start, end)``, UTC.

    ``None`` is open (since always; still true). Without ``valid_from`` the start is
    ``observed_at``, unless that is not before ``valid_until`` (a belief recorded after it
    ended: "it was true until January"), when the start is open; an unreadable value counts as
    open. :func:`holds` compares these with an instant, and the index stores them
    (:func:`bound_text`) so its query makes the same comparison.
    """
    end = stored_instant(doc.get("valid_until"))
    start = stored_instant(doc.get("valid_from"))
    if start is None and not doc.get("valid_from"):
        observed = stored_instant(doc.get("observed_at"))
        start = observed if end is None or observed is None or observed < end else None
    return start, end


def bound_text(value: datetime | None) -> str | None:
    """Return an instant as text that sorts as the instant does (UTC, microseconds), or ``None``.

    ``2026-03-01T00:00:00.000000``: fixed width for years 1..9999, so comparing two such texts
    (SQL ``<=`` on the index's ``valid_start``/``valid_end`` columns) is comparing the instants.
    """
    if value is None:
        return None
    return value.astimezone(UTC).replace(tzinfo=None).isoformat(timespec="microseconds")


def holds(doc: Mapping[str, Any], at: datetime | None = None) -> bool:
    """Whether the record ``doc`` (its ``--json`` form) is true in the world at ``at``.

    Args:
        doc: A record document: ``valid_from``, ``valid_until``, ``observed_at`` are read.
        at: The instant asked about; now when ``None``.

    Returns:
        True when the start (:func:`bounds`) is at or before ``at`` and the end is after it or
        absent.
    """
    when = at or utc_now()
    start, end = bounds(doc)
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


class Served:
    """What a reader may be served: the one read filter, as a value (issue 10, marks 3 and 4).

    :func:`served` applies it to a record document in Python; the index backends turn the same
    fields into their query's ``WHERE`` (:meth:`memdir.kernel.index.sqlite.Index.list_docs`,
    ``record_pool``), from the columns :func:`bounds` and :func:`scope_columns` fill, so a pool
    is never thinned by what the filter leaves out. ``tests/index/test_served_filter.py`` proves
    the two agree on every case. A plain class: the hook path is light.

    Attributes:
        scope: The scope of the store being read (``project`` or ``user``); ``None``: any.
        project: The project identity of the store being read (its manifest's ``project``;
            ``""`` for a store that has none yet). A record that names another project is not
            served; a record that names none (written before identities existed, or by hand)
            belongs to the store it sits in. ``None``: any.
        at: The instant asked about; ``None`` is now (read when the filter is applied).
        past: Asking about a past instant (``--as-of``): a record superseded *by time* (a
            correction that gave ``valid_until``) is served when its valid time held then.
        statuses: The statuses asked for (``active``; with ``candidate`` when asked).
        withheld: Tombstoned value keys (:func:`memdir.kernel.base.valuekey.value_key`): a
            record holding one of these values (arrived by a hand edit, or a merge memdir did
            not check) is not served until the owner lifts the tombstone.
        timed: Whether valid time applies (``at``, ``past``); ``False`` for an export, which
            holds a store's records of every time (it still keeps to scope and project).
    """

    __slots__ = ("at", "past", "project", "scope", "statuses", "timed", "withheld")

    def __init__(
        self,
        *,
        scope: str | None = None,
        project: str | None = None,
        at: datetime | None = None,
        past: bool = False,
        statuses: tuple[str, ...] = ("active",),
        withheld: frozenset[str] = frozenset(),
        timed: bool = True,
    ) -> None:
        self.scope = scope
        self.project = project
        self.at = at
        self.past = past
        self.statuses = tuple(statuses)
        self.withheld = frozenset(withheld)
        self.timed = timed

    def but(self, **changes: Any) -> Served:
        """Return a copy with some fields changed (``at=``, ``past=``, ``statuses=``…)."""
        values = {name: getattr(self, name) for name in self.__slots__}
        values.update(changes)
        return Served(**values)

    def admits(self, doc: Mapping[str, Any]) -> bool:
        """Whether the record document ``doc`` passes this filter (:func:`served`)."""
        return served(
            doc,
            scope=self.scope,
            project=self.project,
            at=self.at,
            past=self.past,
            statuses=self.statuses,
            withheld=self.withheld,
            timed=self.timed,
        )

    def __repr__(self) -> str:
        return (
            f"Served(scope={self.scope!r}, project={self.project!r}, at={self.at!r}, "
            f"past={self.past!r}, statuses={self.statuses!r}, withheld={len(self.withheld)} keys, "
            f"timed={self.timed!r})"
        )


def scope_columns(doc: Mapping[str, Any]) -> tuple[str, str | None]:
    """Return the record's stored scope key: ``(scope, project)`` (``project`` may be ``None``)."""
    project = doc.get("project")
    return str(doc.get("scope") or "project"), (str(project) if project else None)


def in_scope(doc: Mapping[str, Any], scope: str | None, project: str | None) -> bool:
    """Whether the record ``doc`` belongs to a store of ``scope`` and ``project``.

    Its scope must be the store's; a record naming a project must name the store's (one naming
    none belongs to the store it sits in). ``None`` for either: any. The scope half of
    :func:`served`, and all an export keeps to (an export holds every status and time).
    """
    kept, owner = scope_columns(doc)
    if scope is not None and kept != scope:
        return False
    return project is None or owner is None or owner == project


def by_time(doc: Mapping[str, Any]) -> bool:
    """Whether the record was retired *by time*: superseded, with a ``valid_until``."""
    return doc.get("status") == "superseded" and bool(doc.get("valid_until"))


def served(
    doc: Mapping[str, Any],
    *,
    scope: str | None = None,
    project: str | None = None,
    at: datetime | None = None,
    past: bool = False,
    statuses: tuple[str, ...] = ("active",),
    withheld: frozenset[str] | set[str] = frozenset(),
    timed: bool = True,
) -> bool:
    """The one read filter: whether a record document may be served for the instant ``at``.

    Every serving surface (recall, the index, the digest, per-prompt injection, MCP, export)
    applies it, in the index query (:class:`Served`) or above it, so a record that slipped
    past a query (an index built before valid time existed, a file of another scope or
    project copied in, a tombstoned value restored by hand) is still held back.

    Args:
        doc: A record document (``status``, ``scope``, ``project``, ``text``, valid time).
        scope: The scope of the store being read (``project`` or ``user``); a record of
            another scope is not served (``None``: any).
        project: The store's project identity; a record naming another project is not served
            (one naming none belongs to the store it sits in). ``None``: any.
        at: The instant asked about; now when ``None``.
        past: Asking about a past instant (``--as-of``): a record superseded *by time* (a
            correction that gave ``valid_until``) is served when its valid time held then; a
            record superseded because it was wrong never is.
        statuses: The statuses asked for (``active``; with ``candidate`` when asked).
        withheld: Tombstoned value keys; a record whose text has one of them is not served.
        timed: Whether valid time applies; ``False`` (an export): any time.

    Returns:
        True when its status, scope, project, value and valid time all allow it.
    """
    if not in_scope(doc, scope, project):
        return False
    if doc.get("status") not in statuses and not (past and by_time(doc)):
        return False
    if withheld:
        from memdir.kernel.base.valuekey import value_key  # only when a tombstone exists

        if value_key(str(doc.get("text") or "")) in withheld:
            return False
    return not timed or holds(doc, at)
