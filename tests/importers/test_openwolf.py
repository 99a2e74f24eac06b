"""`memdir import --from openwolf`: a `.wolf/` folder (fixture built from OpenWolf 2.5's formats)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from memdir import service
from memdir.kernel.filemap import anatomy
from tests.importers.conftest import FIXTURES, commits, rollback, run_import, texts

CREATED = {
    "preference": {"active": 2},
    "fact": {"active": 2},
    "rule": {"active": 3},
    "decision": {"active": 2},
    "bug": {"active": 2},
}


@pytest.fixture
def wolf(store: Path) -> Path:
    """The fixture project's files copied into the test project, `.wolf/` included."""
    shutil.copytree(FIXTURES / "openwolf", store.parent, dirs_exist_ok=True)
    return store.parent / ".wolf"


def test_dry_run_counts_every_section_and_says_what_it_refuses_and_skips(
    store: Path, wolf: Path
) -> None:
    before = commits(store)
    report = run_import("openwolf", wolf, "--dry-run")
    assert report["created"] == CREATED
    assert report["evidence"] == {"actions": 3, "anatomy": 2}
    assert report["refused_by_reason"] == {"holds a secret": 1}
    assert report["skipped_by_reason"] == {
        "section 'Scratchpad' is not mapped": 1,
        "a bug entry without error_message": 1,
        "session consolidated by OpenWolf (its rows are gone)": 1,
        "file no longer exists": 1,
    }
    assert commits(store) == before and texts(store) == {}
    assert not (store / "actions").exists() or not list((store / "actions").iterdir())


def test_import_maps_sections_to_kinds_with_dates_and_sources(store: Path, wolf: Path) -> None:
    before = commits(store)
    report = run_import("openwolf", wolf)
    assert report["created"] == CREATED and commits(store) == before + 1
    got = texts(store)
    rule = got["Never edit generated files under `src/gen/`; change the schema and run `pnpm gen`."]
    assert rule.kind == "rule" and rule.origin == "import" and rule.observed_at == "2026-10-21"
    assert rule.source["file"] == "cerebrum.md" and rule.source["line"] == 30
    learned = next(r for t, r in got.items() if t.startswith("Tests need `TZ=UTC`"))
    assert learned.kind == "fact" and "Europe/Berlin" in learned.text  # continuation kept
    decision = got["Chose Drizzle over Prisma"]
    assert decision.observed_at == "2026-09-30" and "Alpine" in decision.body
    assert got["Use pnpm for every install; never npm or yarn in this repo."].kind == "preference"


def test_buglog_entries_become_bugs_with_occurrences_and_masked_secrets(
    store: Path, wolf: Path
) -> None:
    run_import("openwolf", wolf)
    bugs = {r.text: r for r in service.list_records(store, kinds=["bug"])}
    crash = bugs["TypeError: Cannot read properties of undefined (reading 'map') in OrderList"]
    extra = {key: json.loads(raw) for key, raw in crash.extra}
    assert extra["occurrences"] == 3 and extra["file"] == "src/components/OrderList.tsx"
    assert extra["signature"].startswith("typeerror")
    assert "default orders to []" in crash.body and crash.source["key"] == "bug-001"
    auth = next(r for t, r in bugs.items() if t.startswith("401 Unauthorized"))
    assert crash.links == (auth.id,)
    every = "".join(p.read_text() for p in (store / "records").rglob("*.md"))
    assert "AbCdEfGhIjKlMnOp" not in every and "[REDACTED:" in auth.text
    assert "hunter2secret" not in every  # the cerebrum line with a password is refused


def test_action_rows_go_to_the_action_log_and_the_anatomy_to_the_file_map(
    store: Path, wolf: Path
) -> None:
    run_import("openwolf", wolf)
    log = (store / "actions" / "2026-11-02.jsonl").read_text()
    rows = [json.loads(line) for line in log.splitlines()]
    assert [r["at"] for r in rows] == [
        "2026-11-02T10:06:00Z",
        "2026-11-02T10:09:00Z",
        "2026-11-02T10:15:00Z",
    ]
    assert rows[1]["paths"] == "src/components/OrderList.tsx; src/components/Skeleton.tsx"
    assert rows[1]["source"] == {"format": "openwolf", "file": "memory.md", "line": 17}
    files = anatomy.load(store)["files"]
    assert files["src/server.ts"]["description"] == "HTTP server entry: reads PORT, mounts routes"
    assert "package.json" in files and "src/removed.ts" not in files


def test_a_second_import_adds_nothing(store: Path, wolf: Path) -> None:
    run_import("openwolf", wolf)
    before = commits(store)
    actions = (store / "actions" / "2026-11-02.jsonl").read_text()
    again = run_import("openwolf", wolf.parent)  # the project folder works as well
    assert again["imported"] == 0 and again["evidence"] == {} and again["commit"] is None
    assert commits(store) == before
    assert (store / "actions" / "2026-11-02.jsonl").read_text() == actions


def test_a_rejected_rule_is_not_reasserted_and_the_rest_is_imported(
    store: Path, wolf: Path
) -> None:
    wrong = service.remember(
        store, "Run the migrations with pnpm db:migrate, not by hand in psql", kind="rule"
    ).record
    service.reject(store, wrong.id, "we use the migration job now")
    report = run_import("openwolf", wolf)
    assert report["refused_by_reason"][f"repeats rejected {wrong.id}"] == 1
    rules = {r.text: r.status for r in service.list_records(store, kinds=["rule"])}
    assert rules[wrong.text] == "rejected"
    assert sum(1 for status in rules.values() if status == "active") == 2


def test_rollback_of_the_import_commit_undoes_records_actions_and_map(
    store: Path, wolf: Path
) -> None:
    report = run_import("openwolf", wolf)
    rollback(store, report["commit"])
    assert texts(store) == {}
    assert not (store / "actions" / "2026-11-02.jsonl").exists()
    assert run_import("openwolf", wolf, "--dry-run")["imported"] == 11


def test_a_bare_array_buglog_is_read_like_an_object(store: Path, wolf: Path) -> None:
    log = json.loads((wolf / "buglog.json").read_text())
    (wolf / "buglog.json").write_text(json.dumps(log["bugs"]))
    assert run_import("openwolf", wolf, "--dry-run")["created"]["bug"] == {"active": 2}


def test_a_folder_without_openwolf_files_is_a_usage_error(store: Path, tmp_path: Path) -> None:
    from tests.conftest import run_cli

    result = run_cli("import", "--from", "openwolf", str(tmp_path))
    assert result.exit_code == 2 and "not an OpenWolf folder" in result.output


def test_rollback_keeps_hook_rows_that_were_in_the_action_log_before_the_import(
    store: Path, wolf: Path
) -> None:
    day = store / "actions" / "2026-11-02.jsonl"
    day.parent.mkdir(exist_ok=True)
    hook_row = '{"at": "2026-11-02T08:00:00Z", "session": "s1", "tool": "Read", "ok": true}\n'
    day.write_text(hook_row)  # a hook appended it; nothing committed it yet
    report = run_import("openwolf", wolf)
    assert day.read_text().count("\n") == 4
    rollback(store, report["commit"])
    assert day.read_text() == hook_row


def test_a_value_the_owner_corrected_is_not_brought_back_and_the_correction_stays(
    store: Path, wolf: Path
) -> None:
    old = service.remember(
        store, "Prefers small commits with imperative subject lines.", kind="preference"
    ).record
    new = service.correct(store, old.id, "Prefers squash-merged pull requests").record
    report = run_import("openwolf", wolf)
    assert report["created"]["preference"] == {"active": 1} and report["existing"] == 1
    statuses = {r.text: r.status for r in service.list_records(store, kinds=["preference"])}
    assert statuses[old.text] == "superseded" and statuses[new.text] == "active"
    assert statuses["Use pnpm for every install; never npm or yarn in this repo."] == "active"
