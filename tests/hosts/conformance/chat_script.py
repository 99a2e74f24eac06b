"""A scripted OpenAI Chat Completions API for hosts that speak only to one (Cline CLI's
``openai-compatible`` provider).

:class:`ScriptedChat` answers ``POST /chat/completions`` (streamed SSE or plain JSON, as the
request asks) from a queue of labelled turns: each request that offers tools (the agent's own
loop) takes the next turn; any other request (a title, a summary) gets a short text answer and is
kept in ``side``. Every answered request is kept with its label, so a test can look at what the
model saw after each scripted tool call. The same shape as
:class:`tests.hosts.conformance.messages_script.ScriptedMessages`, for the other wire format.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass, field
from typing import Any

from tests.hosts.conformance.conftest import Reply, Request


def say(text: str) -> dict[str, Any]:
    """One assistant turn that answers ``text``."""
    return {"text": text}


def call(name: str, **arguments: Any) -> dict[str, Any]:
    """One assistant turn that calls function ``name`` with ``arguments``."""
    return {"tool": name, "args": arguments}


def chat_reply(
    step: dict[str, Any],
    *,
    stream: bool = True,
    model: str = "stand-in",
    call_id: str = "call_1",
) -> Reply:
    """Answer one Chat Completions request with ``step`` (:func:`say` or :func:`call`).

    Streamed as SSE chunks (a delta, then the finish reason with the usage) or as one JSON
    completion. The usage reports ``step["tokens"]`` prompt tokens (900 unless given), which a
    host may read as its context's size (OpenCode compacts past its model's limit).
    """
    base = {"id": "chatcmpl-standin", "created": 1, "model": model}
    if "tool" in step:
        tool_call = {
            "index": 0,
            "id": call_id,
            "type": "function",
            "function": {"name": step["tool"], "arguments": json.dumps(step["args"])},
        }
        delta: dict[str, Any] = {"role": "assistant", "tool_calls": [tool_call]}
        finish = "tool_calls"
    else:
        delta, finish = {"role": "assistant", "content": step["text"]}, "stop"
    tokens = int(step.get("tokens", 900))
    usage = {"prompt_tokens": tokens, "completion_tokens": 20, "total_tokens": tokens + 20}
    if not stream:
        message = {"content": None, **delta}
        choice = {"index": 0, "message": message, "finish_reason": finish}
        return Reply.of_json(
            {**base, "object": "chat.completion", "choices": [choice], "usage": usage}
        )
    chunk = {**base, "object": "chat.completion.chunk"}
    chunks = [
        {**chunk, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
        {**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}], "usage": usage},
    ]
    body = [f"data: {json.dumps(c)}\n\n".encode() for c in chunks] + [b"data: [DONE]\n\n"]
    return Reply(200, body, "text/event-stream", {"Cache-Control": "no-cache"})


@dataclass
class ChatExchange:
    """One agent request and the label of the scripted turn that answered it."""

    label: str
    body: dict[str, Any]

    def text(self) -> str:
        """The whole request (every message) as one string, for searching."""
        return json.dumps(self.body.get("messages"), ensure_ascii=False)

    def system(self) -> str:
        """The system messages' text."""
        return "\n".join(
            json.dumps(m.get("content"), ensure_ascii=False)
            for m in self.body.get("messages") or []
            if m.get("role") == "system"
        )

    def since_last_assistant(self) -> str:
        """The messages after the last assistant message (tool results, hook context), as JSON."""
        messages = self.body.get("messages") or []
        last = max((i for i, m in enumerate(messages) if m.get("role") == "assistant"), default=-1)
        return json.dumps(messages[last + 1 :], ensure_ascii=False)

    def tool_results(self) -> str:
        """The ``tool`` messages after the last assistant message, as JSON text."""
        messages = json.loads(self.since_last_assistant())
        return json.dumps([m for m in messages if m.get("role") == "tool"], ensure_ascii=False)

    def tools(self) -> list[str]:
        """The names of the functions the request offered."""
        return [
            str(t.get("function", {}).get("name"))
            for t in self.body.get("tools") or []
            if isinstance(t, dict)
        ]


@dataclass
class ScriptedChat:
    """The Chat Completions API, scripted (see the module docstring)."""

    model: str = "stand-in"
    queue: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    exchanges: list[ChatExchange] = field(default_factory=list)
    side: list[dict[str, Any]] = field(default_factory=list)
    unexpected: list[str] = field(default_factory=list)
    _ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    def script(self, *turns: tuple[str, dict[str, Any]]) -> None:
        """Queue labelled turns."""
        self.queue.extend(turns)

    def __call__(self, request: Request) -> Reply:
        """Answer one request (runs in the server's thread)."""
        path = request.path.split("?", 1)[0]
        if request.method in ("GET", "HEAD"):
            return Reply.of_json(
                {"object": "list", "data": [{"id": self.model, "object": "model"}]}
            )
        if not path.endswith("/chat/completions"):
            self.unexpected.append(f"{request.method} {request.path}")
            return Reply.of_json({"error": {"message": "not scripted"}}, 404)
        body = request.json if isinstance(request.json, dict) else {}
        if not body.get("tools"):
            self.side.append(body)
            step = say("Notes")
        else:
            label, step = self.queue.pop(0) if self.queue else ("extra", say("Nothing more."))
            self.exchanges.append(ChatExchange(label, body))
        return self._reply(step, bool(body.get("stream")))

    def _reply(self, step: dict[str, Any], stream: bool) -> Reply:
        return chat_reply(
            step, stream=stream, model=self.model, call_id=f"call_{next(self._ids):04d}"
        )

    def labels(self) -> list[str]:
        """The labels of the turns answered so far, in order."""
        return [e.label for e in self.exchanges]

    def by_label(self, label: str) -> ChatExchange:
        """The request answered by the turn labelled ``label``."""
        found = [e for e in self.exchanges if e.label == label]
        assert found, f"no request was answered by {label!r}: {self.labels()}"
        return found[0]

    def after(self, label: str) -> ChatExchange:
        """The request that followed turn ``label`` (it carries that tool call's result)."""
        labels = self.labels()
        assert label in labels, f"{label!r} never ran: {labels}"
        index = labels.index(label) + 1
        assert index < len(self.exchanges), f"nothing followed {label!r}: {labels}"
        return self.exchanges[index]
