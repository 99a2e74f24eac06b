"""`memdir import --from claude-memory` / `claude-md` (fixtures from Claude Code's documented
auto-memory layout and instruction files; the host binary writes these only with a model)."""

from __future__ import annotations

import shutil
from pathlib import Path

from memdir import service
from tests.importers.conftest import FIXTURES, commits, rollback, run_import, texts

MEMORY = FIXTURES / "claude-memory"
CLAUDE_MD = FIXTURES / "claude-md"


def test_auto_memory_dry_run_counts_candidates_and_refusals(store: Path) -> None:
    before = commits(store)
    report = run_import("claude-memory", MEMORY, "--dry-run")
    assert report["created"] == {
        "preference": {"candidate": 1},
        "rule": {"candidate": 1},
        "fact": {"candidate": 2},
    }
    assert report["refused_by_reason"] == {"holds a secret": 1}
    assert report["skipped_by_reason"] == {"written by memdir's mirror": 1}
    assert commits(store) == before and texts(store) == {}


def test_auto_memory_topic_files_become_candidates_never_active(store: Path) -> None:
    report = run_import("claude-memory", MEMORY)
    got = texts(store)
    rule = got["Integration tests must hit a real Postgres, not a mock"]
    assert rule.kind == "rule" and rule.status == "candidate" and rule.origin == "import"
    assert "docker compose database" in rule.body
    assert rule.source == {
        "channel": "import",
        "format": "claude-memory",
        "file": "feedback-no-mocks.md",
        "line": 1,
        "memory_type": "feedback",
        "session": None,
        "journal": None,
    }
    arm = got["The CI runners are ARM64; x86-only wheels fail there."]
    assert arm.source["file"] == "MEMORY.md" and arm.source["line"] == 6
    assert all(r.status == "candidate" for r in got.values())
    assert service.list_records(store, statuses=["active"]) == []
    assert "Use pnpm, not npm." not in got  # memdir's own mirror file is not re-imported
    assert report["imported"] == 4


def test_claude_md_sections_and_bullets_become_candidates_and_the_managed_block_is_skipped(
    store: Path,
) -> None:
    report = run_import("claude-md", CLAUDE_MD)
    assert report["created"] == {
        "fact": {"candidate": 1},
        "procedure": {"candidate": 2},
        "rule": {"candidate": 3},
        "preference": {"candidate": 1},
        "decision": {"candidate": 1},
    }
    assert report["refused_by_reason"] == {"holds a secret": 1}
    got = texts(store)
    assert got["Never commit directly to main; open a pull request."].kind == "rule"
    nested = got["Components use named exports. Default exports only in Next.js pages."]
    assert nested.source["file"] == "CLAUDE.md" and nested.source["line"] == 19
    decision = got["2026-09-12: we chose Go over Node for the API because of the worker pool."]
    assert decision.source["file"] == "AGENTS.md" and decision.observed_at == "2026-09-12"
    every = " ".join(got)
    assert "memdir recall" not in every and "pnpm install" not in every and "node" not in every


def test_a_second_import_adds_nothing(store: Path) -> None:
    run_import("claude-memory", MEMORY)
    run_import("claude-md", CLAUDE_MD)
    before = commits(store)
    assert run_import("claude-memory", MEMORY)["imported"] == 0
    assert run_import("claude-md", CLAUDE_MD / "CLAUDE.md")["imported"] == 0
    assert commits(store) == before


def test_a_rejected_belief_is_not_reasserted_and_the_rest_is_imported(store: Path) -> None:
    wrong = service.remember(store, "Always run pnpm lint before pushing", kind="rule").record
    service.reject(store, wrong.id, "CI lints; no need locally")
    report = run_import("claude-md", CLAUDE_MD)
    assert report["refused_by_reason"][f"repeats rejected {wrong.id}"] == 1
    assert "Never commit directly to main; open a pull request." in texts(store)


def test_rollback_undoes_the_import(store: Path, tmp_path: Path) -> None:
    folder = tmp_path / "slug" / "memory"
    shutil.copytree(MEMORY, folder)
    report = run_import("claude-memory", folder.parent)  # the projects/<slug> folder works too
    assert report["imported"] == 4
    rollback(store, report["commit"])
    assert texts(store) == {}


def test_a_dry_run_in_the_terminal_names_where_each_refusal_is(store: Path) -> None:
    from tests.conftest import run_cli

    report = run_import("claude-memory", MEMORY, "--dry-run")
    (refused,) = [d for d in report["details"] if d["outcome"] == "refused"]
    text = run_cli("import", "--from", "claude-memory", str(MEMORY), "--dry-run").stdout
    assert "refused 1: holds a secret" in text
    assert f"  {refused['place']}" in text.splitlines()  # the place, on its own line
    assert "would import 4 records" in text  # and the counts are still there
