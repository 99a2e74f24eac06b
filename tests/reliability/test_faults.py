"""Faults: a full disk, a read-only store, git missing, stale locks, an index from a newer memdir.

Each fault is real, and each test runs the real ``memdir`` CLI and ``memdir hook`` in
subprocesses. Expected every time: a clear error naming what was wrong, exit code 1 (DESIGN §9)
and never a traceback; hooks exit 0 with nothing or one JSON object on stdout (DESIGN §7); nothing
acknowledged is lost; and once the fault is removed the next run recovers.

How the faults are made:

- **Disk full**: the store lives on a small tmpfs the test mounts (``mount -t tmpfs -o size=4m``)
  and fills with a file until ``ENOSPC``. That needs root and permission to mount, which the
  machine these tests were written on gives, so there the tmpfs ran. Where mount is refused the
  tests fall back to ``RLIMIT_FSIZE`` in the child process: writes that would grow a file past
  the limit fail the same way (``EFBIG`` instead of ``ENOSPC``).
- **Read-only store**: the store folder is bind-mounted onto itself read-only (root), else made
  read-only with ``chmod`` (not root); as root without mount permission the tests are skipped,
  since root writes through ``chmod``.
- **git missing**: ``PATH`` holds no ``git``.
- **Stale locks**: a process that took the store lock and was killed; a ``.git/index.lock``
  that a killed git left.
- **Newer index**: ``PRAGMA user_version`` past this build's ``LATEST_VERSION``.
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import signal
import sqlite3
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from memdir import service
from memdir.kernel.index import LATEST_VERSION, Index
from memdir.records.codec import read_file
from tests.conftest import git
from tests.hooks.conftest import HookRun, run_hook

MEMDIR = [sys.executable, "-m", "memdir"]
PAGE = 4096


@dataclass
class Ran:
    """A finished CLI run."""

    code: int
    out: str
    err: str

    def json(self) -> Any:
        return json.loads(self.out)

    def error(self) -> dict[str, str]:
        """The ``--json`` error object (the run must have failed)."""
        assert self.code != 0, self
        found = self.json()["error"]
        assert isinstance(found, dict)
        return found


def cli(
    store: Path,
    *args: str,
    env: dict[str, str] | None = None,
    preexec: Callable[[], None] | None = None,
) -> Ran:
    """Run ``memdir ARGS --store STORE``; never a traceback, whatever happens."""
    done = subprocess.run(
        [*MEMDIR, *args, "--store", str(store)],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        preexec_fn=preexec,
        check=False,
    )
    assert "Traceback" not in done.stderr + done.stdout, done.stderr
    return Ran(done.returncode, done.stdout, done.stderr)


def hook(project: Path, event: str, env: dict[str, str] | None = None, **fields: Any) -> HookRun:
    """Run ``memdir hook EVENT`` as a host does; it exits 0 (checked) and says nothing on stderr."""
    payload = {"session_id": "s1", "hook_event_name": event, "cwd": str(project), **fields}
    run = run_hook(event, payload, cwd=project, env=env)
    assert run.stderr == b"", run.stderr
    run.json  # noqa: B018 - nothing, or exactly one JSON object (asserted by the property)
    return run


def every_hook(project: Path, env: dict[str, str] | None = None) -> None:
    """The main hook events, each of which must fail open under the fault."""
    hook(project, "SessionStart", env, source="startup")
    hook(project, "UserPromptSubmit", env, prompt="remember that the api listens on port 8080")
    notes = project / "notes.txt"
    hook(
        project,
        "PostToolUse",
        env,
        tool_name="Write",
        tool_input={"file_path": str(notes), "content": "x"},
        tool_response={"filePath": str(notes), "success": True},
    )
    hook(project, "Stop", env, last_assistant_message="done, the api is on 8080")


def snapshot(store: Path, *, journal: bool = True) -> dict[str, bytes]:
    """Every record (and journal) file's bytes, and the git history."""
    files = {
        p.relative_to(store).as_posix(): p.read_bytes()
        for folder in ("records", "journal")
        if journal or folder != "journal"
        for p in sorted((store / folder).rglob("*"))
        if p.is_file()
    }
    files["<git log>"] = git(store, "log", "--format=%H %s").encode()
    return files


def assert_journal_grew_by_whole_lines(store: Path, before: dict[str, bytes]) -> None:
    """The journal only grew: old bytes kept, each new line a whole turn."""
    for name, old in before.items():
        if name.startswith("journal/"):
            now = (store / name).read_bytes()
            assert now.startswith(old)
            for line in now[len(old) :].splitlines():
                assert isinstance(json.loads(line), dict)


def seed(store: Path) -> dict[str, str]:
    """Acknowledged writes made before the fault: record id → text; and one journal turn."""
    made = [
        service.remember(store, "The build uses pnpm workspaces").record,
        service.remember(store, "Deploys go out on Thursdays", kind="decision").record,
    ]
    service.journal_append(store, "user", "the cache lives in redis", session="s0")
    return {record.id: record.text for record in made}


def snapshot_without_journal(files: dict[str, bytes]) -> dict[str, bytes]:
    return {k: v for k, v in files.items() if not k.startswith("journal/")}


def assert_intact(store: Path, acknowledged: dict[str, str]) -> None:
    """Health passes, every record parses, every acknowledged record is there and recalled."""
    health = cli(store, "health", "--json")
    assert health.code == 0, health.out
    for path in (store / "records").rglob("*.md"):
        if not path.name.startswith("."):
            read_file(path, path.relative_to(store).as_posix(), "project")
    assert git(store, "status", "--porcelain", "--", "records") == ""
    for record_id, text in acknowledged.items():
        assert record_id in [h.doc["id"] for h in service.recall(store, text).hits], text


def make_store(project: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Initialise a store in ``project`` (a new git repository) and work from there."""
    project.mkdir(parents=True, exist_ok=True)
    git(project, "init", "-q")
    monkeypatch.chdir(project)
    store = service.init(project).store
    manifest = store / "memdir.toml"
    manifest.write_text(
        manifest.read_text().replace("observe_every_seconds = 300", "observe_every_seconds = 0")
    )
    git(store, "commit", "-qam", "tests: no background observer")
    return store


# --- disk full -------------------------------------------------------------------------------


@dataclass
class Disk:
    """A small disk to fill: a tmpfs when mount is permitted, else a child's RLIMIT_FSIZE."""

    root: Path
    kind: str  # "tmpfs" or "rlimit"
    filler: Path | None = None
    limit: int | None = None
    env: dict[str, str] = field(default_factory=dict)

    def fill(self, leave_pages: int = 0, grows: Path | None = None) -> None:
        """Use up the disk, leaving ``leave_pages`` pages (tmpfs) or bytes of ``grows``."""
        if self.kind == "rlimit":
            self.limit = (grows.stat().st_size if grows else 0) + leave_pages * PAGE
            return
        self.filler = self.root / "filler"
        fd = os.open(self.filler, os.O_WRONLY | os.O_CREAT, 0o600)
        try:
            for chunk in (1 << 20, PAGE):
                with contextlib.suppress(OSError):
                    while True:
                        os.write(fd, b"\0" * chunk)
        finally:
            os.close(fd)
        if leave_pages:
            size = self.filler.stat().st_size
            os.truncate(self.filler, size - leave_pages * PAGE)

    def free(self) -> None:
        """Remove the fault."""
        if self.filler is not None:
            self.filler.unlink()
            self.filler = None
        self.limit = None

    def preexec(self) -> Callable[[], None] | None:
        """What a child runs before memdir: the file size limit, in the fallback."""
        limit = self.limit
        if limit is None:
            return None

        def apply() -> None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

        return apply

    def says_full(self, message: str) -> bool:
        """Whether an error message names the fault (EFBIG reads "too large" or "I/O error")."""
        if self.kind == "tmpfs":
            return "disk is full" in message or "No space left on device" in message
        return any(words in message for words in ("too large", "I/O error", "full"))


@pytest.fixture
def disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Disk]:
    """A store on a 4 MB tmpfs (or, where mount is refused, on a plain folder)."""
    root = tmp_path / "disk"
    root.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=4m,mode=0755", "tmpfs", str(root)],
        capture_output=True,
        check=False,
    )
    made = Disk(root, "tmpfs" if mounted.returncode == 0 else "rlimit")
    try:
        yield made
    finally:
        made.free()
        monkeypatch.chdir(tmp_path)
        if made.kind == "tmpfs":
            subprocess.run(["umount", "-l", str(root)], check=False)


def test_a_remember_on_a_full_disk_is_refused_clearly_and_the_next_run_recovers(
    disk: Disk, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = make_store(disk.root / "project", monkeypatch)
    acknowledged = seed(store)
    before = snapshot(store)

    disk.fill()
    refused = cli(
        store, "remember", "The api listens on port 8080", "--json", preexec=disk.preexec()
    )
    assert refused.code == 1
    assert refused.error()["code"] == "io_error"
    assert disk.says_full(refused.error()["message"])
    plain = cli(store, "remember", "The api listens on port 8080", preexec=disk.preexec())
    assert plain.code == 1
    assert plain.err.startswith("memdir: ") and disk.says_full(plain.err)
    assert snapshot(store) == before

    disk.free()
    assert_intact(store, acknowledged)
    done = cli(store, "remember", "The api listens on port 8080", "--json")
    assert done.code == 0, done
    assert_intact(store, {**acknowledged, done.json()["id"]: "The api listens on port 8080"})


def test_a_journal_turn_that_does_not_fit_is_refused_and_never_torn(
    disk: Disk, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = make_store(disk.root / "project", monkeypatch)
    seed(store)
    (day,) = (store / "journal").glob("*.jsonl")

    disk.fill(leave_pages=1, grows=day)  # room for part of the turn, not all of it
    long_turn = "zebra crossing notes " + "lorem ipsum dolor " * 700  # about 12 KB
    refused = cli(store, "journal", "user", long_turn, "--json", preexec=disk.preexec())
    assert refused.code == 1, refused  # never acknowledged with half its bytes on disk
    assert refused.error()["code"] == "io_error"
    assert disk.says_full(refused.error()["message"])
    assert day.name in refused.error()["message"]

    disk.free()
    after = cli(store, "journal", "assistant", "the queue is kafka", "--json")
    assert after.code == 0, after
    texts = [h.text for h in service.search(store, "redis kafka zebra", limit=10).hits]
    assert sorted(texts) == ["the cache lives in redis", "the queue is kafka"]
    assert_intact(store, {})


def test_hooks_on_a_full_disk_fail_open_and_the_next_prompt_is_stored(
    disk: Disk, monkeypatch: pytest.MonkeyPatch
) -> None:
    if disk.kind != "tmpfs":
        pytest.skip("a hook's child limits cannot be set from outside without mount")
    store = make_store(disk.root / "project", monkeypatch)
    acknowledged = seed(store)
    before = snapshot(store)

    disk.fill()
    every_hook(store.parent)
    # A turn that fits in the journal's last, partly used page is written whole: tmpfs counts
    # space in pages. Records and history are untouched.
    assert snapshot(store, journal=False) == snapshot_without_journal(before)
    assert_journal_grew_by_whole_lines(store, before)

    disk.free()
    stored = hook(
        store.parent, "UserPromptSubmit", prompt="remember that the api listens on port 8080"
    )
    assert "stored" in stored.context
    (hit,) = service.recall(store, "api port").hits
    assert hit.doc["text"].lower().startswith("the api listens on port 8080")
    assert_intact(store, {**acknowledged, hit.doc["id"]: hit.doc["text"]})


# --- read-only store -------------------------------------------------------------------------


@contextlib.contextmanager
def read_only(folder: Path) -> Iterator[None]:
    """Make ``folder`` read-only for the body: a read-only bind mount (root) or chmod."""
    if os.geteuid() == 0:
        bound = subprocess.run(["mount", "--bind", str(folder), str(folder)], check=False)
        if bound.returncode != 0:
            pytest.skip("root without mount permission: chmod cannot make a folder read-only")
        try:
            subprocess.run(
                ["mount", "-o", "remount,bind,ro", str(folder)], check=True, capture_output=True
            )
            yield
        finally:
            subprocess.run(["umount", str(folder)], check=True)
        return
    modes = {p: p.stat().st_mode for p in [folder, *folder.rglob("*")]}
    for path in modes:
        path.chmod(modes[path] & ~0o222)
    try:
        yield
    finally:
        for path, mode in modes.items():
            path.chmod(mode)


def test_a_read_only_store_refuses_writes_clearly_and_recovers_when_writable(
    store: Path,
) -> None:
    acknowledged = seed(store)
    before = snapshot(store)

    with read_only(store):
        refused = cli(store, "remember", "The api listens on port 8080", "--json")
        assert refused.code == 1
        assert refused.error()["code"] == "io_error"
        assert "read-only" in refused.error()["message"].lower()
        journal = cli(store, "journal", "user", "a turn", "--json")
        assert journal.code == 1
        assert "read-only" in journal.error()["message"].lower()
        every_hook(store.parent)
    assert snapshot(store) == before

    assert_intact(store, acknowledged)
    done = cli(store, "remember", "The api listens on port 8080", "--json")
    assert done.code == 0, done
    assert_intact(store, {**acknowledged, done.json()["id"]: "The api listens on port 8080"})


# --- git missing -----------------------------------------------------------------------------


def test_without_git_writes_are_refused_naming_git_and_reads_still_work(
    store: Path, tmp_path: Path
) -> None:
    acknowledged = seed(store)
    before = snapshot(store)
    no_git = {"PATH": str(tmp_path / "empty-bin")}

    refused = cli(store, "remember", "The api listens on port 8080", "--json", env=no_git)
    assert refused.code == 1
    assert refused.error()["code"] == "git_error"
    assert "git is not installed or not on PATH" in refused.error()["message"]
    assert not (store / "state" / "intent.json").exists()
    assert snapshot(store) == before
    recalled = cli(store, "recall", "pnpm workspaces", "--json", env=no_git)
    assert recalled.code == 0, recalled
    assert [r["text"] for r in recalled.json()["results"]] == ["The build uses pnpm workspaces"]
    health = cli(store, "health", "--json", env=no_git)
    assert health.code == 1
    assert any("git is not installed" in f["message"] for f in health.json()["findings"])

    prompt = hook(
        store.parent,
        "UserPromptSubmit",
        no_git,
        prompt="remember that the api listens on port 8080",
    )
    assert "did not store" in prompt.context and "git" in prompt.context  # the agent is told
    every_hook(store.parent, no_git)
    assert service.recall(store, "api port").hits == []

    assert_intact(store, acknowledged)
    done = cli(store, "remember", "The api listens on port 8080", "--json")
    assert done.code == 0, done
    assert_intact(store, {**acknowledged, done.json()["id"]: "The api listens on port 8080"})


# --- stale locks -----------------------------------------------------------------------------


def test_a_store_lock_left_by_a_killed_process_does_not_block_anyone(store: Path) -> None:
    acknowledged = seed(store)
    holder = subprocess.run(
        [
            sys.executable,
            "-c",
            "import os, signal, sys\n"
            "from pathlib import Path\n"
            "from memdir.kernel.storage.lock import store_lock\n"
            "with store_lock(Path(sys.argv[1]), 'remember'):\n"
            "    os.kill(os.getpid(), signal.SIGKILL)\n",
            str(store),
        ],
        check=False,
    )
    assert holder.returncode == -signal.SIGKILL
    assert (store / "state" / "lock").read_text().split()[1] == "remember"

    done = cli(store, "remember", "The api listens on port 8080", "--json")
    assert done.code == 0, done  # a held lock would time out with lock_timeout instead
    health = cli(store, "health", "--json")
    assert "lock_held" not in [f["code"] for f in health.json()["findings"]]
    assert_intact(store, {**acknowledged, done.json()["id"]: "The api listens on port 8080"})


def test_a_git_lock_left_by_a_killed_git_is_cleared_by_the_next_write_and_by_health(
    store: Path,
) -> None:
    acknowledged = seed(store)
    lock = store / ".git" / "index.lock"
    lock.write_bytes(b"")  # what git leaves when SIGKILL stops it half-way through `git add`

    done = cli(store, "remember", "The api listens on port 8080", "--json")
    assert done.code == 0, done
    assert not lock.exists()
    assert git(store, "log", "-1", "--format=%s").startswith(f"remember {done.json()['id']}")
    acknowledged[done.json()["id"]] = "The api listens on port 8080"

    lock.write_bytes(b"")
    hook(store.parent, "UserPromptSubmit", prompt="remember that the queue is kafka")
    assert not lock.exists()
    assert git(store, "status", "--porcelain", "--", "records") == ""

    (store / ".git" / "HEAD.lock").write_bytes(b"")
    health = cli(store, "health", "--json")
    assert health.code == 0, health.out
    assert [
        f["path"] for f in health.json()["findings"] if f["code"] == "stale_git_lock_removed"
    ] == [".git/HEAD.lock"]
    assert_intact(store, acknowledged)


# --- an index from a newer memdir ------------------------------------------------------------


def test_an_index_from_a_newer_memdir_is_refused_untouched_and_reindex_recovers(
    store: Path,
) -> None:
    acknowledged = seed(store)
    with Index(store) as index:
        index._conn.execute(f"PRAGMA user_version = {LATEST_VERSION + 1}")
        index._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    index_bytes = (store / "index.sqlite").read_bytes()
    before = snapshot(store)

    for args in (["recall", "pnpm"], ["remember", "The api listens on port 8080"], ["health"]):
        refused = cli(store, *args, "--json")
        assert refused.code == 1, args
        assert refused.error()["code"] == "index_format"
        assert "newer memdir" in refused.error()["message"]
        assert "memdir reindex" in refused.error()["message"]  # says how to recover
    hook(store.parent, "SessionStart", source="startup")
    hook(store.parent, "UserPromptSubmit", prompt="remember that the api listens on port 8080")
    assert (store / "index.sqlite").read_bytes() == index_bytes
    assert snapshot(store, journal=False) == snapshot_without_journal(before)
    assert_journal_grew_by_whole_lines(store, before)  # the prompt is evidence all the same
    # The hooks failed open; their failures are logged for `memdir health`, naming the cause.
    log = store / "state" / "hook-errors.log"
    assert "newer memdir" in log.read_text()
    health = cli(store, "health", "--json")
    assert health.error()["code"] == "index_format"
    log.unlink()  # read the log, then delete it

    rebuilt = cli(store, "reindex", "--json")
    assert rebuilt.code == 0, rebuilt
    with sqlite3.connect(store / "index.sqlite") as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == LATEST_VERSION
    assert_intact(store, acknowledged)
