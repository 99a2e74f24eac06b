// memdir plugin for OpenCode and Kilo Code: written by `memdir install`; `memdir uninstall` removes it.
// It turns the host's plugin hooks into memdir's hook events and runs the same entry point every
// host runs, `memdir hook EVENT --host HOST`, with a Claude-style JSON payload on stdin; memdir's
// answer (one JSON object, or nothing) comes back on stdout. A hook that fails, times out or
// prints nothing changes nothing: the host goes on as if the plugin were not there.
//
//   chat.message                      -> SessionStart (first prompt of a session), UserPromptSubmit
//   tool.execute.before               -> PreToolUse  (a deny throws, so the host refuses the call)
//   tool.execute.after                -> PostToolUse (memdir's context is appended to the output)
//   message.part.updated (tool error) -> PostToolUseFailure
//   experimental.session.compacting   -> PreCompact, then SessionStart(compact) into the summary
//   session.compacted                 -> PostCompact
//   session.idle                      -> Stop (with the last assistant text)
//   dispose                           -> SessionEnd
// memdir-plugin-version: 1
import { spawn } from "node:child_process";

const COMMAND = ["memdir"]; // memdir:command
const HOST = "opencode"; // memdir:host
const TIMEOUT_MS = 10000;
const PRE_TOOLS = /^(read|bash)$/;
const POST_TOOLS = /^(read|write|edit|multiedit|patch|apply_patch|bash|memdir_.*)$/;

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

function denialOf(answer) {
  const out = answer && answer.hookSpecificOutput;
  if (!out || out.permissionDecision !== "deny") return "";
  return String(out.permissionDecisionReason || "memdir refused this call");
}

export const MemdirPlugin = async ({ directory }) => {
  const created = new Set(); // sessions this process created (the others are resumed)
  const started = new Set(); // sessions memdir's SessionStart ran for
  const afterCompact = new Map(); // session -> digest to keep in the system prompt until the next prompt
  const lastText = new Map(); // session -> the assistant's last text
  const failed = new Set(); // tool calls already reported as failed

  return {
    event: async ({ event }) => {
      const props = (event && event.properties) || {};
      const sid = props.sessionID || (props.info && props.info.id) || "";
      if (event.type === "session.created") {
        created.add(sid);
      } else if (event.type === "session.idle") {
        await hook("Stop", { session_id: sid, last_assistant_message: lastText.get(sid) || "" }, directory);
      } else if (event.type === "session.compacted") {
        await hook("PostCompact", { session_id: sid, trigger: "auto" }, directory);
      } else if (event.type === "message.part.updated") {
        const part = props.part || {};
        const state = part.state || {};
        const error = String(state.error || "");
        // memdir's own refusal (a deny from PreToolUse) is not a failed tool: no row, as in Claude Code
        const refused = error.includes("memdir: ");
        if (part.type === "tool" && state.status === "error" && !refused && !failed.has(part.callID)) {
          failed.add(part.callID);
          await hook(
            "PostToolUseFailure",
            {
              session_id: part.sessionID || sid,
              tool_name: part.tool,
              tool_input: state.input || {},
              error,
            },
            directory,
          );
        }
      }
    },

    "chat.message": async (input, output) => {
      const sid = input.sessionID;
      const parts = output.parts || [];
      const prompt = parts
        .filter((p) => p.type === "text" && !p.synthetic)
        .map((p) => p.text)
        .join("\n");
      const texts = [];
      if (!started.has(sid)) {
        started.add(sid);
        const source = created.has(sid) ? "startup" : "resume";
        texts.push(contextOf(await hook("SessionStart", { session_id: sid, source }, directory)));
      } else if (afterCompact.has(sid)) {
        texts.push(afterCompact.get(sid));
      }
      afterCompact.delete(sid);
      texts.push(contextOf(await hook("UserPromptSubmit", { session_id: sid, prompt }, directory)));
      const text = texts.filter(Boolean).join("\n\n");
      const first = parts[0];
      if (text && first && typeof first.id === "string") {
        parts.push({
          ...first,
          id: first.id.slice(0, -4) + "mdir",
          type: "text",
          text,
          synthetic: true,
        });
      }
    },

    "tool.execute.before": async (input, output) => {
      if (!PRE_TOOLS.test(input.tool)) return;
      const answer = await hook(
        "PreToolUse",
        { session_id: input.sessionID, tool_name: input.tool, tool_input: output.args || {} },
        directory,
      );
      const reason = denialOf(answer);
      if (reason) throw new Error(reason);
    },

    "tool.execute.after": async (input, output) => {
      if (!POST_TOOLS.test(input.tool)) return;
      const meta = output.metadata || {};
      const response = { output: output.output, title: output.title };
      if (typeof meta.exit === "number") response.exit_code = meta.exit;
      const answer = await hook(
        "PostToolUse",
        {
          session_id: input.sessionID,
          tool_name: input.tool,
          tool_input: input.args || {},
          tool_response: response,
        },
        directory,
      );
      const text = contextOf(answer);
      if (text && typeof output.output === "string") output.output += "\n\n" + text;
    },

    "experimental.text.complete": async (input, output) => {
      if (output && typeof output.text === "string") lastText.set(input.sessionID, output.text);
    },

    "experimental.session.compacting": async (input, output) => {
      const sid = input.sessionID;
      await hook("PreCompact", { session_id: sid, trigger: "auto" }, directory);
      const text = contextOf(await hook("SessionStart", { session_id: sid, source: "compact" }, directory));
      if (text) {
        output.context.push(text);
        afterCompact.set(sid, text);
      }
    },

    "experimental.chat.system.transform": async (input, output) => {
      const text = input.sessionID && afterCompact.get(input.sessionID);
      if (text) output.system.push(text);
    },

    dispose: async () => {
      for (const sid of started) {
        await hook("SessionEnd", { session_id: sid, reason: "exit" }, directory);
      }
    },
  };
};
