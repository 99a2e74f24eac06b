"""Two MCP servers and the CLI writing one store at the same time lose nothing."""

from __future__ import annotations

import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from memdir import service


def _server_writes(store: Path, tag: str, count: int) -> list[str]:
    server = subprocess.Popen(
        [sys.executable, "-m", "memdir", "serve", "--store", str(store)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert server.stdin is not None and server.stdout is not None

    def send(message: dict) -> dict | None:
        server.stdin.write((json.dumps(message) + "\n").encode())  # type: ignore[union-attr]
        server.stdin.flush()  # type: ignore[union-attr]
        if "id" not in message:
            return None
        return json.loads(server.stdout.readline())  # type: ignore[union-attr]

    send(
        {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": tag, "version": "0"},
            },
        }
    )
    send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    ids = []
    for n in range(count):
        reply = send(
            {
                "jsonrpc": "2.0",
                "id": n + 1,
                "method": "tools/call",
                "params": {
                    "name": "memory_remember",
                    "arguments": {"text": f"{tag} belief {n} about subject{tag}{n}"},
                },
            }
        )
        assert reply is not None and not reply["result"].get("isError"), reply
        ids.append(json.loads(reply["result"]["content"][0]["text"])["id"])
    server.stdin.close()
    server.wait(timeout=60)
    server.stdout.close()
    return ids


def _cli_writes(store: Path, count: int) -> list[str]:
    ids = []
    for n in range(count):
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "memdir",
                "remember",
                f"cli belief {n} about subjectcli{n}",
                "--store",
                str(store),
            ],
            capture_output=True,
            text=True,
            check=True,
        )
        ids.append(done.stdout.strip())
    return ids


def test_two_servers_and_the_cli_lose_nothing(store: Path) -> None:
    with ThreadPoolExecutor(3) as pool:
        a = pool.submit(_server_writes, store, "alpha", 15)
        b = pool.submit(_server_writes, store, "beta", 15)
        c = pool.submit(_cli_writes, store, 8)
        acknowledged = set(a.result()) | set(b.result()) | set(c.result())
    assert len(acknowledged) == 38
    assert {r.id for r in service.list_records(store)} == acknowledged
    assert service.health(store).ok
