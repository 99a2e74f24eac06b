"""The offline distiller: explicit statements of preference, rule and decision, no model needed.

It proposes a candidate only for what a person (or, for decisions, the agent) said in so many
words, in English or Chinese: "remember that…", "from now on…", "always…/never…", "we
decided…", "I prefer…", "记住…", "以后…", "我们决定…", "我更喜欢…". Everything else is left to
the optional LLM distiller. Candidates are never recalled or injected until reviewed or
corroborated (DESIGN §4).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memdir.kernel.base.explicit import find_requests, infer_kind
from memdir.kernel.lang.text import is_cjk

MIN_CHARS = 12
"""Turns measuring less than this are noise (acknowledgements, "ok", emoji). Measured by
:func:`measure`: a CJK character counts as two, so a short Chinese decision is kept."""
MAX_SENTENCE_CHARS = 400

_SPLIT = re.compile(r"(?<=[.!?])\s+|\n+|(?<=[。！？])")
_PATTERNS: list[tuple[re.Pattern[str], str, bool]] = [
    # (pattern, kind, applies to assistant turns too)
    (
        re.compile(
            r"^(?:(?:so|ok|okay|also|and),?\s+)?(?:we|the team)\s+(?:have\s+)?"
            r"(?:decided|agreed|chose)\b.{6,}",
            re.I,
        ),
        "decision",
        True,
    ),
    (
        re.compile(
            r"^(?:(?:so|ok|also),?\s+)?(?:let'?s|we should)\s+(?:always|never)\b.{6,}", re.I
        ),
        "rule",
        False,
    ),
    (
        re.compile(r"^(?:please\s+)?(?:always|never|don'?t ever|do not ever)\b.{6,}", re.I),
        "rule",
        False,
    ),
    (
        re.compile(
            r"^(?:i|we)\s+(?:really\s+)?(?:prefer|would rather|like to use|want to use)\b.{4,}",
            re.I,
        ),
        "preference",
        False,
    ),
    (re.compile(r"^(?:我们|团队)(?:已经)?(?:决定|商定|选择)了?.{2,}"), "decision", True),
    (re.compile(r"^我(?:更|比较)?(?:喜欢|偏好|倾向于).{2,}"), "preference", False),
    (re.compile(r"^(?:总是|永远不要|千万不要|不要|务必).{2,}"), "rule", False),
]
_NOISE = re.compile(r"^\s*(?:/\w|[!$>]\s)")  # slash commands, shell lines


@dataclass(frozen=True, slots=True)
class Candidate:
    """A belief proposed from one journal turn."""

    text: str
    kind: str


def measure(text: str) -> int:
    """Return the length of ``text`` with each CJK character counted as two.

    A CJK character carries about a word, where a Latin letter carries a fraction of one: a
    limit counting characters as if they were Latin dropped a nine-to-eleven character Chinese
    decision such as ``我们决定用 Redis`` (11 characters, measured 16 here) as too short.

    Args:
        text: any text.

    Returns:
        The number of characters plus one more for each CJK character.
    """
    if text.isascii():
        return len(text)
    return sum(2 if is_cjk(ch) else 1 for ch in text)


def is_noise(text: str) -> bool:
    """Return whether a turn carries nothing to distil (short, a command, only symbols).

    Args:
        text: one journal turn.

    Returns:
        True for a turn measuring under :data:`MIN_CHARS` (see :func:`measure`), a slash
        command or shell line, or one with no letter or digit.
    """
    stripped = text.strip()
    if measure(stripped) < MIN_CHARS or _NOISE.match(stripped):
        return True
    return not any(ch.isalnum() for ch in stripped)


def extract(text: str, who: str) -> list[Candidate]:
    """Return the candidate beliefs stated explicitly in one turn."""
    if is_noise(text):
        return []
    user = who.lower() in {"user", "human", "owner", "person"}
    found: list[Candidate] = []
    if user:
        found += [Candidate(r.text, r.kind) for r in find_requests(text)]
    for piece in _SPLIT.split(text):
        sentence = piece.strip().strip("\"'“”").strip()
        if not sentence or len(sentence) > MAX_SENTENCE_CHARS or sentence.endswith(("?", "？")):
            continue
        for pattern, kind, any_speaker in _PATTERNS:
            if (user or any_speaker) and pattern.match(sentence):
                clean = sentence.rstrip(".!。！")
                clean = clean[:1].upper() + clean[1:] if clean[:1].isascii() else clean
                if all(clean.lower() != c.text.lower() for c in found):
                    found.append(Candidate(clean, kind if kind != "fact" else infer_kind(clean)))
                break
    return found
