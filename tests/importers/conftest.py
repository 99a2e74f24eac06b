"""Shared steps for the importer tests: run `memdir import --from …` and read the store."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from memdir import service
from tests.conftest import git, run_cli

FIXTURES = Path(__file__).parent / "fixtures"


def run_import(fmt: str, path: Path, *extra: str) -> dict[str, Any]:
    """Run `memdir import --from fmt path --json` and return its report."""
    result = run_cli("import", "--from", fmt, str(path), "--json", *extra)
    assert result.exit_code == 0, result.output
    report: dict[str, Any] = json.loads(result.stdout)
    return report


def texts(store: Path) -> dict[str, Any]:
    """Return every record's text → the record."""
    return {r.text: r for r in service.list_records(store, statuses=[])}


def commits(store: Path) -> int:
    """Return how many commits the store's git holds."""
    return int(git(store, "rev-list", "--count", "HEAD"))


def rollback(store: Path, commit: str) -> None:
    """Undo ``commit`` with `memdir rollback`."""
    result = run_cli("rollback", commit, "--yes")
    assert result.exit_code == 0, result.output
