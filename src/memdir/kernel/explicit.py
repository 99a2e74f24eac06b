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
from dataclasses import dataclass

_LEAD = r"^\s*(?:(?:also|and|btw|by the way|oh|ok|okay|so|please|pls)\s*[,:]?\s+)*"
_ENGLISH = [
    (
        re.compile(
            _LEAD + r"(?:please\s+)?(?:remember|note|keep in mind)\s+to\s+(?P<body>.+)$", re.I
        ),
        "rule",
    ),
    (
        re.compile(
            _LEAD
            + r"(?:please\s+)?(?:remember|note|keep in mind)(?:\s+that)?\s*[:,-]?\s+(?P<body>.+)$",
            re.I,
        ),
        "",
    ),
    (
        re.compile(
            _LEAD
            + r"(?:from now on|going forward|in the future|from here on)\s*[,:-]?\s+(?P<body>.+)$",
            re.I,
        ),
        "rule",
    ),
]
_CJK = [
    (re.compile(r"^\s*(?:请)?记住\s*[:：，,、]?\s*(?P<body>.+)$"), ""),
    (
        re.compile(r"^\s*(?:以后|今后|从现在开始|从今以后|往后)\s*[:：，,、]?\s*(?P<body>.+)$"),
        "rule",
    ),
    (re.compile(r"^\s*(?P<body>.+?)(?:を|と|って)?覚えておいて(?:ください|ね)?\s*$"), ""),
    (re.compile(r"^\s*(?:今後|これから(?:は)?)\s*[、,]?\s*(?P<body>.+)$"), "rule"),
]
_NOT_A_REQUEST = re.compile(
    r"^\s*(?:do|did|can|could|would|will)\s+you\s+remember|^\s*remember\s+(?:when|how|what|who|where|if|whether)\b",
    re.I,
)
_SENTENCE_BREAK = re.compile(r"(?<=[.!?])\s+|\n+|(?<=[。！？])")
_RULE_START = re.compile(r"^(?:always|never|don'?t|do not|must|avoid|no\s|stop\s|only\s)", re.I)
_PREFERENCE = re.compile(
    r"\b(?:prefer|i like|we like|rather than|instead of)\b|\buse\s+\S+,?\s+not\b", re.I
)

_DECISION = re.compile(
    r"\b(?:we decided|decided to|we chose|we agreed|agreed to|going with)\b", re.I
)
MIN_CHARS = 6


@dataclass(frozen=True, slots=True)
class Request:
    """An explicit request to remember: the belief's text and its kind."""

    text: str
    kind: str


def infer_kind(text: str, default: str = "fact") -> str:
    """Return ``rule``, ``preference``, ``decision`` or ``default`` from the wording of ``text``."""
    if _RULE_START.match(text):
        return "rule"
    if _DECISION.search(text):
        return "decision"
    if _PREFERENCE.search(text):
        return "preference"
    return default


def _clean(body: str) -> str:
    body = body.strip().strip("\"'“”‘’").strip()
    body = re.sub(r"\s+", " ", body)
    return body[:1].upper() + body[1:] if body and body[0].isascii() else body


def find_requests(prompt: str) -> list[Request]:
    """Return every explicit request to remember in ``prompt``, in order."""
    found: list[Request] = []
    for piece in _SENTENCE_BREAK.split(prompt):
        sentence = piece.strip()

        if not sentence or sentence.endswith(("?", "？")) or _NOT_A_REQUEST.match(sentence):
            continue
        for pattern, kind in [*_ENGLISH, *_CJK]:
            hit = pattern.match(sentence)
            if hit is None:
                continue
            text = _clean(hit.group("body").rstrip(".!。！"))
            if len(text) >= MIN_CHARS or (text and not text.isascii()):
                found.append(Request(text, kind or infer_kind(text)))
            break
    return found
