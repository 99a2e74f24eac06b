"""`memdir import --from basic-memory`: a basic-memory project. basic-memory is not installable
here (not in this machine's package index; it also needs Python ≥ 3.12), so the notes are
hand-built from its documented note format."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from memdir import service
from tests.importers.conftest import FIXTURES, commits, rollback, run_import, texts

CREATED = {
    "decision": {"candidate": 1},
    "rule": {"candidate": 2},
    "preference": {"candidate": 1},
    "fact": {"candidate": 2},
    "entity": {"candidate": 2},
}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A copy of the basic-memory fixture project."""
    target = tmp_path / "basic-memory"
    shutil.copytree(FIXTURES / "basic-memory", target)
    return target


def test_dry_run_counts_notes_and_observations(store: Path, project: Path) -> None:
    before = commits(store)
    report = run_import("basic-memory", project, "--dry-run")
    assert report["created"] == CREATED
    assert report["refused_by_reason"] == {"holds a secret": 1}
    assert commits(store) == before and texts(store) == {}


def test_observations_become_candidates_linked_to_their_note_and_relations_link_notes(
    store: Path, project: Path
) -> None:
    run_import("basic-memory", project)
    got = texts(store)
    auth = got["Authentication Design"]
    schema = got["User Database Schema"]
    assert auth.kind == "entity" and auth.status == "candidate" and auth.origin == "import"
    assert auth.links == (schema.id,)  # the target outside the project stays in the body
    assert "implements [[API Security Requirements]]" in auth.body
    assert schema.links == (auth.id,)
    jwt = got["Use JWT access tokens with a 15 minute lifetime"]
    assert jwt.kind == "decision" and jwt.tags == ("decision", "security")
    assert jwt.links == (auth.id,)
    assert jwt.source["file"] == "design/authentication-design.md" and jwt.source["line"] == 13
    cookie = got["Refresh tokens live only in HTTP-only cookies"]
    assert cookie.kind == "rule" and cookie.body.startswith("prevents XSS theft")
    assert got["Email uniqueness is case-insensitive; compare lower(email) values"].kind == "rule"
    assert not any("ghp_" in t for t in got)
    assert service.list_records(store, statuses=["active"]) == []


def test_a_second_import_adds_nothing(store: Path, project: Path) -> None:
    run_import("basic-memory", project)
    before = commits(store)
    assert run_import("basic-memory", project)["imported"] == 0
    assert commits(store) == before


def test_a_rejected_belief_is_not_reasserted_and_the_rest_is_imported(
    store: Path, project: Path
) -> None:
    wrong = service.remember(store, "Users are keyed by a UUIDv7 primary key").record
    service.reject(store, wrong.id, "we use bigint ids")
    report = run_import("basic-memory", project)
    assert report["refused_by_reason"][f"repeats rejected {wrong.id}"] == 1
    assert "Authentication Design" in texts(store)


def test_rollback_undoes_the_import(store: Path, project: Path) -> None:
    report = run_import("basic-memory", project)
    rollback(store, report["commit"])
    assert texts(store) == {}
