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
    if args[:1] == ["hook"]:
        from memdir.hooks.dispatch import run

        raise SystemExit(run(args[1:]))
    if args == ["--version"]:
        from memdir import __version__

        sys.stdout.write(f"memdir, version {__version__}\n")
        raise SystemExit(0)
    for position, arg in enumerate(args, 1):
        if not _is_text(arg):
            _usage_error(f"argument {position} is not valid UTF-8 text", as_json="--json" in args)
    from memdir.cli.app import cli

    cli.json_requested = "--json" in args
    cli.main(args=args, prog_name="memdir")


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
