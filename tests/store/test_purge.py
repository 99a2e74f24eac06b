"""Purge erases text from the working tree, index, journal, history and the index file's bytes."""

import subprocess
from pathlib import Path

import pytest

from memdir import service
from memdir.kernel.errors import UsageError
from tests.conftest import git

SECRET_WORDS = "zebrafish quantum marmalade sentinel"


def _all_git_objects(store: Path) -> bytes:
    listing = subprocess.run(
        ["git", "-C", str(store), "rev-list", "--all", "--objects"],
        capture_output=True,
        check=True,
    ).stdout
    ids = b"\n".join(line.split(b" ")[0] for line in listing.splitlines()) + b"\n"
    return subprocess.run(
        ["git", "-C", str(store), "cat-file", "--batch"], input=ids, capture_output=True, check=True
    ).stdout


def test_purge_erases_the_text_everywhere_and_reports_each_place(store: Path) -> None:
    keeper = service.remember(store, "The deploy script is deploy.sh").record
    service.journal_append(
        store, "user", f"remember that {SECRET_WORDS} runs at night", session="s"
    )
    service.journal_append(store, "user", "an unrelated turn", session="s")
    record = service.remember(store, SECRET_WORDS.title()).record
    git(store, "add", "journal")
    git(store, "commit", "-qm", "journal batch")
    service.search(store, "zebrafish")  # the journal is indexed
    report = service.purge(store, record.id, yes=True)
    places = {p["place"] for p in report.places}
    assert {"working tree", "index", "journal", "git history", "git objects"} <= places
    assert not (store / "records" / "fact" / f"{record.id}.md").exists()
    assert service.recall(store, "zebrafish marmalade").hits == []
    assert service.search(store, "zebrafish").hits == []
    assert [h.text for h in service.search(store, "unrelated").hits] == ["an unrelated turn"]
    for path in store.rglob("*"):
        if path.is_file() and ".git" not in path.parts:
            assert b"zebrafish" not in path.read_bytes().lower(), path
    assert b"zebrafish" not in _all_git_objects(store).lower()
    assert service.get(store, keeper.id).text == "The deploy script is deploy.sh"
    assert service.health(store).ok


def test_purge_needs_yes(store: Path) -> None:
    record = service.remember(store, "Something to keep").record
    with pytest.raises(UsageError, match="--yes"):
        service.purge(store, record.id, yes=False)
    assert service.get(store, record.id).text == "Something to keep"


def test_purging_a_linked_record_leaves_a_dangling_link_without_its_text(store: Path) -> None:
    target = service.remember(store, "Internal codename is Bluebird").record
    source = service.remember(store, "See the codename note", links=[target.id]).record
    service.purge(store, target.id, yes=True)
    graph = service.graph(store, source.id)
    node = next(n for n in graph.nodes if n["id"] == target.id)
    assert node == {"id": target.id, "status": "missing", "dangling": True}
    report = service.health(store)
    assert any(f.code == "dangling_link" for f in report.findings)
