"""`memdir import --from claude-mem`: a claude-mem database. claude-mem needs Claude Code and a
model to write one, so the database is built at run time from `fixtures/claude-mem/*.sql`,
laid out as claude-mem's schema migrations lay it out."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from memdir import service
from tests.importers.conftest import FIXTURES, commits, rollback, run_import, texts

CREATED = {
    "decision": {"candidate": 1},
    "bug": {"candidate": 1},
    "fact": {"candidate": 1},
    "episode": {"candidate": 2},
}


@pytest.fixture
def database(tmp_path: Path) -> Path:
    """A `~/.claude-mem` folder holding `claude-mem.db` built from the SQL fixture."""
    folder = tmp_path / ".claude-mem"
    folder.mkdir()
    conn = sqlite3.connect(folder / "claude-mem.db")
    conn.executescript((FIXTURES / "claude-mem" / "claude-mem.sql").read_text(encoding="utf-8"))
    conn.commit()
    conn.close()
    return folder


def test_dry_run_counts_candidates_and_refusals(store: Path, database: Path) -> None:
    before = commits(store)
    report = run_import("claude-mem", database, "--dry-run")
    assert report["created"] == CREATED
    assert report["refused_by_reason"] == {"holds a secret": 1}
    assert report["skipped_by_reason"] == {"an observation without text": 1}
    assert commits(store) == before and texts(store) == {}


def test_observations_and_summaries_become_candidates_with_their_project(
    store: Path, database: Path
) -> None:
    run_import("claude-mem", database / "claude-mem.db")
    got = texts(store)
    decision = got["Use Stripe Checkout instead of custom card forms — PCI scope stays with Stripe"]
    assert decision.kind == "decision" and decision.status == "candidate"
    assert decision.origin == "import" and "project:storefront" in decision.tags
    assert decision.source["project"] == "storefront" and decision.source["row"] == 1
    assert decision.source["table"] == "observations" and decision.source["session"] == "m-1"
    assert "- card data never touches our servers" in decision.body
    summary = got["Fix the checkout crash on an empty cart"]
    assert summary.kind == "episode" and "Next steps: Move prices to a Money type" in summary.body
    bug = got["Checkout crashed when the cart was empty"]
    assert "sk_live_51AbCd" not in bug.body and "[REDACTED:" in bug.body
    assert not any("hunter2" in t for t in got)
    assert service.list_records(store, statuses=["active"]) == []


def test_a_second_import_adds_nothing(store: Path, database: Path) -> None:
    run_import("claude-mem", database)
    before = commits(store)
    assert run_import("claude-mem", database)["imported"] == 0
    assert commits(store) == before


def test_a_rejected_belief_is_not_reasserted_and_the_rest_is_imported(
    store: Path, database: Path
) -> None:
    wrong = service.remember(store, "Prices are stored in cents as integers").record
    service.reject(store, wrong.id, "we moved to decimal strings")
    report = run_import("claude-mem", database)
    assert report["refused_by_reason"][f"repeats rejected {wrong.id}"] == 1
    assert "Fix the checkout crash on an empty cart" in texts(store)


def test_rollback_undoes_the_import(store: Path, database: Path) -> None:
    report = run_import("claude-mem", database)
    rollback(store, report["commit"])
    assert texts(store) == {}


def test_a_file_that_is_not_a_claude_mem_database_is_a_usage_error(
    store: Path, tmp_path: Path
) -> None:
    from tests.conftest import run_cli

    other = tmp_path / "claude-mem.db"
    sqlite3.connect(other).close()
    result = run_cli("import", "--from", "claude-mem", str(other))
    assert result.exit_code == 2 and "no observations or session_summaries" in result.output
