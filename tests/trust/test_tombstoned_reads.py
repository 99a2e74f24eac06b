"""A tombstoned value that arrives outside memdir's write path is not served (issue 10, mark 1).

A hand edit (or a copy from a backup, or a merge made with plain git) can put a rejected value
back as an active record: no write path saw it, so nothing refused it. ``memdir health`` names
it (``tombstoned_value_active``), and every read leaves it out, in the index query
(:class:`memdir.kernel.base.validity.Served` ``withheld``), until the owner lifts the
tombstone. Each "not served" is paired with the live belief on the same topic being served,
and with the value served again once the tombstone is lifted.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp.client.client import Client

from memdir import service
from memdir.kernel.base.caller import Caller
from memdir.mcp.server import build_server
from memdir.service import trust
from tests.conftest import run_cli, text_of
from tests.hooks.conftest import run_hook

OWNER = Caller("owner", "cli")
WRONG = "Puffin deploys skip the smoke tests on Fridays."
LIVE = "Puffin deploys run the smoke tests before the canary."


def _restored(store: Path) -> str:
    """Reject WRONG, then put it back by hand as an active record under a new id."""
    wrong = service.remember(store, WRONG, kind="rule", caller=OWNER).record
    service.remember(store, LIVE, kind="rule", caller=OWNER)
    service.reject(store, wrong.id, "we never skip them", caller=OWNER)
    folder = store / "records" / "rule"
    twin = wrong.id[:-4] + "zzzz"
    text = (folder / f"{wrong.id}.md").read_text()
    (folder / f"{twin}.md").write_text(
        text.replace(wrong.id, twin).replace('"rejected"', '"active"')
    )
    return twin


def _prompt(store: Path, session: str, prompt: str) -> str:
    project = store.parent
    payload = {"session_id": session, "hook_event_name": "UserPromptSubmit", "cwd": str(project)}
    return run_hook("UserPromptSubmit", {**payload, "prompt": prompt}, cwd=project).context


def _served(store: Path) -> list[str]:
    """What recall, the served listing and the CLI index give, as texts."""
    recalled = "\n".join(h.doc["text"] for h in service.recall(store, "puffin smoke tests").hits)
    listed = "\n".join(r.text for r in service.list_records(store, served_only=True))
    index = run_cli("index", "--json", "--store", str(store)).stdout
    return [recalled, listed, index]


ASKED = "is it still true that puffin deploys skip the smoke tests on fridays?"


def test_a_restored_tombstoned_value_is_withheld_until_the_owner_lifts_it(store: Path) -> None:
    twin = _restored(store)
    assert service.get(store, twin).status == "active"  # the file says active
    health = run_cli("health", "--json", "--store", str(store)).stdout
    assert "tombstoned_value_active" in health
    for surface in _served(store):
        assert WRONG not in surface and LIVE in surface
    assert WRONG not in _prompt(store, "s1", ASKED)
    live = "is it still true that puffin deploys run the smoke tests before the canary?"
    assert LIVE in _prompt(store, "s2", live)
    trust.lift(store, text=WRONG, caller=OWNER)
    for surface in _served(store):
        assert WRONG in surface and LIVE in surface
    assert WRONG in _prompt(store, "s3", ASKED)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_mcp_withholds_a_restored_tombstoned_value_until_it_is_lifted(store: Path) -> None:
    _restored(store)
    service.reindex(store)
    for lifted in (False, True):
        if lifted:
            trust.lift(store, text=WRONG, caller=OWNER)
        async with Client(build_server(store)) as client:
            for tool, args in (
                ("memory_recall", {"query": "puffin smoke tests"}),
                ("memory_list", {}),
                ("memory_index", {}),
            ):
                found = text_of(await client.call_tool(tool, args))
                assert (WRONG in found) is lifted and LIVE in found, tool
