"""``memdir demo``: memdir's main job, end to end, on a throwaway copy of a real project.

A person creates the store and wires it into Claude Code; then two agent sessions are replayed
through ``memdir hook`` exactly as Claude Code calls it (its JSON payloads on stdin, one process
per event): a prompt that states a rule, reads (the second full read of an unchanged file is
refused, a ranged read is allowed), an edit, the end of the turn; a second session whose digest
carries the rule; then the person corrects the rule and reads the history. Every step prints
what the agent received or what the person sees.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import site
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import click

from memdir.cli.output import json_option

IGNORED = shutil.ignore_patterns(
    ".git",
    ".memdir",
    ".venv",
    "venv",
    "node_modules",
    "__pycache__",
    "*.pyc",
    "dist",
    "build",
    ".mypy_cache",
    ".ruff_cache",
    ".pytest_cache",
    ".hypothesis",
    ".ci-*",
    "*.egg-info",
)
RULE_PROMPT = (
    "From now on, run the test suite before every commit. "
    "Now, can you explain how the store lock works?"
)


def default_project() -> Path:
    """Return memdir's own repository when this install came from one, else its package folder."""
    package = Path(__file__).resolve().parents[2]
    for candidate in (package.parent.parent, Path.cwd()):
        pyproject = candidate / "pyproject.toml"
        if pyproject.is_file() and 'name = "memdir"' in pyproject.read_text(encoding="utf-8"):
            return candidate
    return package


def sandbox_env(home: Path) -> dict[str, str]:
    """Return the environment that keeps every demo command inside the throwaway folder.

    ``install`` writes the local MCP scope into ``~/.claude.json`` and recall reads the user
    store; pointing HOME, the hosts' config folders and the user store at ``home`` means the
    demo touches nothing of the person's. The user site-packages stay where they were, so a
    ``pip install --user`` memdir still imports.

    Args:
        home: A folder inside the demo's temporary folder; created here.

    Returns:
        The variables to set in each demo command's environment.
    """
    home.mkdir(parents=True, exist_ok=True)
    return {
        "HOME": str(home),
        "USERPROFILE": str(home),
        "CLAUDE_CONFIG_DIR": str(home / ".claude"),
        "CODEX_HOME": str(home / ".codex"),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "MEMDIR_HOME": str(home / ".local" / "share" / "memdir"),
        "PYTHONUSERBASE": site.getuserbase(),
        "GIT_CONFIG_NOSYSTEM": "1",
    }


class Demo:
    """A replayed session in a throwaway project, with its transcript."""

    def __init__(self, project: Path, show: bool, home: Path | None = None) -> None:
        self.project = project
        self.show = show
        self.steps: list[dict[str, Any]] = []
        self.env = {k: v for k, v in os.environ.items() if k not in ("MEMDIR_STORE",)}
        if home is not None:
            self.env.update(sandbox_env(home))

    def say(self, text: str) -> None:
        """Print a heading for the person watching."""
        if self.show:
            click.secho(f"\n== {text}", fg="cyan", bold=True)

    def person(self, *args: str) -> str:
        """Run a command the person types; print it and its output."""
        done = subprocess.run(
            [sys.executable, "-m", "memdir", *args],
            cwd=self.project,
            capture_output=True,
            text=True,
            env=self.env,
            check=False,
        )
        output = (done.stdout + done.stderr).rstrip()
        self.steps.append(
            {
                "who": "person",
                "command": "memdir " + shlex.join(args),
                "exit": done.returncode,
                "output": output,
            }
        )
        if self.show:
            click.secho(f"$ memdir {shlex.join(args)}", bold=True)
            if output:
                click.echo(output)
        if done.returncode != 0:
            raise click.ClickException(f"demo step failed: memdir {shlex.join(args)}\n{output}")
        return done.stdout

    def agent(self, event: str, session: str, label: str, **fields: Any) -> dict[str, Any]:
        """Fire one hook the way Claude Code does; print what the agent received."""
        payload = {
            "session_id": session,
            "transcript_path": "/dev/null",
            "cwd": str(self.project),
            "hook_event_name": event,
            **fields,
        }
        done = subprocess.run(
            [sys.executable, "-m", "memdir", "hook", event],
            input=json.dumps(payload),
            cwd=self.project,
            capture_output=True,
            text=True,
            env=self.env,
            check=False,
        )
        answer = json.loads(done.stdout) if done.stdout.strip() else {}
        self.steps.append(
            {
                "who": "agent",
                "event": event,
                "label": label,
                "payload": payload,
                "exit": done.returncode,
                "answer": answer,
            }
        )
        if self.show:
            click.secho(f"[{event}] {label}", fg="yellow")
            specific = answer.get("hookSpecificOutput", {})
            if specific.get("permissionDecision") == "deny":
                click.echo(f"  refused: {specific.get('permissionDecisionReason')}")
            elif specific.get("additionalContext"):
                click.echo("  the agent received:")
                click.echo(
                    "\n".join("    " + line for line in specific["additionalContext"].splitlines())
                )
            else:
                quiet = {
                    "PreToolUse": "allowed",
                    "SessionStart": "(nothing to inject)",
                    "UserPromptSubmit": "(nothing to inject)",
                }
                click.echo("  " + quiet.get(event, "recorded"))
        return answer


def _copy_project(source: Path, folder: Path) -> Path:
    target = folder / source.name
    shutil.copytree(source, target, ignore=IGNORED, symlinks=True)
    for args in (
        ["init", "-q"],
        ["add", "-A"],
        [
            "-c",
            "user.name=demo",
            "-c",
            "user.email=demo@localhost",
            "commit",
            "-qm",
            "copy for the memdir demo",
        ],
    ):
        subprocess.run(["git", *args], cwd=target, capture_output=True, check=False)
    return target


def _first_session(demo: Demo, lock_file: Path, readme: Path) -> None:
    demo.say("Session 1: the agent works; the person states a rule")
    demo.agent("SessionStart", "demo-1", "a new session starts", source="startup")
    demo.agent(
        "UserPromptSubmit", "demo-1", f"the person types: {RULE_PROMPT!r}", prompt=RULE_PROMPT
    )
    read = {"file_path": str(lock_file)}
    demo.agent(
        "PreToolUse", "demo-1", f"Read {lock_file.name} (full)", tool_name="Read", tool_input=read
    )
    demo.agent(
        "PostToolUse",
        "demo-1",
        f"Read {lock_file.name} done",
        tool_name="Read",
        tool_input=read,
        tool_response={"type": "text", "file": {"filePath": str(lock_file), "content": "…"}},
    )
    demo.agent(
        "PreToolUse",
        "demo-1",
        f"Read {lock_file.name} (full) again, unchanged",
        tool_name="Read",
        tool_input=read,
    )
    ranged = {"file_path": str(lock_file), "offset": 40, "limit": 30}
    demo.agent(
        "PreToolUse",
        "demo-1",
        f"Read {lock_file.name} lines 40-70",
        tool_name="Read",
        tool_input=ranged,
    )
    lines = lock_file.read_text(encoding="utf-8", errors="replace").splitlines(keepends=True)
    shown = "".join(lines[39:69])  # what Claude Code returns for offset 40, limit 30
    demo.agent(
        "PostToolUse",
        "demo-1",
        "ranged read done",
        tool_name="Read",
        tool_input=ranged,
        tool_response={"type": "text", "file": {"filePath": str(lock_file), "content": shown}},
    )
    with readme.open("a", encoding="utf-8") as fh:
        fh.write("\nThe store lock is an flock on state/lock; see kernel/storage/lock.py.\n")
    edit = {"file_path": str(readme), "old_string": "", "new_string": "The store lock is …"}
    demo.agent(
        "PostToolUse",
        "demo-1",
        f"Edit {readme.name}",
        tool_name="Edit",
        tool_input=edit,
        tool_response={"filePath": str(readme)},
    )
    demo.agent(
        "Stop",
        "demo-1",
        "the turn ends",
        stop_hook_active=False,
        last_assistant_message="The store lock is an exclusive flock held around every write.",
    )
    demo.agent("SessionEnd", "demo-1", "the session ends", reason="prompt_input_exit")


def _pick_files(project: Path) -> tuple[Path, Path]:
    lock = project / "src" / "memdir" / "kernel" / "lock.py"
    if not lock.is_file():
        candidates = sorted(p for p in project.rglob("*.py") if p.is_file())
        lock = candidates[0] if candidates else project / "README.md"
    readme = project / "README.md"
    if not readme.exists():
        readme.write_text("# demo\n", encoding="utf-8")
    return lock, readme


@click.command()
@click.option(
    "--project",
    "source",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    default=None,
    help="The project to copy (default: memdir's own repository).",
)
@click.option("--keep", is_flag=True, help="Keep the throwaway copy and print where it is.")
@json_option
def demo(source: Path | None, keep: bool, as_json: bool) -> None:
    """Run memdir's main job on a throwaway copy of a real project and show every step.

    A person creates the store (SQLite + git, no server, no API key) and wires it
    into Claude Code; two agent sessions are replayed through `memdir hook`; the
    person corrects a belief and reads the history.

    \b
    Example:
        memdir demo
        memdir demo --project ~/src/my-app --keep
    """
    demo_run: Demo | None = None
    folder = Path(tempfile.mkdtemp(prefix="memdir-demo-"))
    try:
        project = _copy_project((source or default_project()).resolve(), folder)
        demo_run = Demo(project, show=not as_json, home=folder / "home")
        demo_run.say(f"A throwaway copy of {source or default_project()} in {project}")
        demo_run.person("init")
        demo_run.person("install", "--host", "claude-code")
        demo_run.person("scan")
        lock_file, readme = _pick_files(project)
        _first_session(demo_run, lock_file, readme)
        demo_run.say("Session 2: a new session starts; its digest carries the rule")
        demo_run.agent("SessionStart", "demo-2", "a new session starts", source="startup")
        demo_run.say("The person corrects the rule and reads the history")
        rule_id = demo_run.person("list", "--kind", "rule").split()[0]
        demo_run.person(
            "correct",
            rule_id,
            "--text",
            "Run the test suite and the linter before every commit",
            "--reason",
            "the linter catches what tests miss",
        )
        demo_run.person("recall", "before committing")
        demo_run.person("log", "-n", "5")
        demo_run.person("diff", rule_id)
        demo_run.person("stats")
    finally:
        if keep:
            click.echo(f"kept the demo project in {folder}", err=True)
        else:
            shutil.rmtree(folder, ignore_errors=True)
    if as_json and demo_run is not None:
        click.echo(json.dumps({"steps": demo_run.steps}, ensure_ascii=False, indent=2))


COMMANDS = [demo]
