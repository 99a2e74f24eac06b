"""Explicit requests to remember, in the person's own words (DESIGN §8).

"Remember that…", "from now on…", "记住…", "以后…": when a person says this in a prompt, they
are the owner speaking, and the prompt hook writes it directly as an ``owner`` record. Only a
sentence that *starts* with such a phrase counts (after "also", "btw", "please"), and questions
("do you remember…?", "remember when…") never do. Everything subtler is left to the observer,
which proposes candidates for review instead of writing beliefs.

Imports: standard library only.
"""

from __future__ import annotations

import re
from functools import cache

TYPE_CHECKING = False  # the hook path never imports typing (start-up cost)
if TYPE_CHECKING:
    from typing import Any

_LEAD = r"^\s*(?:(?:also|and|btw|by the way|oh|ok|okay|so|please|pls)\s*[,:]?\s+)*"
_TRIGGERS = (
    "remember", "note", "keep in mind", "from now on", "going forward", "in the future",
    "from here on", "记住", "以后", "今后", "从现在开始", "从今以后", "往后", "覚えておいて",
    "今後", "これから",
)  # fmt: skip
"""Words every request pattern needs: a prompt with none of them is not compiled against."""


@cache
def _patterns() -> dict[str, Any]:
    """Compile the request patterns on first use (a prompt hook pays only when it needs them)."""
    return {
        "requests": [
            (
                re.compile(
                    _LEAD + r"(?:please\s+)?(?:remember|note|keep in mind)\s+to\s+(?P<body>.+)$",
                    re.I,
                ),
                "rule",
            ),
            (
                re.compile(
                    _LEAD + r"(?:please\s+)?(?:remember|note|keep in mind)(?:\s+that)?\s*[:,-]?\s+"
                    r"(?P<body>.+)$",
                    re.I,
                ),
                "",
            ),
            (
                re.compile(
                    _LEAD + r"(?:from now on|going forward|in the future|from here on)"
                    r"\s*[,:-]?\s+(?P<body>.+)$",
                    re.I,
                ),
                "rule",
            ),
            (re.compile(r"^\s*(?:请)?记住\s*[:：，,、]?\s*(?P<body>.+)$"), ""),
            (
                re.compile(
                    r"^\s*(?:以后|今后|从现在开始|从今以后|往后)\s*[:：，,、]?\s*(?P<body>.+)$"
                ),
                "rule",
            ),
            (re.compile(r"^\s*(?P<body>.+?)(?:を|と|って)?覚えておいて(?:ください|ね)?\s*$"), ""),
            (re.compile(r"^\s*(?:今後|これから(?:は)?)\s*[、,]?\s*(?P<body>.+)$"), "rule"),
        ],
        "not_a_request": re.compile(
            r"^\s*(?:do|did|can|could|would|will)\s+you\s+remember"
            r"|^\s*remember\s+(?:when|how|what|who|where|if|whether)\b",
            re.I,
        ),
        "sentence_break": re.compile(r"(?<=[.!?])\s+|\n+|(?<=[。！？])"),
        "rule_start": re.compile(
            r"^(?:always|never|don'?t|do not|must|avoid|no\s|stop\s|only\s)", re.I
        ),
        "preference": re.compile(
            r"\b(?:prefer|i like|we like|rather than|instead of)\b|\buse\s+\S+,?\s+not\b", re.I
        ),
        "decision": re.compile(
            r"\b(?:we decided|decided to|we chose|we agreed|agreed to|going with)\b", re.I
        ),
    }


MIN_CHARS = 6


class Request:
    """An explicit request to remember: the belief's text and its kind.

    A plain class, not a dataclass: ``dataclasses`` costs a prompt hook 10 ms of imports.
    """

    __slots__ = ("kind", "text")

    def __init__(self, text: str, kind: str) -> None:
        self.text = text
        self.kind = kind

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Request) and (self.text, self.kind) == (other.text, other.kind)

    def __hash__(self) -> int:
        return hash((self.text, self.kind))

    def __repr__(self) -> str:
        return f"Request({self.text!r}, {self.kind!r})"


def infer_kind(text: str, default: str = "fact") -> str:
    """Return ``rule``, ``preference``, ``decision`` or ``default`` from the wording of ``text``."""
    found = _patterns()
    if found["rule_start"].match(text):
        return "rule"
    if found["decision"].search(text):
        return "decision"
    if found["preference"].search(text):
        return "preference"
    return default


def _clean(body: str) -> str:
    body = body.strip().strip("\"'“”‘’").strip()
    body = re.sub(r"\s+", " ", body)
    return body[:1].upper() + body[1:] if body and body[0].isascii() else body


def find_requests(prompt: str) -> list[Request]:
    """Return every explicit request to remember in ``prompt``, in order."""
    found: list[Request] = []
    lowered = prompt.lower()
    if not any(trigger in lowered for trigger in _TRIGGERS):
        return found
    compiled = _patterns()
    for piece in compiled["sentence_break"].split(prompt):
        sentence = piece.strip()
        if not sentence or sentence.endswith(("?", "？")):
            continue
        if compiled["not_a_request"].match(sentence):
            continue
        for pattern, kind in compiled["requests"]:
            hit = pattern.match(sentence)
            if hit is None:
                continue
            text = _clean(hit.group("body").rstrip(".!。！"))
            if len(text) >= MIN_CHARS or (text and not text.isascii()):
                found.append(Request(text, kind or infer_kind(text)))
            break
    return found
