"""The hosts memdir knows: a typed view of :data:`memdir.kernel.hostio.hosttable.HOSTS`."""

from __future__ import annotations

from memdir.hosts.base import HostSpec
from memdir.kernel.base.errors import UsageError
from memdir.kernel.hostio.hosttable import HOSTS as TABLE


def _spec(name: str) -> HostSpec:
    entry = TABLE[name]
    return HostSpec(
        name=name,
        title=entry["title"],
        events=dict(entry["events"]),
        personal=dict(entry.get("personal") or entry.get("shared") or {}),
        shared=dict(entry.get("shared") or {}),
        timeout_unit=entry.get("timeout_unit", "s"),
        matchers=dict(entry.get("matchers", {})),
        installable=bool(entry.get("installable")),
        gates=dict(entry.get("gates", {})),
        binary=entry.get("binary", ""),
        mcp_timeout_ms=int(entry.get("mcp_timeout_ms", 0)),
        notes=entry.get("notes", ""),
        loses=entry.get("loses", ""),
        hooks_format=entry.get("hooks_format", "groups"),
        also=dict(entry.get("also", {})),
        instructions_header=entry.get("instructions_header", ""),
    )


HOSTS: dict[str, HostSpec] = {name: _spec(name) for name in TABLE}


def get_host(name: str) -> HostSpec:
    """Return the host called ``name``.

    Raises:
        UsageError: no such host; the message lists the known ones.
    """
    try:
        return HOSTS[name]
    except KeyError:
        raise UsageError(f"unknown host {name!r}; known hosts: {', '.join(HOSTS)}") from None
