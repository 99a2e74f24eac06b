"""Polarity: which pairs of beliefs contradict, which say the same, which are neither."""

from __future__ import annotations

import pytest

from memdir.kernel.lang.polarity import agree, opposed, stance
from memdir.kernel.lang.text import similarity

OPPOSED = [
    # The fresh-user trial: 0.71 shingle similarity, above the 0.7 that merges a remember.
    ("Always use tabs for indentation in Makefiles", "Never use tabs for indentation in Makefiles"),
    ("Use bun, not npm", "Use npm for installs"),
    ("Use bun, not npm", "Use npm, not bun"),
    ("Use pnpm, not npm, in this repository", "Use npm for installs"),
    ("Use pnpm, not npm, in the web app", "Use npm, not pnpm, in the web app"),
    ("Prefer bun over npm", "Prefer npm over bun"),
    ("Use bun rather than npm", "Use npm rather than bun"),
    ("Use bun instead of npm", "Always install with npm"),
    ("Avoid npm", "Use npm for installs"),
    ("Don't use yarn", "Use yarn"),
    ("Do use yarn", "Do not use yarn"),
    ("Tests must not fail", "Tests must fail"),
    ("We never deploy on Fridays", "We deploy on Fridays"),
    ("The staging server restarts on Sundays", "The staging server doesn't restart on Sundays"),
    ("In Makefiles, never use spaces", "In Makefiles, always use spaces"),
    ("Use tabs, never spaces, in Makefiles", "Never use tabs in Makefiles"),
    ("总是用 tab 缩进 Makefile", "不要用 tab 缩进 Makefile"),
    ("永远不要在周五部署", "总是在周五部署"),
    ("用 bun 而不是 npm", "用 npm"),
    ("Makefile ではタブを使う", "Makefile ではタブを使わない"),
]

SAME = [
    ("Never use tabs in Makefiles", "Do not use tabs in Makefiles"),
    ("Never use tabs for indentation in Makefiles", "Don't use tabs for indenting Makefiles"),
    ("Use bun, not npm", "Use bun instead of npm"),
    ("Use bun, not npm", "Prefer bun over npm"),
    ("Use bun not npm", "Don't use npm, use bun"),
    ("Use pnpm, not npm, in this repository", "Use pnpm not npm in this repo"),
    ("用 bun 而不是 npm", "用 bun，不要用 npm"),
]

NEITHER = [
    ("Never push to main", "Always push tags"),  # one shared verb of three terms
    ("Never use tabs in Python files", "Always use tabs in Makefiles"),  # scopes differ
    ("Never use tabs in Makefiles", "Use spaces in Makefiles"),  # compatible
    ("npm is installed on CI machines", "Use bun, not npm"),  # a fact, not a directive
    ("Alice reports to Bob", "Bob reports to Alice"),  # facts are not judged by stance
    ("Use bun, not npm", "Use bun, not npm, for installs"),  # one is narrower
]


@pytest.mark.parametrize(("a", "b"), OPPOSED)
def test_opposite_polarity_on_one_subject_is_opposed_both_ways(a: str, b: str) -> None:
    assert opposed(a, b) and opposed(b, a)
    assert not agree(a, b)


@pytest.mark.parametrize(("a", "b"), SAME)
def test_the_same_directive_in_other_words_agrees_and_is_not_opposed(a: str, b: str) -> None:
    assert agree(a, b) and agree(b, a)
    assert not opposed(a, b)


@pytest.mark.parametrize(("a", "b"), NEITHER)
def test_related_but_compatible_pairs_are_neither(a: str, b: str) -> None:
    assert not opposed(a, b) and not agree(a, b)


def test_the_trial_pair_is_similar_enough_to_merge_without_polarity() -> None:
    a, b = OPPOSED[0]
    assert similarity(a, b) >= 0.7  # why the shingle check alone lost the new rule


def test_a_text_is_never_opposed_to_itself() -> None:
    for a, b in OPPOSED:
        assert not opposed(a, a) and not opposed(b, b.upper())


def test_stance_reads_for_against_and_scope() -> None:
    got = stance("Use bun, not npm, for installs")
    assert [set(got.favoured), set(got.against), set(got.rejected), set(got.scope)] == [
        {"bun"},
        {"npm"},
        {"npm"},
        {"instal"},
    ]
    negated = stance("Never use tabs for indentation in Makefiles")
    assert [set(negated.favoured), set(negated.against)] == [set(), {"tab"}]
    assert set(negated.scope) == {"indent", "makefil"}
