"""The CLI contract (DESIGN §9): exit codes, --json shapes, errors, provenance from the channel."""

import json
from pathlib import Path

import pytest

from memdir.kernel.base.model import FIELD_ORDER
from tests.conftest import run_cli

RECORD_KEYS = [*FIELD_ORDER, "body"]


def _json(args: list[str], code: int = 0) -> dict:
    result = run_cli(*args, "--json")
    assert result.exit_code == code, result.output + result.stderr
    return json.loads(result.stdout)


def test_remember_prints_the_id_and_json_prints_the_whole_record(store: Path) -> None:
    plain = run_cli("remember", "Use pnpm, not npm", "--kind", "preference")
    assert plain.exit_code == 0
    record_id = plain.stdout.strip()
    assert record_id.startswith("p-")
    doc = _json(["remember", "Builds run on CI only", "--tag", "ci", "--importance", "8"])
    assert list(doc) == RECORD_KEYS
    assert (doc["kind"], doc["tags"], doc["importance"], doc["origin"]) == (
        "fact",
        ["ci"],
        8,
        "owner",
    )


def test_recall_json_has_query_results_and_took_ms(store: Path) -> None:
    run_cli("remember", "Use pnpm, not npm", "--kind", "preference", "--alias", "package manager")
    doc = _json(["recall", "package manager", "--explain"])
    assert set(doc) == {"query", "terms", "results", "took_ms"}
    hit = doc["results"][0]
    for key in ("id", "kind", "text", "score", "status", "origin", "scope"):
        assert key in hit
    assert set(hit["explain"]) >= {"matched", "relevance", "recency", "importance"}
    assert hit["explain"]["matched"]


def test_list_and_get_and_index_shapes(store: Path) -> None:
    record_id = _json(["remember", "Deploys happen on Tuesdays"])["id"]
    assert [r["id"] for r in _json(["list"])["results"]] == [record_id]
    assert _json(["get", record_id])["text"] == "Deploys happen on Tuesdays"
    assert _json(["index"])["results"][0]["id"] == record_id
    markdown = run_cli("index", "--markdown").stdout
    assert "## fact" in markdown and record_id in markdown


def test_correct_reject_forget_graph_log_diff(store: Path) -> None:
    first = _json(["remember", "The cache is Redis"])["id"]
    linked = _json(["remember", "Sessions live in the cache", "--link", first])["id"]
    new = _json(["correct", first, "--text", "The cache is Memcached", "--reason", "migrated"])
    assert new["supersedes"] == first
    graph = _json(["graph", linked])
    node = next(n for n in graph["nodes"] if n["id"] == first)
    assert node["status"] == "superseded" and "text" not in node
    log = _json(["log", first])["results"]
    assert log[0]["subject"].startswith(f"correct {first}")
    diff = _json(["diff", first])
    assert [c["id"] for c in diff["chain"]] == [first, new["id"]]
    assert _json(["reject", new["id"], "--reason", "wrong"])["status"] == "rejected"
    assert _json(["forget", linked, "--reason", "old"])["status"] == "forgotten"


def test_correcting_a_superseded_record_names_the_live_end_of_its_chain(store: Path) -> None:
    """Two corrections deep, the refusal points at the active record, never at a middle link
    that would be refused in turn."""
    first = _json(["remember", "Use npm"])["id"]
    middle = _json(["correct", first, "--text", "Use pnpm"])["id"]
    last = _json(["correct", middle, "--text", "Use bun"])["id"]
    for old in (first, middle):
        done = run_cli("correct", old, "--text", "Use deno")
        assert done.exit_code == 3
        assert f"correct {last} instead" in done.stderr
        assert f"correct {middle} instead" not in done.stderr
    assert _json(["correct", last, "--text", "Use deno"])["supersedes"] == last


@pytest.mark.parametrize(
    ("args", "code", "slug"),
    [
        (["get", "f-0000000000zzzz"], 4, "not_found"),
        (["get", "../../x"], 2, "usage"),
        (["remember", "key sk-proj-EXAMPLE000000000000000000000000"], 3, "secret"),
        (["remember", "x", "--origin", "untrusted"], 2, "usage"),  # not offered: always refused
        (["remember", "x", "--origin", "system"], 2, "usage"),
        (["remember", "x", "--kind", "gossip"], 2, "usage"),
        (["rollback", "HEAD"], 2, "usage"),
        (["purge", "f-0000000000zzzz"], 2, "usage"),
        (["rollback", "deadbeef", "--yes"], 4, "not_found"),
        (["journal", "user", "hi", "--at", "not-a-time"], 2, "usage"),
    ],
)
def test_errors_exit_with_their_code_and_json_error_shape(
    store: Path, args: list[str], code: int, slug: str
) -> None:
    doc = _json(args, code)
    assert doc["error"]["code"] == slug
    assert doc["error"]["message"]
    assert "sk-proj-EXAMPLE" not in doc["error"]["message"]


def test_remember_offers_only_the_origins_it_accepts(store: Path) -> None:
    shown = run_cli("remember", "--help").stdout
    assert "[owner|agent]" in shown and "untrusted" not in shown
    assert _json(["remember", "Lowered by hand", "--origin", "agent"])["origin"] == "agent"


def test_forget_needs_no_reason_and_reject_still_does(store: Path) -> None:
    first = _json(["remember", "The queue is RabbitMQ"])["id"]
    forgotten = _json(["forget", first])
    assert forgotten["status"] == "forgotten" and forgotten["reason"] is None
    second = _json(["remember", "The queue is Kafka"])["id"]
    assert _json(["reject", second], 2)["error"]["code"] == "usage"


def test_errors_without_json_go_to_stderr_prefixed_memdir(store: Path) -> None:
    result = run_cli("get", "f-0000000000zzzz")
    assert result.exit_code == 4
    assert result.stdout == ""
    assert result.stderr.startswith("memdir: no record")


def test_a_command_outside_any_store_says_how_to_create_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    result = run_cli("recall", "anything")
    assert result.exit_code == 1
    assert "memdir init" in result.stderr
    assert "Traceback" not in result.stderr + result.stdout
    assert _json(["list"], 1)["error"]["code"] == "no_store"


def test_store_option_naming_the_project_instead_of_the_store_gives_a_hint(store: Path) -> None:
    result = run_cli("list", "--store", str(store.parent))
    assert result.exit_code == 1
    assert "did you mean" in result.stderr and ".memdir" in result.stderr


def test_memdir_store_env_selects_the_store(
    store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    monkeypatch.setenv("MEMDIR_STORE", str(store))
    assert run_cli("remember", "Found through MEMDIR_STORE").exit_code == 0


@pytest.mark.parametrize(
    ("marker", "value"),
    [
        ("CLAUDECODE", "1"),
        ("CODEX_THREAD_ID", "t-1"),
        ("GEMINI_CLI", "1"),
        ("CLAUDECODE", "0"),  # a host's marker with any value is still that host's shell
        ("CLAUDE_CODE_ENTRYPOINT", ""),
        ("CODEX_SANDBOX", "false"),
    ],
)
def test_inside_an_agent_session_the_cli_writes_origin_agent(
    store: Path, monkeypatch: pytest.MonkeyPatch, marker: str, value: str
) -> None:
    monkeypatch.setenv(marker, value)

    assert _json(["remember", f"Written from inside {marker}"])["origin"] == "agent"
    refused = _json(["remember", "I am the owner, honestly", "--origin", "owner"], 3)
    assert refused["error"]["code"] == "provenance"


def test_a_person_may_lower_the_origin_to_agent(store: Path) -> None:
    assert _json(["remember", "Lowered on purpose", "--origin", "agent"])["origin"] == "agent"


def test_near_duplicate_update_is_reported_on_stderr(store: Path) -> None:
    first = run_cli("remember", "The staging server restarts on Sundays").stdout.strip()
    result = run_cli("remember", "the staging server restarts on sundays")
    assert result.exit_code == 0
    # Nothing would change but the time: no new record, no commit, and the person is told so.
    assert f"already known: {first}" in result.stderr
    assert result.stdout.strip() == first


def test_remember_dash_reads_standard_input(store: Path) -> None:
    result = run_cli("remember", "-", "--json", input_text="Read from stdin\n")
    assert json.loads(result.stdout)["text"] == "Read from stdin"


def test_journal_and_search_return_turn_references(store: Path) -> None:
    ref = _json(["journal", "user", "we decided to use SQLite for the index", "--session", "s1"])
    assert ref["file"].startswith("journal/")
    found = _json(["search", "which database for the index"])
    hit = found["results"][0]
    assert (hit["session"], hit["who"], hit["line"]) == ("s1", "user", 1)
    assert hit["text"] == "we decided to use SQLite for the index"
    size = (store / ref["file"]).stat().st_size
    second = run_cli("journal", "user", "and the cache is Redis", "--session", "s1")
    assert second.stdout.strip() == f"{ref['file']}@byte {size}"  # a byte offset, labelled
    listed = run_cli("search", "cache Redis").stdout
    assert listed.startswith(f"{ref['file']}:2  ")  # a line number


def test_journal_redacts_secrets_before_writing(store: Path) -> None:
    _json(["journal", "user", "my key is sk-proj-EXAMPLE000000000000000000000000 ok"])
    day = next((store / "journal").glob("*.jsonl")).read_text()
    assert "EXAMPLE0000" not in day
    assert "[REDACTED:openai-key]" in day


def test_journal_refuses_a_time_far_in_the_future(store: Path) -> None:
    assert (
        _json(["journal", "user", "hi", "--at", "2099-01-01T00:00:00Z"], 2)["error"]["code"]
        == "usage"
    )


def test_journal_files_by_utc_day_whatever_the_local_zone(store: Path) -> None:
    ref = _json(
        ["journal", "user", "early morning in Shanghai", "--at", "2026-04-16T06:00:00+08:00"]
    )
    assert ref["file"] == "journal/2026-04-15.jsonl"
    assert ref["at"] == "2026-04-15T22:00:00.000Z"


def test_version_and_help(store: Path) -> None:
    assert run_cli("--version").stdout.startswith("memdir, version ")
    assert "recall" in run_cli("--help").stdout


@pytest.mark.parametrize(
    "args",
    [
        [b"journal", b"user", b"bad\xffbyte"],
        [b"journal", b"bad\xff", b"hi"],
        [b"remember", b"ok", b"--body", b"bad\xffbyte"],
        [b"bug", b"log", b"--error", b"e", b"--fix", b"bad\xff"],
    ],
)
def test_an_argument_that_is_not_utf8_is_a_usage_error(store: Path, args: list[bytes]) -> None:
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable.encode(), b"-m", b"memdir", *args], capture_output=True, cwd=store.parent
    )
    assert done.returncode == 2
    assert b"not valid UTF-8" in done.stderr and b"Traceback" not in done.stderr
    with_json = subprocess.run(
        [sys.executable.encode(), b"-m", b"memdir", *args, b"--json"],
        capture_output=True,
        cwd=store.parent,
    )
    assert json.loads(with_json.stdout)["error"]["code"] == "usage"


def test_an_unknown_command_with_json_is_a_json_error() -> None:
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "memdir", "nosuchcommand", "--json"], capture_output=True
    )
    assert done.returncode == 2
    assert "nosuchcommand" in json.loads(done.stdout)["error"]["message"]
