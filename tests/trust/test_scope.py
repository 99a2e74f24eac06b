"""Scope enforced in retrieval (issue 10, mark 4).

Write in project A, ask from project B: nothing, on every serving surface; asked from A, the
same belief is there. The user store's beliefs reach B, labelled; a project-scoped file that
found its way into the user store (a hand copy) is held back by the scope filter.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp.client.client import Client

from memdir import service
from memdir.kernel.storage import manifest
from memdir.mcp.server import build_server
from memdir.service import memory, portable
from tests.conftest import git, run_cli, text_of
from tests.hooks.conftest import run_hook
from tests.mcp.test_server import INITIALIZE

SECRET_OF_A = "The billing service in Aardvark signs webhooks with HMAC-SHA512."
MINE = "I prefer small commits with imperative subject lines everywhere."
PLANTED = "The billing service in Aardvark deploys from the blue cluster."


def _project(root: Path) -> Path:
    root.mkdir()
    git(root, "init", "-q")
    (root / "README.md").write_text(f"# project {root.name}\n")  # its own root commit
    git(root, "add", "README.md")
    git(root, "commit", "-qm", "initial")
    store = service.init(root).store
    manifest = store / "memdir.toml"
    manifest.write_text(
        manifest.read_text().replace("observe_every_seconds = 300", "observe_every_seconds = 0")
    )
    git(store, "commit", "-qam", "tests: no background observer")
    service.remember(store, "Logs are shipped to Loki.")
    return store


@pytest.fixture
def two(tmp_path: Path) -> tuple[Path, Path]:
    """Projects A and B, a belief written in A, and a user store with the person's own one."""
    a, b = _project(tmp_path / "a"), _project(tmp_path / "b")
    service.remember(a, SECRET_OF_A, kind="decision")
    user = service.init(tmp_path, user=True).store
    service.remember(user, MINE, kind="preference")
    service.remember(user, "I read documentation in English.", kind="preference")
    return a, b


def _prompt(store: Path, prompt: str, session: str = "s1") -> str:
    project = store.parent
    payload = {"session_id": session, "hook_event_name": "UserPromptSubmit", "cwd": str(project)}
    run = run_hook("UserPromptSubmit", {**payload, "prompt": prompt}, cwd=project)
    return run.context


def _start(store: Path) -> str:
    project = store.parent
    payload = {"session_id": "s0", "hook_event_name": "SessionStart", "cwd": str(project)}
    return run_hook("SessionStart", {**payload, "source": "startup"}, cwd=project).context


def _texts(store: Path, query: str) -> list[str]:
    return [h.doc["text"] for h in service.recall(store, query).hits]


def test_recall_in_b_never_returns_what_a_knows_and_a_does(two: tuple[Path, Path]) -> None:
    a, b = two
    assert SECRET_OF_A in _texts(a, "billing webhooks HMAC")
    assert SECRET_OF_A not in _texts(b, "billing webhooks HMAC")
    assert MINE in _texts(b, "commits subject lines")  # the user store still answers in B


def test_injection_in_b_never_carries_a_and_carries_the_users_own_labelled(
    two: tuple[Path, Path],
) -> None:
    a, b = two
    service.remember(b, "Project B builds with cargo.", kind="fact")
    in_a = _prompt(a, "how does the billing service sign its webhooks?")
    assert "HMAC-SHA512" in in_a
    in_b = _prompt(b, "how does the billing service sign its webhooks?")
    assert "HMAC-SHA512" not in in_b
    asked = _prompt(b, "how should my commits and subject lines look?", session="s2")
    assert "imperative subject lines" in asked and "owner, user" in asked
    digest = _start(b)
    assert "imperative subject lines" in digest and "HMAC" not in digest


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_mcp_in_b_never_serves_a(two: tuple[Path, Path]) -> None:
    a, b = two
    for store, present in ((a, True), (b, False)):
        async with Client(build_server(store)) as client:
            found = []
            for tool, args in (
                ("memory_recall", {"query": "billing webhooks HMAC"}),
                ("memory_list", {}),
                ("memory_index", {}),
            ):
                result = await client.call_tool(tool, args)
                assert not result.is_error, result.content
                found.append("HMAC-SHA512" in text_of(result))
        assert found == [present] * 3


def test_a_project_record_copied_into_the_user_store_is_not_served(
    two: tuple[Path, Path],
) -> None:
    a, b = two
    planted = service.remember(a, PLANTED, kind="fact").record
    user = service.init(Path("."), user=True).store
    source = a / "records" / "fact" / f"{planted.id}.md"
    target = user / "records" / "fact" / source.name
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(source.read_text())  # scope: "project", now in the user store
    assert PLANTED in _texts(a, "billing blue cluster")
    assert PLANTED not in _texts(b, "billing blue cluster")
    assert MINE in _texts(b, "commits subject lines")
    assert PLANTED not in _prompt(b, "which cluster does billing deploy from?")


def test_serve_outside_any_project_serves_the_user_store(
    two: tuple[Path, Path], tmp_path: Path
) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    call = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "memory_recall", "arguments": {"query": "commits subject lines"}},
    }
    lines = [INITIALIZE, {"jsonrpc": "2.0", "method": "notifications/initialized"}, call]
    done = subprocess.run(
        [sys.executable, "-m", "memdir", "serve"],
        input="".join(json.dumps(x) + "\n" for x in lines).encode(),
        capture_output=True,
        cwd=outside,
        env={**os.environ},
        timeout=60,
        check=False,
    )
    replies: list[dict[str, Any]] = [json.loads(x) for x in done.stdout.splitlines()]
    answer = next(r for r in replies if r.get("id") == 2)
    assert "imperative subject lines" in answer["result"]["content"][0]["text"]
    assert b"serving the user store" in done.stderr


# --- project identity (issue 10, mark 4: the stored scope key names the project) -------------


def _identity(store: Path) -> str:
    return manifest.parse(store).project


def _file_of(store: Path, record_id: str) -> Path:
    return next((store / "records").rglob(f"{record_id}.md"))


def test_each_project_has_its_own_identity_and_its_records_carry_it(
    two: tuple[Path, Path],
) -> None:
    a, b = two
    assert _identity(a).startswith("prj-") and _identity(b).startswith("prj-")
    assert _identity(a) != _identity(b)
    hit = service.recall(a, "billing webhooks HMAC").hits[0]
    assert hit.doc["project"] == _identity(a)
    assert f'project: "{_identity(a)}"' in _file_of(a, hit.doc["id"]).read_text()
    user = service.init(Path("."), user=True).store
    assert _identity(user) == ""  # the user store is nobody's project
    mine = service.recall(user, "commits subject lines").hits[0]
    assert (
        mine.doc["project"] is None and "project:" not in _file_of(user, mine.doc["id"]).read_text()
    )


def test_every_clone_of_a_project_mints_the_same_identity(tmp_path: Path) -> None:
    origin = tmp_path / "origin"
    _project(origin)
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(origin), str(clone))
    again = service.init(clone).store
    assert _identity(again) == _identity(origin / ".memdir")
    assert str(tmp_path) not in (again / "memdir.toml").read_text()  # never a path


def test_a_record_file_copied_from_a_into_b_is_served_in_a_only(
    two: tuple[Path, Path], tmp_path: Path
) -> None:
    a, b = two
    record = service.recall(a, "billing webhooks HMAC").hits[0].doc
    source = _file_of(a, record["id"])
    (b / "records" / "decision").mkdir(parents=True, exist_ok=True)
    (b / "records" / "decision" / source.name).write_text(source.read_text())
    service.remember(b, "Project B signs its webhooks with Ed25519.", kind="decision")
    for store, present in ((a, True), (b, False)):
        recalled = "\n".join(_texts(store, "billing webhooks HMAC signs"))
        assert (SECRET_OF_A in recalled) is present
        index = run_cli("index", "--json", "--store", str(store)).stdout
        assert (SECRET_OF_A in index) is present
        listed = [r.text for r in service.list_records(store, served_only=True)]
        assert (SECRET_OF_A in listed) is present
        exported = "".join(memory.export_records(store, []))
        assert (SECRET_OF_A in exported) is present
        amp = tmp_path / f"amp-{store.parent.name}"
        portable.export_amp(store, amp, [])
        assert (SECRET_OF_A in "".join(p.read_text() for p in amp.rglob("*.md"))) is present
        prompt = _prompt(store, "how does the billing service sign its webhooks?")
        assert ("HMAC-SHA512" in prompt) is present
    # B's own belief on the same topic is served, and the copy is still a file in B's store
    assert "Project B signs its webhooks with Ed25519." in _texts(b, "billing webhooks signs")
    asked = "is it still true that project b signs its webhooks with ed25519?"
    assert "Ed25519" in _prompt(b, asked, session="s3")
    assert "HMAC" not in _start(b)


def test_an_import_from_another_projects_export_becomes_this_projects(
    two: tuple[Path, Path], tmp_path: Path
) -> None:
    a, b = two
    dump = tmp_path / "a.jsonl"
    dump.write_text("".join(memory.export_records(a, ["active"])))
    memory.import_records(b, dump)
    hit = next(h for h in service.recall(b, "billing webhooks HMAC").hits)
    assert hit.doc["text"] == SECRET_OF_A and hit.doc["project"] == _identity(b)


def test_a_store_from_before_identities_keeps_serving_and_adopts_one_on_its_first_write(
    tmp_path: Path,
) -> None:
    store = _project(tmp_path / "old")
    old = service.recall(store, "logs shipped loki").hits[0].doc
    ident = _identity(store)
    # turn it into a store written before identities: no manifest line, no record key
    text = (store / "memdir.toml").read_text()
    (store / "memdir.toml").write_text(
        "".join(line for line in text.splitlines(keepends=True) if not line.startswith("project ="))
    )
    path = _file_of(store, old["id"])
    path.write_text(
        "".join(
            line
            for line in path.read_text().splitlines(keepends=True)
            if not line.startswith("project:")
        )
    )
    git(store, "commit", "-qam", "a store from before project identities")
    service.reindex(store)
    assert _identity(store) == ""
    assert "Logs are shipped to Loki." in _texts(store, "logs shipped loki")
    service.remember(store, "Metrics are scraped by Prometheus.")
    assert _identity(store) == ident  # derived again from the same project: the same one
    assert git(store, "status", "--porcelain") == ""  # committed with the write
    assert "Logs are shipped to Loki." in _texts(store, "logs shipped loki")  # no key: its store's
    assert "Metrics are scraped by Prometheus." in _texts(store, "metrics scraped prometheus")
    # the manifest's other lines are as they were
    assert (store / "memdir.toml").read_text().replace(manifest.project_line(ident), "") == "".join(
        line for line in text.splitlines(keepends=True) if not line.startswith("project =")
    )


def _codes(store: Path) -> dict[str, list[dict[str, object]]]:
    found: dict[str, list[dict[str, object]]] = {}
    report = json.loads(run_cli("health", "--json", "--store", str(store)).stdout)
    for finding in report["findings"]:
        found.setdefault(str(finding["code"]), []).append(finding)
    return found


def test_health_names_a_record_copied_in_from_another_project_and_not_its_own(
    two: tuple[Path, Path],
) -> None:
    a, b = two
    record = service.recall(a, "billing webhooks HMAC").hits[0].doc
    source = next((a / "records").rglob(f"{record['id']}.md"))
    (b / "records" / "decision").mkdir(parents=True, exist_ok=True)
    (b / "records" / "decision" / source.name).write_text(source.read_text())
    own = service.remember(b, "Project B signs its webhooks with Ed25519.", kind="decision")
    named = _codes(b).get("record_of_another_store", [])
    assert [f["path"] for f in named] == [f"records/decision/{source.name}"]
    assert own.record.id not in json.dumps(named)  # B's own record is not named
    assert "record_of_another_store" not in _codes(a)  # in A, the same file is A's own


def test_health_notes_a_store_copied_wholesale_from_another_project(
    two: tuple[Path, Path], tmp_path: Path
) -> None:
    a, _ = two
    c = tmp_path / "c"
    _project(c)
    shutil.rmtree(c / ".memdir")
    shutil.copytree(a, c / ".memdir")
    noted = _codes(c / ".memdir").get("project_identity_foreign", [])
    assert len(noted) == 1 and noted[0]["level"] == "info"
    assert "project_identity_foreign" not in _codes(a)  # A's store is A's


def test_the_link_graph_in_b_shows_no_text_of_a_record_copied_from_a(
    two: tuple[Path, Path],
) -> None:
    a, b = two
    theirs = service.recall(a, "billing webhooks HMAC").hits[0].doc
    source = next((a / "records").rglob(f"{theirs['id']}.md"))
    (b / "records" / "decision").mkdir(parents=True, exist_ok=True)
    (b / "records" / "decision" / source.name).write_text(source.read_text())
    own = service.remember(
        b, "Project B signs its webhooks with Ed25519.", kind="decision", links=(theirs["id"],)
    ).record
    nodes = {n["id"]: n for n in service.graph(b, own.id).nodes}
    assert nodes[own.id]["text"] == own.text  # B's own record shows its text
    assert theirs["id"] in nodes and "text" not in nodes[theirs["id"]]
    assert service.graph(a, theirs["id"]).nodes[0]["text"] == SECRET_OF_A  # in A it is A's
