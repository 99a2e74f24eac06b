"""Write budgets: warned in health, dream and once per session; never deleting (item 4)."""

from __future__ import annotations

import json
from pathlib import Path

from memdir import service
from memdir.service.channel import cli_caller
from tests.conftest import run_cli
from tests.hooks.conftest import run_hook

OWNER = cli_caller({})


def _start(store: Path, session: str, source: str) -> str:
    payload = {
        "session_id": session,
        "hook_event_name": "SessionStart",
        "cwd": str(store.parent),
        "source": source,
    }
    run = run_hook("SessionStart", payload, cwd=store.parent)
    return str((run.json or {}).get("hookSpecificOutput", {}).get("additionalContext", ""))


def test_a_kind_past_its_budget_is_warned_everywhere_and_nothing_is_deleted(store: Path) -> None:
    manifest = store / "memdir.toml"
    manifest.write_text(
        manifest.read_text().replace("active_per_kind = 200", "active_per_kind = 3")
    )
    for n in range(3):
        service.remember(
            store, f"Rule {n}: name branches after tickets {n}", kind="rule", caller=OWNER
        )
    healthy = json.loads(run_cli("health", "--json").stdout)
    assert not [f for f in healthy["findings"] if f["code"].startswith("over_budget")]
    assert "Write budget" not in _start(store, "a", "startup")
    service.remember(store, "Rule 3: squash merge feature branches", kind="rule", caller=OWNER)
    health = run_cli("health", "--json")
    found = [f for f in json.loads(health.stdout)["findings"] if f["code"] == "over_budget_active"]
    assert health.exit_code == 1 and len(found) == 1
    assert "4 active rule records" in found[0]["message"] and "memdir dream" in found[0]["fix"]
    dream = json.loads(run_cli("dream", "--json").stdout)
    assert dream["counts"].get("over_budget_active") == 1
    digest = _start(store, "b", "startup")
    assert "Write budget: 4 active rule records" in digest
    assert "Write budget" not in _start(store, "b", "resume")  # once per session
    assert len([r for r in service.list_records(store) if r.status == "active"]) == 4


def test_candidates_and_the_file_map_have_budgets_too(store: Path) -> None:
    manifest = store / "memdir.toml"
    text = manifest.read_text().replace("candidates = 100", "candidates = 1")
    manifest.write_text(text.replace("map_files = 5000", "map_files = 1"))
    project = store.parent
    (project / "a.py").write_text("x = 1\n")
    (project / "b.py").write_text("y = 2\n")
    assert run_cli("scan", "--json").exit_code == 0
    for text in ("We decided to ship on Fridays.", "I prefer tabs in Makefiles."):
        service.journal_append(store, "user", text, session="s")
    from memdir.service import memory

    memory.observe_once(store, offline=True, from_start=True)
    codes = {f["code"] for f in json.loads(run_cli("health", "--json").stdout)["findings"]}
    assert {"over_budget_candidates", "over_budget_map"} <= codes
