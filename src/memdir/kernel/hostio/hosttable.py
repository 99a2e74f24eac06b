"""The one host table: everything memdir knows about each coding agent, as plain data.

Both the installer (``memdir install``/``doctor``/``hosts``) and the hook path (``memdir hook``)
read this module, so it holds only literals and a few pure helpers: no imports beyond the
standard library, no dataclasses, no typing at run time (the hook path pays for every import).
Adding a host is one entry here plus its recorded payload fixtures.

Each entry of :data:`HOSTS` is a dict with these keys (absent optional keys read as empty):

``title``
    The host's product name.
``installable``
    Whether ``memdir install --host`` can wire it; listed-only hosts say why in ``notes``.
``events``
    memdir's canonical event (Claude Code's names,
    :data:`memdir.kernel.hostio.hookio.CANONICAL_EVENTS`
    plus ``PostToolUseFailure``) → the host's own event name. A missing event is a feature the
    host lacks; memdir loses only that feature there.
``matchers``
    canonical event → the matcher written on memdir's hook group (a regex over the host's tool
    names, or an exact name); events without one get no matcher (fire always).
``tools``
    canonical tool (``Read``, ``Write``, ``Edit``, ``Bash``) → the host's tool names for it.
``mcp_tool``
    how the host names a tool ``T`` of an MCP server ``S``: a format with ``{server}`` and
    ``{tool}`` (Claude Code and Codex ``mcp__S__T``, Gemini CLI ``mcp_S_T``, Copilot ``S-T``).
``payload``
    canonical payload field → the host's field names, first found wins.
``output``
    the shape of a hook's answer: ``"claude"`` (nested ``hookSpecificOutput``, deny through
    ``permissionDecision``), ``"gemini"`` (``hookSpecificOutput`` for context, top-level
    ``decision: deny``), ``"flat"`` (Copilot: top-level ``additionalContext``,
    ``permissionDecision``), ``"cursor"`` (``additional_context``, ``permission``).
``timeout_unit``
    ``"s"`` or ``"ms"``: the unit of the ``timeout`` field on a hook handler (Gemini: ms).
``project_dir_env``
    the environment variable the host sets to the project root for hooks, if any.
``personal`` / ``shared``
    where a personal install (the default) and a ``--shared`` install write: ``hooks`` (a
    project-relative JSON file), ``mcp`` (a project-relative file, or ``"~/.claude.json"`` for
    Claude Code's local scope kept in the user's home), ``instructions`` (a project-relative
    Markdown file), and ``command`` (``"absolute"``: this interpreter by absolute path, allowed
    only in files nobody commits; ``"path"``: the bare ``memdir`` found on PATH).
    ``exclude`` lists personal files memdir adds to ``.git/info/exclude`` when it creates them.
``mcp_format``
    how the MCP server entry is written: ``"mcpServers"`` (JSON object ``mcpServers.memdir``),
    ``"claude-local"`` (``~/.claude.json`` → ``projects[<abs project>].mcpServers.memdir``),
    ``"codex-toml"`` (TOML table ``[mcp_servers.memdir]``).
``mcp_timeout_ms``
    a start-up timeout written on the MCP entry (Gemini allows 5 s unless ``timeout`` is set).
``gates``
    what the user must do before the host runs memdir's hooks or reaches its server (trust,
    approval); printed by install, ``memdir hosts`` and ``memdir doctor``. memdir never writes a
    host's trust store itself.
``binary``
    the host's CLI name, which ``memdir doctor`` asks (``claude mcp get``, ``codex mcp list``…).
``notes``
    one line for ``memdir hosts``.
``loses``
    what memdir cannot do in this host, in words (``memdir hosts`` prints it).
``plugin`` (in ``personal``/``shared``)
    plugin hosts (OpenCode, Kilo Code, OpenClaw): the plugin file install writes instead of a
    hooks file; its ``mcp_format`` is ``"opencode"`` (``mcp.memdir = {type: local, command:
    [...]}``). ``plugin_manifest`` (OpenClaw): the ``openclaw.plugin.json`` beside it.

Imports: standard library only (none at all).
"""

from __future__ import annotations

TYPE_CHECKING = False  # the hook path never imports typing (start-up cost)
if TYPE_CHECKING:
    from typing import Any

SERVER_NAME = "memdir"
"""The name memdir's MCP server is registered under in every host."""
SELF_TEST = "SelfTest"
"""The event ``memdir install`` runs each installed hook command with, to prove it runs from a
shell (``memdir.hosts.install.self_test``): its payload is read, it is answered with nothing
and never logged as an error (``memdir.hooks.dispatch.known_event``)."""

MEMDIR_MCP_TOOLS = (
    "memory_recall",
    "memory_remember",
    "memory_correct",
    "memory_get",
    "memory_list",
    "memory_reject",
    "memory_forget",
    "journal_write",
)
"""memdir's MCP tool names (the server's own, before the host qualifies them)."""

BELIEF_MCP_TOOLS = ("memory_remember", "memory_correct")
"""MCP tools whose successful call writes a belief (silences the "saved no memory" reminder)."""

CANONICAL_EVENTS = (
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "PostToolBatch",
    "Stop",
    "PreCompact",
    "PostCompact",
    "SessionEnd",
)
"""memdir's hook events, named as Claude Code names them (DESIGN §7); other hosts map onto them."""
_CLAUDE_EVENTS = CANONICAL_EVENTS

_COMMON_PAYLOAD = {
    "event": ("hook_event_name", "hookEventName"),
    "session": ("session_id", "sessionId"),
    "cwd": ("cwd",),
    "transcript": ("transcript_path",),
    "prompt": ("prompt",),
    "tool": ("tool_name",),
    "tool_input": ("tool_input",),
    "tool_response": ("tool_response",),
    "last_message": ("last_assistant_message",),
    "source": ("source", "trigger", "reason"),
    "agent": ("agent_id",),
}

# --- hosts-a: the hook-JSON hosts (GitHub Copilot CLI, Qwen Code, Factory Droid, Cursor,
# Windsurf, Cline). Facts from each host's hooks reference and, for the first three, from the
# released binary in tests/hosts/conformance/test_hook_json_hosts.py.

_DROID_EVENTS = (
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "Stop",
    "PreCompact",
    "SessionEnd",
)

_HOOK_JSON_HOSTS: dict[str, dict[str, Any]] = {
    "copilot": {
        "title": "GitHub Copilot CLI",
        "installable": True,
        "binary": "copilot",
        "events": {
            "SessionStart": "sessionStart",
            "UserPromptSubmit": "userPromptSubmitted",
            "PreToolUse": "preToolUse",
            "PostToolUse": "postToolUse",
            "PostToolUseFailure": "postToolUseFailure",
            "Stop": "agentStop",
            "PreCompact": "preCompact",
            "SessionEnd": "sessionEnd",
        },
        "hooks_format": "copilot",
        "tools": {
            "Read": ("view",),
            "Write": ("create",),
            "Edit": ("edit", "str_replace"),
            "Bash": ("bash",),
        },
        "mcp_tool": "{server}-{tool}",
        "payload": {
            **_COMMON_PAYLOAD,
            "session": ("sessionId", "session_id"),
            "transcript": ("transcriptPath", "transcript_path"),
            "tool": ("toolName", "tool_name"),
            "tool_input": ("toolArgs", "tool_input"),
            "tool_response": ("toolResult", "tool_response"),
        },
        "output": "flat",
        "timeout_unit": "s",
        "project_dir_env": "",
        "personal": {
            "hooks": ".github/hooks/memdir.json",
            "mcp": ".mcp.json",
            "mcp_format": "mcpServers",
            "instructions": ".github/copilot-instructions.md",
            "command": "path",
        },
        "shared": {
            "hooks": ".github/hooks/memdir.json",
            "mcp": ".mcp.json",
            "mcp_format": "mcpServers",
            "instructions": ".github/copilot-instructions.md",
            "command": "path",
        },
        "gates": {
            "any": (
                "Copilot CLI loads a repository's .github/hooks/ and its workspace .mcp.json "
                "only in a trusted folder: accept the folder-trust prompt when `copilot` starts "
                "in the project (in `copilot -p`, an untrusted folder's hooks and servers are "
                "skipped).",
            ),
        },
        "notes": "flat answers (additionalContext, permissionDecision); no matchers, so "
        "every tool call runs the tool hooks; no PostToolBatch or PostCompact",
    },
    "qwen": {
        "title": "Qwen Code",
        "installable": True,
        "binary": "qwen",
        "events": {name: name for name in _CLAUDE_EVENTS},
        "matchers": {
            "PreToolUse": "^(read_file)$",
            "PostToolUse": "^(read_file|write_file|edit|run_shell_command|mcp__memdir__.*)$",
            "PostToolUseFailure": "^(read_file|write_file|edit|run_shell_command)$",
        },
        "tools": {
            "Read": ("read_file",),
            "Write": ("write_file",),
            "Edit": ("edit", "replace"),
            "Bash": ("run_shell_command",),
        },
        "mcp_tool": "mcp__{server}__{tool}",
        "payload": dict(_COMMON_PAYLOAD),
        "output": "claude",
        "timeout_unit": "s",
        "project_dir_env": "QWEN_PROJECT_DIR",
        "mcp_timeout_ms": 30_000,
        "personal": {
            "hooks": ".qwen/settings.json",
            "mcp": ".qwen/settings.json",
            "mcp_format": "mcpServers",
            "instructions": "QWEN.md",
            "command": "path",
        },
        "shared": {
            "hooks": ".qwen/settings.json",
            "mcp": ".qwen/settings.json",
            "mcp_format": "mcpServers",
            "instructions": "QWEN.md",
            "command": "path",
        },
        "gates": {
            "any": (
                "Qwen Code reads a project's .qwen/settings.json (hooks and servers) only in a "
                "trusted folder: accept the folder-trust prompt when `qwen` starts in the "
                "project (it writes ~/.qwen/trustedFolders.json).",
                "Qwen Code asks each person to approve a project's MCP server: run `qwen mcp "
                "approve memdir` (or approve it when `qwen` starts); `qwen mcp list` says "
                "'Pending approval' until then.",
            ),
        },
        "notes": "Claude Code's events, matchers and answers; hook timeouts in seconds (0.24: "
        "a value of 1000 or more still reads as legacy milliseconds)",
    },
    "droid": {
        "title": "Factory Droid",
        "installable": True,
        "binary": "droid",
        "events": {name: name for name in _DROID_EVENTS},
        "matchers": {
            "PreToolUse": "^(Read)$",
            "PostToolUse": "^(Read|Create|Edit|MultiEdit|ApplyPatch|Execute|memdir___.*)$",
        },
        "tools": {
            "Read": ("Read",),
            "Write": ("Create",),
            "Edit": ("Edit", "MultiEdit", "ApplyPatch"),
            "Bash": ("Execute",),
        },
        "mcp_tool": "{server}___{tool}",
        "payload": dict(_COMMON_PAYLOAD),
        "output": "claude",
        "timeout_unit": "s",
        "project_dir_env": "FACTORY_PROJECT_DIR",
        "personal": {
            "hooks": ".factory/settings.json",
            "mcp": ".factory/mcp.json",
            "mcp_format": "mcpServers",
            "instructions": "AGENTS.md",
            "command": "path",
        },
        "shared": {
            "hooks": ".factory/settings.json",
            "mcp": ".factory/mcp.json",
            "mcp_format": "mcpServers",
            "instructions": "AGENTS.md",
            "command": "path",
        },
        "notes": "Claude-compatible events and answers; `droid exec` fires no UserPromptSubmit "
        "(no per-prompt recall there) and no hook after a failed tool call; no "
        "PostToolUseFailure, PostToolBatch or PostCompact",
    },
    "cursor": {
        "title": "Cursor",
        "installable": True,
        "binary": "",
        "events": {
            "SessionStart": "sessionStart",
            "UserPromptSubmit": "beforeSubmitPrompt",
            "PreToolUse": "preToolUse",
            "PostToolUse": "postToolUse",
            "PostToolUseFailure": "postToolUseFailure",
            # the answer's text comes with afterAgentResponse; `stop` carries only a status
            "Stop": "afterAgentResponse",
            "PreCompact": "preCompact",
            "SessionEnd": "sessionEnd",
        },
        "hooks_format": "cursor",
        "matchers": {
            "PreToolUse": "Read",
            "PostToolUse": "Read|Write|Edit|Delete|Shell|MCP:.*",
            "PostToolUseFailure": "Read|Write|Edit|Delete|Shell",
        },
        "tools": {"Read": ("Read",), "Write": ("Write",), "Edit": ("Edit",), "Bash": ("Shell",)},
        "mcp_tool": "MCP:{tool}",
        "payload": {
            **_COMMON_PAYLOAD,
            "session": ("conversation_id", "session_id"),
            "last_message": ("text",),
        },
        "output": "cursor",
        "timeout_unit": "s",
        "project_dir_env": "CURSOR_PROJECT_DIR",
        "instructions_header": "---\ndescription: memdir project memory\nalwaysApply: true\n---\n",
        "personal": {
            "hooks": ".cursor/hooks.json",
            "mcp": ".cursor/mcp.json",
            "mcp_format": "mcpServers",
            "instructions": ".cursor/rules/memdir.mdc",
            "command": "path",
        },
        "shared": {
            "hooks": ".cursor/hooks.json",
            "mcp": ".cursor/mcp.json",
            "mcp_format": "mcpServers",
            "instructions": ".cursor/rules/memdir.mdc",
            "command": "path",
        },
        "notes": "not proven with the binary (an editor): adapters tested against its "
        "documented payloads; beforeSubmitPrompt cannot inject, so no per-prompt recall",
    },
    "windsurf": {
        "title": "Windsurf Cascade",
        "installable": True,
        "binary": "",
        "events": {
            "UserPromptSubmit": "pre_user_prompt",
            "PreToolUse": "pre_read_code",
            "PostToolUse": "post_read_code",
            "Stop": "post_cascade_response",
        },
        "also": {
            "post_write_code": "PostToolUse",
            "post_run_command": "PostToolUse",
            "post_mcp_tool_use": "PostToolUse",
        },
        "hooks_format": "windsurf",
        "mcp_tool": "{tool}",
        "output": "exit2",
        "timeout_unit": "s",
        "instructions_header": "---\ntrigger: always_on\n---\n",
        "personal": {
            "hooks": ".windsurf/hooks.json",
            "mcp": "~/.codeium/windsurf/mcp_config.json",
            "mcp_format": "mcpServers",
            "instructions": ".windsurf/rules/memdir.md",
            "command": "path",
        },
        "shared": {
            "hooks": ".windsurf/hooks.json",
            "mcp": "~/.codeium/windsurf/mcp_config.json",
            "mcp_format": "mcpServers",
            "instructions": ".windsurf/rules/memdir.md",
            "command": "path",
        },
        "notes": "not proven with the binary (an editor); no session start, injection or "
        "compaction hook: no digest or recall (the MCP server and rules carry memory); the "
        "read gate refuses with exit code 2",
    },
    "cline": {
        "title": "Cline",
        "installable": True,
        "binary": "",
        "events": {
            "SessionStart": "TaskStart",
            "UserPromptSubmit": "UserPromptSubmit",
            "PreToolUse": "PreToolUse",
            "PostToolUse": "PostToolUse",
            "Stop": "TaskComplete",
            "PreCompact": "PreCompact",
        },
        "also": {"TaskResume": "SessionStart"},
        "hooks_format": "cline-scripts",
        "tools": {  # the extension's tools, then Cline CLI 3.x's
            "Read": ("read_file", "read_files"),
            "Write": ("write_to_file",),
            "Edit": ("replace_in_file", "editor"),
            "Bash": ("execute_command", "run_commands"),
        },
        "mcp_tool": "{tool}",
        "output": "cline",
        "timeout_unit": "s",
        "personal": {
            "hooks": ".clinerules/hooks",
            "instructions": ".clinerules/memdir.md",
            "command": "path",
        },
        "shared": {
            "hooks": ".clinerules/hooks",
            "instructions": ".clinerules/memdir.md",
            "command": "path",
        },
        "gates": {
            "any": (
                "The Cline extension runs hooks only with its Hooks setting on (Settings → "
                "Features → Enable Hooks); Cline CLI 3.x runs them with no setting. Add memdir's "
                "MCP server in Cline's MCP settings (the extension's own storage, or "
                "~/.cline/data/settings/cline_mcp_settings.json for Cline CLI): command "
                '`memdir`, args ["serve", "--store", "<project>/.memdir"] (Cline CLI starts it '
                "outside the project).",
            ),
        },
        "loses": "Cline CLI 3.0.65 (proven with the binary): TaskStart and UserPromptSubmit "
        "answers are never read, so the digest arrives with the first tool call's answer and "
        "the task's own prompt gets no recall (no UserPromptSubmit fires for it); the read gate "
        "is advisory (a hook's cancel ends the whole task, so the refusal is sent as context "
        "and the read runs); no PreCompact for hook files",
        "notes": "one executable per event in .clinerules/hooks/; Cline CLI 3.0.65 proven with "
        "the binary (tests/hosts/conformance/test_cline.py), the extension only by its "
        "documented payloads; no SessionEnd, PostToolBatch or PostCompact; memdir does not "
        "write Cline's MCP settings",
    },
}

HOSTS: dict[str, dict[str, Any]] = {
    "claude-code": {
        "title": "Claude Code",
        "installable": True,
        "binary": "claude",
        "events": {name: name for name in _CLAUDE_EVENTS},
        "matchers": {
            # Bash: the shell output governor's note, and `cat FILE` re-reads (issue 11)
            "PreToolUse": "^(Read|Bash)$",
            "PostToolUse": "^(Read|Write|Edit|MultiEdit|NotebookEdit|Bash|mcp__memdir__.*)$",
            "PostToolUseFailure": "^(Read|Write|Edit|MultiEdit|NotebookEdit|Bash)$",
        },
        "tools": {
            "Read": ("Read",),
            "Write": ("Write",),
            "Edit": ("Edit", "MultiEdit", "NotebookEdit"),
            "Bash": ("Bash",),
        },
        "mcp_tool": "mcp__{server}__{tool}",
        "payload": dict(_COMMON_PAYLOAD),
        "output": "claude",
        "timeout_unit": "s",
        "project_dir_env": "CLAUDE_PROJECT_DIR",
        "personal": {
            "hooks": ".claude/settings.local.json",
            "mcp": "~/.claude.json",
            "mcp_format": "claude-local",
            "instructions": "CLAUDE.local.md",
            "command": "absolute",
            "exclude": (".claude/settings.local.json", "CLAUDE.local.md"),
        },
        "shared": {
            "hooks": ".claude/settings.json",
            "mcp": ".mcp.json",
            "mcp_format": "mcpServers",
            "instructions": "CLAUDE.md",
            "command": "path",
        },
        "gates": {
            "shared": (
                "Claude Code asks each person to approve a project .mcp.json server: run "
                "`claude` in the project and accept `memdir`, or `claude mcp get memdir` shows "
                "'Pending approval' until then.",
            ),
        },
        "notes": "the reference host: every event, nested hookSpecificOutput answers",
    },
    "codex": {
        "title": "OpenAI Codex CLI",
        "installable": True,
        "binary": "codex",
        "events": {
            name: name
            for name in _CLAUDE_EVENTS
            if name not in ("PostToolBatch", "SessionEnd", "PostToolUseFailure")
        },
        "matchers": {
            # Codex reads files through its shell tool: PreToolUse sees ``Bash`` (`cat`, `sed`).
            "PreToolUse": "^(Bash|Read)$",
            "PostToolUse": "^(Bash|apply_patch|Edit|Write|Read|mcp__memdir__.*)$",
        },
        "tools": {
            "Read": ("Read",),
            "Write": ("Write",),
            # apply_patch carries the patch text in tool_input.command (Add/Update/Delete/Move).
            "Edit": ("apply_patch", "Edit"),
            "Bash": ("Bash", "shell", "exec_command"),
        },
        "mcp_tool": "mcp__{server}__{tool}",
        "payload": dict(_COMMON_PAYLOAD),
        "output": "claude",
        "timeout_unit": "s",
        "project_dir_env": "",
        "personal": {
            "hooks": ".codex/hooks.json",
            "mcp": ".codex/config.toml",
            "mcp_format": "codex-toml",
            "instructions": "AGENTS.md",
            "command": "path",
        },
        "shared": {
            "hooks": ".codex/hooks.json",
            "mcp": ".codex/config.toml",
            "mcp_format": "codex-toml",
            "instructions": "AGENTS.md",
            "command": "path",
        },
        "gates": {
            "any": (
                "Codex loads a project's .codex/ folder only for a trusted project: accept the "
                "trust prompt when `codex` starts there (or set "
                '[projects."<project path>"] trust_level = "trusted" in ~/.codex/config.toml).',
                "Codex skips each new or changed hook until you trust it: run `codex` in the "
                "project, type /hooks and trust memdir's hooks (moving the project or changing "
                "a hook's command asks again).",
            ),
        },
        "notes": "no SessionEnd or PostToolBatch; reads go through the shell, edits through "
        "apply_patch",
    },
    "gemini": {
        "title": "Gemini CLI",
        "installable": True,
        "binary": "gemini",
        "events": {
            "SessionStart": "SessionStart",
            "UserPromptSubmit": "BeforeAgent",
            "PreToolUse": "BeforeTool",
            "PostToolUse": "AfterTool",
            "Stop": "AfterAgent",
            "PreCompact": "PreCompress",
            "SessionEnd": "SessionEnd",
        },
        "matchers": {
            "PreToolUse": "^(read_file|read_many_files)$",
            "PostToolUse": (
                "^(read_file|read_many_files|write_file|replace|run_shell_command|mcp_memdir_.*)$"
            ),
        },
        "tools": {
            "Read": ("read_file", "read_many_files"),
            "Write": ("write_file",),
            "Edit": ("replace",),
            "Bash": ("run_shell_command",),
        },
        "mcp_tool": "mcp_{server}_{tool}",
        "payload": {
            **_COMMON_PAYLOAD,
            "last_message": ("prompt_response",),
        },
        "output": "gemini",
        "timeout_unit": "ms",
        "project_dir_env": "GEMINI_PROJECT_DIR",
        "mcp_timeout_ms": 30_000,
        "personal": {
            "hooks": ".gemini/settings.json",
            "mcp": ".gemini/settings.json",
            "mcp_format": "mcpServers",
            "instructions": "GEMINI.md",
            "command": "path",
        },
        "shared": {
            "hooks": ".gemini/settings.json",
            "mcp": ".gemini/settings.json",
            "mcp_format": "mcpServers",
            "instructions": "GEMINI.md",
            "command": "path",
        },
        "gates": {
            "any": (
                "Gemini CLI runs project hooks and servers only in a trusted folder: accept the "
                "folder-trust prompt when `gemini` starts in the project; it then notes once "
                "that project hooks were detected.",
            ),
        },
        "notes": "timeouts in milliseconds; no PostToolBatch or PostCompact; SessionStart "
        "context arrives inside the next prompt",
    },
    # --- hosts-a: hook-JSON hosts (Copilot CLI, Qwen Code, Droid, Cursor, Windsurf, Cline) ---
    **_HOOK_JSON_HOSTS,
}
"""Every host memdir knows, keyed by the name ``--host`` takes."""

# --- hosts-b: the plugin hosts (OpenCode, Kilo Code, OpenClaw). They have no hook files: a small
# plugin memdir ships (``memdir/hosts/assets/``) turns the host's plugin hooks into canonical
# ``memdir hook EVENT --host H`` calls with Claude-style payloads, and reads Claude-style answers.
# ``events`` names the host hook that triggers each canonical event; ``plugin`` is the file
# install writes (the plugin, with the hook command filled in).

_OPENCODE_EVENTS = {
    "SessionStart": "chat.message (first of a session)",
    "UserPromptSubmit": "chat.message",
    "PreToolUse": "tool.execute.before",
    "PostToolUse": "tool.execute.after",
    "PostToolUseFailure": "message.part.updated (tool error)",
    "Stop": "session.idle",
    "PreCompact": "experimental.session.compacting",
    "PostCompact": "session.compacted",
    "SessionEnd": "dispose",
}
_OPENCODE_TOOLS = {
    "Read": ("read",),
    "Write": ("write",),
    "Edit": ("edit", "multiedit", "patch"),
    "Bash": ("bash",),
}

_PLUGIN_HOSTS: dict[str, dict[str, Any]] = {
    "opencode": {
        "title": "OpenCode",
        "installable": True,
        "binary": "opencode",
        "events": dict(_OPENCODE_EVENTS),
        "tools": dict(_OPENCODE_TOOLS),
        "mcp_tool": "{server}_{tool}",
        "payload": dict(_COMMON_PAYLOAD),
        "output": "claude",
        "timeout_unit": "s",
        "project_dir_env": "",
        "personal": {
            "plugin": ".opencode/plugins/memdir.js",
            "mcp": "opencode.json",
            "mcp_format": "opencode",
            "instructions": "AGENTS.md",
            "command": "path",
        },
        "shared": {
            "plugin": ".opencode/plugins/memdir.js",
            "mcp": "opencode.json",
            "mcp_format": "opencode",
            "instructions": "AGENTS.md",
            "command": "path",
        },
        "gates": {},
        "loses": "batch reminders (no PostToolBatch); failing non-shell tools are logged from "
        "the tool-error event, without the tool's output",
        "notes": "a JS plugin (.opencode/plugins/memdir.js) calls `memdir hook`; the digest "
        "after a compaction goes into the summary and the system prompt",
    },
    "kilo": {
        "title": "Kilo Code CLI",
        "installable": True,
        "binary": "kilo",
        "events": dict(_OPENCODE_EVENTS),
        "tools": dict(_OPENCODE_TOOLS),
        "mcp_tool": "{server}_{tool}",
        "payload": dict(_COMMON_PAYLOAD),
        "output": "claude",
        "timeout_unit": "s",
        "project_dir_env": "",
        "personal": {
            "plugin": ".kilo/plugins/memdir.js",
            "mcp": "kilo.json",
            "mcp_format": "opencode",
            "instructions": "AGENTS.md",
            "command": "path",
        },
        "shared": {
            "plugin": ".kilo/plugins/memdir.js",
            "mcp": "kilo.json",
            "mcp_format": "opencode",
            "instructions": "AGENTS.md",
            "command": "path",
        },
        "gates": {},
        "loses": "batch reminders (no PostToolBatch); compaction is wired but `kilo run` 7.7.7 "
        "did not compact in the conformance suite, so it is not proven",
        "notes": "OpenCode's fork: the same plugin in .kilo/plugins/, MCP in kilo.json "
        "(npm @kilocode/cli; 7.8.1 has no Linux binary, 7.7.7 is pinned)",
    },
    "openclaw": {
        "title": "OpenClaw",
        "installable": True,
        "binary": "openclaw",
        "events": {
            "SessionStart": "before_prompt_build (first turn of a session, or after a compaction)",
            "UserPromptSubmit": "before_prompt_build",
            "PreToolUse": "before_tool_call",
            "PostToolUse": "after_tool_call",
            "PostToolUseFailure": "after_tool_call (error)",
            "PreCompact": "before_compaction",
            "Stop": "agent_end",
            "SessionEnd": "session_end",
        },
        "tools": {"Read": ("read",), "Write": ("write",), "Edit": ("edit",), "Bash": ("exec",)},
        "mcp_tool": "{server}__{tool}",
        "payload": dict(_COMMON_PAYLOAD),
        "output": "claude",
        "timeout_unit": "s",
        "project_dir_env": "",
        "personal": {
            "plugin": ".openclaw/extensions/memdir/index.js",
            "plugin_manifest": ".openclaw/extensions/memdir/openclaw.plugin.json",
            "instructions": "AGENTS.md",
            "command": "path",
        },
        "shared": {
            "plugin": ".openclaw/extensions/memdir/index.js",
            "plugin_manifest": ".openclaw/extensions/memdir/openclaw.plugin.json",
            "instructions": "AGENTS.md",
            "command": "path",
        },
        "gates": {
            "any": (
                "OpenClaw loads a project's .openclaw/extensions/ only when the project is the "
                "agent's workspace: set agents.defaults.workspace (or the agent's workspace) to "
                "the project in ~/.openclaw/openclaw.json.",
                "OpenClaw runs memdir's before_prompt_build hook only with the operator's "
                "consent: set plugins.entries.memdir.enabled: true and "
                "plugins.entries.memdir.hooks.allowConversationAccess: true in "
                "~/.openclaw/openclaw.json (memdir never writes it).",
                "memdir's MCP server lives in OpenClaw's own config: `openclaw mcp set memdir "
                '\'{"command":"memdir","args":["serve"]}\'` (optional).',
            ),
        },
        "loses": "the shell governor's notes and output summaries (before_tool_call can only "
        "block or rewrite, after_tool_call cannot change the output), batch reminders (no "
        "PostToolBatch); the digest and recall arrive every turn as prependContext; the MCP "
        "server is added by hand (`openclaw mcp set`)",
        "notes": "Talewell's host: a plugin in .openclaw/extensions/memdir/ (before_prompt_build "
        "→ the digest and recall before every turn); needs the workspace and "
        "allowConversationAccess set in ~/.openclaw/openclaw.json; openclaw 2026.9.6 runs on "
        "Node >= 24.16",
    },
}
HOSTS.update(_PLUGIN_HOSTS)


def host_entry(host: str) -> dict[str, Any]:
    """Return the table entry for ``host``, or Claude Code's for an unknown name.

    Args:
        host: a ``--host`` name.

    Returns:
        The entry dict (never copied: do not mutate it).
    """
    return HOSTS.get(host) or HOSTS["claude-code"]


def canonical_event(host: str, name: str) -> str:
    """Return memdir's canonical event for the host's event ``name`` ("" when unknown).

    Args:
        host: a ``--host`` name.
        name: the host's event name, or already a canonical name.
    """
    events = host_entry(host)["events"]
    for canonical, own in events.items():
        if own == name:
            return str(canonical)
    return name if name in events else ""


def canonical_tool(host: str, name: str) -> str:
    """Return the canonical tool (``Read``, ``Write``, ``Edit``, ``Bash``) for a host's tool.

    Args:
        host: a ``--host`` name.
        name: the tool name in the host's payload.

    Returns:
        The canonical name, or ``name`` itself for any other tool (MCP tools included).
    """
    for canonical, names in host_entry(host).get("tools", {}).items():
        if name in names:
            return str(canonical)
    return name


def mcp_tool_name(host: str, tool: str, server: str = SERVER_NAME) -> str:
    """Return what ``host`` calls MCP tool ``tool`` of ``server`` (e.g. ``mcp__memdir__X``)."""
    fmt = host_entry(host).get("mcp_tool", "mcp__{server}__{tool}")
    return str(fmt).format(server=server, tool=tool)


def memdir_mcp_tool(name: str) -> str:
    """Return memdir's own MCP tool name hidden in a host's qualified tool name, or "".

    Recognises every host's naming: ``mcp__memdir__memory_remember`` (Claude Code, Codex,
    Qwen Code), ``mcp_memdir_memory_remember`` (Gemini CLI), ``memdir-memory_remember`` (Copilot
    CLI), ``memdir___memory_remember`` (Factory Droid), ``MCP:memory_remember`` (Cursor, which
    drops the server's name), ``memdir__memory_remember`` and ``memdir_memory_remember``.

    Args:
        name: a tool name from any host's payload.
    """
    prefixes = (
        "mcp__memdir__",
        "mcp__plugin_memdir_memdir__",  # memdir's Claude Code plugin (plugins/claude-code/)
        "mcp_memdir_",
        "memdir-",
        "memdir___",
        "memdir__",
        "memdir_",
    )
    for prefix in (*prefixes, "MCP:"):
        if name.startswith(prefix):
            rest = name[len(prefix) :]
            return rest if rest in MEMDIR_MCP_TOOLS else ""
    return ""


def payload_field(host: str, field: str) -> tuple[str, ...]:
    """Return the host's payload keys for a canonical ``field`` (first found wins)."""
    fields = host_entry(host).get("payload") or _COMMON_PAYLOAD
    return tuple(fields.get(field, ()))


def timeout_value(host: str, seconds: int) -> int:
    """Return ``seconds`` in the unit the host's hook ``timeout`` field takes."""
    return seconds * 1000 if host_entry(host).get("timeout_unit") == "ms" else seconds
