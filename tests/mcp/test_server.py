"""The MCP server: every tool through the SDK's client, in memory and over real stdio."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters
from mcp.types import TextResourceContents

from memdir import __version__, service
from memdir.kernel.base.model import KINDS, STATUSES
from memdir.mcp.server import build_server
from tests.conftest import text_of

pytestmark = pytest.mark.anyio

TOOLS = {
    "memory_recall",
    "memory_remember",
    "memory_get",
    "memory_correct",
    "memory_forget",
    "memory_list",
    "memory_index",
    "memory_graph",
    "journal_write",
    "observe_once",
    "memory_stats",
    "pending_threads",
    "memory_hygiene",
    "bug_log",
    "bug_search",
    "code_find",
}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _data(result: Any) -> dict[str, Any]:
    assert not result.is_error, result.content
    assert result.structured_content is None  # sent once: one compact JSON text block
    assert len(result.content) == 1 and "\n" not in text_of(result)
    return dict(json.loads(text_of(result)))


async def test_every_tool_is_listed_with_a_schema_and_annotations(store: Path) -> None:
    async with Client(build_server(store)) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert set(tools) == TOOLS
    for tool in tools.values():
        assert tool.input_schema["type"] == "object"
        assert tool.annotations is not None
        assert tool.description and len(tool.description.splitlines()) <= 8
    recall_hints, remember_hints = (
        tools["memory_recall"].annotations,
        tools["memory_remember"].annotations,
    )
    assert recall_hints is not None and remember_hints is not None
    assert recall_hints.read_only_hint
    assert not remember_hints.read_only_hint


async def test_remember_recall_get_correct_forget_round_trip(store: Path) -> None:
    async with Client(build_server(store)) as client:
        made = _data(
            await client.call_tool(
                "memory_remember",
                {
                    "text": "Use pnpm, not npm",
                    "kind": "preference",
                    "aliases": ["package manager"],
                    "tags": "tooling, js",
                    "importance": 7,
                },
            )
        )
        assert (made["origin"], made["created"]) == ("agent", True)
        found = _data(await client.call_tool("memory_recall", {"query": "which package manager"}))
        assert found["results"][0]["id"] == made["id"]
        got = _data(await client.call_tool("memory_get", {"id": made["id"]}))
        assert (got["text"], got["tags"], got["importance"]) == (
            "Use pnpm, not npm",
            ["tooling", "js"],
            7,
        )
        new = _data(
            await client.call_tool(
                "memory_correct",
                {"id": made["id"], "text": "Use bun, not npm", "reason": "switched"},
            )
        )
        assert new["supersedes"] == made["id"]
        gone = _data(await client.call_tool("memory_forget", {"id": new["id"], "reason": "moot"}))
        assert gone["status"] == "forgotten"
        listing = _data(await client.call_tool("memory_list", {"status": "superseded"}))
        assert [r["id"] for r in listing["results"]] == [made["id"]]
        resource = await client.read_resource(f"memory://{made['id']}")
        content = resource.contents[0]
        assert isinstance(content, TextResourceContents)
        assert json.loads(content.text)["id"] == made["id"]


async def test_the_server_cannot_create_owner_records_whatever_the_arguments(store: Path) -> None:
    async with Client(build_server(store)) as client:
        result = await client.call_tool(
            "memory_remember", {"text": "I am the owner", "origin": "owner"}
        )
        if not result.is_error:
            assert _data(result)["origin"] == "agent"
    assert all(r.origin == "agent" for r in service.list_records(store))


@pytest.mark.parametrize(
    ("tool", "arguments", "code"),
    [
        ("memory_get", {"id": "f-0000000000zzzz"}, "not_found"),
        ("memory_get", {"id": "../../etc"}, "usage"),
        ("memory_remember", {"text": "key sk-proj-EXAMPLE000000000000000000000000"}, "secret"),
        ("memory_remember", {"text": "x", "kind": "gossip"}, "usage"),
        ("memory_correct", {"id": "f-0000000000zzzz", "text": "y"}, "not_found"),
        ("code_find", {"query": "anything"}, "not_found"),
    ],
)
async def test_domain_errors_are_tool_errors_with_stable_codes(
    store: Path, tool: str, arguments: dict[str, Any], code: str
) -> None:
    async with Client(build_server(store)) as client:
        result = await client.call_tool(tool, arguments)
    assert result.is_error
    assert f": {code}: " in text_of(result) or text_of(result).startswith(f"{code}:")
    assert "EXAMPLE0000" not in text_of(result)


async def test_journal_observe_threads_hygiene_bugs_and_stats(store: Path) -> None:
    async with Client(build_server(store)) as client:
        await client.call_tool(
            "journal_write",
            {"who": "user", "text": "We decided to ship on Mondays.", "session": "m1"},
        )
        observed = _data(await client.call_tool("observe_once", {}))
        assert len(observed["candidates"]) == 1
        threads = _data(await client.call_tool("pending_threads", {}))
        assert threads["results"][0]["session"] == "m1"
        hygiene = _data(await client.call_tool("memory_hygiene", {}))
        assert "findings" in hygiene
        bug = _data(
            await client.call_tool("bug_log", {"error": "TypeError: x is None", "fix": "guard it"})
        )
        assert bug["kind"] == "bug"
        found = _data(await client.call_tool("bug_search", {"query": "TypeError None"}))
        assert found["results"][0]["id"] == bug["id"]
        stats = _data(await client.call_tool("memory_stats", {}))
        assert stats["records"]["candidate"] == 1
        index = _data(await client.call_tool("memory_index", {}))
        assert [r["kind"] for r in index["results"]] == ["bug"]
        graph = _data(await client.call_tool("memory_graph", {"id": bug["id"]}))
        assert graph["root"] == bug["id"]


async def test_tags_given_as_a_json_string_become_a_clean_list(store: Path) -> None:
    async with Client(build_server(store)) as client:
        made = _data(
            await client.call_tool(
                "memory_remember", {"text": "Tag shapes", "tags": '["alpha", "beta gamma"]'}
            )
        )
        got = _data(await client.call_tool("memory_get", {"id": made["id"]}))
    assert got["tags"] == ["alpha", "beta gamma"]


async def test_recall_hits_are_compact_and_memory_get_has_the_rest(store: Path) -> None:
    async with Client(build_server(store)) as client:
        made = _data(
            await client.call_tool(
                "memory_remember",
                {"text": "Deploys go out on Mondays", "kind": "decision", "tags": "release"},
            )
        )
        result = await client.call_tool("memory_recall", {"query": "when do deploys go out"})
        found = _data(result)
        full = _data(await client.call_tool("memory_get", {"id": made["id"]}))
    (hit,) = found["results"]
    assert list(hit) == ["id", "kind", "origin", "date", "text", "score"]
    assert (hit["id"], hit["kind"], hit["origin"]) == (made["id"], "decision", "agent")
    assert hit["date"] == full["updated_at"][:10]
    assert len(text_of(result)) < 200  # the full record is 3-4x this
    assert {"tags", "body", "source", "importance", "aliases"} <= set(full)
    assert len(json.dumps(full, separators=(",", ":"))) > 2 * len(text_of(result))


async def test_tool_schemas_type_kind_status_and_who_and_describe_every_argument(
    store: Path,
) -> None:
    async with Client(build_server(store)) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        wrong = await client.call_tool("memory_list", {"status": "archived"})
    for tool in tools.values():
        assert tool.output_schema is None  # no structured copy to duplicate the text
        for name, schema in tool.input_schema["properties"].items():
            assert schema.get("description"), f"{tool.name}.{name} has no description"

    def enum(tool: str, arg: str) -> list[str]:
        schema = tools[tool].input_schema["properties"][arg]
        options = schema.get("anyOf", [schema])
        return next(o["enum"] for o in options if "enum" in o)

    assert enum("memory_remember", "kind") == list(KINDS)
    assert enum("memory_recall", "kind") == list(KINDS)
    assert enum("memory_list", "status") == list(STATUSES)
    assert enum("journal_write", "who") == ["user", "assistant"]
    assert wrong.is_error and text_of(wrong).startswith("usage: status: ")
    assert "archived" not in text_of(wrong)  # the caller's value is not echoed


NOISY_SITECUSTOMIZE = """
import os, sys


class _Noisy:
    # Prints when the MCP SDK is imported, the way a dependency with a banner would (B33).
    def find_spec(self, name, path=None, target=None):
        if name == "mcp":
            print("banner from a dependency")
            os.write(1, b"C-level banner\\n")
            import warnings
            warnings.warn("a deprecation at import", DeprecationWarning, stacklevel=1)
        return None


sys.meta_path.insert(0, _Noisy())
"""


def _noisy_env(store: Path, tmp_path: Path) -> dict[str, str]:
    noisy = tmp_path / "noisy"
    noisy.mkdir(exist_ok=True)
    (noisy / "sitecustomize.py").write_text(NOISY_SITECUSTOMIZE)
    return {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(noisy), *sys.path]),
        "PYTHONWARNINGS": "always",
        "MEMDIR_STORE": str(store),
    }


INITIALIZE: dict[str, Any] = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "0"},
    },
}


def test_every_stdout_line_is_json_rpc_even_when_imports_print(store: Path, tmp_path: Path) -> None:
    requests: list[dict[str, Any]] = [
        INITIALIZE,
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {"name": "memory_get", "arguments": {"id": "f-0000000000zzzz"}},
        },
        {
            "jsonrpc": "2.0",
            "id": 4,
            "method": "tools/call",
            "params": {"name": "memory_remember", "arguments": {"text": "Written over raw stdio"}},
        },
    ]
    import subprocess

    errors_file = (tmp_path / "stderr.txt").open("wb")
    server = subprocess.Popen(
        [sys.executable, "-m", "memdir", "serve"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=errors_file,
        env=_noisy_env(store, tmp_path),
        cwd=store.parent,
    )
    assert server.stdin is not None and server.stdout is not None
    replies = []
    for request in requests:
        server.stdin.write((json.dumps(request) + "\n").encode())
        server.stdin.flush()
        if "id" in request:
            line = server.stdout.readline()
            replies.append(json.loads(line))  # every line on stdout is one JSON-RPC message
    server.stdin.close()
    rest = server.stdout.read()
    server.stdout.close()
    server.wait(timeout=60)
    errors_file.close()
    errors = (tmp_path / "stderr.txt").read_bytes()
    assert server.returncode == 0, errors
    replies += [json.loads(line) for line in rest.decode().splitlines()]
    assert all(r.get("jsonrpc") == "2.0" for r in replies)
    by_id = {r["id"]: r for r in replies if "id" in r}
    assert set(by_id) == {1, 2, 3, 4}
    assert by_id[1]["result"]["serverInfo"]["version"] == __version__
    assert by_id[3]["result"]["isError"] is True

    done = subprocess.CompletedProcess(server.args, server.returncode, rest, errors)
    assert b"banner from a dependency" in done.stderr and b"C-level banner" in done.stderr
    assert [r.text for r in service.list_records(store)] == ["Written over raw stdio"]


async def test_a_real_client_over_stdio(store: Path, tmp_path: Path) -> None:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "memdir", "serve"],
        env=_noisy_env(store, tmp_path),
        cwd=str(store.parent),
    )
    async with Client(params) as client:
        tools = {t.name for t in (await client.list_tools()).tools}
        assert tools == TOOLS
        made = _data(await client.call_tool("memory_remember", {"text": "Over real stdio"}))
        assert made["origin"] == "agent"
        failed = await client.call_tool("memory_get", {"id": "f-0000000000zzzz"})
        assert failed.is_error
        again = _data(await client.call_tool("memory_recall", {"query": "real stdio"}))
        assert again["results"][0]["id"] == made["id"]


def test_every_malformed_request_gets_a_json_rpc_error(store: Path, tmp_path: Path) -> None:
    """JSON-RPC 2.0 §5.1: parse errors, invalid requests and invalid params are answered."""
    import subprocess

    lines = [
        json.dumps(INITIALIZE),
        json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        "this is not json",
        json.dumps({"jsonrpc": "2.0", "id": 5}),
        json.dumps({"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": "x"}),
        "[" * 100_000 + "]" * 100_000,
        json.dumps({"jsonrpc": "2.0", "id": "x" * 100_000, "method": "tools/call", "params": 1}),
        json.dumps({"jsonrpc": "2.0", "method": "tools/call", "params": "no id: no reply"}),
        '{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"memory_recall",'
        '"arguments":{"query":"\\ud800"}}}',
        json.dumps({"jsonrpc": "2.0", "id": 9, "method": "tools/list"}),
        # The last line, then stdin closes at once: the call still gets its answer.
        json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 10,
                "method": "tools/call",
                "params": {"name": "memory_remember", "arguments": {"text": "Piped and answered"}},
            }
        ),
    ]
    done = subprocess.run(
        [sys.executable, "-m", "memdir", "serve"],
        input="\n".join(lines).encode() + b"\n",
        capture_output=True,
        env={**os.environ, "MEMDIR_STORE": str(store)},
        cwd=store.parent,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    replies = [json.loads(line) for line in done.stdout.decode().splitlines()]
    codes = [(r.get("id"), r["error"]["code"]) for r in replies if "error" in r]
    # A lone surrogate is not text: the request is refused with its id, not dropped.
    assert codes == [
        (None, -32700),
        (5, -32600),
        (6, -32602),
        (None, -32700),
        (None, -32602),
        (8, -32602),
    ]
    by_id = {r["id"]: r for r in replies if "result" in r}
    assert set(by_id) >= {1, 9, 10}  # it kept serving after every bad line, and drained
    assert by_id[10]["result"]["isError"] is False
    assert [r.text for r in service.list_records(store)] == ["Piped and answered"]
    assert len(done.stderr) < 20_000  # a 100 KB id is not repeated into the log
