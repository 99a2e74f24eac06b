"""Every write path that dedupes reads polarity: MCP, the observer, importers (CLI: tests/cli).

Each test pairs "a contradiction is not deduped" with "a true duplicate still is", on one store.
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
from tests.importers.conftest import FIXTURES, run_import, texts

ALWAYS = "Always use tabs for indentation in Makefiles"
NEVER = "Never use tabs for indentation in Makefiles"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_mcp_remember_stores_a_contradiction_and_names_it(store: Path) -> None:
    old = service.remember(store, ALWAYS).record.id
    async with Client(build_server(store)) as client:

        async def remember(text: str) -> dict[str, Any]:
            result = await client.call_tool("memory_remember", {"text": text})
            assert not result.is_error, result.content
            return dict(json.loads(text_of(result)))

        new = await remember(NEVER)
        again = await remember("always use tabs for indentation in makefiles")
    assert new["created"] and new["id"] != old
    assert new["contradicts"] == [old] and f"contradicts {old}" in new["note"]
    assert (again["created"], again["id"], again["contradicts"]) == (False, old, [])
    active = {r.text for r in service.list_records(store)}
    assert active == {ALWAYS, NEVER}


def _say(store: Path, text: str, session: str = "s1") -> None:
    service.journal_append(store, "user", text, session=session)


def test_the_observer_proposes_the_reverse_of_an_active_rule(store: Path) -> None:
    old = service.remember(store, ALWAYS, kind="rule").record.id
    _say(store, NEVER + ".")
    _say(store, ALWAYS + ".")
    result = memory.observe_once(store, offline=True)
    assert len(result.candidates) == 1  # the reverse is news; the repeat is not
    candidate = service.get(store, result.candidates[0])
    assert (candidate.text, candidate.status) == (NEVER, "candidate")
    assert service.get(store, old).status == "active"


def test_the_observer_keeps_the_reverse_of_a_superseded_rule(store: Path) -> None:
    old = service.remember(store, "Always use spaces for indentation in Makefiles", kind="rule")
    service.correct(store, old.record.id, ALWAYS)
    _say(store, NEVER + ".")
    _say(store, "Always use spaces for indentation in Makefiles.")  # what was corrected away
    result = memory.observe_once(store, offline=True)
    assert [service.get(store, c).text for c in result.candidates] == [NEVER]
    assert [d["why"].split(":")[0] for d in result.dropped] == ["superseded"]


def test_an_import_keeps_the_reverse_of_a_rejected_belief(store: Path) -> None:
    reversed_ = service.remember(store, "Always commit directly to main; open a pull request")
    service.reject(store, reversed_.record.id, "we open pull requests")
    repeated = service.remember(store, "Always run pnpm lint before pushing", kind="rule")
    service.reject(store, repeated.record.id, "CI lints; no need locally")
    report = run_import("claude-md", FIXTURES / "claude-md")
    refused = report["refused_by_reason"]
    assert refused[f"repeats rejected {repeated.record.id}"] == 1
    assert f"repeats rejected {reversed_.record.id}" not in refused
    assert "Never commit directly to main; open a pull request." in texts(store)
