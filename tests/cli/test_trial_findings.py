"""What a fresh user trying memdir saw, through the real CLI: exit codes (DESIGN §9) and messages."""

import json
import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from memdir import service
from tests.conftest import run_cli


def _json(args: list[str], code: int = 0) -> dict:
    result = run_cli(*args, "--json")
    assert result.exit_code == code, result.output + result.stderr
    return json.loads(result.stdout)


def _observer_candidate(text: str) -> str:
    """Journal ``text`` as the person and let the offline observer propose it; return its id."""
    assert run_cli("journal", "user", text, "--session", "s1").exit_code == 0
    done = _json(["observe", "--once", "--offline", "--from-start"])
    [record_id] = done["candidates"]
    return record_id


def test_accepting_a_candidate_in_review_gives_it_the_owners_authority(
    store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An accepted observer candidate is the owner's: an agent can then only propose."""
    record_id = _observer_candidate("We decided to deploy on Fridays")
    assert _json(["get", record_id])["origin"] == "observer"

    accepted = run_cli("review", "--accept", record_id)
    assert accepted.exit_code == 0, accepted.stderr
    assert f"{record_id}  active" in accepted.stdout
    doc = _json(["get", record_id])
    assert (doc["status"], doc["origin"]) == ("active", "owner")
    assert doc["source"]["channel"] == "observer"  # where it came from is kept
    [event] = [e for e in _json(["audit", record_id])["results"] if e["op"] == "accept"]
    assert (event["origin"], event["from_origin"]) == ("owner", "observer")

    monkeypatch.setenv("CLAUDECODE", "1")  # the agent's shell
    proposed = run_cli("correct", record_id, "--text", "We deploy on Mondays")
    assert proposed.exit_code == 0
    assert "proposed; the owner decides in `memdir review`" in proposed.stdout
    monkeypatch.delenv("CLAUDECODE")
    after = _json(["get", record_id])
    assert (after["status"], after["text"]) == ("active", "We decided to deploy on Fridays")


def test_rolling_back_a_commit_twice_names_the_revert_and_changes_nothing(store: Path) -> None:
    from tests.conftest import git

    record_id = _json(["remember", "The cache is Redis"])["id"]
    assert run_cli("forget", record_id).exit_code == 0
    forget_commit = git(store, "rev-parse", "HEAD").strip()
    first = run_cli("rollback", forget_commit[:7], "--yes")
    assert first.exit_code == 0, first.stderr
    revert = git(store, "rev-parse", "HEAD").strip()
    assert _json(["get", record_id])["status"] == "active"

    again = run_cli("rollback", forget_commit[:7], "--yes")
    assert again.exit_code == 2  # usage (DESIGN §9): there is nothing left to undo
    assert again.stdout == ""
    assert (
        f"{forget_commit[:12]} was already rolled back by {revert[:12]}; nothing changed"
        in again.stderr
    )
    assert git(store, "rev-parse", "HEAD").strip() == revert
    assert _json(["rollback", forget_commit, "--yes"], 2)["error"]["code"] == "usage"

    # Rolling back the rollback redoes the change; then the first commit may be undone again.
    assert run_cli("rollback", revert, "--yes").exit_code == 0
    assert _json(["get", record_id])["status"] == "forgotten"
    assert run_cli("rollback", forget_commit, "--yes").exit_code == 0
    assert _json(["get", record_id])["status"] == "active"


def test_sync_says_exactly_what_it_fetched_merged_and_pushed(
    store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memdir import service
    from tests.conftest import git

    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    git(store.parent, "remote", "add", "origin", str(remote))
    git(store.parent, "push", "-q", "origin", "HEAD:refs/heads/main")
    secret = _json(["remember", "The staging password hint is larch"])["id"]
    commits = int(git(store, "rev-list", "--count", "HEAD"))

    first = run_cli("sync")
    assert first.exit_code == 0, first.stderr
    assert f"nothing new to fetch; pushed {commits} commit(s)" in first.stdout
    assert "up to date" not in first.stdout
    again = run_cli("sync")
    assert again.exit_code == 0
    assert "nothing to do: nothing new to fetch, nothing pushed" in again.stdout
    assert "pushed 0" not in again.stdout

    other = tmp_path / "other"
    git(tmp_path, "clone", "-q", "-b", "main", str(remote), str(other))
    service.init(other)
    monkeypatch.chdir(other)
    assert run_cli("remember", "Written on the other clone").exit_code == 0
    merged = run_cli("sync")
    assert merged.exit_code == 0, merged.stderr
    # (two stores initialised within one second may share their first commit: counts vary)
    assert re.search(
        r"branch memdir: fetched [1-9]\d* commit\(s\) and merged them "
        r"\(\d+ file\(s\) changed here\); pushed [1-9]\d* commit\(s\)$",
        merged.stdout.strip(),
    ), merged.stdout
    monkeypatch.chdir(store.parent)
    fetched = run_cli("sync")
    assert re.search(  # the other clone's commits and its merge; nothing to push back
        r"branch memdir: fetched [1-9]\d* commit\(s\) \(\d+ file\(s\) changed here\)$",
        fetched.stdout.strip(),
    ), fetched.stdout

    # A purge here that the remote's history still holds: the hint is a command that runs.
    assert run_cli("purge", secret, "--yes").exit_code == 0
    stopped = run_cli("sync")
    assert stopped.exit_code == 1
    assert f"`memdir purge {secret} --yes` on every other clone" in stopped.stderr


def test_a_destructive_command_without_yes_does_nothing_and_exits_2_alike(store: Path) -> None:
    """forget --match/--tag, purge and rollback without --yes: same code, each says so."""
    drop = _json(["remember", "The staging cache is Redis 6", "--tag", "infra"])["id"]

    for args in (["forget", "--match", "staging cache redis"], ["forget", "--tag", "infra"]):
        preview = run_cli(*args)
        assert preview.exit_code == 2, preview.output
        assert drop in preview.stdout  # the selection is shown
        assert "nothing forgotten: 1 record matches" in preview.stderr
        assert "add --yes to forget them" in preview.stderr
        assert _json(args, 2)["error"]["code"] == "usage"
    assert _json(["get", drop])["status"] == "active"

    purge = run_cli("purge", drop)
    assert purge.exit_code == 2
    assert "nothing purged" in purge.stderr and "pass --yes" in purge.stderr
    rollback = run_cli("rollback", "HEAD")
    assert rollback.exit_code == 2
    assert "nothing rolled back" in rollback.stderr and "pass --yes" in rollback.stderr
    assert _json(["get", drop])["status"] == "active"


def test_review_of_a_record_that_is_no_candidate_says_what_it_is_and_what_to_run(
    store: Path,
) -> None:
    active = _json(["remember", "Deploys happen on Tuesdays"])["id"]
    rejected = run_cli("review", "--reject", active)
    assert rejected.exit_code == 2
    assert (
        f"{active} is not a candidate: it is active, so review cannot reject it; nothing "
        f'changed; to reject it anyway: `memdir reject {active} --reason "…"`'
    ) in rejected.stderr
    edited = run_cli("review", "--edit", active, "Deploys happen on Mondays")
    assert f'to reword it: `memdir correct {active} --text "…"`' in edited.stderr
    accepted = run_cli("review", "--accept", active)
    assert accepted.exit_code == 2
    assert f"{active} is not a candidate: it is already active; nothing changed" in (
        accepted.stderr
    )

    newer = _json(["correct", active, "--text", "Deploys happen on Mondays"])["id"]
    stale = run_cli("review", "--reject", active)
    assert stale.exit_code == 2
    assert f"it is superseded by {newer}, so review cannot reject it" in stale.stderr
    assert _json(["review", "--reject", active], 2)["error"]["code"] == "usage"
    assert _json(["get", newer])["status"] == "active"


def test_hook_with_an_unknown_event_names_the_valid_ones_and_exits_2(
    store: Path, memdir_exe: list[str]
) -> None:
    """Typed in a terminal: exit 2 at once, naming the valid events; nothing read or logged."""
    import os
    import pty
    import subprocess

    primary, terminal = pty.openpty()
    try:
        done = subprocess.run(
            [*memdir_exe, "hook", "Bogus"],
            stdin=terminal,
            capture_output=True,
            cwd=store.parent,
            timeout=60,  # it must not wait for the terminal's input
        )
    finally:
        os.close(terminal)
        os.close(primary)
    assert done.returncode == 2
    assert done.stdout == b""
    stderr = done.stderr.decode()
    assert "unknown hook event 'Bogus'" in stderr and "empty payload" not in stderr
    assert "memdir handles SessionStart, UserPromptSubmit, PreToolUse" in stderr
    assert not (store / "state" / "hook-errors.log").exists()


def test_a_hosts_call_with_an_unknown_event_is_logged_as_one_and_exits_0(
    store: Path, memdir_exe: list[str]
) -> None:
    """A host is never answered 2 (it would block its prompt or tool: DESIGN §7)."""
    import subprocess

    done = subprocess.run(
        [*memdir_exe, "hook", "Bogus"], input=b"", capture_output=True, cwd=store.parent
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    log = (store / "state" / "hook-errors.log").read_text()
    assert "unknown hook event 'Bogus'; memdir handles SessionStart" in log
    assert "empty payload" not in log
    health = run_cli("health")
    assert health.exit_code == 1 and "hook_errors" in health.stdout
    # A host's own event name is known: it runs as that event.
    known = subprocess.run(
        [*memdir_exe, "hook", "BeforeTool", "--host", "gemini"],
        input=b"{}",
        capture_output=True,
        cwd=store.parent,
    )
    assert (known.returncode, known.stderr) == (0, b"")


def test_installs_self_test_event_runs_silently_and_logs_nothing(
    store: Path, memdir_exe: list[str]
) -> None:
    """``memdir install`` proves each hook command runs with ``SelfTest``: never an error.

    Paired on the same store: an unknown event is logged, the self-test is not.
    """
    import subprocess

    for event in ("SelfTest", "Bogus"):
        done = subprocess.run(
            [*memdir_exe, "hook", event, "--host", "claude-code"],
            input=b"{}",
            capture_output=True,
            cwd=store.parent,
        )
        assert (done.returncode, done.stdout) == (0, b"")
    log = (store / "state" / "hook-errors.log").read_text()
    assert "'Bogus'" in log and "SelfTest" not in log


def test_health_names_the_command_that_clears_hook_errors(
    store: Path, memdir_exe: list[str]
) -> None:
    import subprocess

    hook = subprocess.run(
        [*memdir_exe, "hook", "SessionStart"], input=b"{not json", cwd=store.parent
    )
    assert hook.returncode == 0  # fails open, logs it
    assert (store / "state" / "hook-errors.log").stat().st_size

    failing = run_cli("health")
    assert failing.exit_code == 1
    assert "hook_errors: 1 hook failure(s) logged" in failing.stdout
    assert "fix: read state/hook-errors.log, then `memdir health --clear-errors`" in (
        failing.stdout
    )
    cleared = run_cli("health", "--clear-errors")
    assert cleared.exit_code == 0, cleared.stdout
    assert "cleared 1 hook error entries" in cleared.stderr
    assert "hook_errors" not in cleared.stdout
    assert run_cli("health").exit_code == 0
    assert _json(["health", "--clear-errors"])["ok"] is True  # nothing left: still fine


def test_list_is_newest_first_within_the_same_second(store: Path) -> None:
    """Record times have whole seconds: two records of one second come by creation order."""
    from datetime import UTC, datetime

    from memdir.kernel.base import clock

    ids = []
    try:
        for millis, text in ((100, "The queue is Kafka"), (600, "Builds run on CI only")):
            clock.freeze(datetime(2026, 12, 4, 10, 0, 0, millis * 1000, tzinfo=UTC))
            ids.append(
                _json(["remember", text, "--kind", "decision" if millis == 100 else "fact"])["id"]
            )
    finally:
        clock.freeze(None)
    first, second = ids
    assert first.startswith("d-") and second.startswith("f-")  # id order alone would mislead
    listed = _json(["list"])["results"]
    assert [r["updated_at"] for r in listed] == ["2026-12-04T10:00:00Z"] * 2
    assert [r["id"] for r in listed] == [second, first]
    plain = run_cli("list").stdout.splitlines()
    assert plain[0].startswith(second) and plain[1].startswith(first)


def test_stats_by_tag_shows_only_the_tags_a_person_gave(store: Path) -> None:
    rule = _json(["remember", "Amounts are integer cents", "--kind", "rule", "--tag", "billing"])[
        "id"
    ]
    _json(["remember", "Cents in src/billing", "--paths", "src/billing/**", "--tag", "billing"])
    assert run_cli("pin", rule).exit_code == 0
    assert run_cli("bug", "log", "--error", "TypeError in export", "--fix", "cast").exit_code == 0
    _json(["remember", "The release checklist is open to all", "--tag", "open"])

    assert _json(["stats"])["tags"] == {"billing": 2, "open": 1}
    shown = run_cli("stats").stdout
    assert "active by tag: 2 billing, 1 open" in shown
    assert "pinned" not in shown and "path:" not in shown


def test_review_cites_an_imported_candidates_source_not_an_empty_journal(store: Path) -> None:
    claude_md = store.parent / "CLAUDE.md"
    claude_md.write_text("# Conventions\n\n- Use pnpm, not npm.\n")
    assert run_cli("import", "--from", "claude-md", str(claude_md)).exit_code == 0
    record_id = _observer_candidate("We decided to deploy on Fridays")

    listed = run_cli("review").stdout
    [imported] = [line for line in listed.splitlines() if "pnpm" in line]
    assert imported.endswith("Use pnpm, not npm.  [from claude-md CLAUDE.md:3]")
    assert "[]" not in listed
    [observed] = [line for line in listed.splitlines() if line.startswith(record_id)]
    assert re.search(r"  \[journal/[^\]]+\.jsonl:\d+-\d+\]$", observed), observed


class _FailingModel(BaseHTTPRequestHandler):
    """An OpenAI-compatible endpoint on 127.0.0.1 that answers every call HTTP 503."""

    calls = 0

    def log_message(self, *args: object) -> None:  # quiet
        pass

    def do_POST(self) -> None:
        type(self).calls += 1
        self.rfile.read(int(self.headers["Content-Length"]))
        body = json.dumps({"error": {"message": "model overloaded, try later"}}).encode()
        self.send_response(503)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def failing_model(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    _FailingModel.calls = 0
    server = ThreadingHTTPServer(("127.0.0.1", 0), _FailingModel)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}/v1"
    monkeypatch.setenv("MEMDIR_LLM_API_BASE", base)
    monkeypatch.setenv("MEMDIR_LLM_MODEL", "fake-model")
    monkeypatch.setenv("MEMDIR_LLM_TIMEOUT", "5")
    yield base
    server.shutdown()
    server.server_close()


@pytest.mark.enable_socket
def test_observe_once_exits_1_naming_the_failing_endpoint_and_loses_nothing(
    store: Path, failing_model: str
) -> None:
    assert (
        run_cli("journal", "user", "We decided to deploy on Fridays", "--session", "s1").exit_code
        == 0
    )
    failed = run_cli("observe", "--once", "--from-start")
    assert failed.exit_code == 1
    assert "read 1 turn(s): 1 candidate(s)" in failed.stdout  # the offline extractor's
    assert "1 turn(s) kept for the next pass" in failed.stdout
    assert (
        f"the LLM endpoint {failing_model} answered HTTP 503: model overloaded, try later"
        in failed.stderr
    )
    assert "nothing is lost: 1 turn(s) kept for the next pass" in failed.stderr
    doc = _json(["observe", "--once"], 1)
    assert doc["error"]["code"] == "llm_unavailable" and "HTTP 503" in doc["error"]["message"]
    assert _FailingModel.calls == 2  # the same batch asked again: its offset was kept


@pytest.mark.enable_socket
def test_an_api_base_without_a_model_uses_no_llm_and_says_so(
    store: Path, failing_model: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MEMDIR_LLM_MODEL")
    assert (
        run_cli("journal", "user", "We decided to deploy on Fridays", "--session", "s1").exit_code
        == 0
    )
    done = run_cli("observe", "--once", "--from-start")
    assert done.exit_code == 0, done.stderr
    assert "read 1 turn(s): 1 candidate(s)" in done.stdout
    assert (
        "MEMDIR_LLM_API_BASE is set but MEMDIR_LLM_MODEL is not: no LLM is used, only the "
        "offline extractor" in done.stderr
    )
    assert _FailingModel.calls == 0


def test_the_user_store_is_reached_with_user_and_named_outside_a_project(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, store: Path
) -> None:
    from memdir.kernel.storage.paths import user_store_dir

    outside = tmp_path / "not-a-project"
    outside.mkdir()
    monkeypatch.chdir(outside)
    lost = run_cli("recall", "tabs")
    assert lost.exit_code == 1
    assert "memdir init" in lost.stderr
    assert f"for your user store (cross-project, {user_store_dir()}) add --user" in lost.stderr
    assert "after `memdir init --user` once" in lost.stderr
    missing = run_cli("remember", "I prefer tabs", "--user")
    assert missing.exit_code == 1
    assert "no user store at" in missing.stderr and "`memdir init --user`" in missing.stderr

    assert run_cli("init", "--user").exit_code == 0
    made = _json(["remember", "I prefer tabs over spaces", "--kind", "preference", "--user"])
    assert made["scope"] == "user"
    assert [r["id"] for r in _json(["recall", "tabs", "--user"])["results"]] == [made["id"]]
    assert [r["id"] for r in _json(["list", "--user"])["results"]] == [made["id"]]
    assert "add --user" in run_cli("list").stderr  # still outside a project: named
    assert "after `memdir init --user`" not in run_cli("list").stderr
    both = _json(["list", "--user", "--store", str(store)], 2)
    assert "--user and --store" in both["error"]["message"]

    monkeypatch.chdir(store.parent)  # in a project, recall brings the user store in too
    hit = _json(["recall", "tabs"])["results"][0]
    assert (hit["id"], hit["scope"]) == (made["id"], "user")
    assert _json(["list"])["results"] == []  # the project's own list


def test_list_and_recall_columns_line_up_with_longer_ids(store: Path) -> None:
    """``pr-`` and ``ep-`` ids are a character longer than ``f-`` ones: the columns still align.

    Paired: a listing of ``f-`` ids alone keeps its two spaces after the id.
    """
    service.remember(store, "Tests run with pytest -q", kind="procedure")
    service.remember(store, "The logo color is teal", kind="fact")
    for command in (["list"], ["recall", "pytest logo teal"]):
        rows = run_cli(*command).stdout.splitlines()
        assert len(rows) == 2, rows
        assert len({row.index(row.split()[1]) for row in rows}) == 1, rows  # one column start
    only_facts = run_cli("list", "--kind", "fact").stdout.splitlines()
    assert only_facts[0].split("  ", 1)[1].startswith("active")
