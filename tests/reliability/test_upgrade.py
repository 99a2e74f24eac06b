"""Upgrades (case B40): an old store opens and migrates; a newer one is refused without writing.

The old store comes two ways: ``fixtures/store-index-v1.tar.gz``, written by the code of commit
``ed1962c`` (index format 1; see ``fixtures/README.md``), and one built here by the current code
and taken back to format 1 (``turn_df`` and ``record_postings`` dropped, ``user_version = 1``). Every open goes through
the real CLI in a subprocess. Expected (B40): the migration backs the index up first
(``state/backups/index-v1.sqlite``), loses no record or turn, is idempotent; a kill -9 at any
point of it leaves the old index usable and the next open completes it; a store or index from a
newer memdir is refused by every command, and nothing in the store is written.
"""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import tarfile
from pathlib import Path
from typing import Any

import pytest

from memdir import service
from memdir.kernel.index import LATEST_VERSION, MIGRATIONS
from memdir.kernel.index.rows import record_postings
from memdir.kernel.lang.text import month_words, terms
from memdir.kernel.storage.manifest import FORMAT_VERSION, Manifest
from tests.conftest import git
from tests.hooks.conftest import run_hook
from tests.reliability.runner import memdir

FIXTURE = Path(__file__).with_name("fixtures") / "store-index-v1.tar.gz"
BACKUP = Path("state") / "backups" / "index-v1.sqlite"
ALL_STATUSES = [f"--status={s}" for s in ("candidate", "active", "superseded", "forgotten")]

FIXTURE_RECORDS = {
    "The build uses pnpm workspaces": "active",
    "Deploys go out on Tuesdays": "superseded",
    "Deploys go out on Thursdays": "active",
    "Never force-push to main": "active",
    "The staging database is MySQL": "forgotten",
    "我们使用 PostgreSQL 数据库": "active",
}


def cli(store: Path, *args: str, kill_at: str | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``memdir ARGS --store STORE`` (through the kill-point wrapper with ``kill_at``)."""
    return memdir(store, *args, kill_at=kill_at)


def ok(done: subprocess.CompletedProcess[str]) -> Any:
    """The JSON a successful ``--json`` run printed."""
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout)


def read_index(path: Path) -> dict[str, Any]:
    """What an index holds, read without writing to it: version, records, turns, term counts.

    ``immutable`` so that reading leaves no ``-wal``/``-shm`` beside the file: the index is
    closed (its WAL checkpointed) whenever this is called.
    """
    conn = sqlite3.connect(f"{path.as_uri()}?immutable=1", uri=True)
    try:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
        return {
            "version": conn.execute("PRAGMA user_version").fetchone()[0],
            "records": sorted(conn.execute("SELECT id, status, text, path FROM records")),
            "turns": sorted(conn.execute("SELECT file, line, session, who, text FROM turns")),
            "turn_df": dict(conn.execute("SELECT term, rows FROM turn_df WHERE rows > 0"))
            if "turn_df" in tables
            else None,
            "postings": sorted(conn.execute("SELECT term, doc, tf, len, imp FROM record_postings"))
            if "record_postings" in tables
            else None,
            "expected_postings": sorted(
                (term, rowid, tf, tokens, importance)
                for rowid, tokens, importance, *columns in conn.execute(
                    "SELECT f.rowid, r.tokens, r.importance, f.text, f.aliases, f.tags, f.body"
                    " FROM records_fts f JOIN records r ON r.rowid = f.rowid"
                )
                for term, tf in record_postings(tuple(columns)).items()
            ),
        }
    finally:
        conn.close()


def expected_turn_df(turns: list[tuple[Any, ...]], at: dict[str, str]) -> dict[str, int]:
    """Per-term turn counts computed from scratch (what ``turn_df`` must hold)."""
    counts: dict[str, int] = {}
    for _, _, _, _, text in turns:
        for term in {*terms(text), *terms(month_words(at[text]))}:
            counts[term] = counts.get(term, 0) + 1
    return counts


def journal_times(store: Path) -> dict[str, str]:
    """Turn text → its time, from the journal files themselves."""
    found = {}
    for day in sorted((store / "journal").glob("*.jsonl")):
        for line in day.read_text(encoding="utf-8").splitlines():
            turn = json.loads(line)
            found[turn["text"]] = turn["at"]
    return found


def files_and_history(store: Path) -> dict[str, bytes]:
    """Records, journal and manifest bytes, plus the git history: what a migration never touches."""
    files = {
        p.relative_to(store).as_posix(): p.read_bytes()
        for folder in ("records", "journal")
        for p in sorted((store / folder).rglob("*"))
        if p.is_file()
    }
    files["memdir.toml"] = (store / "memdir.toml").read_bytes()
    files["<git log>"] = git(store, "log", "--format=%H %s").encode()
    return files


@pytest.fixture
def old_store(tmp_path: Path) -> Path:
    """The store written by the format-1 code (``fixtures/store-index-v1.tar.gz``)."""
    with tarfile.open(FIXTURE) as archive:
        archive.extractall(tmp_path, filter="data")
    store = tmp_path / "store"
    assert read_index(store / "index.sqlite")["version"] == 1
    return store


@pytest.fixture
def constructed_old_store(store: Path) -> Path:
    """A store made by this build, its index taken back to format 1 (no ``turn_df``, no ``record_postings``)."""
    for text, status in FIXTURE_RECORDS.items():
        made = service.remember(store, text).record
        if status == "forgotten":
            service.forget(store, made.id, "retired")
    service.journal_append(store, "user", "we moved the queue to kafka last sprint", session="s1")
    service.journal_append(store, "assistant", "noted: kafka for the queue", session="s1")
    service.search(store, "kafka")
    conn = sqlite3.connect(store / "index.sqlite")
    conn.execute("DROP TABLE turn_df")
    conn.execute("DROP TABLE record_postings")
    conn.execute("PRAGMA user_version = 1")
    conn.commit()
    conn.close()
    return store


def assert_migrated(store: Path, before: dict[str, Any]) -> dict[str, Any]:
    """The index is at the latest format, holds what it held, and counts terms right."""
    now = read_index(store / "index.sqlite")
    assert now["version"] == LATEST_VERSION
    assert now["records"] == before["records"]
    assert now["turns"] == before["turns"]
    assert now["turn_df"] == expected_turn_df(now["turns"], journal_times(store))
    assert now["postings"] == now["expected_postings"] != []  # recall's postings, filled in
    backup = read_index(store / BACKUP)  # the index as it was, taken before migrating
    assert (backup["version"], backup["records"], backup["turns"]) == (
        1,
        before["records"],
        before["turns"],
    )
    return now


def test_a_store_written_by_the_format_1_code_opens_migrates_and_loses_nothing(
    old_store: Path,
) -> None:
    before = read_index(old_store / "index.sqlite")
    untouched = files_and_history(old_store)
    assert not (old_store / BACKUP).exists()

    listed = ok(cli(old_store, "list", *ALL_STATUSES, "--json"))
    assert {r["text"]: r["status"] for r in listed["results"]} == FIXTURE_RECORDS
    assert_migrated(old_store, before)
    assert files_and_history(old_store) == untouched  # the migration touches the index only

    recalled = ok(cli(old_store, "recall", "when do deploys go out", "--json"))
    assert [r["text"] for r in recalled["results"]] == ["Deploys go out on Thursdays"]
    chinese = ok(cli(old_store, "recall", "数据库", "--json"))
    assert [r["text"] for r in chinese["results"]] == ["我们使用 PostgreSQL 数据库"]
    found = ok(cli(old_store, "search", "kafka", "--json"))
    assert {r["text"] for r in found["results"][:2]} == {
        "we moved the queue to kafka last sprint",
        "noted: kafka for the queue, redis for the cache",
    }
    assert cli(old_store, "health").returncode == 0
    written = ok(cli(old_store, "remember", "Lint runs with ruff", "--json"))
    assert written["id"] in git(old_store, "log", "-1", "--format=%s")


@pytest.mark.parametrize("source", ["fixture", "constructed"])
def test_the_migration_runs_once_and_running_it_again_changes_nothing(
    source: str, request: pytest.FixtureRequest
) -> None:
    store = request.getfixturevalue("old_store" if source == "fixture" else "constructed_old_store")
    before = read_index(store / "index.sqlite")

    ok(cli(store, "recall", "deploys", "--json"))
    first = assert_migrated(store, before)
    backup = store / BACKUP
    stamp = backup.stat().st_mtime_ns
    ok(cli(store, "recall", "deploys", "--json"))
    assert read_index(store / "index.sqlite") == first
    assert backup.stat().st_mtime_ns == stamp  # no second backup over the first
    assert list(backup.parent.iterdir()) == [backup]

    # Each step is idempotent on its own too: the last one again, by hand, counts the same.
    conn = sqlite3.connect(store / "index.sqlite", isolation_level=None)
    conn.execute("BEGIN IMMEDIATE")
    MIGRATIONS[-1][1](conn)
    conn.execute("COMMIT")
    conn.close()
    assert read_index(store / "index.sqlite") == first


MIGRATION_POINTS = [
    "replace:backup#1",  # the copy is written, not yet under its name
    "replace:backup#1@after",  # the backup is in place, the migration not begun
    "sqlite:commit#1",  # the migration ran inside its transaction, not committed
    "sqlite:commit#1@after",  # committed, then the process died
]


@pytest.mark.parametrize("point", MIGRATION_POINTS)
def test_a_migration_killed_at_any_point_leaves_a_usable_store_and_completes_on_reopen(
    old_store: Path, point: str
) -> None:
    before = read_index(old_store / "index.sqlite")
    untouched = files_and_history(old_store)

    killed = cli(old_store, "list", "--json", kill_at=point)
    assert killed.returncode == -signal.SIGKILL, f"{point} never happened: {killed}"
    left = read_index(old_store / "index.sqlite")
    assert left["version"] in (1, LATEST_VERSION)
    if left["version"] == 1:  # not committed: the old index, whole
        assert left == before
    assert files_and_history(old_store) == untouched
    if (old_store / BACKUP).exists():  # never a half-made backup under the final name
        assert read_index(old_store / BACKUP)["records"] == before["records"]

    listed = ok(cli(old_store, "list", *ALL_STATUSES, "--json"))
    assert {r["text"]: r["status"] for r in listed["results"]} == FIXTURE_RECORDS
    assert_migrated(old_store, before)
    assert cli(old_store, "health").returncode == 0


def test_a_backup_left_half_made_by_a_killed_migration_is_made_again(old_store: Path) -> None:
    before = read_index(old_store / "index.sqlite")
    leftover = old_store / "state" / "backups" / ".index-v1.sqlite.tmp"
    leftover.parent.mkdir(parents=True)
    leftover.write_bytes((old_store / "index.sqlite").read_bytes()[:10000])  # a torn copy

    listed = ok(cli(old_store, "list", *ALL_STATUSES, "--json"))
    assert len(listed["results"]) == len(FIXTURE_RECORDS)
    assert_migrated(old_store, before)


# --- a newer store ---------------------------------------------------------------------------


def everything(store: Path) -> dict[str, bytes]:
    """Every file in the store (git's own files included), except the hook error log."""
    return {
        p.relative_to(store).as_posix(): p.read_bytes()
        for p in sorted(store.rglob("*"))
        if p.is_file() and p.name != "hook-errors.log"
    }


def test_a_store_from_a_newer_format_is_refused_by_every_command_and_nothing_is_written(
    store: Path,
) -> None:
    made = service.remember(store, "The build uses pnpm workspaces").record
    service.journal_append(store, "user", "the cache lives in redis", session="s0")
    manifest = store / "memdir.toml"
    manifest.write_text(
        manifest.read_text().replace(f"format = {FORMAT_VERSION}", f"format = {FORMAT_VERSION + 1}")
    )
    git(store, "commit", "-qam", "a newer memdir upgraded this store")
    before = everything(store)

    for args in (
        ["remember", "The api listens on port 8080"],
        ["correct", made.id, "--text", "The build uses bun workspaces"],
        ["forget", made.id, "--reason", "old"],
        ["journal", "user", "a new turn"],
        ["reindex"],
        ["recall", "pnpm"],
        ["search", "redis"],
        ["sync"],
        ["scan"],
    ):
        done = cli(store, *args, "--json")
        assert done.returncode == 1, args
        error = json.loads(done.stdout)["error"]
        assert error["code"] == "index_format", args
        assert "newer than this memdir reads" in error["message"], args
    project = store.parent
    for event, fields in (
        ("SessionStart", {"source": "startup"}),
        ("UserPromptSubmit", {"prompt": "remember that the api listens on port 8080"}),
        ("Stop", {"last_assistant_message": "done"}),
    ):
        payload = {"session_id": "s1", "hook_event_name": event, "cwd": str(project), **fields}
        run = run_hook(event, payload, cwd=project)
        assert (run.stdout, run.stderr) == (b"", b"")
    assert everything(store) == before

    # A settings cache written by the newer memdir (same manifest stat) is not taken on trust.
    cache = store / "state" / "manifest.json"
    stat = manifest.stat()
    cache.write_text(
        json.dumps(
            {
                "key": [stat.st_mtime_ns, stat.st_size],
                "settings": {**Manifest().to_json(), "format": FORMAT_VERSION + 1},
            }
        )
    )
    before = everything(store)
    done = cli(store, "remember", "The api listens on port 8080", "--json")
    assert json.loads(done.stdout)["error"]["code"] == "index_format"
    assert everything(store) == before
