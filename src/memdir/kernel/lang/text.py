"""Text as recall sees it: terms, stop words, near-duplicate similarity, safe truncation.

**Terms.** Text is NFKC-normalised and case-folded, then split into words of letters and
digits; Latin words lose their diacritics (``café`` → ``cafe``) and are Porter-stemmed
(:mod:`memdir.kernel.lang.stem`). Runs of Chinese, Japanese and Korean characters, which carry no
spaces between words, become overlapping 2-character terms (bigrams) plus the run's last
character, so a
2-character query word matches inside a longer run, and a longer query word matches through
its bigrams (DESIGN §5: ``unicode61`` alone cannot segment CJK; a trigram index cannot match
two characters). The FTS index stores the space-joined terms; queries go through the same
function, so both sides agree and recall can count terms in Python.

**Stop words.** Dropped from queries only (never from the index): measured on LoCoMo, +5 to
+6 points recall@5 and 6x faster at 100k rows (DESIGN §5). The list is the common English
function words (articles, pronouns, auxiliaries, prepositions, question words), close to
NLTK's English list.

**Similarity.** Near-duplicates are judged on word-bigram shingles, so word order counts:
"use pnpm, not npm" and "use npm, not pnpm" share every word and no shingle.

Imports: standard library only.
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_right
from collections.abc import Iterable, Iterator
from functools import lru_cache
from itertools import pairwise

from memdir.kernel.lang.stem import stem

_CJK_RANGES = (
    (0x1100, 0x11FF),  # Hangul jamo
    (0x3040, 0x30FF),  # Hiragana, Katakana
    (0x3130, 0x318F),  # Hangul compatibility jamo
    (0x31F0, 0x31FF),  # Katakana phonetic extensions
    (0x3400, 0x4DBF),  # CJK extension A
    (0x4E00, 0x9FFF),  # CJK unified ideographs
    (0xAC00, 0xD7AF),  # Hangul syllables
    (0xF900, 0xFAFF),  # CJK compatibility ideographs
    (0xFF66, 0xFF9F),  # half-width Katakana
    (0x20000, 0x3134F),  # CJK extensions B-G
)
_CJK_STARTS = [start for start, _ in _CJK_RANGES]
_WORD = re.compile(r"[^\W_]+")
"""Runs of letters and digits. CJK runs are split out of them in Python: a regular expression
with CJK character classes costs milliseconds to compile, and hooks import this module."""


def _is_cjk_char(ch: str) -> bool:
    point = ord(ch)
    i = bisect_right(_CJK_STARTS, point) - 1
    return i >= 0 and point <= _CJK_RANGES[i][1]


def _runs(normalized: str) -> Iterator[tuple[str, bool]]:
    """Yield ``(run, is_cjk)``: the CJK runs and the other letter-and-digit runs, in order."""
    for token in _WORD.findall(normalized):
        if token.isascii():
            yield token, False
            continue
        start = 0
        cjk = _is_cjk_char(token[0])
        for i in range(1, len(token)):
            now = _is_cjk_char(token[i])
            if now != cjk:
                yield token[start:i], cjk
                start, cjk = i, now
        yield token[start:], cjk


MAX_QUERY_TERMS = 64
"""Longest query, in distinct terms; the rest are ignored (bounds FTS5's OR expansion)."""

STOP_WORDS = frozenset(
    """
    a about above after again against all am an and any are aren't as at be because been
    before being below between both but by can cannot could couldn't did didn't do does
    doesn't doing don't down during each few for from further had hadn't has hasn't have
    haven't having he he'd he'll he's her here here's hers herself him himself his how how's
    i i'd i'll i'm i've if in into is isn't it it's its itself just let's me more most
    mustn't my myself no nor not of off on once only or other ought our ours ourselves out
    over own same shan't she she'd she'll she's should shouldn't so some such than that
    that's the their theirs them themselves then there there's these they they'd they'll
    they're they've this those through to too under until up very was wasn't we we'd we'll
    we're we've were weren't what what's when when's where where's which while who who's
    whom why why's will with won't would wouldn't you you'd you'll you're you've your yours
    yourself yourselves also s t d ll m re ve doesn didn isn aren wasn weren hasn haven
    hadn wouldn shouldn couldn mustn needn
    """.split()  # noqa: SIM905 - a word list reads best as text
)


QUESTION_WORDS = frozenset(
    [
        "kind",
        "type",
        "likely",
        "might",
        "many",
        "much",
        "describe",
        "mention",
        "mentioned",
        "say",
        "said",
        "think",
        "according",
    ]
)
"""Words that shape a question rather than name its subject ("what kind of…", "how many…",
"according to…"). Dropped from journal search queries: chosen on LoCoMo conversations 0-3 and
checked on the held-out 4-6 (benchmarks/locomo_ablation.py)."""


MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)
"""Fixed English month names (never the locale's) for the ``date`` column."""


def month_words(at: str) -> str:
    """Return the month of an ISO instant as words: ``2023-05-08T…`` → ``May 2023``.

    The day number is left out on purpose: a query holding a number ("timeout 30") must not
    match every turn of the 30th.
    """
    try:
        return f"{MONTHS[int(at[5:7]) - 1]} {at[:4]}"
    except (ValueError, IndexError):
        return ""


def normalize(text: str) -> str:
    """Return ``text`` NFKC-normalised and case-folded."""
    return unicodedata.normalize("NFKC", text).casefold()


def words(text: str) -> list[str]:
    """Return the normalised Latin words and CJK runs of ``text``, in order (no bigrams)."""
    return [run for run, _ in _runs(normalize(text))]


def is_cjk(term: str) -> bool:
    """Return whether ``term`` is made of CJK characters (a bigram, a run or a single one)."""
    return bool(term) and _is_cjk_char(term[0])


def _cjk_terms(run: str) -> list[str]:
    if len(run) == 1:
        return [run]
    return [run[i : i + 2] for i in range(len(run) - 1)] + [run[-1]]


@lru_cache(maxsize=65536)
def word_term(word: str) -> str:
    """Return the index term of one normalised word: diacritics removed, Porter-stemmed."""
    if not word.isascii():
        stripped = "".join(
            ch for ch in unicodedata.normalize("NFD", word) if not unicodedata.combining(ch)
        )
        word = unicodedata.normalize("NFC", stripped)
    return stem(word)


def terms(text: str) -> list[str]:
    """Return the index terms of ``text``: stemmed words, CJK runs as bigrams + last character.

    Example: ``terms("Running 红色主题")`` is ``["run", "红色", "色主", "主题", "题"]``.
    """
    normal = normalize(text)
    if normal.isascii():  # the common case: no CJK to split out, every run is a word
        return [word_term(run) for run in _WORD.findall(normal)]
    out: list[str] = []
    for run, cjk in _runs(normal):
        if cjk:
            out.extend(_cjk_terms(run))
        else:
            out.append(word_term(run))
    return out


def index_text(*parts: str | None) -> str:
    """Return the space-joined :func:`terms` of ``parts``: what an FTS column stores."""
    return " ".join(term for part in parts if part for term in terms(part))


def query_terms(
    query: str, *, drop_stop_words: bool = True, extra_stop_words: frozenset[str] = frozenset()
) -> list[str]:
    """Return the distinct terms of a query, in order, stop words dropped.

    A query made only of stop words keeps them, so "who is it" still searches for something.
    A single CJK character stays a single-character term; :func:`fts_match` turns it into a
    prefix query. At most :data:`MAX_QUERY_TERMS` terms are kept.
    """
    every: dict[str, None] = {}
    kept: dict[str, None] = {}
    for run, cjk in _runs(normalize(query)):
        found = (_cjk_terms(run)[:-1] or [run]) if cjk else [word_term(run)]
        for term in found:
            every.setdefault(term, None)
            stop = run in STOP_WORDS or run in extra_stop_words
            if not (drop_stop_words and not cjk and stop):
                kept.setdefault(term, None)
    return list(kept or every)[:MAX_QUERY_TERMS]


def term_words(query: str) -> dict[str, str]:
    """Return each query term with the word it came from (for ``--explain``): stem → word."""
    out: dict[str, str] = {}
    for run, cjk in _runs(normalize(query)):
        if cjk:
            for term in _cjk_terms(run)[:-1] or [run]:
                out.setdefault(term, term)
        else:
            out.setdefault(word_term(run), run)
    return out


def fts_match(query_terms_: Iterable[str]) -> str:
    """Return an FTS5 MATCH expression that matches any of the terms (OR), safely quoted.

    Each term is a quoted FTS5 string, so no user text is ever read as FTS5 syntax; a single
    CJK character becomes a prefix query (``"红"*``) to match the bigrams that start with it.
    Returns an empty string for no terms.
    """
    parts = []
    for term in query_terms_:
        quoted = '"' + term.replace('"', '""') + '"'
        parts.append(quoted + "*" if len(term) == 1 and is_cjk(term) else quoted)
    return " OR ".join(parts)


def normalized_text(text: str) -> str:
    """Return the comparison key for near-duplicates: the words of ``text`` joined by spaces.

    Text with no words at all (emoji, symbols) keys on itself, whitespace collapsed, so
    "🚀" and "🎯" stay different beliefs (case B03).
    """
    found = words(text)
    return " ".join(found) if found else " ".join(normalize(text).split())


def shingles(text: str) -> set[str]:
    """Return the word-bigram shingles of ``text`` (its single word when it has only one).

    CJK runs contribute their character bigrams, which play the role of words there.
    """
    tokens = terms(text)
    tokens = [t for t in tokens if not (len(t) == 1 and is_cjk(t))] or tokens
    if len(tokens) < 2:
        return set(tokens)
    return {f"{a} {b}" for a, b in pairwise(tokens)}


def similarity(a: str, b: str) -> float:
    """Return the Jaccard similarity of the shingles of ``a`` and ``b``, in [0, 1].

    1.0 when the normalised texts are equal (so case, spacing and punctuation never matter).
    """
    if normalized_text(a) == normalized_text(b):
        return 1.0
    sa, sb = shingles(a), shingles(b)
    if not sa or not sb:
        return 0.0
    return len(sa & sb) / len(sa | sb)


_EXTENDS = {"Mn", "Me", "Mc", "Sk", "Cf"}


def _continues_cluster(ch: str) -> bool:
    if (
        ch in "\u200d\ufe0e\ufe0f"
        or "\U0001f3fb" <= ch <= "\U0001f3ff"
        or "\U000e0020" <= ch <= "\U000e007f"
    ):
        return True
    return unicodedata.category(ch) in _EXTENDS


def truncate(text: str, max_chars: int, ellipsis: str = "…") -> str:
    """Return ``text`` cut to at most ``max_chars`` code points, on a character-cluster boundary.

    Never splits a surrogate pair, a combining mark from its base, a skin-tone modifier or a
    ZWJ emoji sequence (case B02): the cut moves left to the start of the cluster it would
    break. The ellipsis counts toward ``max_chars``.
    """
    if len(text) <= max_chars:
        return text
    room = max(max_chars - len(ellipsis), 0)
    cut = room
    while 0 < cut < len(text) and (_continues_cluster(text[cut]) or text[cut - 1] == "\u200d"):
        cut -= 1
    return text[:cut].rstrip() + ellipsis


def truncate_bytes(text: str, max_bytes: int, ellipsis: str = "…") -> str:
    """Return ``text`` cut so its UTF-8 encoding fits ``max_bytes``, on a cluster boundary."""
    if len(text.encode("utf-8")) <= max_bytes:
        return text
    budget = max_bytes - len(ellipsis.encode("utf-8"))
    chars = len(text.encode("utf-8")[: max(budget, 0)].decode("utf-8", errors="ignore"))
    return truncate(text, chars + len(ellipsis), ellipsis)


def estimate_tokens(text: str) -> int:
    """Return ceil(UTF-8 bytes / 4): DESIGN §6's token estimate when no tokenizer is set."""
    return -(-len(text.encode("utf-8")) // 4)


_NEEDLE = re.compile(r"\s*\[(?!\[)([^\[\]\s]{1,32})\]")
MAX_NEEDLES = 5
"""Most leading tags read from one text (wolfmem writes one; a few more are kept)."""


def needle_tags(text: str) -> tuple[str, ...]:
    """Return the needle tags a text starts with: ``"[决定] [安全] …"`` → ``("决定", "安全")``.

    wolfmem tags each fact by a bracketed word at its start (``[决定]`` decision, ``[坑]``
    pitfall, ``[偏好]`` preference, ``[安全]`` security, ``[隐私]`` privacy, ``[事实]`` fact); any
    ``[word]`` counts. A tag holds at least one letter, no space and no bracket, so a Markdown
    checkbox (``[ ]``), a citation (``[12]``) and a wiki link (``[[id]]``) are not tags. The text
    itself is left as written: the tag stays greppable in the file, as wolfmem intends.

    Args:
        text: A belief's text.

    Returns:
        Up to :data:`MAX_NEEDLES` tags, in order, without brackets (empty when none).
    """
    found: list[str] = []
    at = 0
    while len(found) < MAX_NEEDLES:
        match = _NEEDLE.match(text, at)
        if match is None:
            break
        tag = match.group(1)
        if not any(ch.isalpha() for ch in tag):
            break
        if tag not in found:
            found.append(tag)
        at = match.end()
    return tuple(found)
