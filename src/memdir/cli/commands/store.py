"""Store commands: init, reindex."""

from __future__ import annotations

from pathlib import Path

import click

from memdir import service
from memdir.cli.output import emit, json_option, note, resolve, store_option


@click.command()
@click.option("--user", is_flag=True, help="Create the user store ($MEMDIR_HOME) instead.")
@store_option
@json_option
def init(user: bool, store: Path | None, as_json: bool) -> None:
    """Create the memory store for this project (idempotent).

    The store is .memdir/ at the root of the main worktree, its own git
    repository, excluded from the project's git.

    \b
    Example:
        memdir init
    """
    done = service.init(Path.cwd(), store=store, user=user)

    def render(v: dict[str, object]) -> str:
        verb = "created" if v["created"] else "already initialised:"
        extra = (
            f"\nadded /.memdir/ to {v['excluded_in']}" if v["excluded_in"] and v["created"] else ""
        )
        return f"{verb} {v['scope']} store {v['store']}{extra}"

    emit(done.to_json(), as_json=as_json, render=render)


@click.command()
@store_option
@json_option
def reindex(store: Path | None, as_json: bool) -> None:
    """Rebuild the index from records and journal alone (deleting it loses nothing).

    \b
    Example:
        memdir reindex
    """
    report = service.reindex(resolve(store))
    emit(
        report.to_json(),
        as_json=as_json,
        render=lambda v: (
            f"indexed {v['indexed']} records and {v['turns']} journal turns"
            + (
                f"; {v['quarantined']} files quarantined (see `memdir health`)"
                if v["quarantined"]
                else ""
            )
        ),
    )


COMMANDS = [init, reindex]


@click.command()
@click.option(
    "--clear-errors",
    is_flag=True,
    help="First empty state/hook-errors.log (once you have read it), then check.",
)
@store_option
@json_option
def health(clear_errors: bool, store: Path | None, as_json: bool) -> None:
    """Check the store; repair what is safe; exit 1 if anything is wrong.

    Reports quarantined files by name, duplicated keys, dangling links,
    broken correction chains, uncommitted hand edits, hook errors and the lock.
    Hook errors stay reported until --clear-errors empties their log.

    \b
    Example:
        memdir health
        memdir health --clear-errors
    """
    target = resolve(store)
    if clear_errors:
        cleared = service.clear_hook_errors(target)
        note(f"memdir: cleared {cleared} hook error entries", as_json=as_json)
    report = service.health(target)

    def render(v: dict[str, object]) -> str:
        findings = v["findings"]
        assert isinstance(findings, list)
        lines = [f"store {v['store']}: " + ("ok" if v["ok"] else "problems found")]
        for f in findings:
            where = f" [{f['path']}]" if f.get("path") else ""
            fix = f"\n      fix: {f['fix']}" if f.get("fix") else ""
            lines.append(f"  {f['level']:<7} {f['code']}: {f['message']}{where}{fix}")
        return "\n".join(lines)

    emit(report.to_json(), as_json=as_json, render=render)
    if not report.ok:
        raise SystemExit(1)


COMMANDS.append(health)
