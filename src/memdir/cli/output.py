"""The ``--json`` contract, the shared options, and the one place errors are printed.

With ``--json`` stdout carries exactly one JSON document, success or failure; an error is
``{"error": {"code": "<slug>", "message": "…"}}`` (DESIGN §9). Without it, results go to
stdout and ``memdir: <message>`` to stderr.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from memdir.kernel import paths
from memdir.kernel.errors import MemdirError

JSON_FLAG = "memdir_json"
F = TypeVar("F", bound=Callable[..., Any])


def _remember_json(ctx: click.Context, _param: click.Parameter, value: bool) -> bool:
    ctx.find_root().meta[JSON_FLAG] = value or ctx.find_root().meta.get(JSON_FLAG, False)
    return value


def json_option(func: F) -> F:
    """Add ``--json`` (parameter ``as_json``), remembered for error output."""
    return click.option(
        "--json",
        "as_json",
        is_flag=True,
        is_eager=True,
        callback=_remember_json,
        help="Print one JSON document (errors too).",
    )(func)


def store_option(func: F) -> F:
    """Add ``--store DIR`` (parameter ``store``): the store folder itself (the .memdir folder)."""
    return click.option(
        "--store",
        "store",
        type=click.Path(file_okay=False, path_type=Path),
        default=None,
        help="The store folder (a .memdir folder). Default: MEMDIR_STORE, else found from the "
        "working directory.",
    )(func)


def resolve(store: Path | None) -> Path:
    """Return the store a command acts on (``--store``, ``MEMDIR_STORE``, discovery).

    Raises:
        StoreNotFoundError: none found; the message says how to create one.
    """
    return paths.resolve_store(store)


def emit_json(value: Any) -> None:
    """Print ``value`` as one JSON document on stdout."""
    click.echo(json.dumps(value, ensure_ascii=False, indent=2))


def emit(value: Any, *, as_json: bool, render: Callable[[Any], str]) -> None:
    """Print ``value``: as JSON with ``--json``, else as ``render(value)`` text."""
    if as_json:
        emit_json(value)
    else:
        text = render(value)
        if text:
            click.echo(text)


def note(message: str, *, as_json: bool) -> None:
    """Tell the person something on stderr (never with ``--json``, whose stdout is the answer)."""
    if not as_json:
        click.echo(message, err=True)


def fail(err: MemdirError, *, as_json: bool) -> None:
    """Print an error the way the output mode asks."""
    if as_json:
        emit_json({"error": {"code": err.code, "message": str(err)}})
    else:
        click.echo(f"memdir: {err}", err=True)


def fail_usage(message: str, *, as_json: bool) -> None:
    """Print a usage error (exit code 2) the way the output mode asks."""
    if as_json:
        emit_json({"error": {"code": "usage", "message": message}})
    else:
        click.echo(f"memdir: {message}", err=True)
    sys.stderr.flush()
