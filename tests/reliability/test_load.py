"""Load: hundreds of real processes, a held index and racing tool calls on one store.

Every part is real: ``python -m memdir`` subprocesses for the CLI and the hooks, ``memdir
serve`` driven by the MCP SDK's stdio client, real git and real SQLite files. The machine these
run on is shared and small (2 cores), so nothing here asserts a duration: concurrency is
bounded, and only outcomes are asserted (DESIGN §10.2: no acknowledged write is lost).
"""

from __future__ import annotations

import json
import os
import random
import sqlite3
import subprocess
import sys
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

from memdir import service
from memdir.kernel.base.caller import Caller
from memdir.records.codec import read_file
from tests.conftest import git, text_of

MEMDIR = [sys.executable, "-m", "memdir"]
FORBIDDEN = ("Traceback", "database is locked")
"""Text that must never reach any process's stdout or stderr, nor the hook error log."""

WORDS = [
    *("amber", "basalt", "cobalt", "dune", "ember", "fjord", "garnet", "harbor", "indigo"),
    *("juniper", "kelp", "lagoon", "meadow", "nickel", "onyx", "prairie", "quartz", "raven"),
    *("saffron", "tundra", "umber", "violet", "willow", "xenon", "yarrow", "zephyr", "anchor"),
    *("beacon", "canyon", "delta", "estuary", "falcon", "glacier", "heron", "island", "jasper"),
    *("kestrel", "lantern", "marble", "nectar", "orchid", "pebble", "quiver", "ripple", "summit"),
    *("thicket", "upland", "vessel", "walnut"),
]


def _sentence(rng: random.Random, label: str, n: int) -> str:
    """A belief no other in the run resembles (distinct word bigrams, so no near-duplicate)."""
    a, b, c, d = rng.sample(WORDS, 4)
    return f"{label} {n} keeps the {a} {b} beside the {c} {d}"


@dataclass
class Ran:
    """One finished subprocess: what it was asked and everything it printed."""

    label: str
    args: list[str]
    code: int
    stdout: str
    stderr: str
    meta: dict[str, Any] = field(default_factory=dict)


def _run(label: str, args: list[str], cwd: Path, stdin: bytes = b"", **meta: Any) -> Ran:
    done = subprocess.run(args, input=stdin, capture_output=True, cwd=cwd, timeout=600, check=False)
    return Ran(
        label,
        args,
        done.returncode,
        done.stdout.decode("utf-8", "replace"),
        done.stderr.decode("utf-8", "replace"),
        meta,
    )


def _clean_output(runs: list[Ran]) -> None:
    for ran in runs:
        for bad in FORBIDDEN:
            assert bad not in ran.stdout + ran.stderr, (ran.label, ran.args, ran.stderr)


def _jsonl_rows(folder: Path) -> list[dict[str, Any]]:
    """Every line of every ``*.jsonl`` in ``folder``; each must be one whole JSON object."""
    rows = []
    for path in sorted(folder.glob("*.jsonl")):
        data = path.read_bytes()
        assert data.endswith(b"\n"), f"{path.name} ends inside a line"
        for number, line in enumerate(data.split(b"\n")[:-1], 1):
            if not line.strip():
                continue
            value = json.loads(line)  # a torn or merged line fails here
            assert isinstance(value, dict), (path.name, number)
            rows.append(value)
    return rows


def _hook_payload(store: Path, event: str, session: str, **fields: Any) -> dict[str, Any]:
    """A hook payload in Claude Code's shape (tests/hooks/ holds the individual contracts)."""
    return {
        "session_id": session,
        "transcript_path": f"/home/dev/.claude/projects/load/{session}.jsonl",
        "cwd": str(store.parent),
        "permission_mode": "default",
        "hook_event_name": event,
        **fields,
    }


def _hook_job(store: Path, event: str, payload: dict[str, Any], **meta: Any) -> Ran:
    ran = _run(
        f"hook {event}",
        [*MEMDIR, "hook", event],
        store.parent,
        json.dumps(payload).encode(),
        event=event,
        payload=payload,
        **meta,
    )
    reply: dict[str, Any] | None = None
    if ran.stdout.strip():
        assert ran.stdout.count("\n") == 1 and ran.stdout.endswith("\n"), ran.stdout
        reply = json.loads(ran.stdout)
        assert isinstance(reply, dict)
    ran.meta["reply"] = reply
    return ran


def _context(reply: dict[str, Any] | None) -> str:
    return str((reply or {}).get("hookSpecificOutput", {}).get("additionalContext", ""))


def _tool_data(result: Any) -> dict[str, Any]:
    if result.structured_content is not None:
        return dict(result.structured_content)
    return dict(json.loads(text_of(result)))


def _mcp_params(store: Path) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "memdir", "serve"],
        env={**os.environ, "MEMDIR_STORE": str(store)},
        cwd=str(store.parent),
    )


def _commits_since(store: Path, base: str) -> list[tuple[str, list[tuple[str, str]]]]:
    """``(subject, [(status, path), …])`` for every commit after ``base``, oldest first.

    The store's own audit log (``audit/``), appended by every write in the same commit, is
    left out: the assertions here are about which records each commit touched.
    """
    out = git(store, "log", "--reverse", "--format=%x00%s", "--name-status", f"{base}..HEAD")
    commits = []
    for chunk in out.split("\x00")[1:]:
        subject, _, rest = chunk.partition("\n")
        files = [tuple(line.split("\t", 1)) for line in rest.splitlines() if line.strip()]
        commits.append((subject, [(s, p) for s, p in files if not p.startswith("audit/")]))
    return commits


def _session_hooks(
    store: Path, rng: random.Random
) -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    """100 hook events of 16 sessions in Claude Code's shapes: 12 SessionStart, 22
    UserPromptSubmit (every fourth asks to remember something), 12 PreToolUse Read, 36
    PostToolUse (Read, Write, Edit, Bash) and 18 Stop."""
    project = store.parent
    sessions = [f"load-s{n:02d}" for n in range(16)]
    hooks: list[tuple[str, dict[str, Any], dict[str, Any]]] = []
    for n in range(12):
        payload = _hook_payload(store, "SessionStart", sessions[n], source="startup")
        hooks.append(("SessionStart", payload, {}))
    for n in range(22):
        if n % 4 == 0:
            fact = _sentence(rng, "Asked", n)
            prompt = f"Please look at src/mod{n % 12}.py. Also, remember that {fact}."
            meta: dict[str, Any] = {"fact": fact}
        else:
            prompt = f"Prompt {n}: why does src/mod{n % 12}.py return {n % 12}?"
            meta = {}
        payload = _hook_payload(store, "UserPromptSubmit", sessions[n % 16], prompt=prompt)
        hooks.append(("UserPromptSubmit", payload, meta))
    for n in range(12):
        path = str(project / "src" / f"mod{n}.py")
        payload = _hook_payload(
            store,
            "PreToolUse",
            sessions[n % 16],
            tool_name="Read",
            tool_input={"file_path": path},
            tool_use_id=f"toolu_pre{n:03d}",
        )
        hooks.append(("PreToolUse", payload, {}))
    for n in range(36):
        tool = ("Read", "Write", "Edit", "Bash")[n % 4]
        path = str(project / "src" / f"mod{n % 12}.py")
        if tool == "Bash":
            tool_input: dict[str, Any] = {"command": f"pytest -q tests/test_mod.py -k case{n}"}
            response: dict[str, Any] = {"stdout": "1 passed", "stderr": "", "interrupted": False}
        elif tool == "Read":
            tool_input = {"file_path": path}
            response = {"type": "text", "file": {"filePath": path, "content": "def f(): ..."}}
        elif tool == "Write":
            tool_input = {"file_path": path, "content": f"def f{n}():\n    return {n}\n"}
            response = {"type": "update", "filePath": path}
        else:
            edit = {"old_string": f"return {n % 12}", "new_string": f"return {n % 12}  # ok"}
            tool_input = {"file_path": path, **edit}
            response = {"filePath": path, "structuredPatch": [], "userModified": False}
        payload = _hook_payload(
            store,
            "PostToolUse",
            sessions[n % 16],
            tool_name=tool,
            tool_input=tool_input,
            tool_response=response,
            tool_use_id=f"toolu_post{n:03d}",
        )
        hooks.append(("PostToolUse", payload, {}))
    for n in range(18):
        payload = _hook_payload(
            store,
            "Stop",
            sessions[n % 16],
            stop_hook_active=False,
            last_assistant_message=f"Answer {n}: src/mod{n % 12}.py now returns {n % 12}.",
        )
        hooks.append(("Stop", payload, {}))
    return hooks


# --- 1. mixed concurrency ---------------------------------------------------------------------

IN_FLIGHT = 32
"""Processes running at once. 200 at once thrashes a 2-core machine without testing anything
more: the store lock already serialises every write, and 32 keep it contended all the time."""


@pytest.mark.slow
def test_two_hundred_mixed_processes_lose_no_acknowledged_write(store: Path) -> None:  # noqa: C901 - one scenario mixing five kinds of process, checked as one
    """200 processes on one store: 74 `remember`, 20 `correct` (4 pairs racing for one
    record), 100 hook events of 16 sessions and 6 `memdir serve` processes each making 5
    concurrent MCP calls, with at most 32 in flight.

    Afterwards every acknowledged write is there, every supersede chain is whole, every
    record file parses, every write is exactly one commit, git is sound, the working tree
    is clean after `memdir sync`, `memdir health` passes, and no process printed a traceback
    or "database is locked".
    """
    rng = random.Random(20261130)
    project = store.parent
    for n in range(12):
        (project / "src").mkdir(exist_ok=True)
        (project / "src" / f"mod{n}.py").write_text(f"def f{n}():\n    return {n}\n")

    # seeds[16:22] are the agent's own (MCP corrects them below): an agent's correction of an
    # owner's record is only a proposal (DESIGN §4), and this test races corrections that apply.
    seeds = [
        service.remember(
            store,
            _sentence(rng, "seed", n),
            kind="decision",
            caller=Caller("agent" if 16 <= n < 22 else "owner", "cli"),
        ).record.id
        for n in range(24)
    ]
    base = git(store, "rev-parse", "HEAD").strip()

    jobs: list[Callable[[], Ran]] = []
    for n in range(74):
        kind = ("fact", "preference", "rule", "decision")[n % 4]
        text = _sentence(rng, "cli", n)
        args = [*MEMDIR, "remember", text, "--kind", kind, "--json", "--store", str(store)]
        jobs.append(partial(_run, "remember", args, project, text=text))
    correct_targets = [*seeds[:12], *[s for s in seeds[12:16] for _ in range(2)]]
    for n, target in enumerate(correct_targets):
        text = _sentence(rng, "fix", n)
        args = [*MEMDIR, "correct", target, "--text", text, "--reason", "load test"]
        args += ["--json", "--store", str(store)]
        jobs.append(partial(_run, "correct", args, project, text=text, old=target))

    hooks = _session_hooks(store, rng)
    for event, payload, meta in hooks:
        jobs.append(partial(_hook_job, store, event, payload, **meta))

    mcp_targets = seeds[16:22]

    def mcp_session(k: int) -> Ran:
        own = random.Random(1000 + k)
        texts = [_sentence(own, f"agent{k}", n) for n in range(3)]
        calls: list[tuple[str, dict[str, Any]]] = [
            *(("memory_remember", {"text": t, "kind": "fact"}) for t in texts),
            ("memory_correct", {"id": mcp_targets[k], "text": f"agent {k} corrected this"}),
            ("memory_recall", {"query": "keeps the beside"}),
        ]
        outcomes: list[tuple[str, dict[str, Any], bool, Any]] = []

        async def drive() -> None:
            async def one(name: str, arguments: dict[str, Any]) -> None:
                result = await client.call_tool(name, arguments)
                body = text_of(result) if result.is_error else _tool_data(result)
                outcomes.append((name, arguments, result.is_error, body))

            async with (
                Client(stdio_client(_mcp_params(store), errlog=err)) as client,
                anyio.create_task_group() as group,
            ):
                for name, arguments in calls:
                    group.start_soon(one, name, arguments)

        log = store.parent.parent / f"mcp-{k}.stderr"
        with log.open("w", encoding="utf-8") as err:
            anyio.run(drive)
        return Ran("mcp", ["memdir", "serve"], 0, "", log.read_text(), {"outcomes": outcomes})

    for k in range(len(mcp_targets)):
        jobs.append(partial(mcp_session, k))
    assert len(jobs) == 200
    rng.shuffle(jobs)

    with ThreadPoolExecutor(IN_FLIGHT) as pool:
        runs: list[Ran] = list(pool.map(lambda job: job(), jobs))

    _clean_output(runs)
    by_label: dict[str, list[Ran]] = {}
    for ran in runs:
        by_label.setdefault(ran.label.split()[0], []).append(ran)

    # Acknowledged CLI writes: exit 0 and an id printed.
    remembered: dict[str, str] = {}
    for ran in by_label["remember"]:
        assert ran.code == 0, ran.stdout + ran.stderr
        doc = json.loads(ran.stdout)
        remembered[doc["id"]] = ran.meta["text"]
    corrected: dict[str, str] = {}  # old id -> new id
    wins: Counter[str] = Counter()
    for ran in by_label["correct"]:
        old = ran.meta["old"]
        if ran.code == 0:
            doc = json.loads(ran.stdout)
            assert doc["supersedes"] == old and doc["text"] == ran.meta["text"]
            corrected[old] = doc["id"]
            wins[old] += 1
        else:  # only the loser of a race, cleanly: the record is already superseded
            assert ran.code == 3, ran.stdout + ran.stderr
            assert json.loads(ran.stdout)["error"]["code"] == "invalid_transition"
    assert set(wins) == set(seeds[:16]) and set(wins.values()) == {1}

    # Acknowledged MCP writes: the tool returned an id.
    agent_made: set[str] = set()
    for ran in by_label["mcp"]:
        outcomes = ran.meta["outcomes"]
        assert len(outcomes) == 5
        for name, arguments, is_error, body in outcomes:
            assert not is_error, (name, body)
            if name == "memory_remember":
                assert body["origin"] == "agent" and body["created"]
                remembered[body["id"]] = arguments["text"]
                agent_made.add(body["id"])
            elif name == "memory_correct":
                corrected[arguments["id"]] = body["id"]
            else:
                # compact hits name their status only when it is not active
                assert all(hit.get("status", "active") == "active" for hit in body["results"])

    # Hooks: every one exited 0 with nothing or one JSON object; what it recorded is there.
    actions = _jsonl_rows(store / "actions")
    turns = _jsonl_rows(store / "journal")
    rows = Counter((r["session"], r["tool"], r.get("path") or r.get("command")) for r in actions)
    said = Counter((t["session"], t["who"], t["text"]) for t in turns)
    expected_rows: Counter[tuple[Any, Any, Any]] = Counter()
    expected_turns: Counter[tuple[str, str, str]] = Counter()
    for ran in by_label["hook"]:
        assert ran.code == 0 and ran.stderr == "", ran.stderr
        payload, event = ran.meta["payload"], ran.meta["event"]
        if event == "PostToolUse":
            tool_input = payload["tool_input"]
            what = (
                tool_input["command"]
                if payload["tool_name"] == "Bash"
                else Path(tool_input["file_path"]).relative_to(project).as_posix()
            )
            expected_rows[(payload["session_id"], payload["tool_name"], what)] += 1
        elif event == "UserPromptSubmit":
            expected_turns[(payload["session_id"], "user", payload["prompt"])] += 1
            context = _context(ran.meta["reply"])
            if "fact" in ran.meta and "memdir stored " in context:
                record_id = context.split("memdir stored ", 1)[1].split()[0]
                remembered[record_id] = ran.meta["fact"]
        elif event == "Stop":
            message = payload["last_assistant_message"]
            expected_turns[(payload["session_id"], "assistant", message)] += 1
    assert not expected_rows - rows, expected_rows - rows
    assert not expected_turns - said, expected_turns - said

    # Every acknowledged write is in the store as written; every chain is intact.
    records = {r.id: r for r in service.list_records(store)}
    for record_id, text in remembered.items():
        assert records[record_id].text == text and records[record_id].status == "active"
    for old, new in corrected.items():
        assert records[old].status == "superseded" and records[old].superseded_by == new
        assert records[new].supersedes == old and records[new].status == "active"
    assert {records[i].origin for i in agent_made} == {"agent"}
    for record in records.values():  # and every chain, acknowledged or not, points both ways
        if record.supersedes:
            earlier = records[record.supersedes]
            assert (earlier.status, earlier.superseded_by) == ("superseded", record.id)
        if record.status == "superseded":
            assert records[str(record.superseded_by)].supersedes == record.id

    # Every record file parses, is tracked, and was added by exactly one commit.
    files = {p.relative_to(store).as_posix(): p for p in (store / "records").rglob("*.md")}
    for rel, path in files.items():
        read_file(path, rel)
    assert {Path(rel).stem for rel in files} == set(records)
    commits = _commits_since(store, base)
    added: Counter[str] = Counter()
    for subject, changed in commits:
        op, _, rest = subject.partition(" ")
        statuses = sorted(changed)
        if op == "remember":
            ((status, rel),) = statuses
            assert status == "A" and Path(rel).stem == rest, subject
            added[rest] += 1
        elif op == "correct":
            old, new = rest.split(":")[0].split(" -> ")
            assert [s for s, _ in statuses] == ["A", "M"], subject
            assert {Path(p).stem for _, p in statuses} == {old, new}, subject
            added[new] += 1
        else:
            pytest.fail(f"unexpected commit during the run: {subject!r}")
    assert set(added) == set(records) - set(seeds) and set(added.values()) == {1}
    assert set(remembered) | set(corrected.values()) <= set(added)

    sync = _run("sync", [*MEMDIR, "sync", "--store", str(store)], project)
    health = _run("health", [*MEMDIR, "health", "--json", "--store", str(store)], project)
    _clean_output([sync, health])
    assert sync.code == 0, sync.stderr
    assert health.code == 0 and json.loads(health.stdout)["ok"], health.stdout
    assert git(store, "status", "--porcelain") == ""
    tracked = set(git(store, "ls-files", "records").splitlines())
    assert tracked == set(files)
    fsck = subprocess.run(
        ["git", "-C", str(store), "fsck", "--strict", "--no-progress"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert fsck.returncode == 0 and fsck.stdout == fsck.stderr == "", fsck.stdout + fsck.stderr
    # A hook the starved machine made overrun its budget fails open, keeping its row (health
    # reports it as information); anything else in the hook error log is a failure.
    log = store / "state" / "hook-errors.log"
    logged = log.read_text() if log.exists() else ""
    assert not any(bad in logged for bad in FORBIDDEN), logged


# --- 2. a held index (case B15) ---------------------------------------------------------------


def _seed_journal(store: Path, turns: int) -> None:
    """Give the index weight: ``turns`` journal turns of last week, indexed."""
    rng = random.Random(15)
    lines = [
        json.dumps(
            {
                "at": "2026-11-23T10:00:00.000Z",
                "who": "user" if n % 2 else "assistant",
                "text": " ".join(rng.choices(WORDS, k=12)) + f" turn{n}",
                "session": f"old{n % 7}",
            }
        )
        for n in range(turns)
    ]
    (store / "journal").mkdir(exist_ok=True)
    (store / "journal" / "2026-11-23.jsonl").write_text("\n".join(lines) + "\n")
    service.search(store, "kafka retry")  # brings the index up to date with the journal


def _hook_storm(store: Path, count: int) -> list[Ran]:
    """``count`` hook processes of 5 sessions: action rows and journal turns, none a record."""
    project = store.parent
    (project / "app.py").write_text("print('hello')\n")
    jobs: list[Callable[[], Ran]] = []
    for n in range(count):
        session = f"busy-{n % 5}"
        if n % 3 == 0:
            payload = _hook_payload(
                store,
                "PostToolUse",
                session,
                tool_name="Bash",
                tool_input={"command": f"make check STEP={n}"},
                tool_response={"stdout": "ok", "stderr": "", "interrupted": False},
                tool_use_id=f"toolu_{n:03d}",
            )
            jobs.append(partial(_hook_job, store, "PostToolUse", payload))
        elif n % 3 == 1:
            prompt = f"Step {n}: what does app.py print?"
            payload = _hook_payload(store, "UserPromptSubmit", session, prompt=prompt)
            jobs.append(partial(_hook_job, store, "UserPromptSubmit", payload))
        else:
            payload = _hook_payload(
                store, "Stop", session, stop_hook_active=False, last_assistant_message=f"Step {n}."
            )
            jobs.append(partial(_hook_job, store, "Stop", payload))
    with ThreadPoolExecutor(8) as pool:
        return list(pool.map(lambda job: job(), jobs))


def _assert_storm_kept(store: Path, runs: list[Ran]) -> None:
    actions = {(r["session"], r.get("command")) for r in _jsonl_rows(store / "actions")}
    turns = {(t["session"], t["who"], t["text"]) for t in _jsonl_rows(store / "journal")}
    for ran in runs:
        assert ran.code == 0 and ran.stderr == "", ran.stderr
        payload = ran.meta["payload"]
        session = payload["session_id"]
        if ran.meta["event"] == "PostToolUse":
            assert (session, payload["tool_input"]["command"]) in actions
        elif ran.meta["event"] == "UserPromptSubmit":
            assert (session, "user", payload["prompt"]) in turns
        else:
            assert (session, "assistant", payload["last_assistant_message"]) in turns


@contextmanager
def _held(store: Path, *statements: str) -> Iterator[None]:
    """Run ``statements`` on a second connection to the index and hold that transaction."""
    conn = sqlite3.connect(store / "index.sqlite", isolation_level=None, timeout=30)
    try:
        for statement in statements:
            conn.execute(statement).fetchall()
        yield
    finally:
        conn.execute("ROLLBACK")
        conn.close()


@contextmanager
def _integrity_checks(store: Path) -> Iterator[list[str]]:
    """Run ``PRAGMA integrity_check`` over and over on a third connection until the body ends."""
    results: list[str] = []
    done = threading.Event()

    def loop() -> None:
        conn = sqlite3.connect(store / "index.sqlite", timeout=30)
        try:
            while not done.is_set():
                results.append(conn.execute("PRAGMA integrity_check").fetchone()[0])
        finally:
            conn.close()

    worker = threading.Thread(target=loop)
    worker.start()
    try:
        yield results
    finally:
        done.set()
        worker.join()


@pytest.mark.slow
def test_a_long_reader_and_integrity_checks_drop_no_row_and_no_write(store: Path) -> None:
    """B15: a second connection holds `BEGIN; SELECT count(*) FROM records_fts` and a third
    runs `PRAGMA integrity_check` in a loop on a 20,000-turn index, for as long as 50 hook
    processes (8 at a time) and 6 `memdir remember` processes run. Every hook row and journal
    turn is written, every remember exits 0 and is recalled, nothing says "database is locked".
    """
    _seed_journal(store, 20_000)
    project = store.parent
    texts = [_sentence(random.Random(n), "busy", n) for n in range(6)]
    with (
        _held(store, "BEGIN", "SELECT count(*) FROM records_fts"),
        _integrity_checks(store) as checks,
        ThreadPoolExecutor(2) as pool,
    ):
        remembers = pool.map(
            lambda t: _run("remember", [*MEMDIR, "remember", t, "--json"], project), texts
        )
        hooks = _hook_storm(store, 50)
        remembered = list(remembers)
    _clean_output([*hooks, *remembered])
    _assert_storm_kept(store, hooks)
    assert checks and set(checks) == {"ok"}
    for ran, text in zip(remembered, texts, strict=True):
        assert ran.code == 0, ran.stdout + ran.stderr
        assert (
            service.recall(store, text, limit=1).hits[0].doc["id"] == json.loads(ran.stdout)["id"]
        )
    log = store / "state" / "hook-errors.log"
    assert not any(bad in (log.read_text() if log.exists() else "") for bad in FORBIDDEN)


@pytest.mark.slow
def test_a_held_index_write_lock_never_costs_a_journal_turn_action_row_or_record(
    store: Path,
) -> None:
    """B15, harder: a second connection holds the index's write lock (`BEGIN IMMEDIATE` and an
    insert) while 30 hook processes run, three of them asking to remember something. The
    journal turns, action rows and record files never wait for SQLite: all are written and
    committed; the index catches up with the records at the next command.
    """
    facts = [_sentence(random.Random(100 + n), "Held", n) for n in range(3)]
    service.remember(store, "The index exists before it is locked")
    with _held(store, "BEGIN IMMEDIATE", "INSERT OR REPLACE INTO meta VALUES ('held', 'yes')"):
        hooks = _hook_storm(store, 27)
        asked = [
            _hook_job(
                store,
                "UserPromptSubmit",
                _hook_payload(store, "UserPromptSubmit", "held", prompt=f"Remember that {fact}."),
            )
            for fact in facts
        ]
    _clean_output([*hooks, *asked])
    _assert_storm_kept(store, hooks)
    on_disk = {
        read_file(p, p.relative_to(store).as_posix()).record.text
        for p in (store / "records").rglob("*.md")
    }
    assert set(facts) <= on_disk  # the record files do not depend on the index lock
    assert git(store, "status", "--porcelain", "--", "records") == ""  # and are committed
    assert {r.text for r in service.list_records(store)} >= set(facts)  # the index caught up
    assert service.health(store).ok


# --- 3. racing tool calls and a torn journal (case B13) ----------------------------------------

ROUNDS = 50


@pytest.mark.slow
def test_concurrent_mutations_through_one_mcp_session_apply_or_are_cleanly_refused(
    store: Path,
) -> None:
    """B13 (a): 50 times, one `memdir serve` session gets at once: correct X, forget X, a new
    record linking X, the same bug logged twice (a bump of one record) and a journal turn.

    Each call either applies or is refused with a stable code (only the loser of correct vs
    forget, `invalid_transition`); no increment is lost, every line and file is whole, and
    every applied write is exactly one commit.
    """
    # The agent's own records: on an owner's record, MCP correct and forget are only
    # proposals (DESIGN §4) and would both "apply"; on its own they race for real.
    seeds = [
        service.remember(
            store, _sentence(random.Random(n), "target", n), caller=Caller("agent", "cli")
        ).record.id
        for n in range(ROUNDS)
    ]
    base = git(store, "rev-parse", "HEAD").strip()
    log = store.parent.parent / "mcp-b13.stderr"
    rounds: list[dict[str, tuple[bool, Any]]] = []

    async def drive() -> None:
        async def call(
            outcome: dict[str, tuple[bool, Any]], key: str, name: str, args: Any
        ) -> None:
            result = await client.call_tool(name, args)
            body = text_of(result) if result.is_error else _tool_data(result)
            outcome[key] = (result.is_error, body)

        async with Client(stdio_client(_mcp_params(store), errlog=err)) as client:
            for n, target in enumerate(seeds):
                outcome: dict[str, tuple[bool, Any]] = {}
                calls = {
                    "correct": ("memory_correct", {"id": target, "text": f"target {n} was moved"}),
                    "forget": ("memory_forget", {"id": target, "reason": f"round {n}"}),
                    "link": (
                        "memory_remember",
                        {
                            "text": _sentence(random.Random(1000 + n), "linked", n),
                            "links": [target],
                        },
                    ),
                    "bug1": ("bug_log", {"error": "OSError: disk quota exceeded", "fix": "purge"}),
                    "bug2": ("bug_log", {"error": "OSError: disk quota exceeded", "fix": "purge"}),
                    "turn": (
                        "journal_write",
                        {"who": "user", "text": f"round {n}", "session": "b13"},
                    ),
                }
                async with anyio.create_task_group() as group:
                    for key, (name, args) in calls.items():
                        group.start_soon(call, outcome, key, name, args)
                rounds.append(outcome)

    with log.open("w", encoding="utf-8") as err:
        anyio.run(drive)
    _clean_output([Ran("mcp", [], 0, "", log.read_text())])

    records = {r.id: r for r in service.list_records(store)}
    applied = 0
    bug_ids = set()
    for n, (target, outcome) in enumerate(zip(seeds, rounds, strict=True)):
        for key in ("link", "bug1", "bug2", "turn"):
            assert not outcome[key][0], (n, key, outcome[key])
        (correct_failed, corrected), (forget_failed, forgot) = outcome["correct"], outcome["forget"]
        assert correct_failed != forget_failed, (n, outcome)  # exactly one of the two applies
        loser = corrected if correct_failed else forgot
        assert ": invalid_transition: " in loser, loser
        if forget_failed:
            new = records[corrected["id"]]
            assert (new.supersedes, new.status) == (target, "active")
            assert (records[target].status, records[target].superseded_by) == ("superseded", new.id)
        else:
            assert (records[target].status, records[target].reason) == ("forgotten", f"round {n}")
        link = records[outcome["link"][1]["id"]]
        assert target in link.links and link.status == "active"
        bug_ids |= {outcome["bug1"][1]["id"], outcome["bug2"][1]["id"]}
        applied += 4  # correct or forget, the link, both bug logs
    # Every bug_log of one error landed on one record, and no bump was lost.
    (bug_id,) = bug_ids
    bug = records[bug_id]
    assert ("occurrences", f" {2 * ROUNDS}") in bug.extra, bug.extra

    turns = [t for t in _jsonl_rows(store / "journal") if t["session"] == "b13"]
    assert sorted(t["text"] for t in turns) == sorted(f"round {n}" for n in range(ROUNDS))
    for path in (store / "records").rglob("*.md"):
        read_file(path, path.relative_to(store).as_posix())
    assert len(_commits_since(store, base)) == applied
    assert git(store, "status", "--porcelain", "--", "records") == ""
    # Health finds nothing wrong but what the race rightly left: links to forgotten targets.
    forgotten = {r.id for r in records.values() if r.status == "forgotten"}
    warned = [f for f in service.health(store).findings if f.level != "info"]
    assert {f.code for f in warned} <= {"dangling_link"}
    assert {f.message.split(" links to ")[1].split(",")[0] for f in warned} == forgotten


TORN = b'{"who":"user","te'


def test_a_torn_journal_line_is_skipped_reported_and_never_glued_to(store: Path) -> None:
    """B13 (b): today's journal ends in a torn line (`{"who":"user","te`, no newline). The MCP
    server starts and answers, the hooks run, the earlier turns stay searchable, every new turn
    lands on a line of its own, and `memdir health` names the torn line.
    """
    from memdir.kernel.base.clock import utc_now

    day = utc_now().strftime("%Y-%m-%d")
    journal = store / "journal" / f"{day}.jsonl"
    journal.parent.mkdir(exist_ok=True)
    before = [
        {
            "at": f"{day}T00:00:01.000Z",
            "who": "user",
            "text": "Is the cobalt cache warm?",
            "session": "t",
        },
        {
            "at": f"{day}T00:00:02.000Z",
            "who": "assistant",
            "text": "The cobalt cache is warm.",
            "session": "t",
        },
    ]
    journal.write_bytes(b"".join(json.dumps(t).encode() + b"\n" for t in before) + TORN)
    log = store.parent.parent / "mcp-torn.stderr"

    async def drive() -> dict[str, Any]:
        async with Client(stdio_client(_mcp_params(store), errlog=err)) as client:
            wrote = await client.call_tool(
                "journal_write",
                {"who": "user", "text": "Is the basalt queue drained?", "session": "t"},
            )
            threads = await client.call_tool("pending_threads", {})
            made = await client.call_tool(
                "memory_remember", {"text": "The basalt queue drains hourly"}
            )
            assert not (wrote.is_error or threads.is_error or made.is_error)
            return _tool_data(threads)

    with log.open("w", encoding="utf-8") as err:
        threads = anyio.run(drive)
    assert threads["results"][0]["text"] == "Is the basalt queue drained?"
    for event, fields in (
        ("UserPromptSubmit", {"prompt": "Is the umber index rebuilt?"}),
        (
            "Stop",
            {"stop_hook_active": False, "last_assistant_message": "The umber index is rebuilt."},
        ),
    ):
        ran = _hook_job(store, event, _hook_payload(store, event, "t", **fields))
        assert ran.code == 0 and ran.stderr == ""
    _clean_output([Ran("mcp", [], 0, "", log.read_text())])

    lines = journal.read_bytes().split(b"\n")
    assert lines[2] == TORN  # kept as evidence, alone on its line
    texts = [json.loads(line)["text"] for line in lines[3:] if line.strip()]
    assert texts == [
        "Is the basalt queue drained?",
        "Is the umber index rebuilt?",
        "The umber index is rebuilt.",
    ]
    found = {hit.text for hit in service.search(store, "cobalt basalt umber", limit=10).hits}
    assert found == {t["text"] for t in before} | set(texts)
    health = _run("health", [*MEMDIR, "health", "--json"], store.parent)
    report = json.loads(health.stdout)
    torn = [f for f in report["findings"] if f["code"] == "unreadable_line"]
    assert [(f["level"], f["path"]) for f in torn] == [("info", f"journal/{day}.jsonl")]
    assert "line 3" in torn[0]["message"]
