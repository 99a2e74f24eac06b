"""What a host is to the installer: a typed view of one entry of the host table."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class HostSpec:
    """One coding agent's integration points (each key: :mod:`memdir.kernel.hostio.hosttable`).

    ``events`` maps memdir's canonical event to the host's own name (missing: the host has no
    such event, and memdir loses only that feature there). ``personal`` and ``shared`` say
    where each kind of install writes (``hooks``, ``mcp``, ``mcp_format``, ``instructions``,
    ``command``, ``exclude``). ``installable`` is False for hosts listed for reference whose
    installer is not written yet.
    """

    name: str
    title: str
    events: dict[str, str]
    personal: dict[str, object] = field(default_factory=dict)
    shared: dict[str, object] = field(default_factory=dict)
    timeout_unit: str = "s"  # "s" or "ms": the unit of the host's hook timeout field
    matchers: dict[str, str] = field(default_factory=dict)  # canonical event -> matcher
    installable: bool = False
    gates: dict[str, tuple[str, ...]] = field(default_factory=dict)  # "any"/"shared" -> steps
    binary: str = ""
    mcp_timeout_ms: int = 0
    notes: str = ""
    loses: str = ""  # what memdir cannot do in this host, in words
    hooks_format: str = "groups"  # "groups", "copilot", "cursor", "windsurf", "cline-scripts"
    also: dict[str, str] = field(default_factory=dict)  # more host events -> canonical
    instructions_header: str = ""  # front matter a created rules file starts with

    def hook_events(self) -> dict[str, str]:
        """Return every host event memdir installs a hook for → its canonical event."""
        events = {own: canonical for canonical, own in self.events.items()}
        events.update(self.also)
        return events

    def scope(self, shared: bool) -> dict[str, object]:
        """Return where an install of this kind writes (``hooks``, ``mcp``, ``instructions``…)."""
        return self.shared if shared else self.personal

    def gate_steps(self, shared: bool) -> tuple[str, ...]:
        """Return what the user must do before the host runs memdir (trust, approval)."""
        steps = tuple(self.gates.get("any", ()))
        if shared:
            steps += tuple(self.gates.get("shared", ()))
        return steps

    @property
    def has_personal_scope(self) -> bool:
        """Whether a default install writes personal files kept out of git.

        False: it writes the project's own files (the host has no personal project scope, e.g.
        Codex, Gemini CLI, OpenCode).
        """
        return bool(self.personal.get("exclude"))

    def scope_name(self, shared: bool) -> str:
        """Name an install's scope for people: ``shared``, ``personal`` or ``project``.

        ``project``: a default install into a host with no personal project scope.
        """
        if shared:
            return "shared"
        return "personal" if self.has_personal_scope else "project"

    @property
    def settings(self) -> str:
        """The shared hooks file (relative to the project)."""
        return str(self.shared.get("hooks", ""))

    @property
    def mcp(self) -> str:
        """The shared MCP config file."""
        return str(self.shared.get("mcp", ""))

    @property
    def instructions(self) -> str:
        """The shared instruction file."""
        return str(self.shared.get("instructions", ""))
