"""The review page at the HTTP level (Starlette's TestClient): the guard, every view, every action.

Each action must go through the service layer as the owner on the ``ui`` channel and make
exactly one commit (two for an accepted proposal: the change, then the decision).
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from memdir import service
from memdir.kernel.base.caller import Caller
from memdir.service import memory
from memdir.ui.app import cookie_name, create_app
from tests.ui.conftest import Seeded

TOKEN = "t0ken-for-tests"
BASE = "http://127.0.0.1:5555"
ORIGIN = {"Origin": BASE}


def commits(store: Path) -> int:
    out = subprocess.run(
        ["git", "-C", str(store), "rev-list", "--count", "HEAD"],
        check=True,
        capture_output=True,
        text=True,
    )
    return int(out.stdout)


def last_commit(store: Path) -> str:
    return subprocess.run(
        ["git", "-C", str(store), "log", "-1", "--format=%B"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout


def client(store: Path, *, signed_in: bool = True) -> TestClient:
    app = create_app(store, token=TOKEN, port=5555)
    c = TestClient(app, base_url=BASE, follow_redirects=False)
    if signed_in:
        c.cookies.set(cookie_name(5555), TOKEN)
    return c


# --- the guard --------------------------------------------------------------------------------


def test_without_the_token_every_page_is_refused(store: Path) -> None:
    c = client(store, signed_in=False)
    for path in ("/", "/review", "/sessions", "/health", "/static/ui.css"):
        assert c.get(path).status_code == 403, path
    assert c.get("/?token=wrong").status_code == 403
    c.cookies.set(cookie_name(5555), "wrong")
    assert c.get("/").status_code == 403


def test_the_url_token_is_swapped_for_a_strict_httponly_cookie(store: Path) -> None:
    c = client(store, signed_in=False)
    r = c.get(f"/review?token={TOKEN}")
    assert r.status_code == 303
    assert r.headers["location"] == "/review"  # the token leaves the address bar
    cookie = r.headers["set-cookie"]
    assert f"{cookie_name(5555)}={TOKEN}" in cookie
    assert "HttpOnly" in cookie
    assert "samesite=strict" in cookie.lower()
    assert c.get("/review").status_code == 200  # the cookie now carries it


def test_a_foreign_host_is_refused_even_with_the_token(store: Path) -> None:
    c = client(store)
    assert c.get("/", headers={"Host": "evil.example:5555"}).status_code == 403
    assert c.get("/", headers={"Host": "127.0.0.1:6666"}).status_code == 403
    assert c.get("/", headers={"Host": "localhost:5555"}).status_code == 200


def test_a_post_from_another_origin_or_none_changes_nothing(seeded: Seeded) -> None:
    c = client(seeded.store)
    before = commits(seeded.store)
    form = {"reason": "not true"}
    url = f"/belief/{seeded.decision}/reject"
    assert c.post(url, data=form, headers={"Origin": "http://evil.example"}).status_code == 403
    assert c.post(url, data=form).status_code == 403  # no Origin at all
    cross = {**ORIGIN, "Sec-Fetch-Site": "cross-site"}
    assert c.post(url, data=form, headers=cross).status_code == 403
    assert commits(seeded.store) == before
    assert service.get(seeded.store, seeded.decision).status == "active"
    assert c.post(url, data=form, headers=ORIGIN).status_code == 303  # the page itself may


def test_every_response_carries_a_strict_content_security_policy(store: Path) -> None:
    r = client(store).get("/")
    csp = r.headers["content-security-policy"]
    assert "default-src 'none'" in csp
    assert "script-src 'self'" in csp
    assert "unsafe-inline" not in csp
    assert r.headers["referrer-policy"] == "same-origin"  # never sent to another site


# --- views ------------------------------------------------------------------------------------


def test_beliefs_list_filter_and_search_with_scores(seeded: Seeded) -> None:
    c = client(seeded.store)
    everything = c.get("/").text
    assert seeded.decision in everything and seeded.candidates[0] in everything
    only_candidates = c.get("/?status=candidate").text
    assert seeded.candidates[0] in only_candidates
    assert seeded.decision not in only_candidates
    decisions = c.get("/?kind=decision").text
    assert seeded.decision in decisions and seeded.fact not in decisions
    found = c.get("/?q=bun+package").text
    assert seeded.decision in found and seeded.fact not in found
    assert "<summary>why</summary>" in found and "relevance" in found
    assert seeded.decision not in c.get("/?until=2000-01-01").text


def test_bad_filters_are_named_not_a_traceback(store: Path) -> None:
    r = client(store).get("/?since=yesterday")
    assert r.status_code == 400
    assert "from must be a day" in r.text
    r = client(store).get("/?kind=gossip")
    assert r.status_code == 400 and "unknown kind" in r.text


def test_a_belief_page_shows_fields_provenance_links_and_history(seeded: Seeded) -> None:
    c = client(seeded.store)
    page = c.get(f"/belief/{seeded.candidates[0]}").text
    assert "remember that the API port is 8080" in page  # the journal line it came from
    assert 'class="cited"' in page and "hello, starting on the API today" in page  # in context
    assert "observer" in page
    decision = c.get(f"/belief/{seeded.decision}").text
    assert f"/belief/{seeded.fact}" in decision and "links to" in decision
    fact = c.get(f"/belief/{seeded.fact}").text
    assert f"/belief/{seeded.decision}" in fact and "linked from" in fact
    assert "remember " in fact  # its creating commit in the history


def test_a_missing_belief_is_404_and_a_bad_id_is_400(store: Path) -> None:
    c = client(store)
    assert c.get("/belief/f-01m8yh42n0mbn8").status_code == 404
    assert c.get("/belief/..%2Fetc").status_code in (400, 404)


def test_review_shows_candidates_and_proposals_with_their_evidence(seeded: Seeded) -> None:
    page = client(seeded.store).get("/review").text
    for cid in seeded.candidates:
        assert cid in page
    assert seeded.proposal in page
    assert "The staging database is Postgres 16" in page  # proposed
    assert "The staging database is Postgres 15" in page  # now
    assert "remember that deploys happen on Fridays" in page  # evidence


def test_sessions_and_one_session(seeded: Seeded) -> None:
    c = client(seeded.store)
    assert "/session/s-1" in c.get("/sessions").text
    page = c.get("/session/s-1").text
    assert seeded.decision in page  # injected
    assert "42 tokens" in page  # when it was injected, and what it cost
    assert "2026-12-03T10:00:01" in page
    assert "src/app.py" in page and "src/server.py" in page  # read, written
    assert re.search(r"<dt>denied</dt><dd>1</dd>", page)  # the refused re-read, in the ledger
    assert re.search(r"<dt>read_tokens</dt><dd>300</dd>", page)
    assert "remember that the API port is 8080" in page  # its journal
    assert c.get("/session/nope").status_code == 404


def test_a_session_whose_id_is_not_file_safe_opens_too(store: Path) -> None:
    from memdir.kernel.storage import session

    odd = "rollout 2026/12/03 #7"
    session.record(store, odd, {"e": "inject", "ids": ["d-01m8yh3jt66kr8"], "tokens": 9})
    c = client(store)
    links = re.findall(r'href="(/session/[^"]+)"', c.get("/sessions").text)
    assert len(links) == 1
    for url in (links[0], "/session/rollout%202026/12/03%20%237"):  # its link, its real id
        page = c.get(url)
        assert page.status_code == 200, url
        assert "d-01m8yh3jt66kr8" in page.text and "9 tokens" in page.text


def test_health_and_hygiene_offer_the_action_that_resolves_each_finding(seeded: Seeded) -> None:
    a = service.remember(seeded.store, "Use pnpm, not npm, in the web app").record.id
    b = service.remember(seeded.store, "Use npm, not pnpm, in the web app").record.id
    c = client(seeded.store)
    page = c.get("/health").text
    assert "The store is healthy." in page
    assert "conflict" in page
    for one in (a, b):  # either side may be the wrong one
        assert f'action="/belief/{one}/reject"' in page
    before = commits(seeded.store)
    r = c.post(f"/belief/{b}/reject", data={"reason": "we moved to pnpm"}, headers=ORIGIN)
    assert r.status_code == 303
    assert commits(seeded.store) == before + 1
    after = c.get("/health").text
    assert "conflict" not in after and "Nothing to tidy." in after


# --- actions: the service layer, one commit each ----------------------------------------------


def test_correct_makes_one_commit_and_the_chain_shows_it(seeded: Seeded) -> None:
    c = client(seeded.store)
    before = commits(seeded.store)
    r = c.post(
        f"/belief/{seeded.decision}/correct",
        data={"text": "We use pnpm for package scripts", "reason": "switched"},
        headers=ORIGIN,
    )
    assert r.status_code == 303
    assert commits(seeded.store) == before + 1
    assert "Memdir-Origin: owner" in last_commit(seeded.store)
    assert "Memdir-Channel: ui" in last_commit(seeded.store)
    new_id = re.search(r"/belief/([^?]+)", r.headers["location"])
    assert new_id is not None
    page = c.get(f"/belief/{new_id.group(1)}").text
    assert seeded.decision in page and "superseded" in page and "switched" in page
    assert service.get(seeded.store, seeded.decision).status == "superseded"


@pytest.mark.parametrize("action", ["reject", "forget"])
def test_reject_and_forget_need_a_reason_and_make_one_commit(seeded: Seeded, action: str) -> None:
    c = client(seeded.store)
    before = commits(seeded.store)
    url = f"/belief/{seeded.decision}/{action}"
    assert c.post(url, data={"reason": " "}, headers=ORIGIN).status_code == 400
    assert commits(seeded.store) == before
    assert c.post(url, data={"reason": "no longer"}, headers=ORIGIN).status_code == 303
    assert commits(seeded.store) == before + 1
    status = {"reject": "rejected", "forget": "forgotten"}[action]
    assert service.get(seeded.store, seeded.decision).status == status


def test_purge_needs_confirmation_and_shows_the_erasure_report(seeded: Seeded) -> None:
    c = client(seeded.store)
    url = f"/belief/{seeded.fact}/purge"
    before = commits(seeded.store)
    assert c.post(url, data={}, headers=ORIGIN).status_code == 400
    assert commits(seeded.store) == before
    r = c.post(url, data={"yes": "yes"}, headers=ORIGIN)
    assert r.status_code == 200
    assert f"Purged {seeded.fact}" in r.text and 'id="erasure"' in r.text
    gone = c.get(f"/belief/{seeded.fact}")
    assert gone.status_code == 404 and "purged" in gone.text


def test_accept_reject_and_reword_candidates(seeded: Seeded) -> None:
    c = client(seeded.store)
    first, second, third = seeded.candidates
    before = commits(seeded.store)
    assert c.post("/review", data={"id": first, "action": "accept"}, headers=ORIGIN).is_redirect
    assert commits(seeded.store) == before + 1
    assert service.get(seeded.store, first).status == "active"
    no_reason = c.post("/review", data={"id": second, "action": "reject"}, headers=ORIGIN)
    assert no_reason.status_code == 400
    form = {"id": second, "action": "reject", "reason": "not ours"}
    assert c.post("/review", data=form, headers=ORIGIN).is_redirect
    assert service.get(seeded.store, second).status == "rejected"
    assert service.get(seeded.store, second).reason == "not ours"
    form = {"id": third, "action": "reword", "text": "Cache entries live 60 seconds"}
    assert c.post("/review", data=form, headers=ORIGIN).is_redirect
    assert service.get(seeded.store, third).status == "superseded"
    assert commits(seeded.store) == before + 3
    assert memory.review_list(seeded.store) == []


def test_bulk_accept_takes_each_selected_candidate(seeded: Seeded) -> None:
    c = client(seeded.store)
    before = commits(seeded.store)
    form = {"id": seeded.candidates[:2], "action": "accept"}
    assert c.post("/review", data=form, headers=ORIGIN).is_redirect
    assert commits(seeded.store) == before + 2
    assert [d["id"] for d in memory.review_list(seeded.store)] == seeded.candidates[2:]


def test_a_proposal_is_accepted_or_declined_as_the_owner(seeded: Seeded) -> None:
    c = client(seeded.store)
    form = {"id": seeded.proposal, "action": "accept"}
    assert c.post("/review", data=form, headers=ORIGIN).is_redirect
    assert service.get(seeded.store, seeded.fact).status == "superseded"
    assert memory.proposals_pending(seeded.store) == []
    again = c.post("/review", data=form, headers=ORIGIN)
    assert again.status_code == 400 and "already accepted" in again.text


def test_an_obsolete_proposal_is_shown_as_such_and_cannot_be_accepted(seeded: Seeded) -> None:
    c = client(seeded.store)
    agent = Caller("agent", "mcp", host="claude-code")
    stale = service.forget(seeded.store, seeded.fact, "old version", caller=agent).proposal
    assert stale is not None
    page = c.get("/review").text
    assert "Obsolete:" not in page  # both still apply
    assert c.post(
        "/review", data={"id": seeded.proposal, "action": "accept"}, headers=ORIGIN
    ).is_redirect
    page = c.get("/review").text
    assert f"Obsolete: {seeded.fact} was superseded by" in page and stale.id in page
    before = commits(seeded.store)
    r = c.post("/review", data={"id": stale.id, "action": "accept"}, headers=ORIGIN)
    assert r.status_code == 409 and "is obsolete and cannot be accepted" in r.text
    assert commits(seeded.store) == before


def test_accepting_a_belief_that_is_no_candidate_is_refused(seeded: Seeded) -> None:
    c = client(seeded.store)
    before = commits(seeded.store)
    r = c.post("/review", data={"id": seeded.decision, "action": "accept"}, headers=ORIGIN)
    assert r.status_code == 400 and "is not a candidate" in r.text
    assert commits(seeded.store) == before


def test_the_page_reflects_changes_made_elsewhere(seeded: Seeded) -> None:
    c = client(seeded.store)
    assert seeded.decision in c.get("/").text
    service.forget(seeded.store, seeded.decision, "elsewhere")
    assert "forgotten" in c.get(f"/belief/{seeded.decision}").text
