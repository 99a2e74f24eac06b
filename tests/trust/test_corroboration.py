"""Human review and corroboration (issue 10, mark 6).

A candidate becomes active without a person only on the person's own words, said in two
sessions; the agent repeating itself never promotes a belief. Every adjudication (review
accept, reject, edit; corroboration) is an audit event naming who decided.
"""

from __future__ import annotations

from pathlib import Path

from memdir import service
from memdir.kernel.base.caller import Caller
from memdir.kernel.storage import audit
from memdir.observe.observer import person_said
from memdir.service import memory

SKIP = "We decided to skip the integration tests."
OWNER = Caller("owner", "cli")


def _statuses(store: Path) -> dict[str, str]:
    return {r.text: r.status for r in service.list_records(store)}


def test_two_assistant_turns_in_two_sessions_promote_nothing(store: Path) -> None:
    service.journal_append(store, "assistant", SKIP, session="a")
    service.journal_append(store, "assistant", SKIP, session="b")
    result = memory.observe_once(store, offline=True)
    assert result.promoted == []
    assert _statuses(store) == {SKIP.rstrip("."): "candidate"}


def test_the_persons_words_after_the_agents_do_not_promote_but_twice_from_the_person_do(
    store: Path,
) -> None:
    service.journal_append(store, "assistant", SKIP, session="a")
    memory.observe_once(store, offline=True)
    service.journal_append(store, "user", SKIP, session="b")
    assert memory.observe_once(store, offline=True).promoted == []  # the candidate is the agent's
    assert _statuses(store) == {SKIP.rstrip("."): "candidate"}
    service.journal_append(store, "user", "We decided to cache builds in CI.", session="a")
    memory.observe_once(store, offline=True)
    service.journal_append(store, "user", "we decided to cache builds in CI", session="c")
    promoted = memory.observe_once(store, offline=True).promoted
    assert len(promoted) == 1  # the right thing is there: the person, twice
    assert _statuses(store)["We decided to cache builds in CI"] == "active"
    event = next(e for e in reversed(audit.read(store)) if promoted[0] in str(e["records"]))
    assert event["op"] == "promote" and event["origin"] == "observer"
    assert "the person" in event["reason"]


def test_a_citation_is_the_persons_only_when_every_turn_in_it_is(store: Path) -> None:
    user = service.journal_append(store, "user", "I prefer rebase.", session="a")
    agent = service.journal_append(store, "assistant", "I prefer rebase too.", session="a")
    assert person_said(store, f"{user.file}:{user.offset}-{user.offset + user.length}")
    assert not person_said(store, f"{agent.file}:{agent.offset}-{agent.offset + agent.length}")
    both = f"{user.file}:{user.offset}-{agent.offset + agent.length}"
    assert not person_said(store, both)
    assert not person_said(store, "journal/../memdir.toml:0-10")
    assert not person_said(store, None)


def test_every_review_decision_is_an_audit_event_naming_the_owner(store: Path) -> None:
    service.journal_append(store, "user", "We decided to pin Node 20.", session="a")
    service.journal_append(store, "user", "We decided to drop Windows builds.", session="a")
    service.journal_append(store, "user", "We decided to use Renovate.", session="a")
    memory.observe_once(store, offline=True)
    ids = {r.text: r.id for r in service.list_records(store, statuses=["candidate"])}
    accepted = memory.review_accept(store, ids["We decided to pin Node 20"], caller=OWNER)
    memory.review_reject(store, ids["We decided to drop Windows builds"], "no", caller=OWNER)
    assert accepted.record.status == "active"
    ops = {
        e["records"][0]["id"]: (e["op"], e["origin"], e["channel"])
        for e in audit.read(store)
        if e["records"]
    }
    assert ops[ids["We decided to pin Node 20"]] == ("accept", "owner", "cli")
    assert ops[ids["We decided to drop Windows builds"]] == ("reject", "owner", "cli")
    assert _statuses(store)["We decided to use Renovate"] == "candidate"  # undecided: untouched
