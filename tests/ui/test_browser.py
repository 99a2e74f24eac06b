"""The review page in a real browser: headless Chromium (Debian's) driven by Playwright.

uvicorn serves a seeded store from a thread on 127.0.0.1 (a free port); Playwright drives the
system Chromium (``executable_path``; nothing is downloaded). Screenshots of the main views are
written to ``.ci-artifacts/ui/`` (git-ignored; CI keeps them as artifacts).
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memdir import service
from memdir.service import memory
from memdir.ui.server import Served, prepare
from tests.ui.conftest import Seeded

playwright_api = pytest.importorskip("playwright.sync_api")

ARTIFACTS = Path(__file__).resolve().parents[2] / ".ci-artifacts" / "ui"
CHROMIUM = os.environ.get("MEMDIR_CHROMIUM") or shutil.which("chromium") or ""

pytestmark = [pytest.mark.slow, pytest.mark.browser, pytest.mark.enable_socket]


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """One headless Chromium for the module (the system one; set MEMDIR_CHROMIUM to override)."""
    if os.environ.get("MEMDIR_CHROMIUM") and not os.access(CHROMIUM, os.X_OK):
        pytest.fail(f"MEMDIR_CHROMIUM={CHROMIUM!r} is not an executable browser")
    if not CHROMIUM:  # .ci/run installs it and sets MEMDIR_CHROMIUM, so CI never skips
        pytest.skip("no chromium on PATH (apt-get install -y chromium)")
    with playwright_api.sync_playwright() as p:
        launched = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield launched
        launched.close()


class Live:
    """A served page, a fresh browser context and page on it, and the seeded store."""

    def __init__(self, served: Served, page: Any, seeded: Seeded) -> None:
        self.served = served
        self.page = page
        self.seeded = seeded
        self.base = f"http://127.0.0.1:{served.port}"

    def open(self, path: str = "/") -> Any:
        """Go to ``path`` on the page (already signed in)."""
        self.page.goto(self.base + path)
        return self.page

    def shot(self, name: str) -> None:
        """Write a full-page screenshot to ``.ci-artifacts/ui/<name>.png``."""
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        self.page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


@pytest.fixture
def live(browser: Any, seeded: Seeded) -> Iterator[Live]:
    """The seeded store served from a thread; a browser page signed in with the printed URL."""
    served = prepare(seeded.store, 0)
    thread = served.start_thread()
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    context.set_default_timeout(30_000)
    page = context.new_page()
    try:
        response = page.goto(served.url)
        assert response is not None and response.status == 200
        assert "token=" not in page.url  # swapped for the cookie
        yield Live(served, page, seeded)
    finally:
        context.close()
        served.stop(thread)


def test_a_wrong_or_missing_token_is_refused(browser: Any, seeded: Seeded) -> None:
    served = prepare(seeded.store, 0)
    thread = served.start_thread()
    context = browser.new_context()
    try:
        page = context.new_page()
        base = f"http://127.0.0.1:{served.port}/"
        for url in (base, base + "?token=wrong", base + "review"):
            response = page.goto(url)
            assert response is not None and response.status == 403, url
            assert "refused" in page.inner_text("body")
            assert seeded.decision not in page.content()
        response = page.goto(served.url)
        assert response is not None and response.status == 200
    finally:
        context.close()
        served.stop(thread)


def test_load_search_and_explain(live: Live) -> None:
    page = live.open("/")
    assert page.title() == "Beliefs · memdir"
    assert live.seeded.decision in page.content()
    live.shot("beliefs")
    page.fill("#q", "bun package")
    page.click("form.filters button[type=submit]")
    page.wait_for_url(re.compile(r"q=bun"))
    rows = page.locator("table.list tbody tr")
    assert rows.count() >= 1
    assert "We use bun, not npm" in rows.first.inner_text()
    why = rows.first.locator("details")
    assert not why.locator("dl").is_visible()
    why.locator("summary").click()
    assert why.locator("dl").is_visible()
    assert "relevance" in why.inner_text()
    live.shot("search")
    page.select_option("#f-status", "candidate")
    page.fill("#q", "")
    page.click("form.filters button[type=submit]")
    page.wait_for_url(re.compile(r"status=candidate"))
    assert live.seeded.candidates[0] in page.content()
    assert live.seeded.decision not in page.content()


def test_open_a_belief_correct_it_and_see_the_chain(live: Live) -> None:
    page = live.open("/")
    page.click(f"a[href='/belief/{live.seeded.decision}']")
    page.wait_for_url(re.compile(live.seeded.decision))
    assert "We use bun, not npm" in page.inner_text("h1")
    assert live.seeded.fact in page.inner_text("section:has(#h-links)")
    live.shot("belief")
    page.fill("#c-text", "We use pnpm, not npm, for every package script")
    page.fill("#c-reason", "switched in December")
    page.click("form[action$='/correct'] button")
    page.wait_for_url(re.compile(r"note="))
    new_id = page.url.split("/belief/")[1].split("?")[0]
    assert new_id != live.seeded.decision
    chain = page.inner_text("ol.chain")
    assert live.seeded.decision in chain and new_id in chain
    assert "superseded" in chain and "switched in December" in chain
    page.click("text=Diffs of each file")
    assert page.locator("pre.diff .add").first.is_visible()
    assert service.get(live.seeded.store, live.seeded.decision).status == "superseded"


def test_a_candidate_shows_its_journal_lines_in_context(live: Live) -> None:
    page = live.open(f"/belief/{live.seeded.candidates[0]}")
    cited = page.locator("ol.evidence li.cited")
    assert "remember that the API port is 8080" in cited.first.inner_text()
    assert page.locator("ol.evidence li.context").count() >= 1


def test_accept_a_candidate_and_reject_one_with_a_reason(live: Live) -> None:
    first, second, _ = live.seeded.candidates
    page = live.open("/review")
    live.shot("review")
    page.locator(f"#item-{first} [data-key=a]").click()
    page.wait_for_url(re.compile(r"note=accepted"))
    assert f"accepted {first}" in page.inner_text("p.note")
    page.fill(f"#rr-{second}", "we never said that")
    page.locator(f"#item-{second} form:has(#rr-{second}) button").click()
    page.wait_for_url(re.compile(r"note=rejected"))
    assert service.get(live.seeded.store, first).status == "active"
    rejected = service.get(live.seeded.store, second)
    assert rejected.status == "rejected" and rejected.reason == "we never said that"
    assert page.locator(f"#item-{first}").count() == 0


def test_a_reject_without_reason_is_stopped_in_the_page(live: Live) -> None:
    first = live.seeded.candidates[0]
    page = live.open("/review")
    page.locator(f"#item-{first} form:has(#rr-{first}) button").click()
    assert page.evaluate(f"document.getElementById('rr-{first}').validity.valueMissing")
    assert service.get(live.seeded.store, first).status == "candidate"


def test_the_review_queue_by_keyboard(live: Live) -> None:
    first, second, third = live.seeded.candidates
    page = live.open("/review")
    active = (
        "document.activeElement.closest('article') && document.activeElement.closest('article').id"
    )
    assert page.evaluate(active) == f"item-{first}"  # the first item has focus on load
    page.keyboard.press("j")
    assert page.evaluate(active) == f"item-{second}"
    page.keyboard.press("k")
    assert page.evaluate(active) == f"item-{first}"
    page.keyboard.press("a")  # accept the first
    page.wait_for_url(re.compile(r"note=accepted"))
    assert page.evaluate(active) == f"item-{second}"
    page.keyboard.press("r")
    assert page.evaluate("document.activeElement.id") == f"rr-{second}"
    page.keyboard.type("not a real rule")
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(r"note=rejected"))
    assert page.evaluate(active) == f"item-{third}"
    page.keyboard.press("x")  # select it and the proposal, then bulk-accept
    page.keyboard.press("j")
    page.keyboard.press("x")
    page.click("#bulk button[value=accept]")
    page.wait_for_url(re.compile(r"note=accepted"))
    assert service.get(live.seeded.store, first).status == "active"
    assert service.get(live.seeded.store, second).status == "rejected"
    assert service.get(live.seeded.store, third).status == "active"
    assert memory.proposals_pending(live.seeded.store) == []
    assert service.get(live.seeded.store, live.seeded.fact).status == "superseded"
    assert "No candidates or proposals await review" in page.inner_text("main")


def test_reword_a_candidate_by_keyboard(live: Live) -> None:
    first = live.seeded.candidates[0]
    page = live.open("/review")
    page.keyboard.press("e")
    assert page.evaluate("document.activeElement.id") == f"rw-{first}"
    page.keyboard.type("The public API listens on port 8080")  # the text was selected: replaced
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(r"note=reworded"))
    old = service.get(live.seeded.store, first)
    assert old.status == "superseded" and old.superseded_by is not None
    new = service.get(live.seeded.store, old.superseded_by)
    assert new.status == "active" and new.text == "The public API listens on port 8080"


def test_purge_shows_the_erasure_report(live: Live) -> None:
    page = live.open(f"/belief/{live.seeded.fact}")
    page.check("#p-yes")
    page.click("form[action$='/purge'] button")
    page.wait_for_selector("#erasure")
    assert f"Purged {live.seeded.fact}" in page.inner_text("h1")
    assert page.locator("#erasure tbody tr").count() >= 1
    live.shot("purged")
    response = page.goto(f"{live.base}/belief/{live.seeded.fact}")
    assert response is not None and response.status == 404
    assert "purged" in page.inner_text("main")


def test_sessions_and_health(live: Live) -> None:
    page = live.open("/sessions")
    page.click("a[href='/session/s-1']")
    page.wait_for_url(re.compile(r"/session/s-1"))
    body = page.inner_text("main")
    assert live.seeded.decision in body and "injected_tokens" in body
    assert "remember that the API port is 8080" in body
    live.shot("session")
    page = live.open("/health")
    assert "Hygiene" in page.inner_text("main")
    live.shot("health")


CONTRAST = r"""() => {
  function rgb(s) { const m = s.match(/[\d.]+/g).map(Number); return {r: m[0], g: m[1], b: m[2], a: m.length > 3 ? m[3] : 1}; }
  function lum(c) { const f = v => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
    return 0.2126 * f(c.r) + 0.7152 * f(c.g) + 0.0722 * f(c.b); }
  function background(el) {
    for (let e = el; e; e = e.parentElement) { const c = rgb(getComputedStyle(e).backgroundColor); if (c.a > 0) { return c; } }
    return {r: 255, g: 255, b: 255, a: 1};
  }
  const bad = [];
  let checked = 0;
  for (const el of document.querySelectorAll("body *")) {
    const own = Array.from(el.childNodes).some(n => n.nodeType === 3 && n.textContent.trim());
    const style = getComputedStyle(el);
    if (!own || style.visibility === "hidden" || style.display === "none" || !el.getClientRects().length) { continue; }
    const fg = rgb(style.color), bg = background(el);
    const [a, b] = [lum(fg), lum(bg)].sort((x, y) => y - x);
    const ratio = (a + 0.05) / (b + 0.05);
    checked += 1;
    if (ratio < 4.5) { bad.push(el.tagName + " '" + el.textContent.trim().slice(0, 30) + "' " + ratio.toFixed(2)); }
  }
  return {checked, bad};
}"""

UNLABELLED = """() => Array.from(document.querySelectorAll("input, select, textarea"))
  .filter(e => e.type !== "hidden")
  .filter(e => !(e.labels && e.labels.length) && !e.getAttribute("aria-label"))
  .map(e => e.outerHTML.slice(0, 80))"""


def test_accessibility_basics(live: Live) -> None:
    pages = ["/", "/?q=bun", f"/belief/{live.seeded.decision}", "/review", "/sessions"]
    pages += ["/session/s-1", "/health"]
    for path in pages:
        page = live.open(path)
        assert page.evaluate(UNLABELLED) == [], path
        contrast = page.evaluate(CONTRAST)
        assert contrast["checked"] > 5, path
        assert contrast["bad"] == [], path
        assert page.locator("main h1").count() == 1, path
        assert page.get_attribute("html", "lang") == "en"
    page = live.open("/")
    page.keyboard.press("Tab")  # the skip link, then the navigation: focus is drawn
    focused = page.evaluate(
        "(() => { const s = getComputedStyle(document.activeElement);"
        " return [document.activeElement.tagName, s.outlineStyle, parseFloat(s.outlineWidth)]; })()"
    )
    assert focused[0] == "A"
    assert focused[1] != "none" and focused[2] >= 2
