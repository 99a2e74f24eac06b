"""The journal index: neighbour context, term counts and upgrades, however the sync is batched."""

from __future__ import annotations

import os
import random
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

from memdir.kernel.index import LATEST_VERSION, Index
from memdir.kernel.lang.text import index_text, month_words, terms
from memdir.kernel.storage import journal

WORDS = [
    *("deploy", "cache", "kafka", "postgres", "retry", "budget"),
    *("lint", "wheel", "vendor", "pager", "spring", "march"),
]


def _append(store: Path, count: int, seed: int = 7) -> None:
    rng = random.Random(seed)
    start = datetime(2026, 2, 27, 10, 0, tzinfo=UTC)
    for n in range(count):
        journal.append_turn(
            store,
            rng.choice(["user", "assistant"]),
            " ".join(rng.choices(WORDS, k=rng.randint(2, 6))) + f" turn{n}",
            session=rng.choice(["alpha", "beta", "gamma"]),
            at=start + timedelta(hours=7 * n),  # crosses days and a month
        )


def _snapshot(store: Path) -> tuple[list[tuple[str, ...]], dict[str, int]]:
    with Index(store) as index:
        rows = index._conn.execute(
            "SELECT t.session, t.text, t.at, f.text, f.date, f.context"
            " FROM turns t JOIN turns_fts f ON f.rowid = t.rowid ORDER BY t.at, t.rowid"
        ).fetchall()
        counts = dict(index._conn.execute("SELECT term, rows FROM turn_df WHERE rows > 0"))
    return rows, counts


def _expected(rows: list[tuple[str, ...]]) -> tuple[list[str], dict[str, int]]:
    """The ±WINDOW context and the per-term turn counts, computed from scratch."""
    by_session: dict[str, list[int]] = {}
    for position, row in enumerate(rows):
        by_session.setdefault(row[0], []).append(position)
    contexts = [""] * len(rows)
    for positions in by_session.values():
        for i, position in enumerate(positions):
            around = positions[max(i - journal.WINDOW, 0) : i] + positions[i + 1 : i + 3]
            contexts[position] = " ".join(index_text(rows[p][1]) for p in around)
    counts: dict[str, int] = {}
    for row in rows:
        for term in {*terms(row[1]), *terms(month_words(row[2]))}:
            counts[term] = counts.get(term, 0) + 1
    return contexts, counts


def test_context_and_counts_do_not_depend_on_how_the_sync_was_batched(tmp_path: Path) -> None:
    one_go, step = tmp_path / "one-go", tmp_path / "step"
    for store in (one_go, step):
        store.mkdir()
    _append(one_go, 60)
    with Index(one_go) as index:
        assert journal.sync_journal(index, one_go) == 60
    # The same turns, synced every few appends (as hooks do), in another store.
    rng = random.Random(7)
    start = datetime(2026, 2, 27, 10, 0, tzinfo=UTC)
    for n in range(60):
        journal.append_turn(
            step,
            rng.choice(["user", "assistant"]),
            " ".join(rng.choices(WORDS, k=rng.randint(2, 6))) + f" turn{n}",
            session=rng.choice(["alpha", "beta", "gamma"]),
            at=start + timedelta(hours=7 * n),
        )
        if n % 3 == 0:
            with Index(step) as index:
                journal.sync_journal(index, step)
    with Index(step) as index:
        journal.sync_journal(index, step)
    bulk, stepped = _snapshot(one_go), _snapshot(step)
    assert bulk == stepped
    rows, counts = bulk
    contexts, expected_counts = _expected([(r[0], r[1], r[2]) for r in rows])
    assert [r[5] for r in rows] == contexts
    assert counts == expected_counts
    assert counts["march"] > 0  # the month of the turn is a searchable term


def test_a_rewritten_journal_file_is_counted_once(tmp_path: Path) -> None:
    _append(tmp_path, 30)
    with Index(tmp_path) as index:
        journal.sync_journal(index, tmp_path)
    # Rewrite one day's file as purge does (a new inode, fewer lines).
    day = journal.journal_files(tmp_path)[0]
    kept = day.read_text().splitlines(keepends=True)[1:]
    fresh = day.with_name(".rewrite")
    fresh.write_text("".join(kept))
    os.replace(fresh, day)
    with Index(tmp_path) as index:
        journal.sync_journal(index, tmp_path)
    rows, counts = _snapshot(tmp_path)
    assert len(rows) == 29
    assert counts == _expected([(r[0], r[1], r[2]) for r in rows])[1]


def test_an_index_from_before_turn_counts_is_upgraded_once_with_a_backup(tmp_path: Path) -> None:
    _append(tmp_path, 40)
    with Index(tmp_path) as index:
        journal.sync_journal(index, tmp_path)
    before = _snapshot(tmp_path)
    # Make it a format-1 index: no turn_df table.
    conn = sqlite3.connect(tmp_path / "index.sqlite")
    conn.execute("DROP TABLE turn_df")
    conn.execute("PRAGMA user_version = 1")
    conn.commit()
    conn.close()
    with Index(tmp_path) as index:
        assert index._conn.execute("PRAGMA user_version").fetchone()[0] == LATEST_VERSION
    backup = tmp_path / "state" / "backups" / "index-v1.sqlite"
    assert backup.exists()
    with sqlite3.connect(backup) as old:
        assert old.execute("PRAGMA user_version").fetchone()[0] == 1
        assert old.execute("SELECT count(*) FROM turns").fetchone()[0] == 40
    assert _snapshot(tmp_path) == before
    stamp = backup.stat().st_mtime_ns
    with Index(tmp_path):
        pass  # opening an up-to-date index neither migrates nor backs up again
    assert backup.stat().st_mtime_ns == stamp
    assert _snapshot(tmp_path) == before


def test_every_field_of_a_turn_is_redacted(tmp_path: Path) -> None:
    secret = "ghp_EXAMPLEEXAMPLEEXAMPLEEXAMPLE0000"
    journal.append_turn(
        tmp_path, f"bot {secret}", f"text {secret}", session=secret, extra={"tool": secret}
    )
    written = journal.journal_files(tmp_path)[0].read_text()
    assert secret not in written and written.count("[REDACTED:github-token]") == 4
