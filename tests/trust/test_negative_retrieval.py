"""Negative retrieval assertions on every serving surface (issue 10, mark 7).

One fixture store holds, for each kind of material that must never be served, a pair on one
topic: the excluded record and a live one. Every surface is asked about every topic; the
excluded text must be absent AND the live text present, so a filter that drops everything
fails. Kinds: superseded, rejected, forgotten, purged, candidate, other-scope (a user-store
file copied into the project store), other-project (a record file copied by hand from another
project's store: it names that project's identity), tombstoned (a rejected value restored as
an active record by a hand edit, outside memdir's write path) and expired (``valid_until``
past).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp.client.client import Client

from memdir import service
from memdir.kernel.base.caller import OBSERVER, Caller
from memdir.mcp.server import build_server
from memdir.service import memory
from tests.conftest import run_cli, text_of
from tests.hooks.conftest import run_hook

OWNER = Caller("owner", "cli")

# topic: (query, excluded text, live text)
PAIRS: dict[str, tuple[str, str, str]] = {
    "superseded": ("zebra builds gradle", "Zebra builds run on Gradle seven.", ""),
    "rejected": (
        "walrus deploys approval",
        "Walrus deploys need a manual approval.",
        "Walrus deploys need two reviewers' approval.",
    ),
    "forgotten": (
        "heron service queue",
        "Heron service reads the legacy queue.",
        "Heron service reads the orders queue.",
    ),
    "purged": (
        "ocelot rotation",
        "Ocelot rotation of the vault tokens is monthly.",
        "Ocelot rotation of the log files is weekly.",
    ),
    "candidate": (
        "falcon releases mondays",
        "Falcon releases are cut on Mondays.",
        "Falcon releases are tagged by the release bot.",
    ),
    "other-scope": (
        "badger editor",
        "Badger editor for my notes is Vim.",
        "Badger editor settings live in EditorConfig.",
    ),
    "other-project": (
        "marmot queue broker",
        "Marmot queue broker is RabbitMQ on port 5673.",
        "Marmot queue broker settings live in deploy/broker.toml.",
    ),
    "tombstoned": (
        "puffin cache ttl",
        "Puffin cache entries expire after ten minutes.",
        "Puffin cache entries are keyed by tenant.",
    ),
    "expired": (
        "lynx merges freeze",
        "Lynx merges are frozen for the audit.",
        "Lynx merges need a green pipeline.",
    ),
}
SUPERSEDED_BY = "Zebra builds run on Gradle eight."


@pytest.fixture(scope="module")
def fixture_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Build the store once (the module's tests only read it)."""
    mp = pytest.MonkeyPatch()
    import os

    from memdir.service.channel import AGENT_MARKERS
    from tests.conftest import git

    home = tmp_path_factory.mktemp("neg-home")
    mp.setenv("HOME", str(home))
    mp.setenv("MEMDIR_HOME", str(home / "memdir-user"))
    mp.setenv("GIT_CONFIG_GLOBAL", os.devnull)
    mp.setenv("GIT_CONFIG_NOSYSTEM", "1")
    mp.delenv("MEMDIR_STORE", raising=False)
    for name in ("GIT_AUTHOR_NAME", "GIT_COMMITTER_NAME"):
        mp.setenv(name, "Test Person")
    for name in ("GIT_AUTHOR_EMAIL", "GIT_COMMITTER_EMAIL"):
        mp.setenv(name, "test@example.invalid")
    for name, _ in AGENT_MARKERS:
        mp.delenv(name, raising=False)
    project = tmp_path_factory.mktemp("neg") / "project"
    project.mkdir()
    git(project, "init", "-q")
    (project / "README.md").write_text("# negatives\n")
    git(project, "add", "README.md")
    git(project, "commit", "-qm", "initial")
    mp.chdir(project)
    store = service.init(project).store
    manifest = store / "memdir.toml"
    manifest.write_text(
        manifest.read_text().replace("observe_every_seconds = 300", "observe_every_seconds = 0")
    )
    git(store, "commit", "-qam", "tests: no background observer")

    def add(text: str, **options: Any) -> str:
        return service.remember(store, text, kind="rule", caller=OWNER, **options).record.id

    for topic, (_, excluded, live) in PAIRS.items():
        if live:
            add(live)
        if topic == "superseded":
            old = add(excluded)
            service.correct(store, old, SUPERSEDED_BY, caller=OWNER)
        elif topic == "rejected":
            service.reject(store, add(excluded), "not so", caller=OWNER)
        elif topic == "forgotten":
            service.forget(store, add(excluded), "moved on", caller=OWNER)
        elif topic == "purged":
            service.journal_append(store, "user", excluded)  # purge erases it there too
            service.journal_append(store, "user", live)
            service.purge(store, add(excluded), yes=True, caller=OWNER)
        elif topic == "candidate":
            service.remember(store, excluded, kind="rule", caller=OBSERVER, status="candidate")
        elif topic == "expired":
            add(excluded, valid_until="2026-01-01")
        elif topic in ("tombstoned", "other-project"):
            _by_hand(store, topic, excluded, add)
        elif topic == "other-scope":
            user = service.init(project, user=True).store
            rid = service.remember(user, excluded, kind="rule", caller=OWNER).record.id
            src = user / "records" / "rule" / f"{rid}.md"
            (store / "records" / "rule" / src.name).write_text(src.read_text())
            (src).unlink()  # only the copy in the project store remains
            service.reindex(user)
    service.reindex(store)
    yield store
    mp.undo()


def _by_hand(store: Path, topic: str, excluded: str, add: Any) -> None:
    """Plant what reaches a store outside memdir's write path.

    ``tombstoned``: a rejected value restored as an active record; ``other-project``: a record
    file copied from another project's store.
    """
    from tests.conftest import git

    if topic == "tombstoned":
        wrong = add(excluded)
        service.reject(store, wrong, "not so", caller=OWNER)
        # the same value back as an active record, by hand (a new id; a copy from a
        # backup, a merge memdir did not make): memdir's write path never saw it
        text = (store / "records" / "rule" / f"{wrong}.md").read_text()
        twin = wrong[:-4] + "zzzz"
        (store / "records" / "rule" / f"{twin}.md").write_text(
            text.replace(wrong, twin).replace('"rejected"', '"active"')
        )
        return
    other = store.parent.parent / "other"
    other.mkdir()
    git(other, "init", "-q")
    (other / "README.md").write_text("# another project\n")
    git(other, "add", "README.md")
    git(other, "commit", "-qm", "another initial commit")
    theirs = service.init(other).store
    rid = service.remember(theirs, excluded, kind="rule", caller=OWNER).record.id
    src = theirs / "records" / "rule" / f"{rid}.md"
    assert 'project: "prj-' in src.read_text()  # it names its own project
    (store / "records" / "rule" / src.name).write_text(src.read_text())


def _live(topic: str) -> str:
    return SUPERSEDED_BY if topic == "superseded" else PAIRS[topic][2]


def _check(topic: str, served: str) -> None:
    _, excluded, _ = PAIRS[topic]
    assert excluded not in served, f"{topic}: the excluded text came back"
    assert _live(topic) in served, f"{topic}: the live text is missing"


TOPICS = sorted(PAIRS)


@pytest.mark.parametrize("topic", TOPICS)
def test_recall(fixture_store: Path, topic: str) -> None:
    hits = service.recall(fixture_store, PAIRS[topic][0], limit=20).hits
    _check(topic, "\n".join(h.doc["text"] for h in hits))


def test_cli_recall_index_and_list_of_active(fixture_store: Path) -> None:
    for topic in TOPICS:
        done = run_cli("recall", PAIRS[topic][0], "--json", "--store", str(fixture_store))
        _check(topic, done.stdout)
    index = run_cli("index", "--json", "--store", str(fixture_store)).stdout
    for topic in TOPICS:
        _check(topic, index)


def test_search_never_finds_purged_text(fixture_store: Path) -> None:
    found = service.search(fixture_store, "ocelot rotation")
    _check("purged", "\n".join(h.text for h in found.hits))


def test_digest_and_prompt_injection(fixture_store: Path) -> None:
    project = fixture_store.parent
    start = {"session_id": "n0", "hook_event_name": "SessionStart", "cwd": str(project)}
    digest = run_hook("SessionStart", {**start, "source": "startup"}, cwd=project).context
    for topic in TOPICS:
        _check(topic, digest)
    for n, topic in enumerate(TOPICS):
        payload = {
            "session_id": f"p{n}",
            "hook_event_name": "UserPromptSubmit",
            "cwd": str(project),
        }
        # the live belief's own words (the prompt rule injects only what a prompt earns);
        # the excluded record shares the topic words
        prompt = f"is it still true that {_live(topic).lower().rstrip('.')}?"
        run = run_hook("UserPromptSubmit", {**payload, "prompt": prompt}, cwd=project)
        _check(topic, run.context)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_mcp_recall_list_index_and_get(fixture_store: Path) -> None:
    async with Client(build_server(fixture_store)) as client:
        listed = text_of(await client.call_tool("memory_list", {"limit": 100}))
        index = text_of(await client.call_tool("memory_index", {}))
        for topic in TOPICS:
            found = await client.call_tool("memory_recall", {"query": PAIRS[topic][0]})
            _check(topic, text_of(found))
            _check(topic, listed)
            _check(topic, index)


NOT_EXPORTED = ("purged", "other-scope", "other-project")
"""What no export carries; an export of every status is the owner's copy of the store, so it
keeps superseded, rejected, expired and (being the owner's file) hand-restored records."""
NOT_ACTIVE = ("superseded", "rejected", "forgotten", "candidate", "tombstoned", *NOT_EXPORTED)
"""What an export of ``active`` records (what memdir believes) never carries: a tombstoned
value restored by hand is withheld there as on every other read; an expired one is kept
(an export holds every time)."""


def test_export_never_carries_purged_or_other_scope_text(fixture_store: Path) -> None:
    lines = memory.export_records(fixture_store, [])
    exported = "".join(lines)
    for topic in NOT_EXPORTED:
        _check(topic, exported)
    active = "".join(memory.export_records(fixture_store, ["active"]))
    for topic in NOT_ACTIVE:
        _check(topic, json.dumps([json.loads(x)["text"] for x in active.splitlines()]))


def test_amp_export_keeps_to_the_store_scope_and_project(
    fixture_store: Path, tmp_path: Path
) -> None:
    from memdir.service import portable

    every = tmp_path / "every"
    portable.export_amp(fixture_store, every, [])
    written = "".join(p.read_text() for p in every.rglob("*.md"))
    for topic in NOT_EXPORTED:
        _check(topic, written)
    active = tmp_path / "active"
    portable.export_amp(fixture_store, active, ["active"])
    written = "".join(p.read_text() for p in active.rglob("*.md"))
    for topic in NOT_ACTIVE:
        _check(topic, written)
