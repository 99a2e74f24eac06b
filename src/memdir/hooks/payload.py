"""Host payloads in, canonical events out; canonical results in, host answers out.

Every host calls the same entry point, ``memdir hook EVENT --host HOST``. This module maps each
host's event names and payload fields onto Claude Code's canonical ones (DESIGN §7: Codex and
Copilot CLI share Claude Code's shape; Gemini CLI and Cursor rename events), and renders a
handler's result in the shape that host reads. The tables are data; handlers never see a host's
own field names.

Imports: standard library and the kernel only.
"""

from __future__ import annotations

import re

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
        aliases[host].update(entry.get("also", {}))  # more host events onto one canonical
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
            self.tool_input,
            "file_path",
            "path",
            "filePath",
            "absolute_path",
            "notebook_path",
            "target_file",
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


def _json_object(value: Any) -> dict[str, Any]:
    """A tool's arguments as an object: Copilot CLI sends them as an object or a JSON string."""
    if isinstance(value, dict):
        return value
    if isinstance(value, str) and value.lstrip().startswith("{"):
        import json

        try:
            parsed = json.loads(value)
        except ValueError:
            return {}
        return parsed if isinstance(parsed, dict) else {}
    return {}


_WINDSURF_TOOLS = {
    "pre_read_code": "Read",
    "post_read_code": "Read",
    "pre_write_code": "Edit",
    "post_write_code": "Edit",
    "pre_run_command": "Bash",
    "post_run_command": "Bash",
}


def _flatten(host: str, event_arg: str, payload: dict[str, Any]) -> dict[str, Any]:
    """Return a host's payload in Claude Code's field names (hosts that nest or rename them).

    Copilot CLI: ``toolArgs`` (object or JSON string), ``toolResult.resultType``. Cursor:
    ``tool_output``, a JSON string. Cline: the
    event's fields under its own key (``preToolUse.{toolName, parameters}``), ``taskId``,
    ``workspaceRoots``. Windsurf: ``agent_action_name``, ``trajectory_id`` and ``tool_info``.
    """
    if host == "copilot":
        flat = dict(payload)
        if payload.get("source") == "new":  # Copilot CLI's fresh session
            flat["source"] = "startup"
        if isinstance(payload.get("transcriptPath"), str):
            flat["transcript_path"] = payload["transcriptPath"]
        args = payload.get("toolArgs", payload.get("tool_input"))
        if args is not None:
            flat["tool_input"] = _json_object(args)
        result = payload.get("toolResult", payload.get("tool_result"))
        if isinstance(result, dict):
            kind = result.get("resultType", result.get("result_type"))
            text = result.get("textResultForLlm", result.get("text_result_for_llm"))
            response: dict[str, Any] = {"success": kind in (None, "success"), "output": text}
            # a shell call's result ends "<shellId: N completed with exit code C>"
            found = re.search(r"completed with exit code (-?\d+)>\s*$", str(text or ""))
            if found:
                response["exit_code"] = int(found.group(1))
            flat["tool_response"] = response
        return flat
    if host == "cursor" and "tool_output" in payload:
        flat = dict(payload)  # a JSON string of the tool's result (``{"exitCode": 0, …}``)
        output = payload.get("tool_output")
        flat["tool_response"] = _json_object(output) or {"output": output}
        return flat
    if host == "cline":
        return _cline(event_arg, payload)
    if host == "windsurf":
        action = text_field(payload, "agent_action_name") or event_arg
        info = dict_field(payload, "tool_info")
        flat = {
            "hook_event_name": action,
            "session_id": text_field(payload, "trajectory_id"),
            "cwd": text_field(info, "cwd") or text_field(payload, "cwd"),
            "prompt": text_field(info, "user_prompt"),
            "last_assistant_message": text_field(info, "response"),
            "tool_name": _WINDSURF_TOOLS.get(action, ""),
            "tool_input": {
                k: v for k, v in (("file_path", info.get("file_path")),) if isinstance(v, str)
            },
            "tool_response": {"success": True},
        }
        if flat["tool_name"] == "Bash":
            flat["tool_input"] = {"command": text_field(info, "command_line")}
        if action in ("pre_mcp_tool_use", "post_mcp_tool_use"):
            server = text_field(info, "mcp_server_name")
            flat["tool_name"] = f"{server}_{text_field(info, 'mcp_tool_name')}"
            flat["tool_input"] = _json_object(info.get("mcp_tool_arguments"))
            flat["tool_response"] = info.get("mcp_result") or {"success": True}
        return flat
    return payload


CLINE_SDK_EVENTS = {
    "agent_start": "TaskStart",
    "agent_resume": "TaskResume",
    "agent_abort": "TaskCancel",
    "agent_end": "TaskComplete",
    "agent_error": "TaskError",
    "tool_call": "PreToolUse",
    "tool_result": "PostToolUse",
    "prompt_submit": "UserPromptSubmit",
    "pre_compact": "PreCompact",
    "session_shutdown": "SessionShutdown",
}
"""Cline CLI 3.x (the SDK runtime) names its hook payloads in snake case (``"hookName":
"tool_call"``) while its hook files keep the documented names (``PreToolUse``): the payload name
→ the file name (``@cline/core`` 0.0.86, as released in ``cline`` 3.0.65)."""


def _cline_input(tool: str, value: Any) -> dict[str, Any]:
    """Cline CLI's tool input in the canonical field names.

    ``read_files {files: [{path, start_line, end_line}]}``: one file is ``file_path`` (a line
    range becomes ``offset``/``limit``), several are ``paths``; ``run_commands {commands: [...]}``
    is one ``command`` (joined by `` && ``); ``editor {path, old_text, new_text}`` is an edit (or a
    write, when it has no ``old_text``: it creates the file). The extension's own tools
    (``read_file {path}``, ``execute_command {command}``) pass through.
    """
    args = _json_object(value)
    if tool == "read_files" and isinstance(args.get("files"), list):
        files = [f for f in args["files"] if isinstance(f, dict) and isinstance(f.get("path"), str)]
        if len(files) != 1:
            return {"paths": [f["path"] for f in files]}
        one, start, end = files[0], files[0].get("start_line"), files[0].get("end_line")
        flat: dict[str, Any] = {"file_path": one["path"]}
        if isinstance(start, int) or isinstance(end, int):
            first = start if isinstance(start, int) else 1
            flat["offset"] = first - 1
            if isinstance(end, int):
                flat["limit"] = max(end - first + 1, 0)
        return flat
    if tool == "run_commands" and isinstance(args.get("commands"), list):
        return {"command": " && ".join(str(c) for c in args["commands"])}
    if tool == "editor" and isinstance(args.get("path"), str):
        return {
            "file_path": args["path"],
            "old_string": args.get("old_text") or "",
            "new_string": args.get("new_text") or "",
        }
    return args


def _cline(event_arg: str, payload: dict[str, Any]) -> dict[str, Any]:
    """Cline's payload in Claude Code's field names: the extension's and the CLI's.

    Both nest the event's fields under its own key (``preToolUse.{toolName, parameters}``) next
    to ``taskId`` and ``workspaceRoots``. Cline CLI 3.x also names the payload in snake case
    (:data:`CLINE_SDK_EVENTS`), passes every parameter as a JSON string (the tool's real input is
    in ``tool_call.input`` / ``tool_result.input``), and reports a shell command's failure only
    per command (``tool_result.output[].success``); its payloads are marked ``cline_cli``.
    """
    sdk = CLINE_SDK_EVENTS.get(text_field(payload, "hookName"), "")
    name = event_arg if event_arg in CLINE_SDK_EVENTS.values() else sdk or event_arg
    inner = dict_field(payload, name[:1].lower() + name[1:])
    meta = dict_field(inner, "taskMetadata")
    call = dict_field(payload, "tool_call") or dict_field(payload, "tool_result")
    tool = text_field(inner, "toolName") or text_field(call, "name")
    params = call.get("input") if "input" in call else inner.get("parameters")
    if "input" not in call and isinstance(params, dict):  # values may be JSON strings
        params = {k: _json_object(v) or _json_list(v) or v for k, v in params.items()}
    flat: dict[str, Any] = {
        "hook_event_name": name,
        "session_id": text_field(payload, "taskId") or text_field(meta, "taskId"),
        "workspace_roots": payload.get("workspaceRoots"),
        "prompt": text_field(inner, "prompt"),
        "tool_name": tool,
        "tool_input": _cline_input(tool, params),
        "source": "resume" if name == "TaskResume" else "",
        "cline_cli": bool(sdk),
    }
    if name == "PostToolUse":
        success = inner.get("success") is not False
        output = call.get("output") if "output" in call else inner.get("result")
        if isinstance(output, list):  # Cline CLI: one entry per file or command
            success = success and all(
                not isinstance(o, dict) or o.get("success") is not False for o in output
            )
        flat["tool_response"] = {"success": success, "output": output}
    if name == "TaskComplete":
        turn = dict_field(payload, "turn")
        flat["last_assistant_message"] = text_field(turn, "outputText")
    return flat


def _json_list(value: Any) -> list[Any] | None:
    """A JSON string holding a list, parsed (Cline CLI stringifies list parameters)."""
    if isinstance(value, str) and value.lstrip().startswith("["):
        import json

        try:
            parsed = json.loads(value)
        except ValueError:
            return None
        return parsed if isinstance(parsed, list) else None
    return None


def normalise(host: str, event_arg: str, payload: dict[str, Any]) -> HookEvent:
    """Return the canonical event for a host's payload (``event_arg`` is ``memdir hook EVENT``)."""
    payload = _flatten(host, event_arg, payload)
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
        error=text_field(payload, "error", "error_message"),
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

    def __init__(
        self, context: str = "", deny_reason: str = "", updated_output: Any = None
    ) -> None:
        self.context = context  # fenced text for the agent
        self.deny_reason = deny_reason  # PreToolUse: refuse the call, telling the agent why
        # PostToolUse: the tool output the model sees instead (the shell governor; only hosts
        # that can replace output get one: memdir.hooks.governor.REPLACES_OUTPUT)
        self.updated_output = updated_output


def exit_refusal(host: str, result: HookResult | None) -> str:
    """Return the reason to print on stderr with exit code 2, for a host that blocks that way.

    Windsurf's pre-hooks block an action only by exiting 2 (stderr is shown); every other host
    reads a JSON answer and gets "" here.
    """
    if result is None or not result.deny_reason:
        return ""
    return result.deny_reason if HOSTS.get(host, {}).get("output") == "exit2" else ""


def render(  # noqa: C901 - one branch per host output shape, from the host table
    host: str, event: HookEvent, result: HookResult
) -> dict[str, Any] | None:
    """Return the one JSON object the host expects for ``result``, or ``None`` for silence."""
    if not result.context and not result.deny_reason and result.updated_output is None:
        return None
    host_event = text_field(event.raw, "hook_event_name", "hookEventName") or event.name
    shape = HOSTS.get(host, {}).get("output", "claude")
    if shape == "flat":  # Copilot CLI reads its answers at the top level
        if result.deny_reason:
            return {"permissionDecision": "deny", "permissionDecisionReason": result.deny_reason}
        return {"additionalContext": result.context}
    if shape == "cursor":  # only sessionStart and postToolUse(Failure) take context
        if result.deny_reason:
            reason = result.deny_reason
            return {"permission": "deny", "agent_message": reason, "user_message": reason}
        if event.name in ("SessionStart", "PostToolUse", "PostToolUseFailure"):
            return {"additional_context": result.context}
        return None
    if shape == "cline":
        if result.deny_reason and not event.raw.get("cline_cli"):
            return {"cancel": True, "errorMessage": result.deny_reason}
        # Cline CLI 3.x: ``cancel`` from a hook aborts the whole task (not the one tool call) and
        # hook files cannot skip a call, so a refusal reaches the model as context instead
        text = "\n\n".join(t for t in (result.deny_reason, result.context) if t)
        return {"cancel": False, "contextModification": text}
    if shape == "exit2":  # Windsurf: no answer on stdout; a refusal is exit code 2
        return None
    if host == "gemini":
        if result.deny_reason:
            return {"decision": "deny", "reason": result.deny_reason}
        if not result.context:
            return None
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
    specific: dict[str, Any] = {"hookEventName": event.name}
    if result.context:
        specific["additionalContext"] = result.context
    if result.updated_output is not None and host == "claude-code":
        specific["updatedToolOutput"] = result.updated_output
    if len(specific) == 1:
        return None
    return {"hookSpecificOutput": specific}
