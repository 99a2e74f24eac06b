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
    from memdir.cli.app import cli

    cli.main(args=args, prog_name="memdir")


if __name__ == "__main__":
    main()
