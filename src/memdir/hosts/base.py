"""What a host is to memdir: where its config lives and which hook events it fires."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class HostSpec:
    """One coding agent's integration points.

    ``events`` maps memdir's canonical event to the host's own name (missing: the host has no
    such event, and memdir loses only that feature there). ``settings`` is the hooks file
    relative to the project, ``mcp`` the MCP config file, ``instructions`` the instruction file
    that gets memdir's managed block. ``installable`` is False for hosts listed for reference
    whose installer is not written yet.
    """

    name: str
    title: str
    events: dict[str, str]
    settings: str = ""
    mcp: str = ""
    instructions: str = ""
    timeout_unit: str = "s"  # "s" or "ms": the unit of the host's hook timeout field
    matchers: dict[str, str] = field(default_factory=dict)  # canonical event -> matcher
    installable: bool = False
    notes: str = ""
