"""A scripted stand-in for the OpenAI Responses API, as Codex 0.171.0 streams it.

Codex posts every model call to ``POST {base_url}/responses`` with ``stream: true`` and reads
Server-Sent Events: ``response.created``, ``response.output_item.added`` / ``.done`` (an assistant
``message``, a ``function_call``, a freeform ``custom_tool_call`` such as ``apply_patch``, a
client-side ``tool_search_call``), ``response.output_text.delta`` and, last,
``response.completed`` carrying the token ``usage`` (which drives automatic compaction). A stream
that ends without ``response.completed`` is retried, so every answer ends with one.

The script is keyed by a tag the test puts in each prompt (``<<t1>>``…): each request whose
newest user message holds a tag takes the next step of that tag's list; a step is either a
tool call or a final text. A request whose newest user message holds no tag is Codex's own
compaction prompt: it gets a summary that carries the tag of the turn in progress, so the turn
goes on after the compacted history. Anything else gets a plain final answer.
"""

from __future__ import annotations

import itertools
import json
import re
import threading
from dataclasses import dataclass, field
from typing import Any

from tests.hosts.conformance.conftest import Reply, Request

TAG = re.compile(r"<<(t\d+)>>")
SUMMARY = "SUMMARY OF THE WORK SO FAR <<{tag}>>: the notes file was read and edited."
"""What the stand-in answers a compaction prompt with (it reaches the model in later turns)."""


@dataclass
class Step:
    """One model answer: a tool call (``kind`` function, custom, search) or final ``text``."""

    kind: str  # "text" | "function" | "custom" | "search"
    name: str = ""
    arguments: Any = None  # a JSON object (function), patch text (custom), a query (search)
    text: str = ""
    namespace: str | None = None  # a deferred MCP tool's namespace ("mcp__memdir__")
    tokens: int = 200  # total_tokens reported in response.completed


def shell(command: str, tokens: int = 200) -> Step:
    """A call of Codex's shell tool (``exec_command``)."""
    return Step("function", "exec_command", {"cmd": command, "yield_time_ms": 5000}, tokens=tokens)


def patch(text: str) -> Step:
    """A call of Codex's freeform ``apply_patch`` tool."""
    return Step("custom", "apply_patch", text)


def final(text: str, tokens: int = 200) -> Step:
    """The turn's last answer."""
    return Step("text", text=text, tokens=tokens)


@dataclass
class CodexScript:
    """The model's side of a scripted Codex session; call it as a LoopbackServer ``answer``."""

    turns: dict[str, list[Step]]
    bodies: list[dict[str, Any]] = field(default_factory=list)  # every /responses body
    compactions: list[dict[str, Any]] = field(default_factory=list)  # the compaction requests
    served: list[tuple[str, Step]] = field(default_factory=list)
    _cursor: dict[str, int] = field(default_factory=dict)
    _ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self, request: Request) -> Reply:
        """Answer one request Codex made (see the module docstring)."""
        path = request.path.split("?", 1)[0]
        if request.method == "GET" and path.endswith("/models"):
            return Reply.of_json({"data": [], "models": []})
        if request.method != "POST" or not path.endswith("/responses"):
            return Reply.of_json({"error": {"message": f"not scripted: {path}"}}, 404)
        body = request.json
        assert isinstance(body, dict), "Codex posted a body that is not a JSON object"
        with self._lock:
            self.bodies.append(body)
            tag, last_tag = _tags(body)
            if tag is None:
                self.compactions.append(body)
                step = final(SUMMARY.format(tag=last_tag or "t0"))
            else:
                steps = self.turns.get(tag, [])
                index = self._cursor.get(tag, 0)
                self._cursor[tag] = index + 1
                step = steps[index] if index < len(steps) else final(f"Done with {tag}.")
            self.served.append((tag or "compact", step))
            return Reply.sse(self._events(step))

    def _events(self, step: Step) -> list[tuple[str | None, Any]]:
        n = next(self._ids)
        rid = f"resp_{n}"
        if step.kind == "text":
            item: dict[str, Any] = {
                "type": "message",
                "role": "assistant",
                "id": f"msg_{n}",
                "status": "completed",
                "content": [{"type": "output_text", "text": step.text, "annotations": []}],
            }
        elif step.kind == "function":
            item = {
                "type": "function_call",
                "id": f"fc_{n}",
                "call_id": f"call_{n}",
                "name": step.name,
                "arguments": json.dumps(step.arguments),
                "status": "completed",
            }
            if step.namespace:
                item["namespace"] = step.namespace
        elif step.kind == "custom":
            item = {
                "type": "custom_tool_call",
                "id": f"ctc_{n}",
                "call_id": f"call_{n}",
                "name": step.name,
                "input": step.arguments,
                "status": "completed",
            }
        else:
            item = {
                "type": "tool_search_call",
                "id": f"tsc_{n}",
                "call_id": f"call_{n}",
                "execution": "client",
                "status": "completed",
                "arguments": {"query": step.arguments, "limit": 8},
            }
        events: list[tuple[str | None, Any]] = [
            ("response.created", {"type": "response.created", "response": {"id": rid}}),
        ]
        if step.kind == "text":
            empty = {**item, "status": "in_progress", "content": []}
            events += [
                ("response.output_item.added", _ev("response.output_item.added", item=empty)),
                (
                    "response.output_text.delta",
                    _ev("response.output_text.delta", item_id=item["id"], delta=step.text),
                ),
            ]
        events += [
            ("response.output_item.done", _ev("response.output_item.done", item=item)),
            (
                "response.completed",
                _ev(
                    "response.completed",
                    response={
                        "id": rid,
                        "usage": {
                            "input_tokens": step.tokens - 20,
                            "input_tokens_details": None,
                            "output_tokens": 20,
                            "output_tokens_details": None,
                            "total_tokens": step.tokens,
                        },
                    },
                ),
            ),
        ]
        return events


def _ev(kind: str, **fields: Any) -> dict[str, Any]:
    return {"type": kind, **fields}


def text_of(item: dict[str, Any]) -> str:
    content = item.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(c.get("text", "")) for c in content if isinstance(c, dict))
    return ""


def _tags(body: dict[str, Any]) -> tuple[str | None, str | None]:
    """Return (the tag of the newest user message, the newest tag anywhere in the input)."""
    items = [i for i in body.get("input", []) if isinstance(i, dict)]
    users = [i for i in items if i.get("type") == "message" and i.get("role") == "user"]
    newest = TAG.findall(text_of(users[-1])) if users else []
    every = [t for i in items for t in TAG.findall(text_of(i))]
    return (newest[-1] if newest else None), (every[-1] if every else None)


def user_texts(body: dict[str, Any]) -> list[str]:
    """Every user message's text in a request body."""
    return [
        text_of(i)
        for i in body.get("input", [])
        if isinstance(i, dict) and i.get("type") == "message" and i.get("role") == "user"
    ]


def input_text(body: dict[str, Any]) -> str:
    """Everything the model was given in a request, as one string (for `in` checks)."""
    items = [i for i in body.get("input", []) if isinstance(i, dict)]
    return "\n".join(text_of(i) or json.dumps(i, ensure_ascii=False) for i in items)
