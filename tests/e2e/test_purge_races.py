"""Purge rewrites logs that hooks append to without the store lock: no append may be lost.

Real processes only: `memdir hook PostToolUse` and `memdir journal` keep appending while
`memdir purge` rewrites today's action log and journal (DESIGN §7: "an action row is never
dropped"; §10.2: no acknowledged write is lost).
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from datetime import UTC, datetime
from pathlib import Path

from memdir import service
from memdir.kernel.storage import journal

SECRET = "the vault unlock phrase is periwinkle ostrich"
OLD_ROWS = 150_000
"""Lines already in today's action log: enough that reading, filtering and writing it takes a
while, so appends land during the rewrite (the tester's repro used 300,000)."""


def _line(obj: dict[str, object]) -> str:
    return json.dumps(obj, separators=(",", ":"))


def _fill_logs(store: Path) -> None:
    """Write the old lines one by one: this test process stays small (its children inherit its
    peak memory figure, which tests that measure a child's memory would then see)."""
    day = datetime.now(UTC).strftime("%Y-%m-%d")
    at = f"{day}T00:00:00Z"
    (store / "actions").mkdir(exist_ok=True)
    with (store / "actions" / f"{day}.jsonl").open("w") as fh:
        for n in range(OLD_ROWS):
            if n == OLD_ROWS // 2:
                fh.write(_line({"at": at, "tool": "Bash", "command": f"echo {SECRET}"}) + "\n")
            row = {"at": at, "session": "old", "tool": "Bash", "command": f"ls dir{n}", "ok": True}
            fh.write(_line(row) + "\n")
    with (store / "journal" / f"{day}.jsonl").open("w") as fh:
        for n in range(2_000):
            fh.write(_line({"at": at, "who": "user", "text": f"old turn {n}", "session": "old"}))
            fh.write("\n")
        fh.write(_line({"at": at, "who": "user", "text": f"remember {SECRET}", "session": "o"}))
        fh.write("\n")


def _scan_logs(store: Path) -> tuple[set[str], int, int]:
    """Return the race markers found in the logs, the old lines, and the lines with the secret."""
    found: set[str] = set()
    old = secret = 0
    for folder in ("actions", "journal"):
        for path in (store / folder).iterdir():
            with path.open() as fh:
                for line in fh:
                    old += '"session":"old"' in line
                    secret += "periwinkle" in line
                    if "race-" in line:
                        value = json.loads(line)
                        found.add(str(value.get("command") or value.get("text")).split()[-1])
    return found, old, secret


class _Appenders:
    """Threads that each run one real appending process after another until stopped."""

    def __init__(self, store: Path) -> None:
        self.store = store
        self.project = store.parent
        self.stop = threading.Event()
        self.acknowledged: list[str] = []  # markers of appends whose process finished
        self.failures: list[str] = []
        self.lock = threading.Lock()
        self.threads = [
            threading.Thread(target=self._loop, args=(n,), daemon=True) for n in range(4)
        ]

    def _one(self, worker: int, n: int) -> None:
        marker = f"race-w{worker}-n{n}"
        if worker % 2:  # a turn through the CLI
            args = [sys.executable, "-m", "memdir", "journal", "user", f"turn {marker}"]
            args += ["--store", str(self.store)]
            payload = b""
        else:  # an action row through the hook
            args = [sys.executable, "-m", "memdir", "hook", "PostToolUse"]
            payload = json.dumps(
                {
                    "session_id": "racer",
                    "hook_event_name": "PostToolUse",
                    "cwd": str(self.project),
                    "tool_name": "Bash",
                    "tool_input": {"command": f"echo {marker}"},
                    "tool_response": {"stdout": marker},
                }
            ).encode()
        done = subprocess.run(
            args, input=payload, capture_output=True, cwd=self.project, check=False
        )
        with self.lock:
            if done.returncode == 0:
                self.acknowledged.append(marker)
            else:
                self.failures.append(done.stderr.decode("utf-8", "replace"))

    def _loop(self, worker: int) -> None:
        n = 0
        while not self.stop.is_set():
            self._one(worker, n)
            n += 1

    def __enter__(self) -> _Appenders:
        for thread in self.threads:
            thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        for thread in self.threads:
            thread.join()


def test_appends_made_while_purge_rewrites_the_logs_all_survive(store: Path) -> None:
    record = service.remember(store, SECRET.capitalize()).record
    _fill_logs(store)

    with _Appenders(store) as appenders:
        while len(appenders.acknowledged) < 4:  # every kind of appender is running
            threading.Event().wait(0.05)
        purged = subprocess.run(
            [sys.executable, "-m", "memdir", "purge", record.id, "--yes", "--json"],
            capture_output=True,
            cwd=store.parent,
            check=False,
        )
        seen = len(appenders.acknowledged)
        while len(appenders.acknowledged) < seen + 4:  # appends after the purge, too
            threading.Event().wait(0.05)

    assert purged.returncode == 0, purged.stderr
    assert appenders.failures == []
    found, old, secret = _scan_logs(store)
    missing = [m for m in appenders.acknowledged if m not in found]
    assert missing == [], f"{len(missing)} of {len(appenders.acknowledged)} appends lost"
    assert secret == 0
    assert old == OLD_ROWS + 2_000  # nothing else was dropped
    hook_errors = store / "state" / "hook-errors.log"
    assert not hook_errors.exists() or hook_errors.read_text() == ""
    # The journal index matches the rewritten files: every turn once, the erased one gone.
    turns = [
        json.loads(line)["text"]
        for path in (store / "journal").glob("*.jsonl")
        for line in path.read_text().splitlines()
        if line.strip()
    ]
    with service.opened(store) as handle:
        journal.sync_journal(handle.index, store)
        conn = handle.index._conn  # type: ignore[attr-defined]  # the SQLite backend
        indexed = [row[0] for row in conn.execute("SELECT text FROM turns")]
    assert sorted(indexed) == sorted(turns)
