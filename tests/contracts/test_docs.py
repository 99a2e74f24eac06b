"""Every command is documented: in --help with an example, and in the README's reference."""

from pathlib import Path

import click

from memdir.cli.app import cli

README = Path(__file__).resolve().parents[2] / "README.md"


def _commands() -> dict[str, click.Command]:
    found: dict[str, click.Command] = {}
    for name, command in cli.commands.items():
        if isinstance(command, click.Group):
            for sub, inner in command.commands.items():
                found[f"{name} {sub}"] = inner
        else:
            found[name] = command
    return found


def test_every_command_has_help_with_an_example() -> None:
    for name, command in _commands().items():
        assert command.help, name
        assert "Example:" in command.help, name


def test_every_command_is_in_the_readme_reference() -> None:
    text = README.read_text()
    for name in _commands():
        assert f"memdir {name}" in text, name


def test_every_command_takes_json_and_store_options() -> None:
    for name, command in _commands().items():
        options = {opt for param in command.params for opt in getattr(param, "opts", [])}
        if name == "serve":  # speaks MCP on stdout: JSON by construction
            assert "--store" in options
            continue
        assert "--json" in options, name
        # bench and demo make throwaway stores; install, uninstall and doctor act on --dir; hosts on none
        if name.split()[0] not in ("bench", "demo", "install", "uninstall", "hosts", "doctor"):
            assert "--store" in options, name
