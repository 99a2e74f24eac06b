"""Recall statistics per belief, ``[policy] max_active`` and ``--observed-at`` recency (issue 11).

wolfmem counts hits and evicts past 800 facts; memdir counts hits and *demotes* past a cap:
out of injection, still recalled, never deleted. Every "left out" is paired with "still there".
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.conftest import run_cli
from tests.hooks.conftest import run_hook


def _json(*args: str, code: int = 0) -> dict:
    result = run_cli(*args, "--json")
    assert result.exit_code == code, result.output + result.stderr
    return json.loads(result.stdout)


def _prompt(store: Path, prompt: str, session: str = "s1") -> str:
    project = store.parent
    payload = {
        "session_id": session,
        "hook_event_name": "UserPromptSubmit",
        "cwd": str(project),
        "prompt": prompt,
    }
    run = run_hook("UserPromptSubmit", payload, cwd=project)
    return str((run.json or {}).get("hookSpecificOutput", {}).get("additionalContext", ""))


FILLER = [
    "Deploys happen on Tuesdays",
    "The staging cache is Redis 7",
    "Use pnpm, not npm, in this repository",
    "Integration tests need Docker running",
    "The API gateway times out after 30 seconds",
    "Logs go to Loki, metrics to Prometheus",
    "Feature flags live in LaunchDarkly",
    "The mobile app ships every second Thursday",
]


def _filler() -> None:
    """Unrelated beliefs, so that words of the records under test are rare (BM25's IDF)."""
    for text in FILLER:
        _json("remember", text)


def _cap(store: Path, line: str) -> None:
    manifest = store / "memdir.toml"
    text = manifest.read_text(encoding="utf-8")
    manifest.write_text(text.replace("[policy]\n", f"[policy]\n{line}\n", 1), encoding="utf-8")


def test_recall_and_per_prompt_injection_count_as_hits(store: Path) -> None:
    redis = _json("remember", "The staging cache is Redis 7 on port 6380")["id"]
    other = _json("remember", "Deploys happen on Tuesdays")["id"]
    assert _json("get", redis)["recall"] == {
        "hits": 0,
        "last_hit": None,
        "recalled": 0,
        "injected": 0,
    }
    for _ in range(2):
        assert [r["id"] for r in _json("recall", "staging cache redis")["results"]] == [redis]
    assert "Redis 7" in _prompt(store, "which port does the staging redis cache use?")
    stats = _json("get", redis)["recall"]
    assert (stats["hits"], stats["recalled"], stats["injected"]) == (3, 2, 1)
    assert stats["last_hit"] and stats["last_hit"].startswith("20")
    assert _json("get", other)["recall"]["hits"] == 0  # never returned, never counted
    shown = run_cli("get", redis).stdout
    assert "recalled: 3 times (1 injected per prompt)" in shown


ASK_VAT = "Which EU VAT rules apply to billing invoices?"
ASK_LOGO = "What does the blue logo on invoices mean?"


def _billing() -> tuple[str, str, str]:
    _filler()
    vital = _json("remember", "Billing invoices follow the EU VAT rules", "--importance", "9")
    normal = _json("remember", "Billing invoices are numbered per calendar year")
    minor = _json("remember", "The blue logo on invoices marks a reissued one", "--importance", "2")
    return vital["id"], normal["id"], minor["id"]


def test_max_active_demotes_out_of_injection_but_never_out_of_recall(store: Path) -> None:
    _cap(store, "max_active = { fact = 10 }")
    vital, normal, minor = _billing()
    demoted = json.loads((store / "state" / "demoted.json").read_text(encoding="utf-8"))
    assert demoted["ids"] == [minor]  # 11 facts, cap 10: the least important one

    assert "EU VAT" in _prompt(store, ASK_VAT)
    assert "blue logo" not in _prompt(store, ASK_LOGO)  # asked for by name, still demoted
    recalled = {r["id"] for r in _json("recall", "billing invoices")["results"]}
    assert recalled == {vital, normal, minor}  # demoted, not deleted, still active
    assert _json("get", minor)["status"] == "active"

    dream = _json("dream")
    found = [f for f in dream["findings"] if f["code"] == "demoted"]
    assert found and found[0]["ids"] == [minor]
    assert "max_active.fact" in found[0]["fix"]


def test_without_a_cap_nothing_is_demoted(store: Path) -> None:
    _billing()
    assert not (store / "state" / "demoted.json").exists()
    assert "EU VAT" in _prompt(store, ASK_VAT)
    assert "blue logo" in _prompt(store, ASK_LOGO)  # the same prompt, no cap: injected
    assert not [f for f in _json("dream")["findings"] if f["code"] == "demoted"]


def test_a_bad_cap_is_a_clear_error(store: Path) -> None:
    _cap(store, "max_active = { facts = 10 }")
    result = run_cli("remember", "anything at all")
    assert result.exit_code != 0
    assert "unknown kind 'facts'" in result.stderr


def test_dream_names_beliefs_never_recalled_in_90_days(store: Path) -> None:
    old = _json("remember", "The legacy queue is RabbitMQ")["id"]
    used = _json("remember", "The build cache lives in S3")["id"]
    fresh = _json("remember", "The new queue is SQS")["id"]
    for record_id in (old, used):
        path = next((store / "records").glob(f"*/{record_id}.md"))
        text = path.read_text(encoding="utf-8")
        path.write_text(re.sub(r'created_at: "[^"]+"', 'created_at: "2025-01-02T00:00:00Z"', text))
    run_cli("reindex")
    _json("recall", "build cache S3")
    found = [f for f in _json("dream")["findings"] if f["code"] == "never_recalled"]
    assert found and found[0]["ids"] == [old]
    assert used not in found[0]["ids"] and fresh not in found[0]["ids"]


def test_observed_at_ages_a_belief_for_recency(store: Path) -> None:
    then = _json("remember", "The office is in Lisbon", "--observed-at", "2020-01-01")["id"]
    now = _json("remember", "The office has a rooftop in Lisbon")["id"]
    hits = {r["id"]: r["explain"] for r in _json("recall", "office Lisbon", "--explain")["results"]}
    assert hits[then]["age_days"] > 2000
    assert hits[then]["recency"] < 0.86
    assert hits[now]["age_days"] < 1 and hits[now]["recency"] > 0.99


def test_a_store_past_its_write_budget_is_warned_but_healthy(store: Path) -> None:
    manifest = store / "memdir.toml"
    text = manifest.read_text(encoding="utf-8")
    manifest.write_text(re.sub(r"(?m)^active_per_kind = \d+", "active_per_kind = 2", text))
    for text in FILLER[:3]:
        _json("remember", text)
    result = run_cli("health", "--json")
    assert result.exit_code == 0, result.output  # healthy: a budget asks for consolidation
    report = json.loads(result.stdout)
    assert report["ok"] is True
    assert [f["code"] for f in report["findings"] if f["code"].startswith("over_budget")] == [
        "over_budget_active"
    ]
