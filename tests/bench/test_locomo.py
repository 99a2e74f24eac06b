"""The LoCoMo benchmark: evidence parsing quirks, scoring, and memdir above DRAGON."""

import json
from pathlib import Path

from memdir.bench.locomo import DRAGON, load, parse_evidence, run, split
from tests.conftest import SHARED, run_cli

DATA = SHARED / "data" / "locomo" / "locomo7-dev.json"
AUDIT = SHARED / "data" / "locomo" / "locomo7-dev-audit.json"


def test_malformed_evidence_ids_are_repaired_or_dropped() -> None:
    assert parse_evidence(["D8:6; D9:17", "D9:1 D4:4", "D:11:26", "D30:05", "D", "D1:3"]) == [
        "D8:6",
        "D9:17",
        "D9:1",
        "D4:4",
        "D11:26",
        "D30:5",
        "D1:3",
    ]


def test_loading_counts_every_question_with_evidence_and_the_unscored_ones() -> None:
    conversations = load(DATA)
    scored = sum(len(c.questions) for c in conversations)
    unscored = sum(c.unscored for c in conversations)
    raw = json.loads(DATA.read_text())
    assert scored + unscored == sum(len(s["qa"]) for s in raw) == 1347
    assert {q.category for c in conversations for q in c.questions} == {1, 2, 3, 4, 5}


def test_memdir_beats_the_published_dragon_row_at_every_k() -> None:
    result = run(DATA)
    ours = result["memdir"]
    for key, dragon in DRAGON.items():
        assert ours[key] > dragon, (key, ours[key], dragon)
    assert ours["recall@5"] > result["reference_fts5"]["recall@5"]
    assert result["questions_scored"] == 1345
    assert set(ours["per_category"]) == {
        "multi-hop",
        "temporal",
        "open-domain",
        "single-hop",
        "adversarial",
    }


def test_the_cli_prints_json_with_the_documented_keys(tmp_path: Path) -> None:
    one = tmp_path / "one.json"
    one.write_text(json.dumps(json.loads(DATA.read_text())[:1]))
    result = run_cli("bench", "locomo", str(one), "--k", "5,10", "--audit", str(AUDIT), "--json")
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    assert set(doc) >= {"questions_scored", "memdir", "reference_fts5", "dragon"}
    assert set(doc["memdir"]) >= {
        "recall@5",
        "recall@10",
        "recall_all@5",
        "mrr",
        "p50_ms",
        "p95_ms",
        "per_category",
    }
    assert doc["dragon"] == DRAGON
    # one conversation: it is both splits; the splits carry every system, per category
    assert doc["tune"] == doc["held_out"] == ["conv-26"]
    for part in ("tune", "held_out"):
        assert set(doc["splits"][part]) == {"memdir", "reference_fts5"}
        assert doc["splits"][part]["memdir"]["recall@5"] == doc["memdir"]["recall@5"]
        assert "multi-hop" in doc["splits"][part]["memdir"]["per_category"]


def test_tune_and_held_out_splits_are_the_first_four_of_seven_and_the_rest() -> None:
    tune, held = split(load(DATA))
    assert tune == {"conv-26", "conv-30", "conv-41", "conv-42"}
    assert held == {"conv-43", "conv-44", "conv-47"}


def test_a_bad_embedding_choice_is_a_usage_error(tmp_path: Path) -> None:
    one = tmp_path / "one.json"
    one.write_text(json.dumps(json.loads(DATA.read_text())[:1]))
    result = run_cli("bench", "locomo", str(one), "--embed", "openai", "--json")
    assert result.exit_code == 2
    assert "needs embed_url and embed_model" in result.stdout
