// memdir plugin for OpenClaw: written by `memdir install --host openclaw`; `memdir uninstall` removes it.
// It turns OpenClaw's typed plugin hooks into memdir's hook events and runs the entry point every
// host runs, `memdir hook EVENT --host openclaw`, with a Claude-style JSON payload on stdin;
// memdir's answer (one JSON object, or nothing) comes back on stdout. A hook that fails, times out
// or prints nothing changes nothing.
//
//   before_prompt_build -> SessionStart (first turn of a session, or the first after a
//                          compaction: source "compact") + UserPromptSubmit, every turn: the
//                          digest and the prompt's recall go in as prependContext
//   before_tool_call    -> PreToolUse (the read gate: memdir's refusal blocks the call, its
//                          reason is what the model reads)
//   after_tool_call     -> PostToolUse / PostToolUseFailure (the action log)
//   before_compaction   -> PreCompact (a checkpoint of the session before it is summarised)
//   after_compaction    -> the next turn brings the digest back (SessionStart, source "compact")
//   agent_end           -> Stop (the journal's assistant turn)
//   session_end         -> SessionEnd
// OpenClaw runs before_prompt_build only with the operator's
// plugins.entries.memdir.hooks.allowConversationAccess: true (see `memdir hosts`).
// memdir-plugin-version: 2
import { spawn } from "node:child_process";

const COMMAND = ["memdir"]; // memdir:command
const HOST = "openclaw"; // memdir:host
const TIMEOUT_MS = 10000;

function hook(event, payload, directory) {
  return new Promise((resolve) => {
    let out = "";
    let done = false;
    const finish = (value) => {
      if (!done) {
        done = true;
        resolve(value);
      }
    };
    let child;
    try {
      child = spawn(COMMAND[0], [...COMMAND.slice(1), "hook", event, "--host", HOST], {
        cwd: directory,
        stdio: ["pipe", "pipe", "ignore"],
      });
    } catch {
      finish(null);
      return;
    }
    const timer = setTimeout(() => {
      try {
        child.kill("SIGKILL");
      } catch {}
      finish(null);
    }, TIMEOUT_MS);
    child.on("error", () => {
      clearTimeout(timer);
      finish(null);
    });
    child.stdout.on("data", (chunk) => {
      out += chunk;
    });
    child.on("close", () => {
      clearTimeout(timer);
      try {
        finish(out.trim() ? JSON.parse(out) : null);
      } catch {
        finish(null);
      }
    });
    child.stdin.on("error", () => {});
    child.stdin.end(JSON.stringify({ hook_event_name: event, cwd: directory, ...payload }));
  });
}

function contextOf(answer) {
  const text = answer && answer.hookSpecificOutput && answer.hookSpecificOutput.additionalContext;
  return typeof text === "string" && text ? text : "";
}

function refusalOf(answer) {
  const out = answer && answer.hookSpecificOutput;
  if (!out || out.permissionDecision !== "deny") return "";
  return typeof out.permissionDecisionReason === "string" ? out.permissionDecisionReason : "denied by memdir";
}

function lastAssistantText(messages) {
  for (let i = (messages || []).length - 1; i >= 0; i--) {
    const m = messages[i] || {};
    if (m.role !== "assistant") continue;
    if (typeof m.content === "string") return m.content;
    const parts = Array.isArray(m.content) ? m.content : [];
    const text = parts.filter((p) => p && p.type === "text").map((p) => p.text).join("\n");
    if (text) return text;
  }
  return "";
}

export default {
  id: "memdir",
  name: "memdir",
  description: "memdir: persistent, correctable memory for coding agents",
  register(api) {
    const started = new Set(); // sessions memdir's SessionStart ran for
    const compacted = new Set(); // sessions compacted since their last turn
    const dirs = new Map(); // session -> its workspace (session hooks' context has none)
    const sidOf = (ctx) => (ctx && (ctx.sessionId || ctx.sessionKey)) || "openclaw";
    const dirOf = (ctx) => (ctx && ctx.workspaceDir) || dirs.get(sidOf(ctx)) || process.cwd();

    api.on("before_prompt_build", async (event, ctx) => {
      const sid = sidOf(ctx);
      const directory = dirOf(ctx);
      dirs.set(sid, directory);
      const texts = [];
      if (!started.has(sid) || compacted.has(sid)) {
        const source = started.has(sid) ? "compact" : "startup";
        started.add(sid);
        compacted.delete(sid);
        texts.push(contextOf(await hook("SessionStart", { session_id: sid, source }, directory)));
      }
      const prompt = typeof event.currentUserMessage === "string" ? event.currentUserMessage : event.prompt;
      texts.push(contextOf(await hook("UserPromptSubmit", { session_id: sid, prompt: prompt || "" }, directory)));
      const text = texts.filter(Boolean).join("\n\n");
      return text ? { prependContext: text } : undefined;
    });

    api.on("before_tool_call", async (event, ctx) => {
      const answer = await hook(
        "PreToolUse",
        { session_id: sidOf(ctx), tool_name: event.toolName, tool_input: event.params || {} },
        dirOf(ctx),
      );
      const reason = refusalOf(answer);
      return reason ? { block: true, blockReason: reason } : undefined;
    });

    api.on("before_compaction", async (event, ctx) => {
      await hook("PreCompact", { session_id: sidOf(ctx), trigger: "auto" }, dirOf(ctx));
    });

    api.on("after_compaction", async (event, ctx) => {
      compacted.add(sidOf(ctx));
    });

    api.on("after_tool_call", async (event, ctx) => {
      const failed = Boolean(event.error);
      await hook(
        failed ? "PostToolUseFailure" : "PostToolUse",
        {
          session_id: sidOf(ctx),
          tool_name: event.toolName,
          tool_input: event.params || {},
          ...(failed ? { error: String(event.error) } : { tool_response: { output: event.result } }),
        },
        dirOf(ctx),
      );
    });

    api.on("agent_end", async (event, ctx) => {
      await hook(
        "Stop",
        { session_id: sidOf(ctx), last_assistant_message: lastAssistantText(event.messages) },
        dirOf(ctx),
      );
    });

    api.on("session_end", async (event, ctx) => {
      await hook("SessionEnd", { session_id: sidOf(ctx), reason: "exit" }, dirOf(ctx));
    });
  },
};
