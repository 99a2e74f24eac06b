"""The record: one belief, the unit of recall, correction and history (DESIGN §1, §3).

:class:`Record` is a frozen value; changes make a new one with :func:`dataclasses.replace`.
Field order is the canonical front matter order. ``extra`` keeps keys memdir does not know,
in file order, with their raw YAML text, so a rewrite never loses what people or other tools
wrote (case B09). Imports: standard library only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, get_args

Kind = Literal["fact", "preference", "rule", "decision", "procedure", "entity", "episode", "bug"]
Status = Literal["candidate", "active", "superseded", "rejected", "forgotten"]
Origin = Literal["owner", "agent", "observer", "import", "untrusted", "system"]
Scope = Literal["project", "user"]
Channel = Literal["cli", "mcp", "hook", "observer", "import"]

KINDS: tuple[str, ...] = get_args(Kind)
STATUSES: tuple[str, ...] = get_args(Status)
ORIGINS: tuple[str, ...] = get_args(Origin)
ACCEPTED_ORIGINS: tuple[str, ...] = ("owner", "agent", "observer", "import")
"""Origins a record may carry; ``untrusted`` and ``system`` are refused (DESIGN §1)."""
SCOPES: tuple[str, ...] = get_args(Scope)

DEFAULT_IMPORTANCE = 5
DEFAULT_CONFIDENCE = 1.0

FIELD_ORDER: tuple[str, ...] = (
    "id",
    "kind",
    "status",
    "text",
    "origin",
    "importance",
    "confidence",
    "aliases",
    "tags",
    "links",
    "supersedes",
    "superseded_by",
    "created_at",
    "updated_at",
    "observed_at",
    "valid_from",
    "valid_until",
    "source",
    "scope",
    "project",
    "reason",
)
"""The keys of DESIGN §3, in the order memdir writes them."""

UNSET_OMITTED: frozenset[str] = frozenset({"valid_from", "valid_until", "project"})
"""Keys written only when set: a record from before valid time existed stays byte-identical
(its ``valid_from`` is read as its ``observed_at``, :attr:`Record.valid_since`), and so does
one from before project identities (it belongs to the store it sits in)."""

TRANSITIONS: dict[str, frozenset[str]] = {
    "candidate": frozenset({"active", "rejected", "forgotten", "superseded"}),
    "active": frozenset({"superseded", "rejected", "forgotten"}),
    "superseded": frozenset(),
    "rejected": frozenset(),
    "forgotten": frozenset(),
}
"""Status changes the lifecycle allows; anything else is undone only by ``rollback``."""


@dataclass(frozen=True, slots=True)
class Record:
    """One belief as stored in ``records/<kind>/<id>.md``."""

    id: str
    kind: str
    text: str
    status: str = "active"
    origin: str = "owner"
    importance: int = DEFAULT_IMPORTANCE  # 1..10
    confidence: float = DEFAULT_CONFIDENCE  # 0..1
    aliases: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    links: tuple[str, ...] = ()
    supersedes: str | None = None
    superseded_by: str | None = None
    created_at: str = ""  # ISO-8601 UTC, "Z"
    updated_at: str = ""
    observed_at: str = ""  # a date or an instant, as written
    valid_from: str | None = None  # true in the world from (date/instant); None: observed_at
    valid_until: str | None = None  # true in the world until (exclusive); None: still true
    source: dict[str, Any] = field(default_factory=dict)
    scope: str = "project"
    project: str | None = None  # the project identity of a project-scoped record (manifest's)
    reason: str | None = None
    body: str = ""
    extra: tuple[tuple[str, str], ...] = ()  # unknown keys: (key, raw YAML text after "key:")

    @property
    def is_active(self) -> bool:
        """Whether recall and injection may return this record by default."""
        return self.status == "active"

    @property
    def valid_since(self) -> str:
        """When the belief became true in the world: ``valid_from``, else ``observed_at``."""
        return self.valid_from or self.observed_at

    def to_json(self) -> dict[str, Any]:
        """Return DESIGN §3's keys plus ``body``: the ``--json`` shape of a record."""
        out: dict[str, Any] = {}
        for key in FIELD_ORDER:
            value = getattr(self, key)
            out[key] = list(value) if isinstance(value, tuple) else value
        out["body"] = self.body
        return out


def relative_path(record: Record) -> str:
    """Return the record's path inside the store: ``records/<kind>/<id>.md``."""
    return f"records/{record.kind}/{record.id}.md"
