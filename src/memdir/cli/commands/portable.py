"""Moving a memory: bundle (a store's git history as one file) and the Claude Code mirror.

``export --to amp`` and ``import --from bundle`` live with ``export`` and ``import``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from memdir.cli.output import emit, json_option, resolve, store_option


@click.command(name="bundle")
@click.argument("file", type=click.Path(path_type=Path))
@store_option
@json_option
def bundle(file: Path, store: Path | None, as_json: bool) -> None:
    """Write the store and its whole git history into one file.

    Pending journal and action lines and hand edits are committed first
    (as `memdir sync` does). Bring it onto another machine with
    `memdir import --from bundle FILE`.

    \b
    Example:
        memdir bundle ~/memory.bundle
    """
    from memdir.service import portable

    done = portable.bundle_create(resolve(store), file)
    emit(
        done.to_json(),
        as_json=as_json,
        render=lambda v: f"bundled {v['commits']} commits of {v['branch']} into {v['file']}",
    )


@click.group(name="mirror")
def mirror() -> None:
    """Copy the owner's rules and preferences into a host's own memory."""


@mirror.command(name="claude")
@click.option("--off", is_flag=True, help="Remove memdir's mirror files and stop mirroring.")
@click.option(
    "--dir",
    "directory",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="The auto-memory folder (default: Claude Code's for this project).",
)
@store_option
@json_option
def mirror_claude(off: bool, directory: Path | None, store: Path | None, as_json: bool) -> None:
    """Mirror active owner rules and preferences into Claude Code's auto-memory.

    Writes memdir_rules.md and memdir_preferences.md in
    ~/.claude/projects/<project>/memory/ (each under Claude Code's 4 KB
    memory-file limit; the least relevant are dropped and reported), keeps
    them current after every write, and unlinks a file when its kind has no
    active owner record. Files memdir did not write are never touched. While
    on, the session digest for Claude Code leaves the mirrored records out.

    \b
    Example:
        memdir mirror claude
        memdir mirror claude --off
    """
    from memdir.service import portable

    done = portable.mirror_claude(resolve(store), off=off, directory=directory)
    emit(done.to_json(), as_json=as_json, render=_render)


def _render(v: dict[str, Any]) -> str:
    lines = [f"mirror: {v['directory'] or 'off'}"]
    for key in ("written", "unchanged", "removed"):
        lines += [f"  {key}: {p}" for p in v[key]]
    lines += [f"  left alone (not written by memdir): {p}" for p in v["foreign"]]
    if v["dropped"]:
        lines.append(
            f"  dropped {len(v['dropped'])} least relevant record(s) over Claude Code's "
            f"4 KB limit: {', '.join(v['dropped'])}"
        )
    return "\n".join(lines)


COMMANDS = [bundle, mirror]
