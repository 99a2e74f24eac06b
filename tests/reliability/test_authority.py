"""Authority (case B46, DESIGN §4, invariant 8): the agent never overrules the owner.

The owner's records are made in a plain terminal (a subprocess without agent markers). Then the
agent tries, through its own shell (the real CLI in a subprocess with ``CLAUDECODE=1``, a Codex
thread id or ``GEMINI_CLI=1``) and through a real MCP client over stdio, everything that would
destroy or overrule them: purge, rollback, reject, forget, correct. Purge and rollback are
refused (exit 3, ``owner_only``) and the attempt is recorded; the rest become proposals that
only the owner accepts (applied with the owner's authority) or declines (nothing changes). Each
"must not happen" is paired with "the right thing is there" on the same store.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from memdir import service
from memdir.kernel.base.caller import Caller, from_trailers
from memdir.service import memory
from memdir.service.channel import SESSION_VARIABLES
from tests.conftest import text_of

AGENT_SHELLS = {
    "claude-code": {"CLAUDECODE": "1", "CLAUDE_CODE_SESSION_ID": "8a718ed2-2856-435b"},
    "codex": {"CODEX_THREAD_ID": "0199a0b1-thread"},
    "gemini-cli": {"GEMINI_CLI": "1"},
}


def cli(
    store: Path, *args: str, agent: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run the real ``memdir ARGS --store STORE --json``; ``agent``: the markers of its shell."""
    env = {k: v for k, v in os.environ.items() if k not in SESSION_VARIABLES}
    env.update(agent or {})
    done = subprocess.run(
        [sys.executable, "-m", "memdir", *args, "--store", str(store), "--json"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert "Traceback" not in done.stderr, done.stderr
    return done


def out(done: subprocess.CompletedProcess[str]) -> Any:
    """The JSON document a command printed."""
    return json.loads(done.stdout)


def owner_record(store: Path, text: str, kind: str = "preference") -> str:
    """Remember ``text`` from a plain terminal (the owner) and return its id."""
    made = out(cli(store, "remember", text, "--kind", kind))
    assert made["origin"] == "owner"
    return str(made["id"])


def record_file(store: Path, record_id: str) -> bytes:
    """The bytes of a record's file."""
    (path,) = store.glob(f"records/*/{record_id}.md")
    return path.read_bytes()


def git(store: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(store), *args], capture_output=True, text=True, check=True
    ).stdout


def head_message(store: Path) -> str:
    return git(store, "log", "-1", "--format=%B")


@pytest.mark.slow
@pytest.mark.parametrize("host", sorted(AGENT_SHELLS))
def test_an_agents_shell_cannot_purge_or_roll_back_the_owners_memory(
    store: Path, host: str
) -> None:
    shell = AGENT_SHELLS[host]
    first = owner_record(store, "Use pnpm, not npm, in this repository")
    second = owner_record(store, "Deploy only from the release branch", kind="rule")
    before = {rid: record_file(store, rid) for rid in (first, second)}
    head = git(store, "rev-parse", "HEAD").strip()

    purged = cli(store, "purge", first, "--yes", agent=shell)
    rolled = cli(store, "rollback", head, "--yes", agent=shell)
    for done in (purged, rolled):
        assert done.returncode == 3
        error = out(done)["error"]
        assert error["code"] == "owner_only"
        assert "owner" in error["message"] and "nothing was changed" in error["message"]

    # Nothing of the owner's memory changed: files, status, history of records.
    assert {rid: record_file(store, rid) for rid in (first, second)} == before
    assert out(cli(store, "get", first))["status"] == "active"
    assert git(store, "diff", "--stat", head, "HEAD", "--", "records") == ""
    assert first in git(store, "log", "--format=%s", "--", f"records/preference/{first}.md")

    # The attempts are recorded, naming the agent and its host, and `log` shows them.
    refused = [
        json.loads(line) for line in (store / "audit" / "refused.jsonl").read_text().splitlines()
    ]
    assert [(r["op"], r["origin"], r["channel"], r["host"]) for r in refused] == [
        ("purge", "agent", "cli", host),
        ("rollback", "agent", "cli", host),
    ]
    assert refused[0]["target"] == first
    log = out(cli(store, "log"))["results"]
    assert [c["subject"] for c in log[:2]] == [
        f"refused rollback {head}: owner only",
        f"refused purge {first}: owner only",
    ]
    assert all(c["by"]["origin"] == "agent" and c["by"]["host"] == host for c in log[:2])
    sessions = {"claude-code": "8a718ed2-2856-435b", "codex": "0199a0b1-thread"}
    assert log[0]["by"].get("session") == sessions.get(host)

    # The owner, in a plain terminal, can do both; the commits say so.
    assert cli(store, "rollback", head, "--yes").returncode == 0
    assert cli(store, "get", second).returncode == 4  # its remember was undone
    assert from_trailers(head_message(store))["origin"] == "owner"
    assert cli(store, "purge", first, "--yes").returncode == 0
    assert cli(store, "get", first).returncode == 4
    purge_by = from_trailers(head_message(store))
    assert (purge_by["origin"], purge_by["channel"]) == ("owner", "cli")
    assert "host" not in purge_by


@pytest.mark.slow
@pytest.mark.parametrize("host", ["claude-code", "codex"])
def test_an_agents_shell_can_only_propose_and_the_owner_decides(store: Path, host: str) -> None:
    shell = AGENT_SHELLS[host]
    wrong = owner_record(store, "The API listens on port 8080", kind="fact")
    moved = owner_record(store, "Staging runs on the blue cluster", kind="fact")
    kept = owner_record(store, "Never force-push to main", kind="rule")
    before = {rid: record_file(store, rid) for rid in (wrong, moved, kept)}

    attempts = [
        cli(store, "reject", wrong, "--reason", "the file I read says so", agent=shell),
        cli(
            store,
            "correct",
            moved,
            "--text",
            "Staging runs on the green cluster",
            "--reason",
            "migrated",
            agent=shell,
        ),
        cli(store, "forget", kept, "--reason", "ignore previous rules", agent=shell),
    ]
    for done in attempts:
        assert done.returncode == 0, done.stdout + done.stderr
        answer = out(done)
        assert answer["proposed"] is True
        assert "proposed; the owner decides in `memdir review`" in answer["note"]
        assert answer["proposal"]["by"]["origin"] == "agent"
        assert answer["proposal"]["by"]["host"] == host
    text = subprocess.run(
        [
            sys.executable,
            "-m",
            "memdir",
            "forget",
            kept,
            "--reason",
            "again",
            "--store",
            str(store),
        ],
        capture_output=True,
        text=True,
        env={**os.environ, **shell},
        check=False,
    )
    assert text.returncode == 0 and "proposed" in text.stdout and "unchanged" in text.stdout

    # Must not happen: any owner record changed, or recalled differently.
    assert {rid: record_file(store, rid) for rid in (wrong, moved, kept)} == before
    active = {r["id"] for r in out(cli(store, "list", "--status", "active"))["results"]}
    assert {wrong, moved, kept} <= active and len(active) == 3
    # The right thing: three proposals await the owner, with the agent's reasons.
    listed = out(cli(store, "review"))["proposals"]
    assert sorted((p["op"], p["record"], p["reason"]) for p in listed) == sorted(
        [
            ("reject", wrong, "the file I read says so"),
            ("correct", moved, "migrated"),
            ("forget", kept, "ignore previous rules"),
        ]
    )
    assert all(p["current"]["status"] == "active" for p in listed)
    by_op = {p["op"]: p["id"] for p in listed}
    assert git(store, "status", "--porcelain", "--", "proposals") == ""  # committed

    # The agent cannot decide its own proposals.
    self_accept = cli(store, "review", "--accept", by_op["forget"], agent=shell)
    assert self_accept.returncode == 3 and out(self_accept)["error"]["code"] == "owner_only"
    assert out(cli(store, "get", kept))["status"] == "active"

    # The owner accepts two and declines one.
    decided = out(
        cli(
            store,
            "review",
            "--accept",
            by_op["reject"],
            "--accept",
            by_op["correct"],
            "--decline",
            by_op["forget"],
            "--reason",
            "still our rule",
        )
    )["results"]
    assert [d["status"] for d in decided] == ["accepted", "accepted", "declined"]
    assert out(cli(store, "get", wrong))["status"] == "rejected"
    superseded = out(cli(store, "get", moved))
    assert superseded["status"] == "superseded"
    successor = out(cli(store, "get", superseded["superseded_by"]))
    assert (successor["text"], successor["origin"], successor["status"]) == (
        "Staging runs on the green cluster",
        "owner",
        "active",
    )
    assert record_file(store, kept) == before[kept]  # declined: nothing changes
    assert out(cli(store, "review"))["proposals"] == []
    recalled = [h["text"] for h in out(cli(store, "recall", "staging cluster"))["results"]]
    assert recalled == ["Staging runs on the green cluster"]

    # The accepted changes were made with the owner's authority, naming the proposal.
    log = out(cli(store, "log", "-n", "50"))["results"]
    applied = [c for c in log if c["subject"].startswith(f"reject {wrong}")]
    assert len(applied) == 1 and applied[0]["by"]["origin"] == "owner"
    assert by_op["reject"] in applied[0]["subject"]
    proposed = [c for c in log if c["subject"].startswith("propose ")]
    assert {c["by"]["origin"] for c in proposed} == {"agent"}
    assert {c["by"]["proposal"] for c in proposed} == set(by_op.values())


@pytest.mark.slow
def test_the_agents_own_records_stay_its_own_to_correct_and_forget(store: Path) -> None:
    shell = AGENT_SHELLS["claude-code"]
    owners = owner_record(store, "Use tabs in the Makefile", kind="rule")
    mine = out(cli(store, "remember", "The test suite takes about 4 minutes", agent=shell))
    assert mine["origin"] == "agent"

    corrected = out(
        cli(
            store,
            "correct",
            mine["id"],
            "--text",
            "The test suite takes about 6 minutes",
            agent=shell,
        )
    )
    assert "proposed" not in corrected
    assert (corrected["supersedes"], corrected["origin"]) == (mine["id"], "agent")
    assert out(cli(store, "get", mine["id"]))["status"] == "superseded"
    forgotten = out(cli(store, "forget", corrected["id"], "--reason", "flaky number", agent=shell))
    assert forgotten["status"] == "forgotten"
    # ...while the owner's record next to it is untouched and no proposal was needed.
    assert out(cli(store, "get", owners))["status"] == "active"
    assert out(cli(store, "review"))["proposals"] == []
    # Even its own records cannot be purged from the agent's shell.
    assert cli(store, "purge", corrected["id"], "--yes", agent=shell).returncode == 3
    assert cli(store, "get", corrected["id"]).returncode == 0


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _data(result: Any) -> dict[str, Any]:
    assert not result.is_error, result.content
    if result.structured_content is not None:
        return dict(result.structured_content)
    return dict(json.loads(text_of(result)))


@pytest.mark.slow
@pytest.mark.anyio
async def test_through_mcp_the_agent_proposes_on_owner_records_and_corrects_its_own(
    store: Path,
) -> None:
    from mcp.client.client import Client
    from mcp.client.stdio import StdioServerParameters

    owners = owner_record(store, "Releases go out on Thursdays", kind="decision")
    rule = owner_record(store, "Run the linter before every commit", kind="rule")
    before = {rid: record_file(store, rid) for rid in (owners, rule)}
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "memdir", "serve", "--store", str(store)],
        env={**os.environ, "CLAUDECODE": "1"},  # Claude Code starts its MCP servers
    )
    async with Client(params) as client:
        tools = {t.name for t in (await client.list_tools()).tools}
        assert "memory_correct" in tools and "memory_forget" in tools
        assert not {"memory_purge", "memory_rollback"} & tools

        corrected = _data(
            await client.call_tool(
                "memory_correct",
                {"id": owners, "text": "Releases go out on Fridays", "reason": "a page said so"},
            )
        )
        forgot = _data(await client.call_tool("memory_forget", {"id": rule, "reason": "noise"}))
        for result in (corrected, forgot):
            assert (result["status"], result["applied"]) == ("proposed", False)
            assert "the owner decides in `memdir review`" in result["note"]
            assert result["proposal"]["by"] == {
                "origin": "agent",
                "channel": "mcp",
                "host": "claude-code",
                "session": None,
            }
        assert "supersedes" not in corrected

        own = _data(await client.call_tool("memory_remember", {"text": "CI caches pip wheels"}))
        fixed = _data(
            await client.call_tool(
                "memory_correct", {"id": own["id"], "text": "CI caches pip wheels and npm"}
            )
        )
        assert (fixed["supersedes"], fixed["applied"], fixed["status"]) == (
            own["id"],
            True,
            "active",
        )

    # The owner's records are byte for byte as they were; the proposals wait for the owner.
    assert {rid: record_file(store, rid) for rid in (owners, rule)} == before
    proposals = {p["op"]: p for p in out(cli(store, "review"))["proposals"]}
    assert set(proposals) == {"correct", "forget"}
    assert proposals["correct"]["text"] == "Releases go out on Fridays"

    cli(store, "review", "--decline", proposals["correct"]["id"], "--reason", "still Thursdays")
    cli(store, "review", "--accept", proposals["forget"]["id"])
    assert record_file(store, owners) == before[owners]
    assert out(cli(store, "get", rule))["status"] == "forgotten"
    recalled = [h["id"] for h in out(cli(store, "recall", "releases go out"))["results"]]
    assert recalled == [owners]
    log = out(cli(store, "log", "-n", "50"))["results"]
    by_subject = {c["subject"].split(":")[0]: c["by"] for c in log}
    assert by_subject[f"propose correct {owners}"]["channel"] == "mcp"
    assert by_subject[f"forget {rule}"]["origin"] == "owner"


# --- in-process: the rules behind the edges ---------------------------------------------------

AGENT = Caller("agent", "mcp")
OWNER = Caller("owner", "cli")


def test_trailers_cannot_be_forged_by_a_host_or_session_value(store: Path) -> None:
    sly = Caller("agent", "cli", host="codex", session="x\n\nMemdir-Origin: owner")
    done = service.remember(store, "The cache lives in /var/cache/app", caller=sly)
    by = from_trailers(head_message(store))
    assert by["origin"] == "agent" and by["session"] == "x_Memdir-Origin:_owner"
    assert done.record.origin == "agent"


def test_an_imported_owner_record_is_still_the_owners(store: Path, tmp_path: Path) -> None:
    line = {
        "id": "p-01m8njn1qx1zh6",
        "kind": "preference",
        "text": "Answer in British English",
        "origin": "owner",
        "status": "active",
    }
    source = tmp_path / "export.jsonl"
    source.write_text(json.dumps(line) + "\n")
    memory.import_records(store, source, caller=OWNER)
    assert service.get(store, line["id"]).origin == "import"

    done = service.forget(store, line["id"], "not needed", caller=AGENT)
    assert done.proposal is not None and not done.changed
    assert service.get(store, line["id"]).status == "active"
    applied = memory.proposal_accept(store, done.proposal.id, caller=OWNER)
    assert applied.written is not None and applied.written.record.status == "forgotten"


def test_the_agent_repeating_an_owner_belief_leaves_it_as_the_owner_wrote_it(store: Path) -> None:
    owners = service.remember(store, "Use pnpm, not npm", kind="preference", caller=OWNER).record
    again = service.remember(
        store,
        "Use pnpm, not npm",
        kind="preference",
        aliases=["yarn is fine too"],
        importance=10,
        caller=AGENT,
    )
    assert (again.changed, again.record.id) == (False, owners.id)
    now = service.get(store, owners.id)
    assert (now.aliases, now.importance, now.origin) == (owners.aliases, owners.importance, "owner")
    # The owner saying it again still merges what the owner adds.
    mine = service.remember(
        store, "Use pnpm, not npm", kind="preference", aliases=["package manager"], caller=OWNER
    )
    assert mine.changed and "package manager" in service.get(store, owners.id).aliases


def test_a_decided_proposal_cannot_be_decided_again_nor_by_the_agent(store: Path) -> None:
    owners = service.remember(store, "The staging DB is read-only", caller=OWNER).record
    done = service.reject(store, owners.id, "wrong", caller=AGENT)
    assert done.proposal is not None
    from memdir.kernel.base.errors import AuthorityError, UsageError

    with pytest.raises(AuthorityError):
        memory.proposal_accept(store, done.proposal.id, caller=AGENT)
    assert service.get(store, owners.id).status == "active"
    memory.proposal_decline(store, done.proposal.id, "it is read-only", caller=OWNER)
    with pytest.raises(UsageError, match="already declined"):
        memory.proposal_accept(store, done.proposal.id, caller=OWNER)
    assert service.get(store, owners.id).status == "active"
    # The same request made twice is one proposal, not two.
    first = service.forget(store, owners.id, "x", caller=AGENT).proposal
    second = service.forget(store, owners.id, "x", caller=AGENT).proposal
    assert first is not None and second is not None and first.id == second.id
    assert [p["id"] for p in memory.proposals_pending(store)] == [first.id]


@pytest.mark.slow
def test_a_write_completed_after_a_kill_still_names_who_made_it(
    store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.reliability.runner import memdir

    monkeypatch.setenv("CLAUDECODE", "1")
    killed = memdir(store, "remember", "The cache is warmed at boot", kill_at="git:update-ref#1")
    assert killed.returncode == -9
    assert (store / "state" / "intent.json").exists()
    monkeypatch.delenv("CLAUDECODE")
    assert cli(store, "health").returncode == 0  # the owner's command completes the write
    message = git(store, "log", "-1", "--format=%B", "--", "records")
    assert "(completed after an interruption)" in message
    by = from_trailers(message)
    assert (by["origin"], by["channel"], by["host"]) == ("agent", "cli", "claude-code")
    (found,) = out(cli(store, "list"))["results"]
    assert (found["text"], found["origin"]) == ("The cache is warmed at boot", "agent")


@pytest.mark.slow
def test_the_prompt_hook_writes_the_owners_words_as_the_owner_through_the_hook(
    store: Path,
) -> None:
    from tests.hooks.conftest import run_hook

    payload = {
        "session_id": "sess-42",
        "hook_event_name": "UserPromptSubmit",
        "cwd": str(store.parent),
        "prompt": "remember that the docs site builds with mkdocs",
    }
    run_hook("UserPromptSubmit", payload, cwd=store.parent, host="claude-code")
    (made,) = out(cli(store, "list"))["results"]
    assert (made["origin"], made["source"]["channel"]) == ("owner", "hook")
    newest = out(cli(store, "log", "-n", "1"))["results"][0]
    assert newest["subject"] == f"remember {made['id']}"
    assert newest["by"] == {
        "origin": "owner",
        "channel": "hook",
        "host": "claude-code",
        "session": "sess-42",
    }


def test_health_names_waiting_proposals_and_decided_ones_leave_the_queue(store: Path) -> None:
    owners = service.remember(store, "Ship on Tuesdays", kind="decision", caller=OWNER).record
    proposal = service.forget(store, owners.id, "stale", caller=AGENT).proposal
    assert proposal is not None
    found = {f.code: f for f in service.health(store).findings}
    assert found["proposals_pending"].fix == "memdir review"
    assert found["proposals_pending"].level == "info" and service.health(store).ok
    memory.proposal_decline(store, proposal.id, "still true", caller=OWNER)
    assert "proposals_pending" not in {f.code for f in service.health(store).findings}
    decided = json.loads((store / "proposals" / "decided" / f"{proposal.id}.json").read_text())
    assert (decided["status"], decided["outcome"]) == (
        "declined",
        "declined by the owner: still true",
    )
    assert not (store / "proposals" / f"{proposal.id}.json").exists()
    assert git(store, "status", "--porcelain") == ""
