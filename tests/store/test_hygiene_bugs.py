"""`memdir dream` (read-only hygiene), the bug log, review from the CLI, the forgetting curve."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from memdir import service
from memdir.kernel.base import clock
from memdir.service import memory
from tests.conftest import git, run_cli


def _codes(report: dict) -> dict[str, list[list[str]]]:
    found: dict[str, list[list[str]]] = {}
    for finding in report["findings"]:
        found.setdefault(finding["code"], []).append(finding["ids"])
    return found


def test_dream_reports_and_never_writes(store: Path) -> None:
    a = service.remember(store, "Use pnpm, not npm, in the web app").record
    b = service.remember(store, "Use npm, not pnpm, in the web app").record
    service.remember(store, "The deploy script lives in scripts/deploy.sh and needs bash")
    head = git(store, "rev-parse", "HEAD")
    files = {p: p.read_bytes() for p in (store / "records").rglob("*.md")}
    report = memory.dream(store)
    assert sorted(_codes(report)["conflict"][0]) == sorted([a.id, b.id])
    assert all("fix" in f and f["fix"] for f in report["findings"])
    assert git(store, "rev-parse", "HEAD") == head
    assert {p: p.read_bytes() for p in files} == files


def test_dream_flags_stale_sunk_and_changed_files(store: Path) -> None:
    (store.parent / "scripts").mkdir()
    deploy = store.parent / "scripts" / "deploy.sh"
    deploy.write_text("echo deploy\n")
    old = time.time() - 3600
    os.utime(deploy, (old, old))
    clock.freeze(clock.parse_instant("2026-01-01T00:00:00Z"))
    try:
        stale = service.remember(
            store, "Temporary workaround for the flaky proxy", importance=2
        ).record
        cites = service.remember(store, "Deploys run scripts/deploy.sh from the repo root").record
    finally:
        clock.freeze(None)
    deploy.write_text("echo deploy v2\n")
    codes = _codes(memory.dream(store))
    assert [stale.id] in codes["stale"]
    assert [stale.id] in codes["sunk"]
    assert [cites.id] in codes["cites_changed_file"]


def test_bug_log_bumps_a_repeat_and_search_finds_it(store: Path) -> None:
    first = json.loads(
        run_cli(
            "bug",
            "log",
            "--error",
            "KeyError: 'user_id' at app/views.py:42",
            "--fix",
            "check the session first",
            "--json",
        ).stdout
    )
    again = run_cli(
        "bug",
        "log",
        "--error",
        "KeyError: 'account_id' at app/views.py:97",
        "--fix",
        "check the session first",
        "--json",
    )
    assert json.loads(again.stdout)["id"] == first["id"]
    listed = json.loads(run_cli("bug", "list", "--json").stdout)["results"]
    assert [(b["id"], b["occurrences"]) for b in listed] == [(first["id"], 2)]
    found = json.loads(run_cli("bug", "search", "KeyError views", "--json").stdout)["results"]
    assert found[0]["id"] == first["id"]
    fixed = json.loads(run_cli("bug", "fixed", first["id"], "--json").stdout)
    assert "fixed" in fixed["tags"] and "open" not in fixed["tags"]
    third = json.loads(
        run_cli(
            "bug", "log", "--error", "KeyError: 'x' at app/views.py:1", "--fix", "y", "--json"
        ).stdout
    )
    assert third["id"] != first["id"]  # a fixed bug coming back is a new report


def test_bug_log_redacts_secrets_in_errors(store: Path) -> None:
    result = run_cli(
        "bug",
        "log",
        "--error",
        "auth failed for ghp_EXAMPLEEXAMPLEEXAMPLEEXAMPLE0000",
        "--fix",
        "rotate the token",
        "--json",
    )
    assert result.exit_code == 0
    for path in (store / "records").rglob("*.md"):
        assert "EXAMPLEEXAMPLE" not in path.read_text()


@pytest.mark.parametrize("file", ["../../../etc/passwd", "/etc/passwd", "C:\\x\\y.py", ".env"])
def test_bug_log_records_only_project_files_and_never_a_secret_files_name(
    store: Path, file: str
) -> None:
    result = run_cli("bug", "log", "--error", "boom", "--fix", "retry", "--file", file)
    assert result.exit_code == 2, result.output
    assert service.list_records(store) == []
    inside = str(store.parent / "src" / "app.py")
    done = run_cli("bug", "log", "--error", "boom", "--fix", "retry", "--file", inside, "--json")
    assert done.exit_code == 0, done.output
    assert "File: src/app.py" in json.loads(done.stdout)["body"]


def test_review_from_the_cli_and_only_by_a_person(
    store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    service.journal_append(store, "user", "We decided to release on Thursdays.", session="r1")
    memory.observe_once(store, offline=True)
    pending = json.loads(run_cli("review", "--json").stdout)["results"]
    assert [d["text"] for d in pending] == ["We decided to release on Thursdays"]
    monkeypatch.setenv("CLAUDECODE", "1")
    refused = run_cli("review", "--accept", pending[0]["id"], "--json")
    assert refused.exit_code == 3
    monkeypatch.delenv("CLAUDECODE")
    accepted = json.loads(run_cli("review", "--accept", pending[0]["id"], "--json").stdout)
    assert accepted["results"][0]["status"] == "active"
    assert json.loads(run_cli("review", "--json").stdout)["results"] == []


def test_the_forgetting_curve_is_off_by_default_and_explained_when_on(store: Path) -> None:
    clock.freeze(clock.parse_instant("2025-01-01T00:00:00Z"))
    try:
        old = service.remember(store, "The cache holds sessions for a day", importance=3).record
    finally:
        clock.freeze(None)
    new = service.remember(store, "The cache holds sessions for an hour", importance=3).record
    plain = service.recall(store, "cache sessions", explain=True).hits
    assert {h.doc["id"] for h in plain} == {old.id, new.id}
    assert "decay" not in plain[0].factors
    manifest = store / "memdir.toml"
    manifest.write_text(manifest.read_text().replace("decay = false", "decay = true"))
    decayed = {h.doc["id"]: h for h in service.recall(store, "cache sessions", explain=True).hits}
    assert decayed[old.id].factors["decay"] < 0.01
    assert decayed[old.id].factors["half_life_days"] == 30.0
    assert decayed[new.id].score > decayed[old.id].score
