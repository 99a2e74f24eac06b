"""``memdir demo``: memdir's main job, end to end, in a throwaway project."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import click

from memdir.cli.output import json_option


def _run(project: Path, args: list[str], transcript: list[dict[str, object]], *, show: bool) -> str:
    command = [sys.executable, "-m", "memdir", *args]
    done = subprocess.run(command, cwd=project, capture_output=True, text=True, check=False)
    output = (done.stdout + done.stderr).rstrip()
    transcript.append(
        {"command": "memdir " + shlex.join(args), "exit": done.returncode, "output": output}
    )
    if show:
        click.secho(f"$ memdir {shlex.join(args)}", bold=True)
        if output:
            click.echo(output)
        click.echo()
    if done.returncode != 0:
        raise click.ClickException(f"demo step failed: memdir {shlex.join(args)}\n{output}")
    return done.stdout


@click.command()
@click.option("--keep", is_flag=True, help="Keep the throwaway project and print where it is.")
@json_option
def demo(keep: bool, as_json: bool) -> None:
    """Run memdir's main job in a throwaway project and show every step.

    Creates a store (SQLite + git, no server, no API key), remembers beliefs,
    recalls them, corrects one, and shows the history, by running the same
    commands a person would type.

    \b
    Example:
        memdir demo
    """
    show = not as_json
    transcript: list[dict[str, object]] = []
    folder = Path(tempfile.mkdtemp(prefix="memdir-demo-"))
    try:
        project = folder / "project"
        project.mkdir()
        subprocess.run(["git", "init", "-q"], cwd=project, check=True)
        env_store = os.environ.pop("MEMDIR_STORE", None)
        try:
            _steps(project, transcript, show)
        finally:
            if env_store is not None:
                os.environ["MEMDIR_STORE"] = env_store
    finally:
        if keep:
            click.echo(f"kept the demo project in {folder / 'project'}", err=True)
        else:
            shutil.rmtree(folder, ignore_errors=True)
    if as_json:
        click.echo(json.dumps({"steps": transcript}, ensure_ascii=False, indent=2))


def _steps(project: Path, transcript: list[dict[str, object]], show: bool) -> None:
    def run(*args: str) -> str:
        return _run(project, list(args), transcript, show=show)

    run("init")
    pnpm_id = run(
        "remember",
        "Use pnpm, not npm, in this repository",
        "--kind",
        "preference",
        "--alias",
        "package manager",
    ).strip()

    run("remember", "The staging server restarts every Sunday at 02:00 UTC")
    run(
        "remember",
        "Never commit directly to main; open a pull request",
        "--kind",
        "rule",
        "--importance",
        "9",
    )
    run("remember", "the staging server restarts every sunday at 02:00 utc")
    run("recall", "which package manager do we use?", "--explain")
    run(
        "correct",
        pnpm_id,
        "--text",
        "Use bun, not npm or pnpm, in this repository",
        "--reason",
        "the team switched to bun",
    )
    run("recall", "package manager")
    run("list")
    run("log")
    run("diff", pnpm_id)
    run("health")


COMMANDS = [demo]
