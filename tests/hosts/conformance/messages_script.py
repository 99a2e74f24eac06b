"""A scripted Anthropic Messages API for the hosts that can talk to one (Copilot CLI's BYOK
provider ``anthropic``, Qwen Code's ``anthropic`` auth, Factory Droid's custom models).

:class:`ScriptedMessages` answers ``POST /v1/messages`` (streamed SSE or plain JSON, as the
request asks) from a queue of labelled turns: each request that offers tools (the agent's own
loop) takes the next turn; any other request (a title, a summary, a classifier) gets a short
text answer and is kept in ``side``. A compaction's summary request is recognised by its words
and counted. Every answered request is kept with its label, so a test can look at what the model
saw after each scripted tool call.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass, field
from typing import Any

from tests.hosts.conformance.conftest import Reply, Request

SUMMARY_WORDS = ("summar", "compact", "checkpoint")
"""A request without tools whose last message holds one of these asks for a summary."""


def say(text: str) -> list[dict[str, Any]]:
    """One assistant turn that answers ``text``."""
    return [{"type": "text", "text": text}]


def call(name: str, **tool_input: Any) -> list[dict[str, Any]]:
    """One assistant turn that calls tool ``name`` with ``tool_input``."""
    return [{"type": "tool_use", "name": name, "input": tool_input}]


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts = []
    for block in content or []:
        if isinstance(block, dict):
            if block.get("type") == "text":
                parts.append(str(block.get("text", "")))
            elif block.get("type") == "tool_result":
                parts.append(json.dumps(block.get("content"), ensure_ascii=False))
    return "\n".join(parts)


@dataclass
class Exchange:
    """One agent request and the label of the scripted turn that answered it."""

    label: str
    body: dict[str, Any]

    def text(self) -> str:
        """The whole request (system prompt and messages) as one string, for searching."""
        return json.dumps([self.body.get("system"), self.body.get("messages")], ensure_ascii=False)

    def last_user(self) -> str:
        """The text and tool results of the request's last user message."""
        messages = self.body.get("messages") or [{}]
        return _text(messages[-1].get("content"))

    def tool_results(self) -> str:
        """The ``tool_result`` blocks of the last user message, as JSON text."""
        messages = self.body.get("messages") or [{}]
        content = messages[-1].get("content")
        blocks = (
            [b for b in content or [] if isinstance(b, dict)] if isinstance(content, list) else []
        )
        return json.dumps([b for b in blocks if b.get("type") == "tool_result"], ensure_ascii=False)

    def tools(self) -> list[str]:
        """The names of the tools the request offered."""
        return [str(t.get("name")) for t in self.body.get("tools") or [] if isinstance(t, dict)]


@dataclass
class ScriptedMessages:
    """The Anthropic Messages API, scripted (see the module docstring)."""

    model: str = "claude-sonnet-4-5"
    queue: list[tuple[str, list[dict[str, Any]]]] = field(default_factory=list)
    exchanges: list[Exchange] = field(default_factory=list)
    side: list[dict[str, Any]] = field(default_factory=list)
    summaries: int = 0
    unexpected: list[str] = field(default_factory=list)
    input_tokens: int = 120
    big_on: str = ""  # the turn with this label reports a prompt near a 200k window (compaction)
    _ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    def script(self, *turns: tuple[str, list[dict[str, Any]]]) -> None:
        """Queue labelled turns."""
        self.queue.extend(turns)

    def __call__(self, request: Request) -> Reply:
        """Answer one request (runs in the server's thread)."""
        path = request.path.split("?", 1)[0]
        if request.method in ("GET", "HEAD"):
            if path.endswith("/models"):
                return Reply.of_json({"data": [{"id": self.model, "type": "model"}]})
            return Reply.of_json({})
        if not path.endswith("/messages"):
            if path.endswith("/count_tokens"):
                return Reply.of_json({"input_tokens": self.input_tokens})
            self.unexpected.append(f"{request.method} {request.path}")
            return Reply.of_json({"error": {"type": "not_found", "message": "not scripted"}}, 404)
        body = request.json if isinstance(request.json, dict) else {}
        stream = bool(body.get("stream"))
        messages = body.get("messages") or [{}]
        last = _text(messages[-1].get("content")).lower()
        tokens = self.input_tokens
        if not body.get("tools"):
            if any(word in last for word in SUMMARY_WORDS):
                self.summaries += 1
                blocks = say("<summary>The person is tidying notes.txt.</summary>")
            else:
                blocks = say("Notes")
            self.side.append(body)
        else:
            label, blocks = self.queue.pop(0) if self.queue else ("extra", say("Nothing more."))
            if self.big_on and label == self.big_on:
                tokens = 190_000
            self.exchanges.append(Exchange(label, body))
        model = str(body.get("model") or self.model)
        return self._sse(model, blocks, tokens) if stream else self._json(model, blocks, tokens)

    def _blocks(self, blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
        out = []
        for block in blocks:
            if block["type"] == "tool_use":
                out.append({**block, "id": f"toolu_{next(self._ids):04d}"})
            else:
                out.append(block)
        return out

    def _json(self, model: str, blocks: list[dict[str, Any]], tokens: int) -> Reply:
        content = self._blocks(blocks)
        stop = "tool_use" if any(b["type"] == "tool_use" for b in content) else "end_turn"
        return Reply.of_json(
            {
                "id": f"msg_{next(self._ids):04d}",
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": content,
                "stop_reason": stop,
                "stop_sequence": None,
                "usage": {"input_tokens": tokens, "output_tokens": 12},
            }
        )

    def _sse(self, model: str, blocks: list[dict[str, Any]], tokens: int) -> Reply:
        events: list[tuple[str | None, Any]] = [
            (
                "message_start",
                {
                    "type": "message_start",
                    "message": {
                        "id": f"msg_{next(self._ids):04d}",
                        "type": "message",
                        "role": "assistant",
                        "model": model,
                        "content": [],
                        "stop_reason": None,
                        "stop_sequence": None,
                        "usage": {"input_tokens": tokens, "output_tokens": 1},
                    },
                },
            )
        ]
        stop = "end_turn"
        for index, block in enumerate(self._blocks(blocks)):
            if block["type"] == "text":
                start: dict[str, Any] = {"type": "text", "text": ""}
                delta: dict[str, Any] = {"type": "text_delta", "text": block["text"]}
            else:
                stop = "tool_use"
                start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
                delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
            events += [
                (
                    "content_block_start",
                    {"type": "content_block_start", "index": index, "content_block": start},
                ),
                (
                    "content_block_delta",
                    {"type": "content_block_delta", "index": index, "delta": delta},
                ),
                ("content_block_stop", {"type": "content_block_stop", "index": index}),
            ]
        events += [
            (
                "message_delta",
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": stop, "stop_sequence": None},
                    "usage": {"output_tokens": 12},
                },
            ),
            ("message_stop", {"type": "message_stop"}),
        ]
        return Reply.sse(events)

    def labels(self) -> list[str]:
        """The labels of the turns answered so far, in order."""
        return [e.label for e in self.exchanges]

    def by_label(self, label: str) -> Exchange:
        """The request answered by the turn labelled ``label``."""
        found = [e for e in self.exchanges if e.label == label]
        assert found, f"no request was answered by {label!r}: {self.labels()}"
        return found[0]

    def after(self, label: str) -> Exchange:
        """The request that followed turn ``label`` (it carries that tool call's result)."""
        labels = self.labels()
        assert label in labels, f"{label!r} never ran: {labels}"
        index = labels.index(label) + 1
        assert index < len(self.exchanges), f"nothing followed {label!r}: {labels}"
        return self.exchanges[index]
