"""The ``memdir`` click group: command registration and the single error-to-exit mapping."""

from __future__ import annotations

from typing import Any

import click

from memdir import __version__
from memdir.cli.output import JSON_FLAG, fail, user_option
from memdir.kernel.base.errors import MemdirError, StorageError
from memdir.kernel.index import OperationalError, operational_cause


class MemdirGroup(click.Group):
    """The root group; turns ``MemdirError`` into its exit code and message, in one place."""

    json_requested = False
    """Set by the entry point when ``--json`` is on the command line, so even an error click
    raises before any subcommand parses its options (an unknown command) is printed as JSON."""

    def invoke(self, ctx: click.Context) -> Any:
        """Run the subcommand; map memdir errors, OS errors and (with --json) usage errors."""
        try:
            return super().invoke(ctx)
        except MemdirError as err:
            fail(err, as_json=ctx.meta.get(JSON_FLAG, False))
            ctx.exit(err.exit_code)
        except OSError as err:
            wrapped = StorageError(
                f"{err.strerror or err}" + (f": {err.filename}" if err.filename else "")
            )
            fail(wrapped, as_json=ctx.meta.get(JSON_FLAG, False))
            ctx.exit(1)
        except OperationalError as err:
            cause = operational_cause(err)
            fail(StorageError(f"{cause}: {err}"), as_json=ctx.meta.get(JSON_FLAG, False))
            ctx.exit(1)
        except click.ClickException as err:
            if not (ctx.meta.get(JSON_FLAG, False) or self.json_requested):
                raise
            from memdir.cli.output import emit_json

            emit_json({"error": {"code": "usage", "message": err.format_message()}})
            ctx.exit(err.exit_code)


@click.group(cls=MemdirGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="memdir")
def cli() -> None:
    """Persistent, correctable memory for coding agents.

    Beliefs are Markdown records in a git history; recall is SQLite FTS5 BM25.
    Store commands take --store DIR; commands that print results take --json.
    """


def _register() -> None:
    from memdir.cli.commands import (
        agent,
        bench,
        demo,
        history,
        journal,
        portable,
        project,
        records,
        store,
        ui,
    )

    for module in (store, records, history, journal, project, agent, portable, bench, demo, ui):
        for command in module.COMMANDS:
            if command.name in USER_STORE_COMMANDS:
                command.params.append(user_option())
            cli.add_command(command)


USER_STORE_COMMANDS = frozenset(
    {
        *("remember", "recall", "get", "list", "correct", "reject", "forget", "purge"),
        *("graph", "index", "pin", "unpin", "review", "log", "diff", "rollback", "audit"),
        *("health", "reindex", "export"),
    }
)
"""Commands that take ``--user`` to act on the user store (not the project's file map, hooks,
journal or sync, which belong to a project)."""


_register()
