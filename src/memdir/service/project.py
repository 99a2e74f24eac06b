"""Use cases about the project around a store: anatomy, hosts, sessions, syncing the logs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memdir.hosts import HOSTS, get_host
from memdir.hosts import install as installer
from memdir.kernel.base import appendlog, jsonl
from memdir.kernel.base.caller import Caller
from memdir.kernel.base.errors import MemdirError, NotFoundError
from memdir.kernel.filemap import anatomy
from memdir.kernel.hostio.hosttable import CANONICAL_EVENTS
from memdir.kernel.storage import gitio, manifest, paths, session
from memdir.kernel.storage.lock import store_lock
from memdir.service import init
from memdir.service.channel import cli_caller
from memdir.store import filemap, teamsync


def project_root(store: Path) -> Path:
    """Return the project a store belongs to (the folder holding ``.memdir``)."""
    return store.parent if store.name == paths.STORE_DIRNAME else store


# --- anatomy ---------------------------------------------------------------------------------


def scan(store: Path, *, full: bool = False) -> anatomy.Scan:
    """Bring ``anatomy.json`` up to date; an unreadable one is kept aside first.

    Stale-gated: a file whose size and modification time match the map is kept unread; the
    rest (changed outside the agent by a pull, an editor, a branch switch; new files) are read,
    and files gone are dropped. ``full`` reads every file again.

    Raises:
        LockTimeoutError: another writer held the store.
    """
    manifest.load(store)  # a store from a newer memdir is refused before anything is written
    project = project_root(store)
    spool = paths.layout(store).state_path("anatomy-spool.jsonl")
    merged = jsonl.read_tail(spool, 0).next_offset  # the walk below covers these paths
    previous = None
    if not full:
        try:
            previous = anatomy.load(store)
        except MemdirError:
            previous = None  # unreadable: kept aside below, and every file read
    result = anatomy.scan(project, previous=previous)
    data = {
        "files": {rel: e.to_json() for rel, e in result.entries.items()},
        "skipped": result.skipped,
    }
    with store_lock(store, "scan"):
        kept = anatomy.keep_unreadable(store)
        if kept is not None:
            result.skipped["unreadable anatomy kept as " + kept.name] = 1
        anatomy.save(store, data)
        if merged:  # paths spooled during the walk stay for the next update
            appendlog.drop_head(spool, merged)
    return result


def _anatomy(store: Path) -> dict[str, Any]:
    data = anatomy.load(store)
    if not data["files"]:
        raise NotFoundError("no anatomy yet; run `memdir scan` first")
    return data


def find(store: Path, query: str, limit: int = 20) -> list[dict[str, Any]]:
    """Search the file map by path, symbols and description."""
    found = filemap.find(_anatomy(store), query, limit)
    return [
        {
            "path": rel,
            "score": score,
            "description": e.get("description", ""),
            "symbols": e.get("symbols", []),
            "tokens": e.get("tokens", 0),
        }
        for rel, e, score in found
    ]


def central_map(
    store: Path, *, budget_tokens: int, session_id: str | None = None
) -> list[dict[str, Any]]:
    """Return the most central files (PageRank over imports, seeded by a session's files)."""
    data = _anatomy(store)
    seeds: list[str] = []
    states = [session.load(store, session_id)] if session_id else session.all_states(store)[:1]
    for state in states:
        seeds += list(state.get("written", [])) + list(state.get("reads", {}))
    return [
        {"path": rel, "line": line, "score": round(score, 6)}
        for rel, line, score in filemap.central_map(data, seeds, budget_tokens)
    ]


# --- sessions --------------------------------------------------------------------------------


BUG_STATE_TAGS = ("open", "fixed")
"""The bug log's own state labels on ``bug`` records (:mod:`memdir.store.bugs`)."""


def user_tags(doc: dict[str, Any]) -> list[str]:
    """Return a record's tags without memdir's own labels.

    Left out: ``pinned`` (:data:`memdir.kernel.index.digest.PINNED_TAG`, set by ``memdir
    pin``), path scopes (``path:…``, :data:`memdir.kernel.lang.pathscope.PATH_TAG`) and a bug's
    ``open``/``fixed`` state; the same words on a record of another kind are the person's.
    """
    from memdir.kernel.index.digest import PINNED_TAG
    from memdir.kernel.lang.pathscope import PATH_TAG

    bug = doc.get("kind") == "bug"
    return [
        t
        for t in doc.get("tags") or ()
        if t != PINNED_TAG and not t.startswith(PATH_TAG) and not (bug and t in BUG_STATE_TAGS)
    ]


def stats(store: Path, session_id: str | None = None) -> dict[str, Any]:
    """Return the token ledger per session, per model and in total, priced, plus record counts.

    Each session (and the totals) carries its ``balance``: tokens memdir injected against the
    tokens its read gate saved, net of the reads of a refused file that followed the refusal
    (``saved = denied_tokens - reread_tokens``), each priced at the session's model
    (:mod:`memdir.service.prices`, the manifest's ``[prices]`` over dated defaults);
    ``withheld_tokens`` (the preamble and records memdir did not repeat) is shown beside it,
    not counted as saved. ``tags`` counts active records per tag the person gave
    (:func:`user_tags`: not memdir's own labels; wolfmem's ``stats`` by needle tag), most
    first. Sessions come newest first by when they started; sessions started
    within the same second come by id, last first, so the listing is the same on every run.
    """
    from memdir.service import opened, prices

    states = [session.load(store, session_id)] if session_id else session.all_states(store)
    totals: dict[str, int] = dict.fromkeys(session.LEDGER_KEYS, 0)
    rows = []
    with opened(store) as handle:
        records = handle.index.count_by("status")
        kinds = handle.index.count_by("kind", status="active")
        table, as_of = prices.table(handle.manifest.prices)
        tags: dict[str, int] = {}
        for doc in handle.index.list_docs(statuses=("active",)):
            for tag in user_tags(doc):
                tags[tag] = tags.get(tag, 0) + 1
    by_tag = dict(sorted(tags.items(), key=lambda item: (-item[1], item[0])))
    by_model: dict[str, dict[str, int]] = {}
    for state in states:
        ledger = state.get("ledger", {})
        for key in totals:
            totals[key] += int(ledger.get(key, 0))
        models: dict[str, Any] = dict(state.get("by_model") or {})
        if not models and any(int(ledger.get(k, 0)) for k in totals):
            models = {"unknown": ledger}  # state written before models were recorded
        for model, amounts in models.items():
            into = by_model.setdefault(model, dict.fromkeys(session.LEDGER_KEYS, 0))
            for key in into:
                into[key] += int(amounts.get(key, 0))
        rows.append(
            {
                "session": state.get("id"),
                "started_at": state.get("started_at"),
                "updated_at": state.get("updated_at"),
                "model": state.get("model") or None,
                "prompts": state.get("prompts", 0),
                "tool_calls": state.get("tool_calls", 0),
                "files_written": len(state.get("written", [])),
                "beliefs": state.get("beliefs", 0),
                "ledger": ledger,
                "balance": _balance(models, table),
            }
        )
    rows.sort(key=lambda r: (str(r["started_at"] or ""), str(r["session"] or "")), reverse=True)
    return {
        "records": records,
        "kinds": kinds,
        "tags": by_tag,
        "totals": totals,
        "balance": _balance(by_model, table),
        "models": {m: _balance({m: a}, table) for m, a in sorted(by_model.items())},
        "prices": {"as_of": as_of, "usd_per_million_input_tokens": table},
        "sessions": rows,
    }


def _balance(models: dict[str, Any], table: dict[str, float]) -> dict[str, Any]:
    """Return tokens and USD injected against saved, summed over ``models``' ledgers.

    ``*_usd`` are ``None`` when any model with tokens has no price (the tokens still count).
    """
    from memdir.service import prices

    injected = saved = withheld = 0
    injected_usd: float | None = 0.0
    saved_usd: float | None = 0.0
    for model, amounts in models.items():
        got = int(amounts.get("injected_tokens", 0))
        kept = max(int(amounts.get("denied_tokens", 0)) - int(amounts.get("reread_tokens", 0)), 0)
        injected, saved = injected + got, saved + kept
        withheld += int(amounts.get("withheld_tokens", 0))
        price = prices.price_for(model, table)
        if price is None and (got or kept):
            injected_usd = saved_usd = None
        if injected_usd is not None and saved_usd is not None and price is not None:
            injected_usd += got * price / 1_000_000
            saved_usd += kept * price / 1_000_000
    return {
        "injected_tokens": injected,
        "saved_tokens": saved,
        "net_tokens": saved - injected,
        "withheld_tokens": withheld,
        "injected_usd": None if injected_usd is None else round(injected_usd, 6),
        "saved_usd": None if saved_usd is None else round(saved_usd, 6),
        "net_usd": None
        if injected_usd is None or saved_usd is None
        else round(saved_usd - injected_usd, 6),
    }


# --- sync ------------------------------------------------------------------------------------


def sync(
    store: Path,
    *,
    logs_only: bool = False,
    share: bool = False,
    pull: bool = True,
    push: bool = True,
    caller: Caller | None = None,
) -> teamsync.Synced:
    """Commit the logs, anatomy and hand edits; with ``share``, pull from and push to the remote.

    Args:
        store: The store folder.
        logs_only: Commit only the journal, action and audit logs and anatomy; stays local.
        share: Reach the remote (``memdir remote``; by default the project's ``origin``,
            branch ``memdir``). When none is set and the project has no such remote, the sync
            only commits, and says so.
        pull: Fetch and merge (with ``share``).
        push: Push (with ``share``).
        caller: Who syncs (default: from this process's environment).

    Raises:
        SyncConflictError: both sides changed a file memdir cannot merge (store unchanged).
        GitError: git failed or the remote cannot be reached (store unchanged).
        UsageError: ``--pull`` or ``--push`` asked for and there is nowhere to sync.
        LockTimeoutError: another writer held the store.
    """
    who = caller or cli_caller()
    local = logs_only or not share
    if share and not logs_only and pull and push:
        place = teamsync.where(store)
        local = place.url is None and not place.configured
    done = teamsync.sync(store, who, logs_only=logs_only, pull=pull, push_=push, local_only=local)
    if share and local and not logs_only:
        done.note = (
            "committed here only: no remote is set and the project has no 'origin'; share "
            "this memory with `memdir remote URL` then `memdir sync`"
        )
    gitio.maintain(store)  # outside the lock: packing may take seconds in a large store
    return done


def remote(store: Path, name: str | None = None, branch: str | None = None) -> teamsync.Where:
    """Show, or with ``name``/``branch`` set, where this machine shares ``store``.

    Raises:
        UsageError: the remote or branch is unusable.
        GitError: git failed.
    """
    if name is None and branch is None:
        manifest.load(store)
        return teamsync.where(store)
    return teamsync.set_where(store, name, branch)


# --- hosts -----------------------------------------------------------------------------------


def hosts() -> list[dict[str, Any]]:
    """Return every known host, what it supports, where it installs and what it gates on."""
    rows = []
    for spec in HOSTS.values():
        rows.append(
            {
                "host": spec.name,
                "title": spec.title,
                "installable": spec.installable,
                "events": {event: spec.events.get(event) for event in CANONICAL_EVENTS},
                "personal": {k: v for k, v in spec.personal.items() if k != "exclude"},
                "shared": dict(spec.shared),
                "settings": spec.settings,
                "mcp": spec.mcp,
                "instructions": spec.instructions,
                "gates": list(spec.gate_steps(shared=True)),
                "notes": spec.notes,
                "loses": spec.loses,
            }
        )
    return rows


def doctor(project: Path, timeout: float = 30.0) -> list[dict[str, Any]]:
    """Check every host memdir is installed into for ``project``; see :mod:`memdir.hosts.doctor`.

    Returns:
        One report per installed host (none when memdir is installed into no host there).
    """
    from memdir.hosts import doctor as host_doctor

    return host_doctor.diagnose(project, paths.discover_store(project), timeout=timeout)


def install_dir(directory: Path | None) -> Path:
    """Return the folder an install acts on: ``--dir``, else the worktree root of the cwd.

    Run from a subfolder without ``--dir``, install and uninstall both act on the checkout's
    top folder, so they always pair up.
    """
    if directory is not None:
        return directory.resolve()
    from memdir.hosts.install import checkout_top

    return checkout_top(Path.cwd())


def install(
    project: Path, host: str, *, remove: bool = False, shared: bool = False
) -> installer.Plan:
    """Install memdir into ``host`` for ``project`` (creating the store), or uninstall it.

    Args:
        project: the folder whose host files are written (see :func:`install_dir`).
        host: a ``--host`` name.
        remove: uninstall instead (both scopes).
        shared: write the team's files with a PATH-resolved ``memdir`` (else personal files).

    Raises:
        UsageError: unknown host, or one memdir cannot install into yet.
        ConfigError: a host config file is malformed (left unchanged).
        MemdirError: the installed hook command failed its self-test.
    """
    spec = get_host(host)
    installer.check_installable(spec, remove=remove)  # before anything is created
    store = paths.discover_store(project)
    created = None
    if store is None:
        if remove:
            raise NotFoundError(f"no memdir store for {project}; nothing was installed there")
        store = init(project).store
        created = str(store)
    plan = installer.plan(spec, project, store, remove=remove, shared=shared)
    plan.created_store = created

    installer.apply(plan, store, spec, remove=remove)
    if not remove:
        installer.compile_hook_path()  # no hook ever compiles memdir (issue 16)
        try:
            installer.self_test(spec, project, shared)
        except MemdirError:
            rollback = installer.plan(spec, project, store, remove=True)
            installer.apply(rollback, store, spec, remove=True)
            raise
        plan.warnings += installer.path_warnings(spec, shared)
    return plan
