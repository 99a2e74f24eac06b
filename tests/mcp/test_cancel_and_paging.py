"""MCP cancellation and bounded results, over real stdio (cases B54, B55).

Cancellation is driven with raw JSON-RPC over a pipe, because the timing matters: the cancel
travels right behind its request, and stdin closes at once. Paging is driven by the ``mcp``
SDK's own client against ``memdir serve`` started as a subprocess.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters

from memdir import service
from memdir.kernel.base.ids import mint_id
from memdir.kernel.storage.lock import store_lock
from memdir.service.memory import import_records
from tests.conftest import text_of
from tests.mcp.test_server import INITIALIZE

SERVE = [sys.executable, "-m", "memdir", "serve"]
HOST_CAP_TOKENS = 18_000
"""What every tool result must stay under (ceil(bytes / 4)); Claude Code refuses over 25k."""
PROMPT_EXIT_SECONDS = 15.0
"""A generous bound on a shared 2-core machine; the bug held the process for 60 s."""

HANDSHAKE: list[dict[str, Any]] = [
    INITIALIZE,
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
]


def _remember(request_id: int, text: str) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": "memory_remember", "arguments": {"text": text}},
    }


def _cancel(request_id: int) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {"requestId": request_id, "reason": "the user pressed Esc"},
    }


def _line(message: dict[str, Any]) -> bytes:
    return (json.dumps(message) + "\n").encode()


class Server:
    """``memdir serve`` on pipes; replies collected by a reader thread."""

    def __init__(self, store: Path) -> None:
        self.process = subprocess.Popen(
            SERVE,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, "MEMDIR_STORE": str(store)},
            cwd=store.parent,
        )
        self.replies: list[dict[str, Any]] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.replies.append(json.loads(line))

    def send(self, *messages: dict[str, Any]) -> None:
        """Write ``messages`` in one write, so they reach the server together."""
        assert self.process.stdin is not None
        self.process.stdin.write(b"".join(_line(m) for m in messages))
        self.process.stdin.flush()

    def wait_for(self, request_id: int, seconds: float = 60.0) -> dict[str, Any]:
        """Return the reply to ``request_id`` once it arrives."""
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            for reply in self.replies:
                if reply.get("id") == request_id:
                    return reply
            time.sleep(0.02)
        raise AssertionError(f"no reply to {request_id}: {self.replies}")

    def close_and_time_exit(self) -> float:
        """Close stdin; return the seconds until the process exited (it must exit)."""
        assert self.process.stdin is not None
        closed = time.monotonic()
        self.process.stdin.close()
        self.process.wait(timeout=90)
        took = time.monotonic() - closed
        self._reader.join(timeout=10)
        assert self.process.stderr is not None
        errors = self.process.stderr.read()
        self.process.stderr.close()
        assert self.process.stdout is not None
        self.process.stdout.close()
        assert self.process.returncode == 0, errors
        assert b"Traceback" not in errors, errors
        return took


def _texts(store: Path) -> list[str]:
    return [r.text for r in service.list_records(store)]


@pytest.mark.slow
def test_a_request_cancelled_before_it_ran_is_answered_cancelled_and_writes_nothing(
    store: Path,
) -> None:
    server = Server(store)
    server.send(*HANDSHAKE)
    server.wait_for(1)
    # The cancel rides right behind its request; a second call is not cancelled.
    server.send(
        _remember(2, "The cancelled belief about queues"),
        _cancel(2),
        _remember(3, "The kept belief about caches"),
    )
    took = server.close_and_time_exit()

    assert took < PROMPT_EXIT_SECONDS, f"lingered {took:.1f} s after stdin closed"
    by_id = {r["id"]: r for r in server.replies if "id" in r}
    assert by_id[2]["error"]["code"] == -32800  # answered as cancelled, once
    assert [r.get("id") for r in server.replies].count(2) == 1
    assert by_id[3]["result"]["isError"] is False  # the call that was not cancelled ran
    assert _texts(store) == ["The kept belief about caches"]


@pytest.mark.slow
def test_the_server_exits_promptly_after_a_cancel_of_a_call_already_running(
    store: Path,
) -> None:
    server = Server(store)
    server.send(*HANDSHAKE)
    server.wait_for(1)
    # The store lock is held, so the write waits inside its tool; the cancel reaches the SDK
    # while it runs. The SDK never answers a cancelled call: the end of input must not wait
    # for that answer.
    with store_lock(store, "test", 10):
        server.send(_remember(2, "A belief written while the store was busy"))
        time.sleep(1.0)  # the call is running (waiting for the lock)
        server.send(_cancel(2))
        time.sleep(0.5)
    took = server.close_and_time_exit()
    assert took < PROMPT_EXIT_SECONDS, f"lingered {took:.1f} s after stdin closed"
    # A call that had started may finish its write (it is then whole) or not start it at all.
    assert _texts(store) in ([], ["A belief written while the store was busy"])


@pytest.mark.slow
def test_a_cancel_after_the_answer_changes_nothing(store: Path) -> None:
    server = Server(store)
    server.send(*HANDSHAKE, _remember(2, "The deploy day is Friday"))
    assert server.wait_for(2)["result"]["isError"] is False
    server.send(_cancel(2), _cancel(99))  # late, and for an id never sent
    took = server.close_and_time_exit()
    assert took < PROMPT_EXIT_SECONDS
    assert [r.get("id") for r in server.replies] == [1, 2]
    assert _texts(store) == ["The deploy day is Friday"]


# --- B55: every result under the hosts' cap, paged --------------------------------------------


def _seed(store: Path, tmp_path: Path, count: int) -> set[str]:
    lines = []
    ids = set()
    for n in range(count):
        record_id = mint_id("fact")
        while record_id in ids:  # 20 random bits a millisecond: a tight loop can collide
            record_id = mint_id("fact")
        ids.add(record_id)
        text = (
            f"Service number {n} of the fleet runs behind the regional gateway, retries three "
            f"times with jitter, and pages the on-call rotation named team-{n % 17} after "
            "five minutes of errors."
        )
        lines.append(json.dumps({"id": record_id, "kind": "fact", "text": text, "body": ""}))
    source = tmp_path / "seed.jsonl"
    source.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert import_records(store, source).imported == count
    return ids


def _tokens(result: Any) -> int:
    """The host's estimate of a tool result: ceil(bytes / 4) of its text, as sent."""
    text = "".join(block.text for block in result.content)
    return math.ceil(len(text.encode("utf-8")) / 4)


def _payload(result: Any) -> dict[str, Any]:
    assert not result.is_error, result.content
    return dict(json.loads(text_of(result)))


@pytest.mark.slow
@pytest.mark.anyio
async def test_index_and_list_of_600_records_page_under_the_host_cap(
    store: Path, tmp_path: Path, anyio_backend: str
) -> None:
    ids = _seed(store, tmp_path, 600)
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "memdir", "serve"],
        env={**os.environ, "MEMDIR_STORE": str(store)},
        cwd=str(store.parent),
    )
    async with Client(params) as client:
        for tool, arguments in (("memory_index", {}), ("memory_list", {"limit": 100})):
            seen: list[str] = []
            pages = 0
            cursor: str | None = None
            while True:
                call = dict(arguments, **({"cursor": cursor} if cursor else {}))
                result = await client.call_tool(tool, call)
                assert _tokens(result) < HOST_CAP_TOKENS, (tool, pages, _tokens(result))
                payload = _payload(result)
                assert payload["results"], (tool, pages)  # a page never comes back empty
                seen += [row["id"] for row in payload["results"]]
                pages += 1
                cursor = payload["next_cursor"]
                if cursor is None:
                    break
            assert pages >= 2, tool  # 600 records do not fit one result
            assert len(seen) == len(set(seen)) == 600, tool  # every record once, none twice
            assert set(seen) == ids, tool

        small = _payload(await client.call_tool("memory_list", {"limit": 5}))
        assert len(small["results"]) == 5 and small["next_cursor"] == "5"
        bad = await client.call_tool("memory_index", {"cursor": "not-a-cursor"})
        assert bad.is_error and "cursor" in text_of(bad)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def test_one_record_bigger_than_the_cap_comes_back_cut_and_marked() -> None:
    from memdir.mcp.server import page

    rows = [{"id": "f-big", "text": "short", "body": "配" * 100_000}, {"id": "f-next", "text": "x"}]
    first = page(rows, 0, 10)
    assert first["results"][0]["id"] == "f-big"
    assert first["results"][0]["body_cut"] is True
    assert first["results"][0]["body"] and "配" * 100 in first["results"][0]["body"]
    assert math.ceil(len(json.dumps(first, indent=2).encode()) / 4) < HOST_CAP_TOKENS
    rest = page(rows, len(first["results"]), 10)["results"] if first["next_cursor"] else []
    assert [r["id"] for r in [*first["results"], *rest]] == ["f-big", "f-next"]
