"""The review page's Starlette application: views, actions and the guard in front of them.

Every view reads through :mod:`memdir.service` (and the kernel's read-only session and journal
readers); every action calls the same service function as the CLI command of the same name, as
:data:`UI_CALLER`. A :class:`~memdir.kernel.base.errors.MemdirError` becomes a page saying what was
wrong, with the HTTP status of its exit code (2 → 400, 3 → 403, 4 → 404, else 409).
"""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import Awaitable, Callable, Iterable
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import jinja2
from starlette.applications import Starlette
from starlette.datastructures import FormData
from starlette.middleware import Middleware
from starlette.middleware.base import BaseHTTPMiddleware, RequestResponseEndpoint
from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.templating import Jinja2Templates

from memdir import service
from memdir.kernel.base.caller import Caller
from memdir.kernel.base.errors import MemdirError, UsageError
from memdir.kernel.base.layout import layout
from memdir.kernel.base.model import KINDS, STATUSES
from memdir.kernel.storage import authority
from memdir.kernel.storage import session as session_mod
from memdir.kernel.storage.journal import journal_files
from memdir.service import memory

UI_CALLER = Caller("owner", "ui")
"""Who acts from the page: the owner, through the ``ui`` channel (the person at the browser)."""

HERE = Path(__file__).parent
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
ORIGINS = ("owner", "agent", "observer", "import", "untrusted", "system")
SCOPES = ("project", "user")
_CITATION = re.compile(
    r"^journal/(?P<file>\d{4}-\d{2}-\d{2}(?:\.[a-z0-9][a-z0-9-]{0,39})?\.jsonl)"
    r":(?P<start>\d+)-(?P<end>\d+)$"
)
CONTEXT_LINES = 2
"""Journal lines shown before and after the lines a belief was distilled from."""

Handler = Callable[[Request], Awaitable[Response]]


def cookie_name(port: int | None) -> str:
    """Return the session cookie's name; per port, so two pages on one machine do not collide."""
    return f"memdir_ui_{port or 0}"


class Guard(BaseHTTPMiddleware):
    """Refuse every request without the token, from a foreign Host, or from a foreign Origin."""

    def __init__(self, app: Any, *, token: str, hosts: Iterable[str], port: int | None) -> None:
        """Guard ``app`` with ``token``; ``hosts`` are the accepted Host header values."""
        super().__init__(app)
        self.token = token
        self.hosts = frozenset(hosts)
        self.cookie = cookie_name(port)

    async def dispatch(self, request: Request, call_next: RequestResponseEndpoint) -> Response:
        """Check Host, Origin and the token; swap a URL token for the cookie; add the headers."""
        response = await self._check(request, call_next)
        response.headers["Content-Security-Policy"] = CSP
        response.headers["X-Content-Type-Options"] = "nosniff"
        response.headers["Referrer-Policy"] = "same-origin"  # "no-referrer" makes Origin null
        response.headers["X-Frame-Options"] = "DENY"
        response.headers["Cache-Control"] = "no-store"
        return response

    async def _check(self, request: Request, call_next: RequestResponseEndpoint) -> Response:
        host = request.headers.get("host", "")
        if host not in self.hosts:
            return PlainTextResponse(f"refused: unexpected Host {host!r}", status_code=403)
        origin = request.headers.get("origin")
        unsafe = request.method not in ("GET", "HEAD")
        if (origin is not None or unsafe) and origin != f"http://{host}":
            return PlainTextResponse(
                "refused: a change must come from this page itself (Origin)", status_code=403
            )
        if unsafe and request.headers.get("sec-fetch-site", "same-origin") != "same-origin":
            return PlainTextResponse("refused: cross-site request", status_code=403)
        cookie = request.cookies.get(self.cookie, "")
        if cookie and secrets.compare_digest(cookie, self.token):
            return await call_next(request)
        given = request.query_params.get("token", "")
        if given and not unsafe and secrets.compare_digest(given, self.token):
            rest = [(k, v) for k, v in request.query_params.multi_items() if k != "token"]
            target = request.url.path + (f"?{urlencode(rest)}" if rest else "")
            response = RedirectResponse(target, status_code=303)
            response.set_cookie(self.cookie, self.token, httponly=True, samesite="strict", path="/")
            return response
        return PlainTextResponse(
            "refused: open the address `memdir ui` printed (it carries the page's token)",
            status_code=403,
        )


# --- reading helpers ------------------------------------------------------------------------


def journal_context(store: Path, citation: str | None) -> list[dict[str, Any]]:
    """Return the journal lines a citation names, with a few lines around them.

    Args:
        store: The store folder.
        citation: ``journal/<day>.jsonl:<start>-<end>`` (byte offsets), as the observer writes.

    Returns:
        ``[{"at", "who", "session", "text", "cited"}]`` in file order; empty when the citation
        is absent, malformed or its file is gone (e.g. purged).
    """
    match = _CITATION.match(citation or "")
    if match is None:
        return []
    path = store / "journal" / match["file"]
    start, end = int(match["start"]), int(match["end"])
    try:
        data = path.read_bytes()
    except OSError:
        return []
    rows: list[dict[str, Any]] = []
    offset = 0
    for raw in data.splitlines(keepends=True):
        begin, offset = offset, offset + len(raw)
        try:
            value = json.loads(raw)
        except ValueError:
            continue
        if isinstance(value, dict):
            rows.append({**_turn(value), "cited": begin < end and offset > start})
    cited = [n for n, row in enumerate(rows) if row["cited"]]
    if not cited:
        return []
    return rows[max(cited[0] - CONTEXT_LINES, 0) : cited[-1] + CONTEXT_LINES + 1]


def _turn(value: dict[str, Any]) -> dict[str, Any]:
    return {k: str(value.get(k) or "") for k in ("at", "who", "session", "text")}


def session_journal(store: Path, session_id: str, limit: int = 500) -> list[dict[str, Any]]:
    """Return the journal turns of one session, oldest first (at most ``limit``, the newest)."""
    turns: list[dict[str, Any]] = []
    for path in journal_files(store):
        try:
            lines = path.read_bytes().splitlines()
        except OSError:
            continue
        for raw in lines:
            try:
                value = json.loads(raw)
            except ValueError:
                continue
            if isinstance(value, dict) and value.get("session") == session_id:
                turns.append(_turn(value))
    return turns[-limit:]


def session_events(store: Path, session_id: str) -> list[dict[str, Any]]:
    """Return a session's not yet folded events (with their times), oldest first."""
    key = session_mod.session_key(session_id)
    path = layout(store).in_state(session_mod.SESSIONS_DIR, f"{key}{session_mod.EVENTS_SUFFIX}")
    events = []
    try:
        lines = path.read_bytes().splitlines()
    except OSError:
        return []
    for raw in lines:
        try:
            value = json.loads(raw)
        except ValueError:
            continue
        if isinstance(value, dict):
            events.append(value)
    return events


def _date(value: str | None) -> str:
    return (value or "")[:10]


def filter_docs(
    docs: list[dict[str, Any]], *, status: str, origin: str, scope: str, since: str, until: str
) -> list[dict[str, Any]]:
    """Keep the records matching every filter given (an empty filter matches everything).

    ``since`` and ``until`` are ``YYYY-MM-DD`` days compared with ``updated_at``, inclusive.
    """
    out = []
    for doc in docs:
        day = _date(doc.get("updated_at") or doc.get("created_at"))
        if (
            (not status or doc.get("status") == status)
            and (not origin or doc.get("origin") == origin)
            and (not scope or doc.get("scope") == scope)
            and (not since or day >= since)
            and (not until or day <= until)
        ):
            out.append(doc)
    return out


def _day(value: str, name: str) -> str:
    if not value:
        return ""
    try:
        datetime.strptime(value, "%Y-%m-%d")
    except ValueError:
        raise UsageError(f"{name} must be a day like 2026-12-03, not {value!r}") from None
    return value


def _choice(value: str, allowed: Iterable[str], name: str) -> str:
    if value and value not in allowed:
        raise UsageError(f"unknown {name} {value!r}; one of: {', '.join(allowed)}")
    return value


# --- the application ------------------------------------------------------------------------


def create_app(  # noqa: C901 - registers each route as a small closure; the count is of routes
    store: Path, *, token: str, port: int | None = None
) -> Starlette:
    """Build the page for ``store``.

    Args:
        store: The store folder (a ``.memdir`` folder).
        token: The secret the printed URL carries; it becomes the session cookie's value.
        port: The port it is served on; the Host header must be ``127.0.0.1:<port>`` or
            ``localhost:<port>``. ``None`` (tests) accepts ``127.0.0.1`` and ``localhost``
            without a port.

    Returns:
        The ASGI application.
    """
    hosts = [f"{h}:{port}" for h in ("127.0.0.1", "localhost")] if port else []
    hosts = hosts or ["127.0.0.1", "localhost"]
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(HERE / "templates"),
        autoescape=True,
    )
    env.filters["tojson_pretty"] = lambda v: json.dumps(v, indent=2, ensure_ascii=False)
    templates = Jinja2Templates(env=env)

    def page(request: Request, name: str, status: int = 200, **context: Any) -> Response:
        context.setdefault("note", request.query_params.get("note", ""))
        return templates.TemplateResponse(request, name, context, status_code=status)

    def guarded(handler: Handler) -> Handler:
        async def run(request: Request) -> Response:
            try:
                return await handler(request)
            except MemdirError as err:
                status = {2: 400, 3: 403, 4: 404}.get(err.exit_code, 409)
                return page(request, "error.html", status, error=str(err), code=err.code)

        return run

    def back(path: str, note: str) -> Response:
        return RedirectResponse(f"{path}?{urlencode({'note': note})}", status_code=303)

    async def beliefs(request: Request) -> Response:
        q = request.query_params
        query = q.get("q", "").strip()
        kind = _choice(q.get("kind", ""), KINDS, "kind")
        status = _choice(q.get("status", ""), STATUSES, "status")
        origin = _choice(q.get("origin", ""), ORIGINS, "origin")
        scope = _choice(q.get("scope", ""), SCOPES, "scope")
        since, until = _day(q.get("since", ""), "from"), _day(q.get("until", ""), "to")
        kinds = (kind,) if kind else ()
        if query:
            found = service.recall(
                store, query, limit=50, kinds=kinds, include_candidates=True, explain=True
            )
            docs = [hit.to_json(explain=True) for hit in found.hits]
        else:
            docs = [r.to_json() for r in service.list_records(store, kinds=kinds, limit=500)]
        docs = filter_docs(
            docs, status=status, origin=origin, scope=scope, since=since, until=until
        )
        form = {"q": query, "kind": kind, "status": status, "origin": origin, "scope": scope}
        form |= {"since": since, "until": until}
        return page(
            request,
            "beliefs.html",
            docs=docs,
            form=form,
            kinds=KINDS,
            statuses=STATUSES,
            origins=ORIGINS,
            scopes=SCOPES,
            searched=bool(query),
        )

    async def belief(request: Request) -> Response:
        record_id = service.check_record_id(request.path_params["id"])
        record = service.get(store, record_id)
        diff = service.diff(store, record_id).to_json()
        graph = service.graph(store, record_id, 1).to_json()
        events = [c.to_json() for c in service.log(store, record_id, 50)]
        source = record.source or {}
        return page(
            request,
            "belief.html",
            r=record.to_json(),
            extra=list(record.extra),
            source=source,
            evidence=journal_context(store, source.get("journal")),
            diff=diff,
            graph=graph,
            events=events,
        )

    async def correct(request: Request) -> Response:
        record_id = request.path_params["id"]
        form = await request.form()
        text, reason = _field(form, "text"), _field(form, "reason") or None
        if not text:
            raise UsageError("the corrected text is empty")
        done = service.correct(store, record_id, text, reason=reason, caller=UI_CALLER)
        return back(f"/belief/{done.record.id}", done.note or f"corrected {record_id}")

    def status_action(name: str) -> Handler:
        async def act(request: Request) -> Response:
            record_id = request.path_params["id"]
            form = await request.form()
            reason = _field(form, "reason")
            if not reason:
                raise UsageError(f"{name} needs a reason")
            action = service.reject if name == "reject" else service.forget
            done = action(store, record_id, reason, caller=UI_CALLER)
            return back(f"/belief/{record_id}", done.note or f"{name}: {record_id}")

        return act

    async def purge(request: Request) -> Response:
        record_id = request.path_params["id"]
        form = await request.form()
        yes = _field(form, "yes") == "yes"
        report = service.purge(store, record_id, yes=yes, caller=UI_CALLER)
        return page(request, "purged.html", report=report.to_json())

    async def review(request: Request) -> Response:
        candidates = memory.review_list(store)
        for doc in candidates:
            source = doc.get("source") or {}
            doc["evidence"] = journal_context(store, source.get("journal"))
        proposals = memory.proposals_pending(store)
        return page(request, "review.html", candidates=candidates, proposals=proposals)

    async def decide(request: Request) -> Response:
        form = await request.form()
        action = _field(form, "action")
        ids = [str(v) for v in form.getlist("id") if str(v).strip()]
        if not ids:
            raise UsageError("choose at least one candidate or proposal")
        reason = _field(form, "reason")
        done = []
        for item in ids:
            done.append(_decide_one(store, action, item, reason, _field(form, "text")))
        return back("/review", "; ".join(done))

    async def sessions(request: Request) -> Response:
        states = session_mod.all_states(store)
        return page(request, "sessions.html", states=states)

    async def one_session(request: Request) -> Response:
        session_id = request.path_params["id"]
        if session_mod.session_key(session_id) not in session_mod.session_ids(store):
            from memdir.kernel.base.errors import NotFoundError

            raise NotFoundError(f"no session {session_id!r} has saved state in this store")
        state = session_mod.load(store, session_id)
        real_id = str(state.get("id") or session_id)
        return page(
            request,
            "session.html",
            s=state,
            events=session_events(store, real_id),
            turns=session_journal(store, real_id),
        )

    async def health(request: Request) -> Response:
        report = service.health(store).to_json()
        hygiene = memory.dream(store)
        return page(request, "health.html", health=report, hygiene=hygiene)

    routes = [
        Route("/", guarded(beliefs)),
        Route("/belief/{id}", guarded(belief)),
        Route("/belief/{id}/correct", guarded(correct), methods=["POST"]),
        Route("/belief/{id}/reject", guarded(status_action("reject")), methods=["POST"]),
        Route("/belief/{id}/forget", guarded(status_action("forget")), methods=["POST"]),
        Route("/belief/{id}/purge", guarded(purge), methods=["POST"]),
        Route("/review", guarded(review)),
        Route("/review", guarded(decide), methods=["POST"]),
        Route("/sessions", guarded(sessions)),
        Route("/session/{id:path}", guarded(one_session)),
        Route("/health", guarded(health)),
        Mount("/static", StaticFiles(directory=HERE / "static"), name="static"),
    ]
    middleware = [Middleware(Guard, token=token, hosts=hosts, port=port)]
    return Starlette(routes=routes, middleware=middleware)


def _field(form: FormData, name: str) -> str:
    value = form.get(name)
    return value.strip() if isinstance(value, str) else ""


def _decide_one(store: Path, action: str, item: str, reason: str, text: str) -> str:
    """Apply one review decision as the owner on the ``ui`` channel; return what happened.

    Raises:
        UsageError: unknown action, a reject without a reason, a reword without text, or
            a reword of a proposal.
    """
    is_proposal = authority.is_proposal_id(item)
    if action == "accept":
        if is_proposal:
            memory.proposal_accept(store, item, caller=UI_CALLER)
        else:
            memory.review_accept(store, item, caller=UI_CALLER)
        return f"accepted {item}"
    if action == "reject":
        if not reason:
            raise UsageError("rejecting needs a reason")
        if is_proposal:
            memory.proposal_decline(store, item, reason, caller=UI_CALLER)
            return f"declined {item}"
        memory.review_reject(store, item, reason, caller=UI_CALLER)
        return f"rejected {item}"
    if action == "reword":
        if is_proposal:
            raise UsageError("a proposal is accepted or declined, not reworded")
        if not text:
            raise UsageError("the new wording is empty")
        done = memory.review_edit(store, item, text, caller=UI_CALLER)
        return f"reworded {item} as {done.record.id}"
    raise UsageError(f"unknown review action {action!r}; one of: accept, reject, reword")
