"""Recall behaviour a user relies on: CJK (B01), ranking factors, statuses, explain."""

from pathlib import Path

import pytest

from memdir import service
from memdir.kernel.base.caller import Caller


def _texts(store: Path, query: str, **options: object) -> list[str]:
    return [h.doc["text"] for h in service.recall(store, query, **options).hits]  # type: ignore[arg-type]


# B01: text in unspaced scripts is found by two-character words and longer ones.
@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("红色主题", "项目默认使用红色主题作为配色方案"),
        ("配色方案", "项目默认使用红色主题作为配色方案"),
        ("配色", "项目默认使用红色主题作为配色方案"),
        ("バックアップ", "設定ファイルは毎晩自動でバックアップされる"),
        ("设定", None),
        ("백업", "설정 파일은 매일 밤 백업됩니다"),
        ("red 主题", "项目默认使用红色主题作为配色方案"),
    ],
)
def test_cjk_records_are_found_by_short_and_long_words(
    store: Path, query: str, expected: str | None
) -> None:
    for text in (
        "项目默认使用红色主题作为配色方案",
        "設定ファイルは毎晩自動でバックアップされる",
        "설정 파일은 매일 밤 백업됩니다",
        "The dashboard uses a red theme",
    ):
        service.remember(store, text)
    found = _texts(store, query)
    if expected is None:
        assert "项目默认使用红色主题作为配色方案" not in found
    else:
        assert found[0] == expected or (query.startswith("red") and expected in found)


def test_latin_ranking_still_works_beside_cjk(store: Path) -> None:
    service.remember(store, "项目默认使用红色主题作为配色方案")
    service.remember(store, "The dashboard uses a red theme")
    service.remember(store, "Red is also the colour of the error banner")
    assert _texts(store, "red theme")[0] == "The dashboard uses a red theme"


def test_importance_breaks_a_tie_and_explain_shows_every_factor(store: Path) -> None:
    low = service.remember(store, "Deploy with the blue pipeline", importance=2).record
    high = service.remember(store, "Deploy with the green pipeline", importance=9).record
    result = service.recall(store, "deploy pipeline", explain=True)
    assert [h.doc["id"] for h in result.hits] == [high.id, low.id]
    top = result.hits[0].to_json(explain=True)["explain"]
    assert top["matched"] == ["deploy", "pipeline"]
    assert top["importance"] == pytest.approx(0.75 + 0.05 * 9)
    assert top["recency"] == pytest.approx(1.0, abs=1e-3)
    assert top["relevance"] > 0
    assert result.hits[0].score == pytest.approx(
        top["relevance"] * top["recency"] * top["importance"], rel=1e-4
    )


def test_a_single_record_store_still_scores_above_zero(store: Path) -> None:
    service.remember(store, "Use pnpm, not npm")
    hits = service.recall(store, "pnpm").hits
    assert hits and hits[0].score > 0.1


def test_candidates_are_only_returned_when_asked(store: Path) -> None:
    service.remember(
        store,
        "Observer thinks tabs are preferred",
        status="candidate",
        caller=Caller("observer", "observer"),
    )
    assert _texts(store, "tabs preferred") == []
    assert _texts(store, "tabs preferred", include_candidates=True) == [
        "Observer thinks tabs are preferred"
    ]


def test_kind_filter_and_limit(store: Path) -> None:
    for n in range(5):
        service.remember(store, f"Rule number {n} about testing", kind="rule")
    service.remember(store, "A fact about testing")
    assert len(_texts(store, "testing", limit=3)) == 3
    assert _texts(store, "testing", kinds=["fact"]) == ["A fact about testing"]


def test_a_query_of_only_symbols_returns_nothing_without_error(store: Path) -> None:
    service.remember(store, "Something")
    assert _texts(store, "?!* ---") == []
    assert _texts(store, '" OR NEAR(') == []
