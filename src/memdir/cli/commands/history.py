"""History commands: log, diff, rollback, audit, tombstone."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from memdir import service
from memdir.cli.output import emit, json_option, one_line, resolve, store_option
from memdir.kernel.base.caller import from_trailers
from memdir.service.channel import cli_caller


@click.command()
@click.argument("record_id", metavar="[ID]", required=False)
@click.option(
    "-n",
    "--limit",
    type=click.IntRange(1),
    default=20,
    show_default=True,
    help="Most commits to show.",
)
@store_option
@json_option
def log(record_id: str | None, limit: int, store: Path | None, as_json: bool) -> None:
    """Show the store's history, or one record's, newest first, and who made each change.

    Each commit names who made it and through which channel ("agent via cli
    (claude-code)"); with --json as "by": {"origin", "channel", "host", "session"}.
    Commits made before memdir recorded this show "-".

    \b
    Example:
        memdir log p-01jc9x2k7q4fz2
    """
    commits = service.log(resolve(store), record_id, limit)
    emit(
        {"results": [{**c.to_json(), "by": from_trailers(c.body)} for c in commits]},
        as_json=as_json,
        render=lambda v: (
            "\n".join(
                f"{c['commit'][:12]}  {c['at'][:19]}  {_by(c['by']):<28} {c['subject']}"
                for c in v["results"]
            )
            or "no history"
        ),
    )


def _by(by: dict[str, Any]) -> str:
    """Return ``origin/channel host`` for a log line (``-`` when the commit names nobody)."""
    if not by.get("origin"):
        return "-"
    return f"{by['origin']}/{by.get('channel', '?')}" + (f" {by['host']}" if by.get("host") else "")


@click.command()
@click.argument("record_id", metavar="ID")
@store_option
@json_option
def diff(record_id: str, store: Path | None, as_json: bool) -> None:
    """Show how a belief changed: its correction chain and the diffs of its files.

    \b
    Example:
        memdir diff p-01jc9x2k7q4fz2
    """
    found = service.diff(resolve(store), record_id)

    def render(value: dict[str, Any]) -> str:
        lines = ["chain (oldest first):"]
        for d in value["chain"]:
            reason = f"  reason: {one_line(d['reason'])}" if d.get("reason") else ""
            text = one_line(d["text"] or "")
            lines.append(f"  {one_line(d['id'])}  {d['status']:<10} {text}{reason}".rstrip())
        for rid, patch in value["patches"].items():
            if patch.strip():
                lines += ["", f"=== {one_line(rid)}", patch.rstrip()]
        return "\n".join(lines)

    emit(found.to_json(), as_json=as_json, render=render, multiline=True)


@click.command()
@click.argument("commit")
@click.option("--yes", is_flag=True, help="Confirm: rollback changes what memory holds.")
@store_option
@json_option
def rollback(commit: str, yes: bool, store: Path | None, as_json: bool) -> None:
    """Undo one commit of the store with a revert commit (history is kept).

    Only the owner may roll back: from a coding agent's shell it is refused (exit 3).
    Append-only logs (journal/, actions/) keep every line: rollback never removes evidence
    (`memdir purge` removes text). Only the lines an import copied in go with its rollback.

    \b
    Example:
        memdir rollback 3f2a9c1 --yes
    """
    done = service.rollback(resolve(store), commit, yes=yes, caller=cli_caller())
    emit(
        done.to_json(),
        as_json=as_json,
        render=_render_rollback,
    )


def _render_rollback(v: dict[str, Any]) -> str:
    """``rolled back <hash> (N files)``, plus the append-only logs left as they are."""
    line = f"rolled back {v['rolled_back'][:12]} ({len(v['paths'])} files)"
    if v["kept_logs"]:
        line += (
            f"; kept {', '.join(v['kept_logs'])} as they are "
            "(append-only evidence: rollback never removes log lines; `memdir purge` removes text)"
        )
    return line


@click.command(name="audit")
@click.argument("record_id", metavar="[ID]", required=False)
@store_option
@json_option
def audit_log(record_id: str | None, store: Path | None, as_json: bool) -> None:
    """Show the store's mutation audit log, or one record's events, oldest first.

    One event per change (remember, correct, reject, forget, purge, rollback, import,
    proposals, refusals, tombstone lifts): time, operation, who and through which channel,
    the reason, and SHA-256 hashes of the record file before and after, never its text.
    The log is kept in audit/YYYY-MM.jsonl and survives purge.

    \b
    Example:
        memdir audit f-01jc9x2k7q4fz2 --json
    """
    from memdir.service import trust

    found = trust.events(resolve(store), record_id)

    def render(value: dict[str, Any]) -> str:
        lines = []
        for e in value["results"]:
            ids = ",".join(str(r.get("id")) for r in e.get("records") or []) or "-"
            who = f"{e.get('origin') or '-'} via {e.get('channel') or '-'}"
            why = f"  ({e['reason']})" if e.get("reason") else ""
            lines.append(f"{e.get('at')}  {e.get('op')}  {ids}  {who}{why}")
        return "\n".join(lines) or "no audit events"

    emit({"results": found}, as_json=as_json, render=render)


@click.group()
def tombstone() -> None:
    """Rejected-value tombstones: a rejected value is never learned again until lifted."""


@tombstone.command(name="lift")
@click.argument("record_id", metavar="[ID]", required=False)
@click.option("--text", default=None, help="The value to lift, instead of a rejected record ID.")
@store_option
@json_option
def tombstone_lift(
    record_id: str | None, text: str | None, store: Path | None, as_json: bool
) -> None:
    """Lift the tombstone of a rejected record (or of a value), so it may be written again.

    Only the owner may lift: from a coding agent's shell it is refused (exit 3).

    \b
    Example:
        memdir tombstone lift f-01jc9x2k7q4fz2
    """
    from memdir.service import trust

    done = trust.lift(resolve(store), record_id=record_id, text=text, caller=cli_caller())
    emit(
        done.to_json(),
        as_json=as_json,
        render=lambda v: "lifted the tombstone" + (f" of {v['record']}" if v["record"] else ""),
    )


COMMANDS = [log, diff, rollback, audit_log, tombstone]
