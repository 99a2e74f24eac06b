"""`memdir import --from wolfmem`: a wolfmem home. wolfmem's schema is documented only in its
README, so the SQLite fact store is built here at run time from `fixtures/wolfmem/facts.sql`."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from memdir import service
from tests.importers.conftest import FIXTURES, commits, rollback, run_import, texts

CREATED = {
    "decision": {"active": 1},
    "rule": {"active": 3},
    "preference": {"active": 1},
    "fact": {"active": 2},
}


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A wolfmem home: `wolfmem.db` from the SQL fixture and the journal folder."""
    root = tmp_path / "wolfmem-home"
    shutil.copytree(FIXTURES / "wolfmem" / "journal", root / "journal")
    conn = sqlite3.connect(root / "wolfmem.db")
    conn.executescript((FIXTURES / "wolfmem" / "facts.sql").read_text(encoding="utf-8"))
    conn.commit()
    conn.close()
    return root


def test_dry_run_counts_facts_and_turns_and_reports_what_it_did_not_understand(
    store: Path, home: Path
) -> None:
    before = commits(store)
    report = run_import("wolfmem", home, "--dry-run")
    assert report["created"] == CREATED
    assert report["evidence"] == {"journal": 3}
    assert report["refused_by_reason"] == {"holds a secret": 1}
    assert report["skipped_by_reason"] == {
        "column 'mood' not understood": 1,
        "a fact without text": 1,
        "a journal line that is not JSON": 1,
    }
    assert commits(store) == before and texts(store) == {}


def test_needle_tags_map_to_kinds_and_importance_is_scaled(store: Path, home: Path) -> None:
    run_import("wolfmem", home)
    got = texts(store)
    decision = got["观察者改用 httpx 直连 LLM 端点并带真超时"]
    assert decision.kind == "decision" and decision.tags == ("决定",)
    assert decision.importance == 8 and decision.origin == "import"
    assert decision.source["file"] == "wolfmem.db" and decision.source["row"] == 1
    assert decision.observed_at.startswith("2025-10-09")
    assert got["令牌只进配置文件，不进日志"].kind == "rule"
    assert got["C2C 内联键盘硬限制 5 行，按钮超行发送必失败"].kind == "rule"
    assert got["深夜回复喜欢短句"].kind == "preference"
    assert got["没有标签的一条记录：部署在周二"].kind == "fact"
    assert not any("xoxb-" in t for t in got)


def test_the_journal_lands_in_memdirs_journal_redacted_and_searchable(
    store: Path, home: Path
) -> None:
    run_import("wolfmem", home)
    lines = (store / "journal" / "2026-10-09.jsonl").read_text(encoding="utf-8").splitlines()
    rows = [json.loads(line) for line in lines]
    assert [r["who"] for r in rows] == ["user", "assistant", "user"]
    assert rows[0]["session"] == "qq-4412" and rows[0]["at"] == "2026-10-09T10:00:00Z"
    assert "sk-ant-api03" not in lines[2] and "[REDACTED:" in rows[2]["text"]
    found = service.search(store, "SQLite")
    assert any("我们决定用 SQLite 存事实" in hit["text"] for hit in found.to_json()["results"])


def test_a_second_import_adds_nothing(store: Path, home: Path) -> None:
    run_import("wolfmem", home)
    before = commits(store)
    again = run_import("wolfmem", home)
    assert again["imported"] == 0 and again["evidence"] == {} and commits(store) == before
    assert len((store / "journal" / "2026-10-09.jsonl").read_text().splitlines()) == 3


def test_a_rejected_belief_is_not_reasserted_and_the_rest_is_imported(
    store: Path, home: Path
) -> None:
    wrong = service.remember(store, "深夜回复喜欢短句", kind="preference").record
    service.reject(store, wrong.id, "prefers full answers now")
    report = run_import("wolfmem", home)
    assert report["refused_by_reason"][f"repeats rejected {wrong.id}"] == 1
    assert texts(store)["令牌只进配置文件，不进日志"].status == "active"


def test_rollback_undoes_facts_and_journal(store: Path, home: Path) -> None:
    report = run_import("wolfmem", home)
    rollback(store, report["commit"])
    assert texts(store) == {}
    assert not (store / "journal" / "2026-10-09.jsonl").exists()


def test_a_folder_that_is_not_a_wolfmem_home_is_a_usage_error(store: Path, tmp_path: Path) -> None:
    from tests.conftest import run_cli

    result = run_cli("import", "--from", "wolfmem", str(tmp_path))
    assert result.exit_code == 2 and "not a wolfmem home" in result.output
