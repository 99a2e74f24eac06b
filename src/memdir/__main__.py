"""Console entry point: ``memdir``.

``memdir --version`` answers before any third-party import, and ``memdir hook …`` will be
routed to the light hook path before click is imported (DESIGN §7); everything else goes to
the click application.
"""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> None:
    """Run ``memdir`` with ``argv`` (default: ``sys.argv[1:]``)."""
    args = sys.argv[1:] if argv is None else argv
    if argv is None:
        _utf8_or_reexec(args)
    if args[:1] == ["hook"]:
        from memdir.hooks.dispatch import run

        raise SystemExit(run(args[1:]))
    if args[:1] == ["serve"] and _serve_fast(args[1:]):
        raise SystemExit(0)
    if args == ["--version"]:
        from memdir import __version__

        sys.stdout.write(f"memdir, version {__version__}\n")
        raise SystemExit(0)
    _claim_streams()
    args = [_as_utf8(arg) for arg in args]
    for position, arg in enumerate(args, 1):
        if not _is_text(arg):
            _usage_error(f"argument {position} is not valid UTF-8 text", as_json="--json" in args)
    from memdir.cli.app import cli

    cli.json_requested = "--json" in args
    cli.main(args=args, prog_name="memdir")


def _serve_fast(rest: list[str]) -> bool:
    """Run ``memdir serve [--store DIR]`` without click (issue 16: a fast MCP start).

    Returns False (the click command then runs, with its usual errors) for other arguments, a
    store that cannot be found, or a terminal on stdin.
    """
    if rest not in ([],) and not (len(rest) == 2 and rest[0] == "--store"):
        return False
    if sys.stdin.isatty():
        return False
    from pathlib import Path

    from memdir.kernel.base.errors import MemdirError
    from memdir.kernel.storage.paths import resolve_store

    try:
        store = resolve_store(Path(rest[1]) if rest else None)
    except (MemdirError, OSError):
        return False
    from memdir.mcp.start import serve

    serve(store)
    return True


REEXEC_GUARD = "MEMDIR_UTF8_REEXEC"


def _utf8_or_reexec(args: list[str]) -> None:
    """Run again in Python's UTF-8 mode when the locale made file names ASCII (issue 9).

    Under ``LC_ALL=POSIX PYTHONUTF8=0`` (or any locale whose encoding is ASCII) Python decodes
    file names, environment variables and arguments as ASCII: a project under ``/home/李/`` or a
    hook payload's CJK ``cwd`` then names no file, and hooks silently do nothing. ``-X utf8``
    (which outranks ``PYTHONUTF8``) reads them all as UTF-8, as every other tool on the machine
    does. Nothing has been read from stdin yet, so a hook's payload is still there.
    """
    import os

    encoding = sys.getfilesystemencoding().lower().replace("-", "")
    if encoding == "utf8" or os.environ.get(REEXEC_GUARD) or sys.platform == "win32":
        return
    os.environ[REEXEC_GUARD] = "1"  # once: a Python that cannot run in UTF-8 mode goes on
    os.environ["PYTHONUTF8"] = "1"  # memdir's own children (reindex, sync) read UTF-8 too
    try:
        os.execv(sys.executable, [sys.executable, "-X", "utf8", "-m", "memdir", *args])  # noqa: S606
    except OSError:
        return  # carry on in this locale: arguments are still recovered by _as_utf8


def _json_escape(error: UnicodeError) -> tuple[str, int]:
    r"""Codec error handler: spell characters a stream cannot encode as JSON ``\u`` escapes.

    Inside a JSON string the escape decodes back to the very same character, so ``--json``
    output stays valid and exact on any stdout; in text output it is a readable stand-in.
    Characters beyond the BMP become a UTF-16 surrogate pair, as JSON spells them.
    """
    if not isinstance(error, UnicodeEncodeError):
        raise error
    out = []
    for char in error.object[error.start : error.end]:
        code = ord(char)
        if code > 0xFFFF:
            code -= 0x10000
            out.append(f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}")
        else:
            out.append(f"\\u{code:04x}")
    return "".join(out), error.end


def _claim_streams() -> None:
    r"""Make stdout and stderr unable to crash on a character their encoding lacks (case B52).

    A Windows pipe or ``PYTHONIOENCODING=cp1252`` gives a stream that cannot encode CJK text;
    such characters are written as ``\uXXXX`` escapes instead of raising.
    """
    import codecs

    codecs.register_error("memdir-json-escape", _json_escape)
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        encoding = str(getattr(stream, "encoding", "") or "").lower().replace("-", "")
        if reconfigure is not None and encoding != "utf8":
            reconfigure(errors="memdir-json-escape")


def _as_utf8(arg: str) -> str:
    """Return an argument's bytes read as UTF-8, whatever the locale decoded them as.

    Under ``LC_ALL=POSIX PYTHONUTF8=0`` Python decodes argv as ASCII and keeps the other bytes
    as surrogates; UTF-8 text is recovered from them. Bytes that are not UTF-8 stay as they
    came (and are refused by :func:`_is_text`).
    """
    if _is_text(arg):
        return arg
    import os

    try:
        return os.fsencode(arg).decode("utf-8")
    except (UnicodeError, ValueError):
        return arg


def _is_text(arg: str) -> bool:
    """Whether a command-line argument is text (bytes that are not UTF-8 arrive as surrogates)."""
    try:
        arg.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _usage_error(message: str, *, as_json: bool) -> None:
    """Print a usage error (as JSON with ``--json``) and exit 2, before click is imported."""
    import json

    if as_json:
        error = {"error": {"code": "usage", "message": message}}
        sys.stdout.write(json.dumps(error) + "\n")
    else:
        sys.stderr.write(f"memdir: {message}\n")
    raise SystemExit(2)


if __name__ == "__main__":
    main()
