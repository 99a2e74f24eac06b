"""Journal commands: journal (append a turn), search (find turns)."""

from __future__ import annotations

from pathlib import Path

import click

from memdir import service
from memdir.cli.output import emit, json_option, resolve, store_option
from memdir.kernel.lang.text import truncate


@click.command()
@click.argument("who")
@click.argument("text")
@click.option("--session", default=None, help="The session the turn belongs to.")
@click.option("--at", default=None, help="When it was said (ISO-8601; no offset = local time).")
@store_option
@json_option
def journal(
    who: str, text: str, session: str | None, at: str | None, store: Path | None, as_json: bool
) -> None:
    """Append one conversation turn to the journal (secrets are redacted first).

    Prints where it went as `FILE@byte OFFSET`, the byte offset the observer's
    citations use (`memdir search` prints `FILE:LINE`, a line number).

    \b
    Example:
        memdir journal user "we decided to use SQLite for the index" --session s1
    """
    ref = service.journal_append(resolve(store), who, text, session=session, at=at)
    emit(ref.to_json(), as_json=as_json, render=lambda v: f"{v['file']}@byte {v['offset']}")


@click.command()
@click.argument("query")
@click.option(
    "-n",
    "--limit",
    type=click.IntRange(1, 1000),
    default=10,
    show_default=True,
    help="Most turns to return.",
)
@click.option("--session", default=None, help="Only turns of this session.")
@store_option
@json_option
def search(query: str, limit: int, session: str | None, store: Path | None, as_json: bool) -> None:
    """Search the conversation journal; print turn references, best first.

    Each turn is `FILE:LINE` (a line number in the journal file), its time,
    session, speaker and text.

    \b
    Example:
        memdir search "which database" -n 5
    """
    result = service.search(resolve(store), query, limit=limit, session=session)
    emit(
        result.to_json(),
        as_json=as_json,
        render=lambda v: (
            "\n".join(
                f"{h['file']}:{h['line']}  {h['at'][:19]}  "
                + (f"[{h['session']}] " if h.get("session") else "")
                + f"{h['who']}: "
                + truncate(h["text"].replace("\n", " "), 100)
                for h in v["results"]
            )
            or f"no journal turns match {v['query']!r}"
        ),
    )


COMMANDS = [journal, search]
