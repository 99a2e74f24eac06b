"""``memdir serve`` answers the handshake before the SDK is imported (issue 16, item 2).

The answers come from a snapshot of the SDK's own answers on an earlier start; they must be the
same as the SDK's, and everything after the handshake must still work, in order.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from memdir import service
from memdir.mcp import start
from tests.mcp.test_server import INITIALIZE

INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
GET = {
    "jsonrpc": "2.0",
    "id": 3,
    "method": "tools/call",
    "params": {"name": "memory_get", "arguments": {"id": "ID"}},
}


def _serve(cwd: Path, lines: list[dict[str, Any]], *, trace: bool = False) -> tuple[list[Any], str]:
    args = [sys.executable, *(["-X", "importtime"] if trace else []), "-m", "memdir", "serve"]
    done = subprocess.run(
        args,
        input="".join(json.dumps(line) + "\n" for line in lines).encode(),
        cwd=cwd,
        capture_output=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return [json.loads(line) for line in done.stdout.splitlines()], done.stderr.decode()


def _by_id(replies: list[Any]) -> dict[Any, Any]:
    return {reply.get("id"): reply for reply in replies}


@pytest.mark.slow
def test_a_second_start_answers_the_handshake_as_the_sdk_did(store: Path) -> None:
    record = service.remember(store, "The staging database is called ferret").record
    get = {**GET, "params": {"name": "memory_get", "arguments": {"id": record.id}}}
    first, _ = _serve(store.parent, [INITIALIZE, INITIALIZED, LIST, get])
    snapshot = json.loads((store / "state" / start.SNAPSHOT).read_text())
    assert snapshot["initialize"] == _by_id(first)[1]["result"]
    assert snapshot["tools/list"] == _by_id(first)[2]["result"]
    second, imports = _serve(store.parent, [INITIALIZE, INITIALIZED, LIST, get], trace=True)
    assert [r["id"] for r in second] == [1, 2, 3]  # no reply to the replayed initialize
    assert _by_id(second)[1]["result"] == _by_id(first)[1]["result"]
    assert _by_id(second)[2]["result"] == _by_id(first)[2]["result"]
    assert "ferret" in json.dumps(_by_id(second)[3]["result"])  # the SDK took over after it
    assert "import time:" in imports  # (the trace ran)
    alone, _ = _serve(store.parent, [INITIALIZE, INITIALIZED, LIST])  # the handshake only
    assert [r["id"] for r in alone] == [1, 2]
    assert alone == second[:2]


@pytest.mark.slow
def test_a_snapshot_of_another_server_is_never_used(store: Path) -> None:
    _serve(store.parent, [INITIALIZE, INITIALIZED, LIST])
    path = store / "state" / start.SNAPSHOT
    stale = json.loads(path.read_text())
    stale["key"] = "another memdir"
    stale["tools/list"] = {"tools": [{"name": "made_up", "inputSchema": {"type": "object"}}]}
    path.write_text(json.dumps(stale))
    replies, _ = _serve(store.parent, [INITIALIZE, INITIALIZED, LIST])
    names = [tool["name"] for tool in _by_id(replies)[2]["result"]["tools"]]
    assert "made_up" not in names
    assert "memory_recall" in names
    assert json.loads(path.read_text())["key"] != "another memdir"  # rewritten from the SDK


@pytest.mark.slow
def test_another_protocol_version_is_answered_by_the_sdk(store: Path) -> None:
    _serve(store.parent, [INITIALIZE, INITIALIZED, LIST])
    older = {**INITIALIZE, "params": {**INITIALIZE["params"], "protocolVersion": "2024-11-05"}}
    replies, _ = _serve(store.parent, [older, INITIALIZED, LIST])
    assert _by_id(replies)[1]["result"]["protocolVersion"] == "2024-11-05"
    assert _by_id(replies)[2]["result"]["tools"]
