"""Polarity: whether two beliefs about the same subject agree or contradict each other.

Shingle similarity (:func:`memdir.kernel.lang.text.similarity`) cannot tell "Always use tabs for
indentation in Makefiles" from "Never use tabs for indentation in Makefiles": five of their seven
shingles are equal (0.71, above the 0.7 that merges a ``remember``), yet one reverses the other.
This module reads a belief's *stance* instead: which subject words it is for, which it is
against, and which only set its scope. It is deterministic (word lists, no model).

**Stance.** A text is split into clauses at punctuation and at "but". A clause is *against* its
words when it holds an odd number of negators: ``not``, ``no``, ``never``, ``avoid``, ``stop``,
``forbid``… (``n't`` is read as ``not``), and in Chinese and Japanese the forms the observer's
and request patterns already know (``不要``, ``永远不要``, ``千万不要``, ``别``; ``ない``,
``ません``) and a few more (``不能``, ``不用``, ``禁止``…). A contrast opens a sub-clause that is
against what follows it: "use bun, **not** npm", "bun **instead of** npm", "bun **rather than**
npm", "**prefer** bun **over** npm", "用 bun **而不是** npm". A bare ``not``/``no`` right
after a subject word (no auxiliary between) is such a contrast ("bun not npm"); after an
auxiliary ("tests must not fail") it negates the whole clause. Words after a scope preposition
(``in``, ``for``, ``on``, ``when``…) are the belief's scope, neither for nor against. Stop words,
markers that do not change the meaning (``always``, ``must``, ``please``) and light verbs
(``use``, ``prefer``, ``choose``…) are dropped; the rest are stemmed index terms.

**Opposed.** Two stances contradict when a term one is for, the other is against (a *clash*),
their scopes are compatible (one has none, or they share a term), and either the clash is at
least half of all the terms the two are for or against, or the clashing term is one that a
contrast explicitly rejected and the other text is a directive ("use bun, not npm" against
"use npm for installs"; not against "npm is installed on CI machines").

**Agree.** Two directive texts (each holds a negator, a contrast, a marker or a light verb)
say the same when they are for the same terms, against the same terms, and share their scope:
"Use bun, not npm" and "Use bun instead of npm". Plain statements of fact are never judged
by stance ("Alice reports to Bob" and "Bob reports to Alice" hold the same words).

Imports: standard library only.
"""

from __future__ import annotations

import re
from functools import lru_cache

from memdir.kernel.lang.text import STOP_WORDS, is_cjk, normalize, word_term, words


def _listed(words_: str, *, stemmed: bool = False) -> frozenset[str]:
    """A word list written as text (it reads best so), optionally as index stems."""
    return frozenset(word_term(w) if stemmed else w for w in words_.split())


_NEGATORS = _listed(
    "not no never nor neither avoid avoiding stop forbid forbidden disallow disallowed "
    "prohibit prohibited refrain dont cant wont shouldnt mustnt doesnt didnt isnt arent "
    "cannot"
)
"""English words that reverse a clause (``don't`` is rewritten to ``do not`` first)."""
_BARE = frozenset({"not", "no"})
"""Negators that, right after a subject word, mark a rejected alternative ("bun not npm")."""
_AUX = _listed(
    "do does did must should shall will would can could may might is are was were be been "
    "has have had need needs ought"
)
"""Auxiliaries: a ``not`` after one negates its clause ("tests must not fail")."""
_MARKERS = _listed("always must should please ensure sure make only definitely every ever")
"""Words that insist without changing what a directive says."""
_LIGHT = _listed(
    "use uses used using prefer prefers preferred choose chose pick go stick rely "
    "want like need favor favour",
    stemmed=True,
)
"""Light verbs (as stems): "use X" and "prefer X" are both for X."""
_PREFER = _listed("prefer prefers preferred favor favour choose", stemmed=True)
_PREFER_THAN = frozenset({"over", "to", "than"})
"""After a prefer verb and its object, these introduce the rejected alternative."""
_CONTRAST_LEAD = {"instead": "of", "rather": "than"}
"""Two-word contrasts: ``instead of`` and ``rather than`` (``in place of`` is below)."""
_SCOPE = _listed("in for on inside within when while during under across per whenever")
"""Prepositions whose words set where a belief holds, not what it is for or against."""
_GENERIC_SCOPE = _listed("repo repository project codebase here code everywhere", stemmed=True)
"""Scope words that name every scope ("in this repository"): they never separate two scopes."""
_BREAK = re.compile(r"[,;:.!?()\[\]\n\u3001\u3002\uff0c\uff1b\uff1a\uff01\uff1f]")
_APOSTROPHE = re.compile(r"(?<=[a-z])n't\b")

_CJK_NEGATORS = (
    "永远不要", "千万不要", "绝对不要", "不要", "不能", "不用", "不许", "不准", "不可",
    "不应", "不该", "不得", "禁止", "避免", "勿", "しないで", "しない", "ないで", "ません",
    "ない", "ダメ", "だめ",
)  # fmt: skip
"""CJK negators, longest first. ``不要`` and its emphatic forms come from the observer's rule
pattern (memdir.observe.extract); Japanese ``ない``/``ません`` end the verb they negate."""
_CJK_CONTRAST = ("而不是", "而非", "不是")
"""CJK contrasts: "用 bun 而不是 npm" rejects npm."""
_CJK_MARKERS = ("总是", "务必", "必须", "一定", "始终", "永远", "常に", "必ず", "使用", "用")
"""CJK insistence markers (``总是``, ``务必`` from the observer's pattern) and light verbs."""
_CJK_LEADING_NEGATOR = "别"
"""``别`` (don't) counts only at the start of a run: it is also part of 特别, 区别, 别人."""


class Stance:
    """What one text is for, against, and scoped to (sets of stemmed index terms).

    A plain class with slots, not a dataclass: the hook path imports this module.
    """

    __slots__ = ("against", "directive", "favoured", "rejected", "scope")

    def __init__(
        self,
        favoured: frozenset[str],
        against: frozenset[str],
        rejected: frozenset[str],
        scope: frozenset[str],
        directive: bool,
    ) -> None:
        self.favoured = favoured  # terms the text is for
        self.against = against  # terms the text is against (negated clauses and contrasts)
        self.rejected = rejected  # the part of ``against`` that a contrast rejected
        self.scope = scope  # terms naming where it holds
        self.directive = directive  # it holds a negator, contrast, marker or light verb

    def __repr__(self) -> str:
        return (
            f"Stance(for={sorted(self.favoured)}, against={sorted(self.against)}, "
            f"rejected={sorted(self.rejected)}, scope={sorted(self.scope)})"
        )


class _Builder:
    """Walks tokens clause by clause and collects a :class:`Stance`."""

    def __init__(self) -> None:
        self.favoured: set[str] = set()
        self.against: set[str] = set()
        self.rejected: set[str] = set()
        self.scope: set[str] = set()
        self.directive = False
        self.follows = False  # the clause before this one said something
        self.clause()

    def clause(self) -> None:
        """Start a clause: positive, nothing said yet, not in a scope, no contrast."""
        self.negations = 0
        self.terms: list[str] = []
        self.spoken = False  # a subject or scope word was seen in this clause
        self.contrast = False
        self.in_scope = False
        self.preferred = False
        self.prev = ""

    def close(self) -> None:
        """File the clause's terms under for or against, and start the next clause."""
        negative = self.negations % 2 == 1
        for term in self.terms:
            if negative:
                self.against.add(term)
                if self.contrast:
                    self.rejected.add(term)
            else:
                self.favoured.add(term)
        self.follows = self.spoken
        self.clause()

    def contrast_clause(self) -> None:
        """Close what came before and open a contrast: what follows is rejected."""
        self.close()
        self.negations, self.contrast, self.directive = 1, True, True

    def insist(self) -> None:
        """A marker, light verb or negator: it is a directive, and any scope phrase ends."""
        self.directive = True
        self.in_scope = False

    def negate(self, word: str) -> None:
        """A negator: negate the clause, or open a contrast after a subject word."""
        self.insist()
        after_subject = self.spoken and self.prev not in _AUX
        if after_subject and (word in _BARE or self.prev in ("and", "or")):
            self.contrast_clause()  # "bun not npm", "use bun and never npm"
        elif not self.spoken and not self.prev and self.follows and word in _BARE:
            self.contrast_clause()  # "use bun, not npm"
        else:
            self.negations += 1

    def word(self, word: str) -> None:
        """One word of a non-CJK run."""
        if _CONTRAST_LEAD.get(self.prev) == word and self.spoken:
            self.contrast_clause()  # "instead of", "rather than"
        elif word == "place" and self.prev == "in" and self.spoken:
            self.contrast_clause()  # "in place of"; the "of" that follows is a stop word
        elif word in _NEGATORS:
            self.negate(word)
        elif self.preferred and self.terms and word in _PREFER_THAN:
            self.contrast_clause()  # "prefer bun over npm"
        elif word in _SCOPE:
            self.in_scope = True
        elif word in _MARKERS or word in _CONTRAST_LEAD:
            self.insist()
        elif word not in STOP_WORDS:
            self.term(word_term(word))
        self.prev = word

    def term(self, term: str) -> None:
        """A subject, scope or light-verb term."""
        if term in _LIGHT:
            self.insist()
            self.preferred = self.preferred or term in _PREFER
            return
        self.spoken = True
        if self.in_scope:
            if term not in _GENERIC_SCOPE:
                self.scope.add(term)
        else:
            self.terms.append(term)

    def cjk(self, run: str) -> None:
        """A run of CJK characters: markers found in it, the rest as bigram terms.

        A CJK negator governs its whole clause (the topic comes first: "Makefile 里不要用空格");
        ``而不是`` after a subject opens a contrast.
        """
        if run.startswith(_CJK_LEADING_NEGATOR):
            self.negations += 1
            self.insist()
            run = run[1:]
        rest = ""
        i = 0
        while i < len(run):
            contrast = next((m for m in _CJK_CONTRAST if run.startswith(m, i)), "")
            negator = next((m for m in _CJK_NEGATORS if run.startswith(m, i)), "")
            marker = next((m for m in _CJK_MARKERS if run.startswith(m, i)), "")
            found = contrast or negator or marker
            if not found:
                rest += run[i]
                i += 1
                continue
            self._cjk_terms(rest)
            rest = ""
            if contrast and self.spoken:
                self.contrast_clause()
            elif contrast or negator:
                self.negations += 1
                self.insist()
            else:
                self.insist()
            i += len(found)
        self._cjk_terms(rest)
        self.prev = run

    def _cjk_terms(self, run: str) -> None:
        if not run:
            return
        pieces = [run] if len(run) == 1 else [run[i : i + 2] for i in range(len(run) - 1)]
        for piece in pieces:
            self.term(piece)

    def stance(self) -> Stance:
        """Close the last clause and return the stance."""
        self.close()
        return Stance(
            frozenset(self.favoured - self.against),
            frozenset(self.against - self.favoured),
            frozenset(self.rejected - self.favoured),
            frozenset(self.scope),
            self.directive,
        )


_CONTRACTIONS = (("won't", "will not"), ("can't", "can not"), ("shan't", "shall not"))


@lru_cache(maxsize=4096)
def stance(text: str) -> Stance:
    """Return what ``text`` is for, against and scoped to (see the module docstring).

    Args:
        text: One belief, in any script.

    Returns:
        A :class:`Stance` of stemmed terms; a term a text is both for and against counts as
        neither.
    """
    normal = normalize(text).replace("\u2019", "'").replace("cannot", "can not")
    for short, long in _CONTRACTIONS:
        normal = normal.replace(short, long)
    normal = _APOSTROPHE.sub(" not", normal)
    build = _Builder()
    for piece in _BREAK.split(normal):
        for run in words(piece):
            if is_cjk(run):
                build.cjk(run)
            elif run == "but":
                build.close()
            else:
                build.word(run)
        build.close()
    return build.stance()


CLASH_SHARE = 0.5
"""Least share of the terms two texts are for or against that must clash for a contradiction
(unless a contrast rejected the clashing term). "Never push to main" / "Always push tags" clash
on one term of three (push), below it; "Always use tabs…" / "Never use tabs…" on all of them."""


def _scopes_meet(a: Stance, b: Stance) -> bool:
    return not a.scope or not b.scope or bool(a.scope & b.scope)


def opposed(a: str, b: str) -> bool:
    """Return whether ``a`` and ``b`` contradict each other (see the module docstring).

    Args:
        a: One belief's text.
        b: Another's.

    Returns:
        True when a term one is for the other is against, their scopes meet, and the clash
        is at least :data:`CLASH_SHARE` of their terms or was rejected by a contrast (and the
        other text is a directive).
        Symmetric; False for unrelated texts and for texts that agree.
    """
    sa, sb = stance(a), stance(b)
    clash = (sa.favoured & sb.against) | (sa.against & sb.favoured)
    if not clash or not _scopes_meet(sa, sb):
        return False
    if (clash & sa.rejected and sb.directive) or (clash & sb.rejected and sa.directive):
        return True
    stated = sa.favoured | sa.against | sb.favoured | sb.against
    return len(clash) >= CLASH_SHARE * len(stated)


def agree(a: str, b: str) -> bool:
    """Return whether two directives say the same thing in different words.

    Args:
        a: One belief's text.
        b: Another's.

    Returns:
        True when both are directives (:class:`Stance` ``directive``), they are for the same
        terms and against the same terms (not all empty), and their scopes are equal.
        "Use bun, not npm" and "Prefer bun over npm" agree; two statements of fact never do.
    """
    sa, sb = stance(a), stance(b)
    return (
        sa.directive
        and sb.directive
        and bool(sa.favoured or sa.against)
        and (sa.favoured, sa.against, sa.scope) == (sb.favoured, sb.against, sb.scope)
    )


def is_directive(text: str) -> bool:
    """Return whether ``text`` holds a negator, a contrast, an insistence marker or a light verb."""
    return stance(text).directive


__all__ = ["CLASH_SHARE", "Stance", "agree", "is_directive", "opposed", "stance"]
