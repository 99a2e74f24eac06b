"""Tombstones on the agent-facing write paths: MCP, the prompt hook, the observer.

Each surface gets a look-alike that the old similarity check let through (zero-width spaces,
Cyrillic letters), and each refusal is paired with the right value still being served.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from mcp.client.client import Client

from memdir import service
from memdir.mcp.server import build_server
from memdir.service import memory
from tests.conftest import text_of
from tests.hooks.conftest import hook  # noqa: F401 - the fixture

WRONG = "Always deploy on Fridays after lunch"
ZERO_WIDTH = "Always de\u200bploy on Fri\u200bdays after lunch"
CYRILLIC = "Alwаys dерlоy оn Fridаys аftеr lunсh"  # а е р о с are Cyrillic
RIGHT = "Never deploy on Fridays; deploys go out on Tuesdays"


def _reject(store: Path) -> None:
    wrong = service.remember(store, WRONG, kind="rule").record
    service.reject(store, wrong.id, "we never deploy on Fridays")
    service.remember(store, RIGHT, kind="rule")


def _active(store: Path) -> list[str]:
    return [r.text for r in service.list_records(store, statuses=["active", "candidate"])]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_mcp_remember_of_a_look_alike_is_a_refused_tool_error(store: Path) -> None:
    _reject(store)
    async with Client(build_server(store)) as client:
        for text in (ZERO_WIDTH, CYRILLIC):
            result = await client.call_tool("memory_remember", {"text": text, "kind": "rule"})
            assert result.is_error
            body: Any = result.content[0]
            assert "rejected_belief" in body.text or "tombstone" in body.text
        found = await client.call_tool("memory_recall", {"query": "deploy Tuesdays"})
        assert RIGHT in json.dumps(found.structured_content or text_of(found))
    assert _active(store) == [RIGHT]


def test_the_prompt_hook_does_not_store_a_look_alike(store: Path, hook: Any) -> None:  # noqa: F811
    _reject(store)
    run = hook("UserPromptSubmit", prompt=f"remember that {CYRILLIC.lower()}")
    assert "memdir did not store" in run.context
    assert _active(store) == [RIGHT]
    assert WRONG not in hook("UserPromptSubmit", prompt="when do we deploy?", session="s2").context


def test_the_observer_proposes_no_look_alike_candidate(store: Path) -> None:
    _reject(store)
    service.journal_append(store, "user", f"remember that {ZERO_WIDTH.lower()}", session="s1")
    service.journal_append(store, "user", "remember that logs are shipped to Loki", session="s1")
    memory.observe_once(store, offline=True)
    texts = _active(store)
    assert RIGHT in texts and any("Loki" in t for t in texts)
    assert not [t for t in texts if "Fri" in t and "Tuesdays" not in t]
