"""Bi-temporal validity (issue 10, mark 3): true in the world apart from when memdir recorded it.

Each "must not come back" is paired with "the right one is there" on the same store.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from mcp.client.client import Client

from memdir import service
from memdir.kernel.base.clock import now_iso
from memdir.kernel.base.errors import NotFoundError
from memdir.mcp.server import build_server
from tests.conftest import git, run_cli, text_of

OLD = "The message queue in production is RabbitMQ."
NEW = "The message queue in production is Kafka."


def _ids(store: Path, query: str, **options: Any) -> list[str]:
    return [h.doc["id"] for h in service.recall(store, query, **options).hits]


def test_a_correction_true_until_a_date_answers_both_times_and_now_only_the_new(
    store: Path,
) -> None:
    old = service.remember(store, OLD, valid_from="2025-06-01").record
    done = service.correct(store, old.id, NEW, reason="migrated", valid_until="2026-03-01")
    new, retired = done.record, done.previous
    assert retired is not None and retired.valid_until == "2026-03-01"
    assert retired.status == "superseded" and new.valid_from == "2026-03-01"
    assert _ids(store, "message queue production") == [new.id]  # now: only the new value
    assert _ids(store, "message queue production", as_of="2026-02-15") == [old.id]
    assert _ids(store, "message queue production", as_of="2026-03-01") == [new.id]
    assert _ids(store, "message queue production", as_of="2025-01-01") == []  # before either


def test_a_plain_correction_leaves_the_wrong_value_out_of_every_time(store: Path) -> None:
    old = service.remember(store, OLD, valid_from="2025-06-01").record
    new = service.correct(store, old.id, NEW, reason="it was never RabbitMQ").record
    assert _ids(store, "message queue production", as_of="2026-02-15") == []
    assert new.valid_from is None  # true from when it was observed: today
    assert _ids(store, "message queue production") == [new.id]


def test_an_expired_belief_is_not_served_now_and_is_served_as_of_its_time(store: Path) -> None:
    expired = service.remember(
        store, "The release freeze applies to the payments service.", valid_until="2026-01-10"
    ).record
    live = service.remember(store, "The release freeze applies to the search service.").record
    assert _ids(store, "release freeze service") == [live.id]
    assert expired.id in _ids(store, "release freeze service", as_of="2026-01-05")


def test_a_correction_that_takes_over_later_keeps_the_old_value_true_until_then(
    store: Path,
) -> None:
    old = service.remember(store, OLD).record
    done = service.correct(store, old.id, NEW, valid_until="2999-01-01")
    assert done.previous is not None and done.previous.status == "active"
    assert "takes over" in done.note
    assert _ids(store, "message queue production") == [old.id]
    assert _ids(store, "message queue production", as_of="2999-06-01") == [done.record.id]


@pytest.mark.slow
def test_believed_at_answers_what_memdir_held_then_from_its_history(store: Path) -> None:
    old = service.remember(store, OLD).record
    then = now_iso()
    time.sleep(1.1)  # git keeps whole seconds
    new = service.correct(store, old.id, NEW, reason="it was never RabbitMQ").record
    assert _ids(store, "message queue production") == [new.id]
    assert _ids(store, "message queue production", believed_at=then) == [old.id]
    assert git(store, "status", "--porcelain") == ""  # the live store was not touched
    with pytest.raises(NotFoundError):
        service.recall(store, "queue", believed_at="2000-01-01")


def test_an_old_record_without_valid_time_stays_byte_identical_and_is_true_since_observed(
    store: Path,
) -> None:
    rid = "f-01m8aaaaaaaaaa"
    path = store / "records" / "fact" / f"{rid}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    text = (
        "---\n"
        f'id: "{rid}"\nkind: "fact"\nstatus: "active"\n'
        'text: "The staging database is Postgres 15."\norigin: "owner"\nimportance: 5\n'
        "confidence: 1.0\naliases: []\ntags: []\nlinks: []\nsupersedes: null\n"
        'superseded_by: null\ncreated_at: "2025-05-01T10:00:00Z"\n'
        'updated_at: "2025-05-01T10:00:00Z"\nobserved_at: "2025-05-01"\n'
        'source: {"channel": "cli", "session": null, "journal": null}\nscope: "project"\n'
        "reason: null\n---\n"
    )
    path.write_text(text)
    record = service.get(store, rid)
    assert record.valid_from is None and record.valid_since == "2025-05-01"
    assert _ids(store, "staging database Postgres") == [rid]
    assert _ids(store, "staging database Postgres", as_of="2025-04-30") == []
    assert path.read_text() == text  # nothing rewrote it
    named = [f.code for f in service.health(store).findings if (f.path or "").endswith(rid + ".md")]
    assert named == [], named  # canonical as it was: nothing to repair


def test_the_cli_takes_the_dates_and_refuses_a_bad_one(store: Path) -> None:
    made = run_cli("remember", OLD, "--valid-from", "2025-06-01", "--json")
    assert made.exit_code == 0, made.output
    rid = json.loads(made.stdout)["id"]
    assert json.loads(made.stdout)["valid_from"] == "2025-06-01"
    fixed = run_cli(
        "correct", rid, "--text", NEW, "--valid-until", "2026-03-01T00:00:00Z", "--json"
    )
    assert fixed.exit_code == 0, fixed.output
    asked = run_cli("recall", "message queue", "--as-of", "2026-02-01", "--json")
    assert [r["id"] for r in json.loads(asked.stdout)["results"]] == [rid]
    now = run_cli("recall", "message queue", "--json")
    assert [r["text"] for r in json.loads(now.stdout)["results"]] == [NEW]
    bad = run_cli("remember", "Something else.", "--valid-until", "next March", "--json")
    assert bad.exit_code == 2
    assert "valid_until" in json.loads(bad.stdout)["error"]["message"]
    backwards = run_cli(
        "remember", "Another.", "--valid-from", "2026-02-01", "--valid-until", "2026-01-01"
    )
    assert backwards.exit_code == 2


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_mcp_takes_the_same_dates(store: Path) -> None:
    async with Client(build_server(store)) as client:
        made = await client.call_tool("memory_remember", {"text": OLD, "valid_from": "2025-06-01"})
        assert not made.is_error, made.content
        rid = json.loads(text_of(made))["id"]
        fixed = await client.call_tool(
            "memory_correct", {"id": rid, "text": NEW, "valid_until": "2026-03-01"}
        )
        assert not fixed.is_error, fixed.content
        then = await client.call_tool(
            "memory_recall", {"query": "message queue", "as_of": "2026-02-01"}
        )
        now = await client.call_tool("memory_recall", {"query": "message queue"})
    assert [r["text"] for r in json.loads(text_of(then))["results"]] == [OLD]
    assert [r["text"] for r in json.loads(text_of(now))["results"]] == [NEW]


def test_an_agents_proposal_to_correct_an_owners_record_carries_its_end_date(
    store: Path,
) -> None:
    from memdir.kernel.base.caller import Caller
    from memdir.service import memory

    owner, agent = Caller("owner", "cli"), Caller("agent", "mcp")
    old = service.remember(store, OLD, valid_from="2025-06-01", caller=owner).record
    asked = service.correct(
        store, old.id, NEW, reason="migrated", valid_until="2026-03-01", caller=agent
    )
    assert asked.proposal is not None and asked.proposal.valid_until == "2026-03-01"
    pending = memory.proposals_pending(store)
    assert [p["valid_until"] for p in pending] == ["2026-03-01"]
    # nothing changed until the owner decides: the old value is still what is true now
    assert _ids(store, "message queue production") == [old.id]
    memory.proposal_accept(store, asked.proposal.id, caller=owner)
    new = next(h.doc for h in service.recall(store, "message queue production").hits)
    assert new["text"] == NEW and new["valid_from"] == "2026-03-01"
    assert _ids(store, "message queue production") == [new["id"]]  # now: only the new value
    assert _ids(store, "message queue production", as_of="2026-02-15") == [old.id]
    assert service.get(store, old.id).valid_until == "2026-03-01"


def test_an_agents_proposal_with_a_backwards_end_date_is_refused_like_the_owners(
    store: Path,
) -> None:
    from memdir.kernel.base.caller import Caller
    from memdir.kernel.base.errors import UsageError
    from memdir.service import memory

    old = service.remember(store, OLD, valid_from="2025-06-01", caller=Caller("owner", "cli"))
    with pytest.raises(UsageError, match="not after"):
        service.correct(
            store, old.record.id, NEW, valid_until="2025-01-01", caller=Caller("agent", "mcp")
        )
    assert memory.proposals_pending(store) == []


@pytest.mark.anyio
async def test_an_mcp_proposal_on_an_owners_record_carries_its_end_date_through_review(
    store: Path,
) -> None:
    """The agent channel (MCP) asks "true until then, then this"; the owner's review applies it."""
    from memdir.kernel.base.caller import Caller

    old = service.remember(store, OLD, valid_from="2025-06-01", caller=Caller("owner", "cli"))
    async with Client(build_server(store)) as client:
        asked = await client.call_tool(
            "memory_correct", {"id": old.record.id, "text": NEW, "valid_until": "2026-03-01"}
        )
        assert not asked.is_error, asked.content
        proposed = json.loads(text_of(asked))
        assert proposed["status"] == "proposed"
        now = await client.call_tool("memory_recall", {"query": "message queue"})
    # until the owner decides, the owner's belief is what is served, and the proposal says when
    assert [r["text"] for r in json.loads(text_of(now))["results"]] == [OLD]
    listing = run_cli("review", "--store", str(store)).stdout
    assert "from 2026-03-01 (true until then)" in listing
    [pending] = json.loads(run_cli("review", "--json", "--store", str(store)).stdout)["proposals"]
    assert pending["valid_until"] == "2026-03-01"
    run_cli("review", "--accept", pending["id"], "--store", str(store))
    assert _ids(store, "message queue production") != [old.record.id]
    assert [service.get(store, i).text for i in _ids(store, "message queue production")] == [NEW]
    assert _ids(store, "message queue production", as_of="2026-02-15") == [old.record.id]
