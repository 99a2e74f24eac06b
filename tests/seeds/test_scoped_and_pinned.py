"""Pinned beliefs (always in the digest, own budget) and path-scoped beliefs (issue 11, 5 and 6)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memdir import service
from memdir.kernel.lang.pathscope import glob_matches
from memdir.service.channel import cli_caller
from tests.conftest import run_cli
from tests.hooks.conftest import HookRun, run_hook

OWNER = cli_caller({})


def _hook(store: Path, event: str, session: str = "s1", **fields: object) -> HookRun:
    project = store.parent
    payload = {"session_id": session, "hook_event_name": event, "cwd": str(project), **fields}
    return run_hook(event, payload, cwd=project)


def _context(run: HookRun) -> str:
    value = run.json or {}
    return str(value.get("hookSpecificOutput", {}).get("additionalContext", ""))


def test_globs_match_like_gitignore() -> None:
    assert glob_matches("src/billing/**", "src/billing/invoice.py")
    assert glob_matches("src/billing/**", "src/billing/deep/tax.py")
    assert glob_matches("src/billing", "src/billing/invoice.py")  # a folder: all under it
    assert glob_matches("*.sql", "db/migrations/001.sql")  # no slash: any folder
    assert glob_matches("docs/*.md", "docs/economy.md")
    assert not glob_matches("docs/*.md", "docs/ui/page.md")
    assert not glob_matches("src/billing/**", "src/billingx/a.py")
    assert not glob_matches("src/billing/**", "tests/src/billing/a.py")


def test_paths_are_checked_and_kept_as_path_tags(store: Path) -> None:
    result = run_cli(
        "remember",
        "Amounts are integer cents",
        "--kind",
        "rule",
        "--paths",
        "src/billing/**,*.sql",
        "--json",
    )
    assert result.exit_code == 0, result.output
    record = json.loads(result.stdout)
    assert record["tags"] == ["path:src/billing/**", "path:*.sql"]
    for bad in ("/etc/**", "../other/**", " , "):
        refused = run_cli("remember", "Something else entirely here", "--paths", bad, "--json")
        assert refused.exit_code == 2, (bad, refused.output)
        assert "--paths" in refused.stdout
    assert [r.text for r in service.list_records(store)] == ["Amounts are integer cents"]


def test_a_scoped_rule_comes_with_its_files_and_stays_out_of_other_sessions(store: Path) -> None:
    project = store.parent
    (project / "src" / "billing").mkdir(parents=True)
    (project / "src" / "billing" / "invoice.py").write_text("TOTAL = 0\n")
    (project / "src" / "ui.py").write_text("print('hi')\n")
    scoped = service.remember(
        store,
        "Amounts are integer cents, never floats",
        kind="rule",
        caller=OWNER,
        tags=service.path_tags(["src/billing/**"]),
    ).record
    plain = service.remember(store, "Run ruff before committing", kind="rule", caller=OWNER).record
    start = _context(_hook(store, "SessionStart", source="startup"))
    assert plain.id in start and scoped.id not in start  # not relevant yet
    other = _hook(
        store,
        "PostToolUse",
        tool_name="Read",
        tool_input={"file_path": str(project / "src" / "ui.py")},
        tool_response={"type": "text"},
    )
    assert scoped.id not in _context(other)
    read = _hook(
        store,
        "PostToolUse",
        tool_name="Read",
        tool_input={"file_path": str(project / "src" / "billing" / "invoice.py")},
        tool_response={"type": "text"},
    )
    assert scoped.id in _context(read) and "integer cents" in _context(read)
    again = _hook(
        store,
        "PostToolUse",
        tool_name="Edit",
        tool_input={"file_path": str(project / "src" / "billing" / "invoice.py")},
        tool_response={"success": True},
    )
    assert scoped.id not in _context(again)  # once per context
    # After a compaction the host dropped it: it comes back for the file already touched.
    compacted = _context(_hook(store, "SessionStart", source="compact"))
    assert scoped.id in compacted
    # A new session that touched nothing billing-related is not told.
    fresh = _context(_hook(store, "SessionStart", session="s2", source="startup"))
    assert plain.id in fresh and scoped.id not in fresh


def test_a_pinned_belief_is_always_in_the_digest_under_its_own_budget(store: Path) -> None:
    manifest = store / "memdir.toml"
    manifest.write_text(manifest.read_text().replace("digest_tokens = 400", "digest_tokens = 180"))
    for n in range(12):
        service.remember(
            store, f"Owner rule number {n} about formatting the widgets", kind="rule", caller=OWNER
        )
    fact = service.remember(
        store, "The staging database is refreshed every Sunday night", kind="fact", caller=OWNER
    ).record
    before = _context(_hook(store, "SessionStart", session="a", source="startup"))
    assert fact.id not in before  # crowded out by rules under a small budget
    result = run_cli("pin", fact.id, "--json")
    assert result.exit_code == 0, result.output
    assert "pinned" in json.loads(result.stdout)["tags"]
    pinned = _context(_hook(store, "SessionStart", session="b", source="startup"))
    assert fact.id in pinned
    assert pinned.index(fact.id) < pinned.index("Owner rule number")  # first
    assert run_cli("unpin", fact.id, "--json").exit_code == 0
    after = _context(_hook(store, "SessionStart", session="c", source="startup"))
    assert fact.id not in after


def test_only_the_owner_pins_and_only_an_active_belief(
    store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    record = service.remember(store, "Deploys happen on Tuesdays", kind="fact", caller=OWNER).record
    service.forget(store, record.id, "no longer", caller=OWNER)
    refused = run_cli("pin", record.id, "--json")
    assert refused.exit_code == 2 and "forgotten" in refused.stdout
    other = service.remember(store, "The API is versioned by date", caller=OWNER).record
    monkeypatch.setenv("CLAUDECODE", "1")
    agent = run_cli("pin", other.id, "--json")
    assert agent.exit_code == 3 and "owner" in agent.stdout
    assert "pinned" not in service.get(store, other.id).tags
    monkeypatch.delenv("CLAUDECODE")
    assert run_cli("pin", "f-doesnotexist0", "--json").exit_code == 4
