"""Who is acting, and through which channel: built once at each edge, passed to every write.

A :class:`Caller` is what DESIGN §1 calls the caller: the origin (``owner``, ``agent``,
``observer``, ``import``), the channel it came through (``cli``, ``mcp``, ``hook``,
``observer``, ``import``, later ``ui``), and when known the host (``claude-code``, ``codex``…)
and the host's session. Each edge builds one: the CLI from the environment (an agent's shell
is ``agent``, a plain terminal ``owner``; :mod:`memdir.service.channel`), the MCP server always
``agent``, the prompt hook ``owner`` for what the person typed, the observer ``observer``,
importers ``import``. The lifecycle decides authority from it (DESIGN §4: the agent may change
its own records; on the owner's it can only propose; purge and rollback are the owner's), and
every commit carries it as git trailers, so ``memdir log`` shows who changed what::

    reject f-01m8njn1qx1zh6: not true

    Memdir-Origin: owner
    Memdir-Channel: cli

Origin is evidence, not authentication: an agent that deletes its environment markers before
running ``memdir`` is taken for the owner (see :func:`memdir.service.channel.detect_agent`).

Imports: standard library only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

TRAILER_KEYS: dict[str, str] = {
    "origin": "Memdir-Origin",
    "channel": "Memdir-Channel",
    "host": "Memdir-Host",
    "session": "Memdir-Session",
}
"""Caller field → git trailer key, in the order they are written."""

PROPOSAL_TRAILER = "Memdir-Proposal"
"""Trailer naming the proposal a commit made, accepted or declined."""

_UNSAFE = re.compile(r"[^\x21-\x7e]+")  # trailer values: printable ASCII, no spaces or breaks
MAX_VALUE_CHARS = 80


def trailer_value(value: str) -> str:
    """Return ``value`` fit for a one-line git trailer: printable ASCII, at most 80 characters.

    Anything else (spaces, line breaks, non-ASCII) becomes ``_`` so a value can never forge
    another trailer or a second paragraph.
    """
    return _UNSAFE.sub("_", value.strip())[:MAX_VALUE_CHARS]


@dataclass(frozen=True, slots=True)
class Caller:
    """Who is acting (origin), through which channel, and the host and session when known."""

    origin: str
    channel: str
    host: str | None = None
    session: str | None = None

    @property
    def is_owner(self) -> bool:
        """Whether this caller speaks with the owner's authority (DESIGN §4)."""
        return self.origin == "owner"

    def trailers(self) -> tuple[tuple[str, str], ...]:
        """Return the git trailers naming this caller (``Memdir-Origin``, …), known fields only."""
        pairs = []
        for field_name, key in TRAILER_KEYS.items():
            value = getattr(self, field_name)
            if value:
                pairs.append((key, trailer_value(str(value))))
        return tuple(pairs)

    def to_json(self) -> dict[str, str | None]:
        """Return ``{"origin", "channel", "host", "session"}``."""
        return {
            "origin": self.origin,
            "channel": self.channel,
            "host": self.host,
            "session": self.session,
        }

    def describe(self) -> str:
        """Return a short phrase for messages: ``agent via cli (claude-code)``."""
        host = f" ({self.host})" if self.host else ""
        return f"{self.origin} via {self.channel}{host}"


OBSERVER = Caller("observer", "observer")
"""The observer distilling the journal."""


def from_trailers(message: str) -> dict[str, Any]:
    """Return the caller recorded in a commit message's trailers (``{}`` when none).

    Returns:
        ``{"origin", "channel", "host", "session", "proposal"}``, only the keys present.
    """
    wanted = {key.lower(): name for name, key in TRAILER_KEYS.items()}
    wanted[PROPOSAL_TRAILER.lower()] = "proposal"
    found: dict[str, Any] = {}
    for line in message.strip().split("\n\n")[-1].splitlines():
        key, sep, value = line.partition(":")
        name = wanted.get(key.strip().lower())
        if sep and name and value.strip():
            found[name] = value.strip()
    return found
