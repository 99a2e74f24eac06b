import json

import pytest

from memdir.kernel.lang.text import (
    estimate_tokens,
    fts_match,
    normalized_text,
    query_terms,
    similarity,
    terms,
    truncate,
    truncate_bytes,
)


def test_terms_stem_latin_words_and_split_cjk_runs_into_bigrams() -> None:
    assert terms("Running 红色主题") == ["run", "红色", "色主", "主题", "题"]


def test_terms_strip_diacritics_so_cafe_matches_cafe() -> None:
    assert terms("Café") == terms("cafe")


def test_query_terms_drop_stop_words_but_keep_an_all_stop_word_query() -> None:
    assert query_terms("What is the package manager?") == ["packag", "manag"]
    assert query_terms("who is it") == ["who", "is", "it"]


def test_query_terms_turn_a_cjk_run_into_bigrams_without_the_tail_character() -> None:
    assert query_terms("配色方案") == ["配色", "色方", "方案"]
    assert query_terms("红") == ["红"]


def test_fts_match_quotes_every_term_and_prefixes_single_cjk_characters() -> None:
    assert fts_match(['a"b', "红"]) == '"a""b" OR "红"*'
    assert fts_match([]) == ""


@pytest.mark.parametrize(
    ("a", "b"),
    [
        (
            "The staging server restarts every Sunday at 02:00 UTC.",
            "the  staging server restarts every sunday at 02:00 utc",
        ),
        ("Use pnpm, not npm, in this repository", "Use pnpm not npm in this repo"),
    ],
)
def test_similar_texts_reach_the_near_duplicate_threshold(a: str, b: str) -> None:
    assert similarity(a, b) >= 0.7


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Use pnpm, not npm", "Use npm, not pnpm"),
        ("Always run tests before committing", "Never run tests before committing"),
        ("🚀", "🎯"),
    ],
)
def test_different_beliefs_stay_below_the_threshold(a: str, b: str) -> None:
    assert similarity(a, b) < 0.7


def test_normalized_text_of_symbol_only_text_keys_on_the_symbols() -> None:
    assert normalized_text("🚀") != normalized_text("🎯")
    assert normalized_text(" 🚀 ") == normalized_text("🚀")


# B02: a cap that lands inside an emoji never yields broken text.
@pytest.mark.parametrize("cap", range(18, 41))
def test_truncate_never_splits_an_emoji_cluster(cap: int) -> None:
    text = "Client prefers email 😀 over phone 👍🏽 and 👨‍👩‍👧"
    cut = truncate(text, cap)
    cut.encode("utf-8")
    assert "\ufffd" not in cut
    assert len(cut) <= cap
    json.loads(json.dumps(cut, ensure_ascii=False))
    for cluster in ("👍🏽", "👨‍👩‍👧"):
        if cluster[0] in cut:
            assert cluster in cut


def test_truncate_bytes_fits_the_budget_on_a_long_emoji_body() -> None:
    text = "🦊" * 10_000
    cut = truncate_bytes(text, 101)
    assert len(cut.encode("utf-8")) <= 101
    assert cut.endswith("…")
    assert set(cut[:-1]) == {"🦊"}


def test_estimate_tokens_is_utf8_bytes_over_four_rounded_up() -> None:
    assert estimate_tokens("abcd") == 1
    assert estimate_tokens("abcde") == 2
    assert estimate_tokens("红") == 1
    assert estimate_tokens("") == 0
