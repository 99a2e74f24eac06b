"""memdir bundle / import --from bundle: a memory moves to another machine with its history."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memdir import service
from tests.conftest import git, run_cli


def _files(store: Path) -> dict[str, bytes]:
    return {
        p.relative_to(store).as_posix(): p.read_bytes()
        for folder in ("records", "journal")
        for p in sorted((store / folder).rglob("*"))
        if p.is_file()
    }


@pytest.mark.slow
def test_bundle_round_trip_keeps_every_record_status_journal_day_and_commit(
    store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    kept = service.remember(store, "Deploys go out on Tuesdays", kind="rule").record
    old = service.remember(store, "The queue is RabbitMQ").record
    service.correct(store, old.id, "The queue is Kafka", reason="migrated")
    gone = service.remember(store, "Tabs for indentation", kind="preference").record
    service.reject(store, gone.id, "spaces, actually")
    service.journal_append(store, "user", "first day", at="2026-11-30T10:00:00Z")
    service.journal_append(store, "assistant", "second day", at="2026-12-01T10:00:00Z")
    bundle = tmp_path / "memory.bundle"
    result = run_cli("bundle", str(bundle), "--store", str(store), "--json")
    assert result.exit_code == 0, result.output
    made = json.loads(result.stdout)
    assert made["commits"] == int(git(store, "rev-list", "--count", "HEAD"))

    other = tmp_path / "machine-b" / "project"
    other.mkdir(parents=True)
    git(other, "init", "-q")
    monkeypatch.chdir(other)
    result = run_cli("import", "--from", "bundle", str(bundle))
    assert result.exit_code == 0, result.output
    moved = other / ".memdir"
    assert _files(moved) == _files(store)
    assert sorted((moved / "journal").iterdir()) != []
    assert git(moved, "log", "--format=%H %an %aI %s") == git(
        store, "log", "--format=%H %an %aI %s"
    )
    assert git(moved, "remote") == ""
    assert "/.memdir/" in (other / ".git" / "info" / "exclude").read_text()
    statuses = {r.id: r.status for r in service.list_records(moved)}
    assert statuses == {r.id: r.status for r in service.list_records(store)}
    assert statuses[kept.id] == "active" and statuses[gone.id] == "rejected"
    assert [h.doc["id"] for h in service.recall(moved, "deploys Tuesdays").hits] == [kept.id]
    # the moved store keeps working: a write commits on top of the same history
    service.remember(moved, "Staging is at staging.example.com")
    assert git(moved, "rev-list", "--count", "HEAD").strip() == str(made["commits"] + 1)


def test_bundle_into_an_existing_store_is_refused_and_changes_nothing(
    store: Path, tmp_path: Path
) -> None:
    service.remember(store, "Deploys go out on Tuesdays", kind="rule")
    bundle = tmp_path / "memory.bundle"
    assert run_cli("bundle", str(bundle), "--store", str(store)).exit_code == 0
    before = _files(store), git(store, "rev-parse", "HEAD")
    result = run_cli("import", "--from", "bundle", str(bundle), "--store", str(store), "--json")
    assert result.exit_code == 3
    assert "new or empty folder" in json.loads(result.stdout)["error"]["message"]
    assert (_files(store), git(store, "rev-parse", "HEAD")) == before


def test_a_file_that_is_not_a_bundle_is_a_clear_error(tmp_path: Path) -> None:
    junk = tmp_path / "junk.bundle"
    junk.write_text("not a bundle\n")
    target = tmp_path / "new" / ".memdir"
    result = run_cli("import", "--from", "bundle", str(junk), "--store", str(target))
    assert result.exit_code == 2
    assert "not a git bundle" in result.output
    assert not target.exists()
