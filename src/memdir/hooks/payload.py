"""Host payloads in, canonical events out; canonical results in, host answers out.

Every host calls the same entry point, ``memdir hook EVENT --host HOST``. This module maps each
host's event names and payload fields onto Claude Code's canonical ones (DESIGN §7: Codex and
Copilot CLI share Claude Code's shape; Gemini CLI and Cursor rename events), and renders a
handler's result in the shape that host reads. The tables are data; handlers never see a host's
own field names.

Imports: standard library and the kernel only.
"""

from __future__ import annotations

from memdir.kernel.hostio.hookio import dict_field, text_field
from memdir.kernel.hostio.hosttable import CANONICAL_EVENTS, HOSTS, payload_field

TYPE_CHECKING = False  # the hook path never imports typing or dataclasses (start-up cost)
if TYPE_CHECKING:
    from typing import Any


def _event_aliases() -> dict[str, dict[str, str]]:
    aliases: dict[str, dict[str, str]] = {}
    for host, entry in HOSTS.items():
        events = entry.get("events", {})
        aliases[host] = {own: name for name, own in events.items() if own != name}
    # Cursor's shell events carry a command, not a tool call; they map onto the tool events.
    aliases["cursor"].update(
        {"beforeShellExecution": "PreToolUse", "afterShellExecution": "PostToolUse"}
    )
    return aliases


EVENT_ALIASES = _event_aliases()
"""Host event name → canonical event name, per host, from the host table (hosts not listed
use Claude Code's names)."""

TOOLS_BY_HOST: dict[str, dict[str, str]] = {
    host: {own: tool for tool, names in entry.get("tools", {}).items() for own in names}
    for host, entry in HOSTS.items()
}
"""Per host: its tool name → canonical tool (``Read``, ``Write``, ``Edit``, ``Bash``)."""

TOOL_ALIASES = {own: tool for table in TOOLS_BY_HOST.values() for own, tool in table.items()}
"""Any host's tool name → canonical tool: the fallback when a host uses another's names."""

PATCH_TOOLS = frozenset({"apply_patch"})
"""Tools whose input is a patch naming files (Codex); canonical name ``ApplyPatch``."""


class HookEvent:
    """One hook invocation in canonical terms."""

    def __init__(
        self,
        name: str,
        host: str,
        session: str,
        cwd: str,
        *,
        source: str = "",
        prompt: str = "",
        tool: str = "",
        tool_input: dict[str, Any] | None = None,
        tool_response: Any = None,
        last_message: str = "",
        error: str = "",
        subagent: bool = False,
        raw: dict[str, Any] | None = None,
    ) -> None:
        self.name = name  # a CANONICAL_EVENTS name, or "" for an event memdir does not handle
        self.host = host
        self.session = session
        self.cwd = cwd
        self.source = source  # SessionStart source, compaction trigger, SessionEnd reason
        self.prompt = prompt
        self.tool = tool
        self.tool_input = tool_input or {}
        self.tool_response = tool_response
        self.last_message = last_message
        self.error = error  # PostToolUseFailure: why the tool call failed
        self.subagent = subagent  # fired inside a subagent (Claude Code sets agent_id)
        self.raw = raw or {}

    @property
    def file_path(self) -> str:
        """Return the file a file tool acted on (``file_path``, ``path``, ``filePath``)."""
        return text_field(
            self.tool_input, "file_path", "path", "filePath", "absolute_path", "notebook_path"
        )


def _prompt(payload: dict[str, Any]) -> str:
    """The person's prompt: context a host hands back inside it (Gemini CLI) is removed."""
    prompt = text_field(payload, "prompt", "user_message")
    if "hook_context>" not in prompt and "memdir-memory" not in prompt:
        return prompt
    from memdir.kernel.lang.fence import strip_injected  # only when there is something to strip

    return strip_injected(prompt)


def _tool(host: str, raw: str) -> str:
    if raw in PATCH_TOOLS:
        return "ApplyPatch"
    return TOOLS_BY_HOST.get(host, {}).get(raw) or TOOL_ALIASES.get(raw, raw)


def normalise(host: str, event_arg: str, payload: dict[str, Any]) -> HookEvent:
    """Return the canonical event for a host's payload (``event_arg`` is ``memdir hook EVENT``)."""
    aliases = EVENT_ALIASES.get(host, {})
    named = text_field(payload, "hook_event_name", "hookEventName")

    def canonical(value: str) -> str:
        mapped = aliases.get(value, value)
        return mapped if mapped in CANONICAL_EVENTS else ""

    # The installed command names the event; the payload's own name is the fallback.
    name = canonical(event_arg) or canonical(named)
    session = (
        text_field(
            payload,
            *payload_field(host, "session"),
            "session_id",
            "sessionId",
            "conversation_id",
            "taskId",
        )
        or "default"
    )
    cwd = text_field(payload, "cwd")
    if not cwd:
        roots = payload.get("workspace_roots") or payload.get("workspaceRoots")
        if isinstance(roots, list) and roots and isinstance(roots[0], str):
            cwd = roots[0]
    tool_input = dict_field(payload, "tool_input") or dict_field(payload, "toolArgs")
    raw_tool = text_field(payload, *payload_field(host, "tool"), "tool_name", "toolName")
    host_event = named or event_arg
    if host == "cursor" and host_event in ("beforeReadFile", "afterFileEdit"):
        raw_tool = "Read" if host_event == "beforeReadFile" else "Edit"
        tool_input = {"file_path": text_field(payload, "file_path")}
    if host == "cursor" and host_event in ("beforeShellExecution", "afterShellExecution"):
        raw_tool, tool_input = "Bash", {"command": text_field(payload, "command")}
    return HookEvent(
        name=name,
        host=host,
        session=session,
        cwd=cwd,
        source=text_field(payload, "source", "trigger", "reason"),
        prompt=_prompt(payload),
        tool=_tool(host, raw_tool),
        tool_input=tool_input,
        tool_response=payload.get("tool_response", payload.get("toolResult")),
        error=text_field(payload, "error"),
        last_message=text_field(
            payload,
            *payload_field(host, "last_message"),
            "last_assistant_message",
            "prompt_response",
            "agent_message",
        ),
        subagent=bool(payload.get("agent_id")),
        raw=payload,
    )


class HookResult:
    """What a handler wants the host to do: add context, or refuse a tool call."""

    def __init__(self, context: str = "", deny_reason: str = "") -> None:
        self.context = context  # fenced text for the agent
        self.deny_reason = deny_reason  # PreToolUse: refuse the call, telling the agent why


def render(host: str, event: HookEvent, result: HookResult) -> dict[str, Any] | None:
    """Return the one JSON object the host expects for ``result``, or ``None`` for silence."""
    if not result.context and not result.deny_reason:
        return None
    host_event = text_field(event.raw, "hook_event_name", "hookEventName") or event.name
    if host == "cursor":
        if result.deny_reason:
            return {"permission": "deny", "agent_message": result.deny_reason}
        return {"additional_context": result.context} if event.name == "SessionStart" else None
    if host == "gemini":
        if result.deny_reason:
            return {"decision": "deny", "reason": result.deny_reason}
        return {
            "hookSpecificOutput": {"hookEventName": host_event, "additionalContext": result.context}
        }
    if result.deny_reason:
        return {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": result.deny_reason,
            }
        }
    return {
        "hookSpecificOutput": {"hookEventName": event.name, "additionalContext": result.context}
    }
