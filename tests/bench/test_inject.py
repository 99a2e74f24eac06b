"""The injection benchmark on real LoCoMo observations: memdir's rule against plain BM25."""

import json
from pathlib import Path

import pytest

from memdir.bench.inject import CODING_PROMPTS, load, run
from tests.conftest import SHARED, run_cli

DATA = SHARED / "data" / "locomo" / "locomo7-dev.json"


def test_every_observation_becomes_a_record_citing_its_turns() -> None:
    conversations = load(DATA)
    assert len(conversations) == 7
    _, records, prompts, unscored = conversations[0]
    raw = json.loads(DATA.read_text())[0]
    facts = sum(len(v) for session in raw["observation"].values() for v in session.values())
    assert len(records) == facts and all(r["cites"] for r in records)
    adversarial = [p for p in prompts if p.category == "adversarial"]
    assert adversarial and all(not p.relevant for p in adversarial)
    answerable = [p for p in prompts if p.relevant]
    assert len(answerable) + len(adversarial) + unscored == len(raw["qa"])


@pytest.mark.slow
def test_memdir_injects_less_and_on_fewer_irrelevant_prompts_than_before(tmp_path: Path) -> None:
    small = tmp_path / "two.json"
    small.write_text(json.dumps(json.loads(DATA.read_text())[:2]))
    result = run(small)
    assert (result["tune"], result["held_out"]) == (["conv-26"], ["conv-30"])
    for split in ("tune", "held_out"):
        rows = result["splits"][split]
        now, before = rows["memdir"], rows["memdir_before"]
        assert now["silent"] > before["silent"] + 20  # adversarial and chit-chat prompts
        assert now["tokens"] < before["tokens"] / 1.5
        assert now["recall"] > 40  # and it still brings in a cited observation
        coding = now["per_category"]["coding"]
        assert coding["silent"] == 100.0 and coding["recall"] >= 40
    neutral = sum(1 for _, needs in CODING_PROMPTS if not needs)
    assert result["splits"]["tune"]["memdir"]["per_category"]["coding"]["no_relevant"] * 2 in (
        neutral,
        neutral + 1,
    )


def test_bench_inject_refuses_a_file_that_is_not_locomo(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"not": "a list"}')
    done = run_cli("bench", "inject", str(bad))
    assert done.exit_code == 2 and "expected a JSON list of LoCoMo samples" in done.stderr
