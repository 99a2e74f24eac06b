"""``memdir ui``: serve the local review page (the web stack is imported only when it runs)."""

from __future__ import annotations

import contextlib
from pathlib import Path

import click

from memdir.cli.output import emit_json, json_option, resolve, store_option


@click.command()
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=0,
    show_default=True,
    help="Port on 127.0.0.1 (0: a free one).",
)
@click.option("--no-open", "no_open", is_flag=True, help="Print the address; open no browser.")
@store_option
@json_option
def ui(port: int, no_open: bool, store: Path | None, as_json: bool) -> None:
    """Serve a review page for the store on 127.0.0.1 until Ctrl-C.

    Search and open beliefs, review candidates and the agent's proposals,
    correct, reject, forget or purge, and see sessions and the store's health.
    The printed address carries a secret token: only a browser given it can
    use the page. Every change is made as you, the owner, on the `ui` channel,
    through the same code as the matching command. With --json the address is
    printed as one JSON document, {"url", "port", "store"}.

    \b
    Example:
        memdir ui
        memdir ui --port 8765 --no-open
    """
    target = resolve(store)
    from memdir.kernel.storage import manifest

    manifest.load(target)  # a store from a newer memdir is refused before serving
    from memdir.ui.server import serve

    def announce(url: str, bound: int) -> None:
        if as_json:
            emit_json({"url": url, "port": bound, "store": str(target)})
        else:
            click.echo(f"memdir ui: serving {target} at {url}\npress Ctrl-C to stop")

    with contextlib.suppress(KeyboardInterrupt):
        serve(target, port=port, open_browser=not no_open, announce=announce)
    click.echo("memdir ui: stopped", err=True)


COMMANDS = [ui]
