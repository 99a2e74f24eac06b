"""The hosts memdir knows, with their events (from each host's hooks reference)."""

from __future__ import annotations

from memdir.hosts.base import HostSpec
from memdir.kernel.errors import UsageError

_CLAUDE_EVENTS = {
    name: name
    for name in (
        "SessionStart",
        "UserPromptSubmit",
        "PreToolUse",
        "PostToolUse",
        "PostToolBatch",
        "Stop",
        "PreCompact",
        "PostCompact",
        "SessionEnd",
    )
}
_MATCHERS = {
    "PreToolUse": "Read",
    "PostToolUse": "^(Read|Write|Edit|MultiEdit|Bash|mcp__memdir__.*)$",
}

HOSTS: dict[str, HostSpec] = {
    "claude-code": HostSpec(
        name="claude-code",
        title="Claude Code",
        events=dict(_CLAUDE_EVENTS),
        settings=".claude/settings.json",
        mcp=".mcp.json",
        instructions="CLAUDE.md",
        matchers=dict(_MATCHERS),
        installable=True,
    ),
    "codex": HostSpec(
        name="codex",
        title="OpenAI Codex CLI",
        events={
            k: v for k, v in _CLAUDE_EVENTS.items() if k not in ("PostToolBatch", "SessionEnd")
        },
        settings=".codex/hooks.json",
        instructions="AGENTS.md",
        matchers={
            "PreToolUse": "Read",
            "PostToolUse": "^(Bash|apply_patch|Edit|Write|mcp__memdir__.*)$",
        },
        installable=True,
        notes="no SessionEnd or PostToolBatch; MCP server goes in ~/.codex/config.toml by hand",
    ),
    "gemini": HostSpec(
        name="gemini",
        title="Gemini CLI",
        events={
            "SessionStart": "SessionStart",
            "UserPromptSubmit": "BeforeAgent",
            "PreToolUse": "BeforeTool",
            "PostToolUse": "AfterTool",
            "Stop": "AfterAgent",
            "PreCompact": "PreCompress",
            "SessionEnd": "SessionEnd",
        },
        settings=".gemini/settings.json",
        instructions="GEMINI.md",
        timeout_unit="ms",
        matchers={"PreToolUse": "read_file", "PostToolUse": ".*"},
        installable=True,
        notes="timeouts in milliseconds; no PostToolBatch or PostCompact",
    ),
    "cursor": HostSpec(
        name="cursor",
        title="Cursor",
        events={
            "SessionStart": "sessionStart",
            "UserPromptSubmit": "beforeSubmitPrompt",
            "PreToolUse": "beforeReadFile",
            "PostToolUse": "afterFileEdit",
            "Stop": "stop",
            "SessionEnd": "sessionEnd",
        },
        settings=".cursor/hooks.json",
        instructions=".cursor/rules/memdir.mdc",
        notes="beforeSubmitPrompt cannot inject context: no per-prompt recall; not yet installable",
    ),
    "copilot": HostSpec(
        name="copilot",
        title="GitHub Copilot CLI",
        events={
            "SessionStart": "sessionStart",
            "UserPromptSubmit": "userPromptSubmitted",
            "PreToolUse": "preToolUse",
            "PostToolUse": "postToolUse",
            "Stop": "agentStop",
            "PreCompact": "preCompact",
            "SessionEnd": "sessionEnd",
        },
        settings=".github/hooks/memdir.json",
        instructions=".github/copilot-instructions.md",
        notes="not yet installable",
    ),
    "opencode": HostSpec(
        name="opencode",
        title="OpenCode",
        events={
            "PreToolUse": "tool.execute.before",
            "PostToolUse": "tool.execute.after",
            "Stop": "session.idle",
            "PreCompact": "experimental.session.compacting",
        },
        instructions="AGENTS.md",
        notes="needs a small JS plugin calling `memdir hook`; not yet installable",
    ),
    "cline": HostSpec(
        name="cline",
        title="Cline",
        events={
            "SessionStart": "TaskStart",
            "UserPromptSubmit": "UserPromptSubmit",
            "PreToolUse": "PreToolUse",
            "PostToolUse": "PostToolUse",
            "Stop": "TaskComplete",
            "PreCompact": "PreCompact",
        },
        instructions=".clinerules/memdir.md",
        notes="hooks are executables named after events; not yet installable",
    ),
    "windsurf": HostSpec(
        name="windsurf",
        title="Windsurf Cascade",
        events={
            "UserPromptSubmit": "pre_user_prompt",
            "PreToolUse": "pre_read_code",
            "PostToolUse": "post_write_code",
            "Stop": "post_cascade_response",
        },
        settings=".windsurf/hooks.json",
        instructions=".windsurf/rules/memdir.md",
        notes="no session start or compaction hook; not yet installable",
    ),
}


def get_host(name: str) -> HostSpec:
    """Return the host called ``name``.

    Raises:
        UsageError: no such host; the message lists the known ones.
    """
    try:
        return HOSTS[name]
    except KeyError:
        raise UsageError(f"unknown host {name!r}; known hosts: {', '.join(HOSTS)}") from None
