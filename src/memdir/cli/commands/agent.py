"""Agent-facing commands: serve, observe, review, threads, dream, bug, import."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

import click

from memdir.cli.output import emit, emit_json, json_option, note, one_line, resolve, store_option
from memdir.kernel.base.caller import Caller
from memdir.kernel.base.errors import AuthorityError
from memdir.kernel.lang.text import truncate
from memdir.kernel.storage import authority
from memdir.service import memory
from memdir.service.channel import cli_caller


@click.command()
@store_option
def serve(store: Path | None) -> None:
    """Serve the store to an MCP client over stdio (started by the client, not by hand).

    stdout carries only protocol messages; logs go to stderr. Outside any project it
    serves the user store (the person's cross-project preferences), when there is one.

    \b
    Example:
        claude mcp add memdir -- memdir serve
    """
    from memdir.kernel.base.errors import StoreNotFoundError
    from memdir.kernel.storage.paths import is_store, user_store_dir
    from memdir.mcp.start import serve as serve_mcp  # answers the handshake at once

    try:
        target = resolve(store)
    except StoreNotFoundError:
        if store is not None or not is_store(user_store_dir()):
            raise
        target = user_store_dir()
        click.echo(f"memdir: no project store here; serving the user store {target}", err=True)
    serve_mcp(target)


@click.command()
@click.option("--once", is_flag=True, help="One pass, then exit (default: keep watching).")
@click.option("--from-start", is_flag=True, help="Read every journal file from its beginning.")
@click.option(
    "--offline", is_flag=True, help="Use only the offline extractor, even if an LLM is set."
)
@click.option(
    "--interval",
    type=click.IntRange(5),
    default=60,
    show_default=True,
    help="Seconds between passes when watching.",
)
@store_option
@json_option
def observe(
    once: bool, from_start: bool, offline: bool, interval: int, store: Path | None, as_json: bool
) -> None:
    """Distil the journal into candidate beliefs for review.

    Explicit statements ("remember that…", "always…", "we decided…", "记住…") are
    found offline; set both MEMDIR_LLM_API_BASE and MEMDIR_LLM_MODEL (and
    MEMDIR_LLM_KEY if the endpoint needs one) to also use any OpenAI-compatible
    model. Candidates are never recalled until reviewed (`memdir review`) or
    corroborated by a second session. With --once, a failing model endpoint
    exits 1 naming the endpoint and its answer; the turns it could not distil
    are kept for the next pass.

    \b
    Example:
        memdir observe --once --from-start
    """
    target = resolve(store)

    def render(v: dict[str, Any]) -> str:
        if v["busy"]:
            return "another observer is running; nothing done"
        lines = [
            f"read {v['turns']} turn(s): {len(v['candidates'])} candidate(s), "
            f"{len(v['promoted'])} promoted, {len(v['dropped'])} dropped"
        ]
        if v["waiting"]:
            lines.append(
                f"  {v['waiting']} turn(s) wait for more ([observer] min_lines in memdir.toml)"
            )
        if v["kept"]:
            lines.append(f"  {v['kept']} turn(s) kept for the next pass (the LLM failed)")
        lines += [f"  dropped ({d['why']}): {truncate(d['text'], 80)}" for d in v["dropped"]]
        lines += [f"  error: {e}" for e in v["errors"]] if not once else []
        return "\n".join(lines)

    if not once:
        note(
            f"memdir observe: reading new journal turns every {interval} s "
            "(Ctrl-C stops; --once for one pass)",
            as_json=as_json,
        )
    setup = None if offline else memory.llm_setup_note()
    if setup:
        note(f"memdir: {setup}", as_json=as_json)
    first = True
    while True:
        result = memory.observe_once(target, from_start=from_start and first, offline=offline)
        if once and result.errors:
            _llm_failed(result, as_json=as_json, render=render)
        emit(result.to_json(), as_json=as_json, render=render)
        first = False
        if once:
            return
        time.sleep(interval)


def _llm_failed(result: Any, *, as_json: bool, render: Any) -> None:
    """End ``observe --once`` with exit 1 when the model failed, after showing what was done.

    Raises:
        DistillError: the endpoint timed out or answered an HTTP error (its turns are kept).
        MalformedReplyError: it answered, but not with the JSON asked for.
    """
    from memdir.observe.llm import DistillError, MalformedReplyError

    if not as_json:
        emit(result.to_json(), as_json=False, render=render)
    what = "; ".join(result.errors)
    if result.endpoint_failed:
        raise DistillError(
            f"{what}; nothing is lost: {result.kept} turn(s) kept for the next pass "
            f"({len(result.candidates)} candidate(s) from the offline extractor were stored)"
        )
    raise MalformedReplyError(what)


@click.command()
@click.option(
    "--accept", "accept", multiple=True, help="Accept this candidate or proposal (repeatable)."
)
@click.option("--reject", "reject", multiple=True, help="Reject this candidate (repeatable).")
@click.option(
    "--decline",
    "decline",
    multiple=True,
    help="Decline this proposal: its record stays as it is (repeatable).",
)
@click.option(
    "--dismiss",
    "dismiss",
    multiple=True,
    help="Dismiss this proposal (one made obsolete by a later change; repeatable).",
)
@click.option(
    "--edit",
    "edit",
    nargs=2,
    multiple=True,
    metavar="ID TEXT",
    help="Accept this candidate with new wording (repeatable).",
)
@click.option(
    "--reason",
    default=None,
    help='Reason recorded for --reject (default "rejected in review") and --decline.',
)
@store_option
@json_option
def review(
    accept: tuple[str, ...],
    reject: tuple[str, ...],
    decline: tuple[str, ...],
    dismiss: tuple[str, ...],
    edit: tuple[tuple[str, str], ...],
    reason: str | None,
    store: Path | None,
    as_json: bool,
) -> None:
    """List candidate beliefs and the agent's proposals; accept, reject, decline or edit them.

    A proposal (prop-…) is a change a coding agent asked for on one of your
    records (correct, reject or forget it); accepting applies it as yours,
    declining leaves the record as it is. A proposal whose record changed
    since (superseded, rejected, forgotten, reworded) is listed as obsolete
    with the reason: it cannot be accepted (exit 1); --dismiss it. Only you
    review: from an agent's
    shell every decision is refused (exit 3). Without flags, in a terminal,
    asks about each candidate and proposal in turn; with --json or no
    terminal, lists them (--json: "results" the candidates, "proposals" the
    proposals).

    \b
    Example:
        memdir review
        memdir review --accept p-01m8… --reject f-01m8… --reason "not true"
        memdir review --accept prop-01m8… --decline prop-01m9… --reason "still true"
    """
    target = resolve(store)
    caller = cli_caller()
    if not caller.is_owner and (accept or reject or decline or dismiss or edit):
        raise AuthorityError(
            "refused: only the person reviews candidates and proposals, not an agent's shell "
            f"({caller.describe()})"
        )
    results = []
    for record_id in accept:
        if authority.looks_like_proposal(record_id):
            results.append(_decided(memory.proposal_accept(target, record_id, caller=caller)))
        else:
            results.append(memory.review_accept(target, record_id, caller=caller).record.to_json())
    for record_id in reject:
        if authority.looks_like_proposal(record_id):
            decided = memory.proposal_decline(target, record_id, reason, caller=caller)
            results.append(_decided(decided))
        else:
            done = memory.review_reject(
                target, record_id, reason or "rejected in review", caller=caller
            )
            results.append(done.record.to_json())
    for proposal_id in (*decline, *dismiss):
        results.append(
            _decided(memory.proposal_decline(target, proposal_id, reason, caller=caller))
        )
    for record_id, text in edit:
        results.append(memory.review_edit(target, record_id, text, caller=caller).record.to_json())
    if results:
        emit(
            {"results": results},
            as_json=as_json,
            render=lambda v: "\n".join(
                f"{r['id']}  {r['outcome']}"
                if r.get("outcome")
                else f"{r['id']}  {r['status']}  {r.get('text') or ''}"
                for r in v["results"]
            ),
        )
        return
    pending = memory.review_list(target)
    proposals = memory.proposals_pending(target)
    merged = memory.sync_resolutions(target)
    if as_json or not sys.stdin.isatty() or not caller.is_owner:
        emit(
            {"results": pending, "proposals": proposals, "sync_resolutions": merged},
            as_json=as_json,
            render=lambda v: (
                _listing(v["results"], v["proposals"]) + _merged_listing(v["sync_resolutions"])
            ),
        )
        return
    if merged:
        click.echo(_merged_listing(merged).lstrip("\n"))
    _interactive(target, pending, proposals, caller)


def _merged_listing(merged: list[dict[str, Any]]) -> str:
    """The automatic resolutions of ``memdir sync`` (concurrent edits on two machines)."""
    if not merged:
        return ""
    lines = ["", "resolved automatically by `memdir sync` (nothing to decide; newest first):"]
    for d in merged:
        then = f" -> {d['superseded_by']}" if d.get("superseded_by") else ""
        lines.append(f"  {d['id']}  {d['status']}{then}  {truncate(d['text'], 60)}")
        lines.append(f"    {d.get('reason') or ''}")
    return "\n".join(lines)


def _decided(decided: memory.Decided) -> dict[str, Any]:
    """A decided proposal as one result row: the proposal's JSON plus the record it changed."""
    return {**decided.proposal.to_json(), "applied": decided.to_json()["record"]}


def _proposal_line(p: dict[str, Any]) -> str:
    by = p["by"]
    who = f"{by['origin']} via {by['channel']}" + (f" ({by['host']})" if by.get("host") else "")
    current = p.get("current") or {}
    what = f'{p["op"]} {p["record"]} "{truncate(current.get("text") or "(gone)", 60)}"'
    if p["op"] == "correct":
        what += f' to "{truncate(p.get("text") or "", 60)}"'
        if p.get("valid_until"):  # "true until then, then this", as the owner's correct says
            what += f" from {p['valid_until']} (true until then)"
    why = f"  reason: {p['reason']}" if p.get("reason") else ""
    stale = p.get("obsolete")
    if stale:
        then = f"; see {stale['successor']}" if stale.get("successor") else ""
        why += f"\n    OBSOLETE: {stale['reason']}{then}; cannot be accepted: --dismiss {p['id']}"
    return f"{p['id']}  {who} proposes to {what}{why}"


def citation(doc: dict[str, Any]) -> str:
    """Where a candidate came from, for the review listing; ``""`` when nothing says.

    The journal bytes it was distilled from (``[journal/2026-12-04.jsonl:0-104]``), else the
    file an importer read it from (``[from claude-md CLAUDE.md:12]``).
    """
    source = doc.get("source") or {}
    if source.get("journal"):
        return f"  [{source['journal']}]"
    if source.get("channel") == "import" and source.get("file"):
        place = next(
            (f":{source[k]}" for k in ("line", "row", "key") if source.get(k) is not None), ""
        )
        return f"  [from {source.get('format') or 'import'} {source['file']}{place}]"
    return ""


def _listing(candidates: list[dict[str, Any]], proposals: list[dict[str, Any]]) -> str:
    lines = [f"{d['id']}  {d['kind']:<10} {d['text']}{citation(d)}" for d in candidates] or [
        "no candidates await review"
    ]
    if proposals:
        lines += ["", "proposals (accept applies the change as yours; decline leaves it):"]
        lines += [_proposal_line(p) for p in proposals]
    return "\n".join(lines)


def _interactive(
    target: Path, pending: list[dict[str, Any]], proposals: list[dict[str, Any]], caller: Caller
) -> None:
    if not pending and not proposals:
        click.echo("no candidates or proposals await review")
        return
    for doc in pending:
        click.echo(f"\n{doc['id']} ({doc['kind']}): {one_line(doc['text'])}")
        choice = click.prompt(
            "[a]ccept, [r]eject, [e]dit, [s]kip, [q]uit",
            type=click.Choice(["a", "r", "e", "s", "q"]),
            default="s",
        )
        if choice == "q":
            return
        if choice == "a":
            memory.review_accept(target, doc["id"], caller=caller)
        elif choice == "r":
            memory.review_reject(target, doc["id"], click.prompt("reason"), caller=caller)
        elif choice == "e":
            memory.review_edit(
                target, doc["id"], click.prompt("text", default=doc["text"]), caller=caller
            )
    for proposal in proposals:
        click.echo("\n" + one_line(_proposal_line(proposal)))
        if proposal.get("obsolete"):
            if click.confirm("obsolete: dismiss it?", default=True):
                memory.proposal_decline(target, proposal["id"], None, caller=caller)
            continue
        choice = click.prompt(
            "[a]ccept, [d]ecline, [s]kip, [q]uit",
            type=click.Choice(["a", "d", "s", "q"]),
            default="s",
        )
        if choice == "q":
            return
        if choice == "a":
            memory.proposal_accept(target, proposal["id"], caller=caller)
        elif choice == "d":
            memory.proposal_decline(target, proposal["id"], click.prompt("reason"), caller=caller)


@click.command()
@click.option(
    "--within",
    "within",
    type=click.FloatRange(min=0, min_open=True),
    default=None,
    help="Only threads at most this many minutes old.",
)
@store_option
@json_option
def threads(within: float | None, store: Path | None, as_json: bool) -> None:
    """Show, per session, the newest user turn no agent turn answered.

    \b
    Example:
        memdir threads --within 60
    """
    found = memory.pending_threads(resolve(store), within)
    emit(
        {"results": found},
        as_json=as_json,
        render=lambda v: (
            "\n".join(
                f"{t['session'] or '-'}  {t['at'][:19]}  {truncate(t['text'], 90)}"
                for t in v["results"]
            )
            or "no pending threads"
        ),
    )


@click.command()
@store_option
@json_option
def dream(store: Path | None, as_json: bool) -> None:
    """A read-only hygiene report: duplicates, conflicts, stale and sunk beliefs.

    It changes nothing; each finding names the command that would act on it.

    \b
    Example:
        memdir dream
    """
    found = memory.dream(resolve(store))

    def render(v: dict[str, Any]) -> str:
        if not v["findings"]:
            return f"{v['active']} active records; nothing to tidy\n" + render_waste(
                v.get("waste") or {}
            )
        lines = [
            f"{v['active']} active records; "
            + ", ".join(f"{n} {c}" for c, n in v["counts"].items())
        ]
        for f in v["findings"]:
            lines += [f"  {f['code']}: {f['message']}", f"      {f['fix']}"]
        return "\n".join(lines) + "\n" + render_waste(v.get("waste") or {})

    emit(found, as_json=as_json, render=render)


def render_waste(v: dict[str, Any]) -> str:
    """Return the waste report (``memdir stats --waste``, dream's last section) as text."""
    if not v.get("findings"):
        return f"waste (last {v.get('days', 30)} days): nothing found"
    lines = [
        f"waste (last {v['days']} days, {v['sessions']} sessions): ~{v['tokens']} tokens; "
        + ", ".join(f"{n} {c}" for c, n in v["counts"].items())
    ]
    for f in v["findings"]:
        lines += [f"  {f['code']}: {f['message']}", f"      fix: {f['fix']}"]
    return "\n".join(lines)


@click.group()
def bug() -> None:
    """The bug log: errors and their fixes, with occurrence counts."""


@bug.command(name="log")
@click.option("--error", "error", required=True, help="The error message.")
@click.option("--fix", "fix", required=True, help="What fixed it.")
@click.option("--file", "file", default=None, help="The file it was in.")
@store_option
@json_option
def bug_log(error: str, fix: str, file: str | None, store: Path | None, as_json: bool) -> None:
    """Record a bug and its fix; a repeat bumps the known bug's count.

    \b
    Example:
        memdir bug log --error "KeyError: 'user_id'" --fix "check the session first"
    """
    done = memory.bug_log(resolve(store), error, fix, file, caller=cli_caller())
    if not done.created:
        note(f"memdir: {done.note}", as_json=as_json)
    emit(done.record.to_json(), as_json=as_json, render=lambda r: r["id"])


@bug.command(name="search")
@click.argument("query")
@click.option(
    "-n",
    "--limit",
    type=click.IntRange(1, 100),
    default=10,
    show_default=True,
    help="Most bugs to return.",
)
@store_option
@json_option
def bug_search(query: str, limit: int, store: Path | None, as_json: bool) -> None:
    """Search the bug log by error message or words.

    \b
    Example:
        memdir bug search "KeyError user_id"
    """
    found = memory.bug_search(resolve(store), query, limit)
    emit({"results": found}, as_json=as_json, render=_render_bugs)


@bug.command(name="list")
@store_option
@json_option
def bug_list(store: Path | None, as_json: bool) -> None:
    """List the bug log, newest first.

    \b
    Example:
        memdir bug list
    """
    emit({"results": memory.bug_list(resolve(store))}, as_json=as_json, render=_render_bugs)


@bug.command(name="fixed")
@click.argument("record_id", metavar="ID")
@store_option
@json_option
def bug_fixed(record_id: str, store: Path | None, as_json: bool) -> None:
    """Mark a bug fixed.

    \b
    Example:
        memdir bug fixed b-01m8…
    """
    done = memory.bug_fixed(resolve(store), record_id, caller=cli_caller())
    emit(done.record.to_json(), as_json=as_json, render=lambda r: f"{r['id']} fixed")


def _render_bugs(v: dict[str, Any]) -> str:
    return (
        "\n".join(
            f"{b['id']}  x{b.get('occurrences', 1):<3} "
            f"{'fixed' if 'fixed' in b.get('tags', []) else 'open':<6}"
            f" {truncate(b['text'], 90)}"
            for b in v["results"]
        )
        or "no bugs"
    )


SOURCE_FORMATS = (
    "openwolf",
    "amp",
    "wolfmem",
    "claude-memory",
    "claude-md",
    "basic-memory",
    "claude-mem",
)
"""Other tools' memories (``memdir.importers.FORMATS``); listed here so --help stays cheap."""


@click.command(name="import")
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@click.option(
    "--from",
    "source",
    required=True,
    type=click.Choice(["claude-transcript", "codex-rollout", "jsonl", "bundle", *SOURCE_FORMATS]),
    help="What the files are: host transcripts, records exported as JSON Lines, a "
    "`memdir bundle` file (into a new or empty store), or another tool's memory "
    "(see docs/migrate.md).",
)
@click.option(
    "--dry-run",
    is_flag=True,
    help="Another tool's memory: print what would be created, refused and skipped; write nothing.",
)
@store_option
@json_option
def import_(
    paths: tuple[Path, ...], source: str, dry_run: bool, store: Path | None, as_json: bool
) -> None:
    """Bring transcripts into the journal, or records (exported, or another tool's) into the store.

    Transcripts are streamed and imported once (idempotent); JSON Lines records
    (from `memdir export`) are written in one commit, origin import. Another tool's
    memory (OpenWolf .wolf/, an AMP repository, a wolfmem home, Claude Code's
    auto-memory folder or CLAUDE.md, a basic-memory project, a claude-mem database)
    is streamed into one commit, origin import; a second run adds nothing, and
    `memdir rollback COMMIT` undoes it.

    \b
    Example:
        memdir import --from claude-transcript ~/.claude/projects/my-app/*.jsonl
        memdir import --from jsonl backup.jsonl
        memdir import --from openwolf .wolf --dry-run
        memdir import --from bundle memory.bundle
    """
    if source == "bundle" and not dry_run:
        _import_bundle(paths, store, as_json)
        return
    if source in SOURCE_FORMATS:
        if len(paths) != 1:
            raise click.UsageError(f"--from {source} takes one path")
        done = memory.import_from(resolve(store), source, paths[0], dry_run=dry_run)
        emit(done.to_json(), as_json=as_json, render=_render_imported)
        return
    if dry_run:
        raise click.UsageError("--dry-run applies to another tool's memory, not --from " + source)
    for path in paths:
        if path.is_dir():
            raise click.UsageError(f"{path} is a folder; --from {source} reads files")
    target = resolve(store)
    if source == "jsonl":
        results = [memory.import_records(target, path).to_json() for path in paths]
        total = {
            "imported": sum(r["imported"] for r in results),
            "existing": sum(r["existing"] for r in results),
            "refused": [x for r in results for x in r["refused"]],
        }
        emit(
            total,
            as_json=as_json,
            render=lambda v: (
                f"imported {v['imported']} records; {v['existing']} already there; "
                f"{len(v['refused'])} refused"
            ),
        )
        return
    done = memory.import_transcripts(target, list(paths), source)
    emit(
        done.to_json(),
        as_json=as_json,
        render=lambda v: (
            f"imported {v['turns']} turns from {v['files']} file(s) "
            f"({len(v['sessions'])} sessions); "
            f"{v['duplicates']} already there; {v['bad_lines']} unreadable line(s)"
            + (f"; {v['up_to_date']} file(s) had nothing new" if v["up_to_date"] else "")
        ),
    )


def _import_bundle(paths: tuple[Path, ...], store: Path | None, as_json: bool) -> None:
    from memdir.kernel.base.errors import UsageError
    from memdir.service import portable

    if len(paths) != 1:
        raise UsageError("give exactly one bundle file")
    done = portable.bundle_import(paths[0], store, Path.cwd())
    emit(
        done.to_json(),
        as_json=as_json,
        render=lambda v: f"brought {v['commits']} commits of {v['branch']} from {v['file']}",
    )


def _render_imported(v: dict[str, Any]) -> str:
    verb = "would import" if v["dry_run"] else "imported"
    lines = [f"{verb} {v['imported']} records from {v['format']}"]
    for kind, by_status in sorted(v["created"].items()):
        lines.append(
            f"  {kind}: " + ", ".join(f"{n} {status}" for status, n in sorted(by_status.items()))
        )
    for log, n in sorted(v["evidence"].items()):
        lines.append(f"  {log}: {n} entries (evidence)")
    lines.append(f"{v['existing']} already there")
    for label, key in (("refused", "refused_by_reason"), ("skipped", "skipped_by_reason")):
        for why, n in sorted(v[key].items()):
            lines.append(f"{label} {n}: {why}")
            lines.extend(  # where each one is in the source (the first MAX_LISTED of all)
                f"  {d['place']}" for d in v["details"] if d["outcome"] == label and d["why"] == why
            )
    if v["commit"]:
        lines.append(f"commit {v['commit'][:12]} (undo: memdir rollback {v['commit'][:12]})")
    return "\n".join(lines)


@click.command()
@click.argument("directory", required=False, type=click.Path(path_type=Path))
@click.option(
    "--to",
    "target_format",
    type=click.Choice(["jsonl", "amp"]),
    default="jsonl",
    show_default=True,
    help="The export format.",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write here instead of standard output.",
)
@click.option(
    "--status",
    "statuses",
    multiple=True,
    type=click.Choice(["candidate", "active", "superseded", "rejected", "forgotten"]),
    help="Only records of this status (repeatable).",
)
@store_option
@json_option
def export(
    directory: Path | None,
    target_format: str,
    output: Path | None,
    statuses: tuple[str, ...],
    store: Path | None,
    as_json: bool,
) -> None:
    """Export records as JSON Lines (one record per line), or as an AMP repository.

    With --json: `{"results": [records]}` on standard output, or with -o FILE
    the JSON Lines go to FILE and `{"exported": N, "path": FILE}` is printed.

    `--to amp DIR` writes a Talewell/AMP repository (amp.json and memory/…),
    active records only unless --status says otherwise; secrets are masked.

    \b
    Example:
        memdir export -o backup.jsonl
        memdir export --to amp ./talewell-repo
    """
    if target_format == "amp":
        from memdir.kernel.base.errors import UsageError
        from memdir.service import portable

        folder = directory or output
        if folder is None:
            raise UsageError("give the folder to write the AMP repository into: --to amp DIR")
        done = portable.export_amp(resolve(store), folder, list(statuses))
        emit(
            done.to_json(),
            as_json=as_json,
            render=lambda v: f"exported {v['records']} records to {v['directory']} (AMP)",
        )
        return
    if directory is not None and output is None:
        output = directory
    if output is not None and output.is_dir():
        from memdir.kernel.base.errors import UsageError

        raise UsageError(
            f"{output} is a folder; JSON Lines go to a file (a folder is for --to amp)"
        )
    lines = memory.export_records(resolve(store), list(statuses))
    if output is None:
        if as_json:  # one JSON document, the `list` shape; JSON Lines stay the export format
            import json

            emit_json({"results": [json.loads(line) for line in lines]})
            return
        click.echo("".join(lines), nl=False)
        return
    from memdir.kernel.base.atomic import write_text_atomic

    write_text_atomic(output, "".join(lines))
    if as_json:
        emit_json({"exported": len(lines), "path": str(output)})
        return
    click.echo(f"exported {len(lines)} records to {output}", err=True)


@click.command()
@click.option("--prompt", "prompt", default=None, help="Show per-prompt recall for this prompt.")
@click.option(
    "--host", "host", default="claude-code", show_default=True, help="Render for this host."
)
@click.option("--session", "session_id", default=None, help="The host session to preview.")
@store_option
@json_option
def digest(
    prompt: str | None, host: str, session_id: str | None, store: Path | None, as_json: bool
) -> None:
    """Show exactly what the agent would be given now, writing nothing.

    Without --prompt: the session digest injected at session start. With --prompt: what the
    prompt hook would inject for that prompt (recall, and what it would store). --json prints
    the host's JSON. The same as `memdir hook SessionStart --preview`.

    \b
    Example:
        memdir digest
        memdir digest --prompt "how do we deploy?"
    """
    from memdir.hooks.dispatch import show_preview

    target = resolve(store)
    options = {"host": host}
    if as_json:
        options["json"] = "1"
    if prompt is not None:
        options["prompt"] = prompt
    if session_id:
        options["session"] = session_id
    previous = os.environ.get("MEMDIR_STORE")
    os.environ["MEMDIR_STORE"] = str(target)
    try:
        code = show_preview(
            "UserPromptSubmit" if prompt is not None else "SessionStart", options, {}
        )
    finally:
        if previous is None:
            os.environ.pop("MEMDIR_STORE", None)
        else:
            os.environ["MEMDIR_STORE"] = previous
    if code:
        raise SystemExit(code)


@click.command()
@click.option("--if-due", "if_due", is_flag=True, help="Only the tasks whose interval has passed.")
@click.option("--background", is_flag=True, help="Start it detached and return at once.")
@store_option
@json_option
def maintain(if_due: bool, background: bool, store: Path | None, as_json: bool) -> None:
    """Run the store's upkeep: observer pass, log commit, map rescan, hygiene report.

    One run at a time (a lock, and a pid file proven to be memdir maintain's); a
    second run reports busy and does nothing. Nothing is deleted: the hygiene
    report goes to state/dream.json. Hooks start it when due ([maintenance]
    from_hooks); cron can run it with --if-due. Intervals: [maintenance] and
    [observer] observe_every_seconds in memdir.toml.

    \b
    Example:
        memdir maintain
        */30 * * * *  cd ~/src/app && memdir maintain --if-due   # crontab
    """
    target = resolve(store)
    if background:
        import subprocess
        import sys

        argv = [sys.executable, "-m", "memdir", "maintain", "--store", str(target)]
        child = subprocess.Popen(
            [*argv, *(["--if-due"] if if_due else [])],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        emit({"started": child.pid}, as_json=as_json, render=lambda v: f"started {v['started']}")
        return
    found = memory.maintain(target, due_only=if_due)

    def render(v: dict[str, Any]) -> str:
        if v["busy"]:
            owner = f" (pid {v['owner']})" if v["owner"] else ""
            return f"memdir maintain is already running{owner}; nothing done"
        lines = [f"{task}: ok" for task in v["ran"]]
        lines += [f"{task}: failed: {why}" for task, why in v["errors"].items()]
        return "\n".join(lines) or "nothing due"

    emit(found, as_json=as_json, render=render)


COMMANDS = [serve, observe, review, threads, dream, bug, import_, export, digest, maintain]
