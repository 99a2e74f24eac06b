"""Deciding the agent's proposals: one commit per accept, rollback, obsolete proposals, purge.

Every step runs the real ``memdir`` CLI in a subprocess; the agent is a Claude Code shell
(``CLAUDECODE=1``), the owner a plain terminal.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from memdir.service.channel import SESSION_VARIABLES

AGENT = {"CLAUDECODE": "1"}


def cli(store: Path, *args: str, agent: bool = False) -> subprocess.CompletedProcess[str]:
    """Run the real ``memdir ARGS --store STORE --json``, from the agent's shell if ``agent``."""
    env = {k: v for k, v in os.environ.items() if k not in SESSION_VARIABLES}
    env.update(AGENT if agent else {})
    done = subprocess.run(
        [sys.executable, "-m", "memdir", *args, "--store", str(store), "--json"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert "Traceback" not in done.stderr, done.stderr
    return done


def ok(done: subprocess.CompletedProcess[str]) -> Any:
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout)


def commits(store: Path) -> list[str]:
    return subprocess.run(
        ["git", "-C", str(store), "log", "--format=%H"], capture_output=True, text=True, check=True
    ).stdout.split()


def propose(store: Path, *args: str) -> str:
    answer = ok(cli(store, *args, agent=True))
    assert answer["proposed"] is True
    return str(answer["proposal"]["id"])


def listed(store: Path) -> dict[str, dict[str, Any]]:
    return {p["id"]: p for p in ok(cli(store, "review"))["proposals"]}


@pytest.mark.slow
def test_an_accept_is_one_commit_and_its_rollback_restores_record_and_proposal(
    store: Path,
) -> None:
    rid = ok(cli(store, "remember", "The API listens on port 8080", "--kind", "fact"))["id"]
    prop = propose(store, "correct", rid, "--text", "The API listens on port 9090")
    before = commits(store)

    accepted = ok(cli(store, "review", "--accept", prop))["results"][0]
    after = commits(store)
    assert len(after) == len(before) + 1  # the change and the decision: one commit
    assert accepted["status"] == "accepted" and accepted["outcome"].startswith(
        "accepted by the owner: "
    )
    new_id = accepted["applied"]["id"]
    assert ok(cli(store, "get", rid))["status"] == "superseded"
    assert listed(store) == {}
    assert "proposals_pending" not in {f["code"] for f in ok(cli(store, "health"))["findings"]}

    ok(cli(store, "rollback", after[0], "--yes"))
    # Both come back together: the record active again, its successor gone, the proposal pending.
    assert ok(cli(store, "get", rid))["status"] == "active"
    assert cli(store, "get", new_id).returncode == 4
    waiting = listed(store)
    assert list(waiting) == [prop] and waiting[prop]["obsolete"] is None
    assert not (store / "proposals" / "decided" / f"{prop}.json").exists()
    codes = {f["code"] for f in ok(cli(store, "health"))["findings"]}
    assert "proposals_pending" in codes

    again = ok(cli(store, "review", "--accept", prop))["results"][0]
    assert again["status"] == "accepted"
    successor = ok(cli(store, "get", again["applied"]["id"]))
    assert (successor["text"], successor["status"]) == ("The API listens on port 9090", "active")


@pytest.mark.slow
def test_a_proposal_overtaken_by_another_is_obsolete_and_only_dismissed(store: Path) -> None:
    rid = ok(cli(store, "remember", "Staging runs on the blue cluster", "--kind", "fact"))["id"]
    other = ok(cli(store, "remember", "Deploys happen on Fridays", "--kind", "fact"))["id"]
    fix = propose(store, "correct", rid, "--text", "Staging runs on the green cluster")
    drop = propose(store, "reject", rid, "--reason", "wrong cluster")
    fresh = propose(store, "forget", other, "--reason", "no longer true")
    assert all(p["obsolete"] is None for p in listed(store).values())

    new_id = ok(cli(store, "review", "--accept", fix))["results"][0]["applied"]["id"]
    waiting = listed(store)
    # Must not be offered as pending work: the reject was about text that is gone.
    assert waiting[drop]["obsolete"] == {
        "reason": f"{rid} was superseded by {new_id} since this was proposed",
        "successor": new_id,
    }
    # The right thing beside it: the unrelated proposal is still a plain pending one.
    assert waiting[fresh]["obsolete"] is None
    text = subprocess.run(
        [sys.executable, "-m", "memdir", "review", "--store", str(store)],
        capture_output=True,
        text=True,
        env={k: v for k, v in os.environ.items() if k not in SESSION_VARIABLES},
        check=True,
    ).stdout
    assert f"OBSOLETE: {rid} was superseded by {new_id}" in text and f"--dismiss {drop}" in text
    findings = {f["code"]: f for f in ok(cli(store, "health"))["findings"]}
    assert "1 change(s)" in findings["proposals_pending"]["message"]
    assert findings["proposals_obsolete"]["fix"] == f"memdir review --dismiss {drop}"

    head = commits(store)
    refused = cli(store, "review", "--accept", drop)
    assert refused.returncode == 1  # an error (the change no longer applies), not a refusal
    error = json.loads(refused.stdout)["error"]
    assert error["code"] == "proposal_obsolete"
    assert f"superseded by {new_id}" in error["message"] and "--dismiss" in error["message"]
    assert commits(store) == head and ok(cli(store, "get", new_id))["status"] == "active"

    ok(cli(store, "review", "--accept", fresh))
    assert ok(cli(store, "get", other))["status"] == "forgotten"
    dismissed = ok(cli(store, "review", "--dismiss", drop))["results"][0]
    assert dismissed["status"] == "declined"
    assert dismissed["outcome"] == (
        f"dismissed by the owner as obsolete: {rid} was superseded by {new_id} since this was "
        "proposed"
    )
    assert listed(store) == {}
    codes = {f["code"] for f in ok(cli(store, "health"))["findings"]}
    assert not codes & {"proposals_pending", "proposals_obsolete"}


@pytest.mark.slow
def test_a_declined_proposal_says_so_and_an_unknown_one_is_not_found(store: Path) -> None:
    rid = ok(cli(store, "remember", "Ship on Tuesdays", "--kind", "decision"))["id"]
    prop = propose(store, "forget", rid, "--reason", "stale")
    done = ok(cli(store, "review", "--decline", prop))["results"][0]
    assert (done["status"], done["outcome"]) == ("declined", "declined by the owner")
    assert ok(cli(store, "get", rid))["status"] == "active"

    missing = cli(store, "review", "--accept", "prop-nonexist")
    assert missing.returncode == 4
    message = json.loads(missing.stdout)["error"]["message"]
    assert message == "no proposal 'prop-nonexist'; see `memdir review`"
    # A record id still reaches the candidate path and names records.
    assert (
        "memdir list"
        in json.loads(cli(store, "review", "--accept", "f-nonexist").stdout)["error"]["message"]
    )


@pytest.mark.slow
def test_purging_a_record_closes_the_proposals_about_it(store: Path) -> None:
    rid = ok(cli(store, "remember", "The office wifi code is tulip", "--kind", "fact"))["id"]
    kept = ok(cli(store, "remember", "Lunch is at noon", "--kind", "fact"))["id"]
    gone = propose(store, "forget", rid, "--reason", "private")
    stays = propose(store, "reject", kept, "--reason", "lunch moved")
    ok(cli(store, "purge", rid, "--yes"))
    assert list(listed(store)) == [stays]
    assert not (store / "proposals" / f"{gone}.json").exists()
    status = subprocess.run(
        ["git", "-C", str(store), "status", "--porcelain"], capture_output=True, text=True
    ).stdout
    assert status == ""
    assert "proposals_obsolete" not in {f["code"] for f in ok(cli(store, "health"))["findings"]}


def test_an_accept_killed_before_its_commit_is_completed_whole(
    store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memdir import service
    from memdir.kernel.base.caller import Caller
    from memdir.kernel.storage import gitio
    from memdir.service import memory

    owner, agent = Caller("owner", "cli"), Caller("agent", "mcp", host="claude-code")
    rid = service.remember(store, "Builds use make", kind="fact", caller=owner).record.id
    prop = service.correct(store, rid, "Builds use just", caller=agent).proposal
    assert prop is not None
    before = commits(store)
    real = gitio.commit

    def killed(*args: Any, **kwargs: Any) -> None:
        raise KeyboardInterrupt  # the process dies after the files, before the commit

    monkeypatch.setattr(gitio, "commit", killed)
    with pytest.raises(KeyboardInterrupt):
        memory.proposal_accept(store, prop.id, caller=owner)
    monkeypatch.setattr(gitio, "commit", real)
    assert (store / "state" / "intent.json").exists()
    assert commits(store) == before

    service.health(store)  # the next write or health finishes the interrupted one
    after = commits(store)
    assert len(after) == len(before) + 1
    changed = subprocess.run(
        ["git", "-C", str(store), "show", "--no-renames", "--name-only", "--format=", after[0]],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert f"proposals/{prop.id}.json" in changed
    assert f"proposals/decided/{prop.id}.json" in changed
    assert any(path.endswith(f"{rid}.md") for path in changed)
    assert service.get(store, rid).status == "superseded"
    assert memory.proposals_pending(store) == []


def test_a_proposal_about_text_reworded_since_is_obsolete_and_a_tag_change_is_not(
    store: Path,
) -> None:
    from memdir import service
    from memdir.kernel.base.caller import Caller
    from memdir.kernel.base.errors import ObsoleteProposalError
    from memdir.service import memory

    owner, agent = Caller("owner", "cli"), Caller("agent", "mcp", host="claude-code")
    rid = service.remember(store, "Tests run with tox", kind="fact", caller=owner).record.id
    prop = service.forget(store, rid, "we moved to nox", caller=agent).proposal
    assert prop is not None and prop.against is not None
    (path,) = store.glob(f"records/*/{rid}.md")
    # A change that leaves the text as proposed against: still a live proposal.
    assert "importance: 5" in path.read_text()
    path.write_text(path.read_text().replace("importance: 5", "importance: 7"))
    (live,) = memory.proposals_pending(store)
    assert live["obsolete"] is None
    # The text reworded by hand since: the proposal is about words that are gone.
    path.write_text(path.read_text().replace("Tests run with tox", "Tests run with tox 4"))
    (stale,) = memory.proposals_pending(store)
    assert stale["obsolete"]["reason"].startswith(f"{rid}'s text changed since")
    with pytest.raises(ObsoleteProposalError, match="cannot be accepted"):
        memory.proposal_accept(store, prop.id, caller=owner)
    assert service.get(store, rid).status == "active"
