"""The ``--json`` contract, the shared options, and the one place errors are printed.

With ``--json`` stdout carries exactly one JSON document, success or failure; an error is
``{"error": {"code": "<slug>", "message": "…"}}`` (DESIGN §9). Without it, results go to
stdout and ``memdir: <message>`` to stderr.

Stored text is printed as data, never as terminal commands: control characters (ANSI escape
sequences, carriage returns, C1 codes), bidi overrides, invisible characters and lone
surrogates are shown as visible ``\\x1b``/``\\u202e`` escapes, and a value's line breaks
cannot forge another line (``text: …`` then ``origin: owner``). JSON output escapes the same
characters as ``\\uXXXX``, which JSON readers decode to the very same value.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from memdir.kernel.base.errors import MemdirError, StoreNotFoundError, UsageError
from memdir.kernel.lang.fence import UNSHOWABLE, escape_json
from memdir.kernel.storage import paths

JSON_FLAG = "memdir_json"
USER_FLAG = "memdir_user_store"
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


def _remember_user(ctx: click.Context, _param: click.Parameter, value: bool) -> bool:
    if value:
        ctx.find_root().meta[USER_FLAG] = True
    return value


def user_option() -> click.Option:
    """The ``--user`` flag of the commands that can act on the user store (see :func:`resolve`).

    Added to a command's ``params`` (its function never sees it): :func:`resolve` reads it.
    """
    return click.Option(
        ["--user"],
        is_flag=True,
        expose_value=False,
        callback=_remember_user,
        help="Act on your user store (cross-project preferences, $MEMDIR_HOME) instead of "
        "the project's.",
    )


def _offers_user(ctx: click.Context | None) -> bool:
    return ctx is not None and any(p.name == "user" for p in ctx.command.params)


def resolve(store: Path | None) -> Path:
    """Return the store a command acts on (``--user``, ``--store``, ``MEMDIR_STORE``, discovery).

    ``--user`` (on the commands that offer it) names the user store, ``$MEMDIR_HOME`` or the
    platform's data folder (:func:`memdir.kernel.storage.paths.user_store_dir`).

    Raises:
        UsageError: ``--user`` and ``--store`` together.
        StoreNotFoundError: none found; the message says how to create one, and, on a command
            that offers ``--user``, how to reach the user store instead.
    """
    ctx = click.get_current_context(silent=True)
    user = paths.user_store_dir()
    if ctx is not None and ctx.find_root().meta.get(USER_FLAG):
        if store is not None:
            raise UsageError("--user and --store both name a store; give one")
        if not paths.is_store(user):
            raise StoreNotFoundError(
                f"no user store at {user} yet; create it with `memdir init --user`"
            )
        return user
    try:
        return paths.resolve_store(store)
    except StoreNotFoundError as err:
        if store is not None or os.environ.get("MEMDIR_STORE") or not _offers_user(ctx):
            raise
        how = "" if paths.is_store(user) else ", after `memdir init --user` once"
        raise StoreNotFoundError(
            f"{err}; for your user store (cross-project, {user}) add --user{how}"
        ) from None


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    if 0xD800 <= code <= 0xDFFF:
        return "\ufffd"  # half a character (undecodable input): the replacement character
    return (
        f"\\x{code:02x}"
        if code < 0x100
        else f"\\u{code:04x}"
        if code < 0x10000
        else f"\\U{code:08x}"
    )


def terminal_safe(text: str) -> str:
    """Return ``text`` with every character a terminal would obey or hide shown as an escape.

    Newlines and tabs are kept: use :func:`one_line` for a value that must stay on its line.
    """
    return UNSHOWABLE.sub(_escape, text)


def one_line(text: str) -> str:
    """Return ``text`` as one visible line: line breaks become ``\\n`` (and the like)."""
    return terminal_safe(text).replace("\n", "\\n").replace("\t", "\\t")


def _safe_values(value: Any) -> Any:
    """Return ``value`` with every string made :func:`one_line` safe (keys and structure kept)."""
    if isinstance(value, str):
        return one_line(value)
    if isinstance(value, list | tuple):
        return [_safe_values(item) for item in value]
    if isinstance(value, dict):
        return {key: _safe_values(item) for key, item in value.items()}
    return value


def emit_json(value: Any) -> None:
    """Print ``value`` as one JSON document on stdout."""
    click.echo(escape_json(json.dumps(value, ensure_ascii=False, indent=2)))


def emit(
    value: Any, *, as_json: bool, render: Callable[[Any], str], multiline: bool = False
) -> None:
    """Print ``value``: as JSON with ``--json``, else as ``render(value)`` text.

    The renderer sees every string value already :func:`one_line` safe, and what it returns
    is :func:`terminal_safe` (its own line breaks are kept). ``multiline`` keeps the line breaks
    inside values too (a diff's patch, whose lines carry their own ``+``/``-`` markers, so no
    line of stored text can pass for one of memdir's); control characters are still escaped.
    """
    if as_json:
        emit_json(value)
    else:
        text = render(value if multiline else _safe_values(value))
        if text:
            click.echo(terminal_safe(text))


def note(message: str, *, as_json: bool) -> None:
    """Tell the person something on stderr (never with ``--json``, whose stdout is the answer)."""
    if not as_json:
        click.echo(terminal_safe(message), err=True)


def fail(err: MemdirError, *, as_json: bool) -> None:
    """Print an error the way the output mode asks."""
    if as_json:
        emit_json({"error": {"code": err.code, "message": str(err)}})
    else:
        click.echo(f"memdir: {terminal_safe(str(err))}", err=True)


def fail_usage(message: str, *, as_json: bool) -> None:
    """Print a usage error (exit code 2) the way the output mode asks."""
    if as_json:
        emit_json({"error": {"code": "usage", "message": message}})
    else:
        click.echo(f"memdir: {terminal_safe(message)}", err=True)
    sys.stderr.flush()
