"""Containment: nothing outside the project or its store is read, written or recorded.

A *canary* folder sits beside the project. Its files hold a line no test ever writes anywhere
else, shaped to be picked up if read (a Markdown heading becomes an anatomy description, a
JSON line becomes a journal turn, a record file becomes a record). Every test then points
memdir at it in one hostile way (``..``, absolute paths, Windows drive letters and UNC shares,
symlinks and hard links, record ids, import lines, ``--store``, MCP arguments, anatomy scans)
and checks three things: the canary line appears in no file of the store or the user store,
in no git object and in no output; the canary folder is byte-for-byte unchanged; and nothing
outside the project was recorded as a project path (DESIGN §10.4, cases B05 and B27).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from memdir import service
from memdir.kernel.base.model import Record
from memdir.kernel.storage import paths
from memdir.kernel.storage.recordfile import dump
from tests.conftest import git, run_cli, text_of
from tests.hooks.conftest import run_hook
from tests.reliability.runner import git_objects

CANARY = "CANARY-4f1e-outside-the-project"
"""The line the canary files hold; it must never reach memdir's files or output."""


class Jail:
    """A project with a store, a canary folder beside it, and everything memdir printed."""

    def __init__(self, store: Path, canary: Path) -> None:
        self.store = store
        self.canary = canary
        self.outputs: list[str] = []
        self.before = _snapshot(canary)

    @property
    def project(self) -> Path:
        return self.store.parent

    def cli(self, *args: str) -> Any:
        result = run_cli(*args, "--json")
        self.outputs.append(result.output)
        return result

    def hook(self, event: str, **fields: Any) -> None:
        payload = {"session_id": "c1", "hook_event_name": event, "cwd": str(self.project)}
        run = run_hook(event, {**payload, **fields}, cwd=self.project)
        self.outputs.append(run.stdout.decode("utf-8", "replace"))

    def mcp(self, calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
        from mcp.client.client import Client

        from memdir.mcp.server import build_server

        results: list[Any] = []

        async def main() -> None:
            async with Client(build_server(self.store)) as client:
                for tool, arguments in calls:
                    results.append(await client.call_tool(tool, arguments))
                for record_id in ("../../outside/canary", "/etc/hostname", "C:\\x"):
                    try:
                        resource = await client.read_resource(f"memory://{record_id}")
                    except Exception as exc:  # noqa: BLE001 - an MCP error is the expected answer
                        results.append(str(exc))
                    else:
                        results.append(resource)

        anyio.run(main)
        for result in results:
            self.outputs.append(str(getattr(result, "content", result)))
        return results

    def assert_contained(self) -> None:
        """The canary line reached nothing, and the canary folder is unchanged."""
        user = paths.user_store_dir()
        found = [str(p) for root in (self.store, user) for p in _files(root) if _holds(p)]
        found += [
            f"git objects of {r}" for r in (self.store, user) if CANARY.encode() in git_objects(r)
        ]
        found += [f"output {out[:160]!r}" for out in self.outputs if CANARY in out]
        assert not found, "\n".join(found)
        assert _snapshot(self.canary) == self.before, "the canary folder changed"
        for row in _actions(self.store):
            path = row.get("path")
            assert path is None or _inside_path(path), row


def _files(root: Path) -> Iterator[Path]:
    if root.exists():
        for path in sorted(root.rglob("*")):
            if ".git/objects" not in path.as_posix() and path.is_file() and not path.is_symlink():
                yield path


def _holds(path: Path) -> bool:
    return CANARY.encode() in path.read_bytes()


def _snapshot(folder: Path) -> dict[str, tuple[str, bytes | str, int]]:
    """Every entry of ``folder``: kind, content (or link target) and mode."""
    out: dict[str, tuple[str, bytes | str, int]] = {}
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder).as_posix()
        info = path.lstat()
        if path.is_symlink():
            out[rel] = ("link", os.readlink(path), info.st_mode)
        elif path.is_dir():
            out[rel] = ("dir", b"", info.st_mode)
        else:
            out[rel] = ("file", path.read_bytes(), info.st_mode)
    return out


def _actions(store: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for path in sorted((store / "actions").glob("*.jsonl")):
        rows += [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return rows


def _inside_path(path: str) -> bool:
    """A project-relative path: no drive, no root, no ``..`` in either separator style."""
    parts = path.replace("\\", "/").split("/")
    return not (path.startswith(("/", "\\")) or ":" in parts[0] or ".." in parts)


@pytest.fixture
def jail(store: Path) -> Jail:
    canary = store.parent.parent / "outside"
    (canary / "sub").mkdir(parents=True)
    (canary / "canary.md").write_text(f"# {CANARY}\n\n{CANARY}\n")
    (canary / "canary.py").write_text(f'"""{CANARY}."""\n\ndef leaked_symbol():\n    pass\n')
    (canary / "sub" / "2026-01-01.jsonl").write_text(
        json.dumps({"at": "2026-01-01T00:00:00Z", "who": "user", "text": CANARY, "session": "x"})
        + "\n"
    )
    record = Record(id="f-0000000000cnry", kind="fact", text=CANARY)
    (canary / "f-0000000000cnry.md").write_text(dump(record))
    return Jail(store, canary)


# --- hook payloads ----------------------------------------------------------------------------


def _hostile_paths(jail: Jail) -> dict[str, str]:
    project, canary = jail.project, jail.canary
    (project / "link.md").symlink_to(canary / "canary.md")
    (project / "linkdir").symlink_to(canary)
    (project / "up").symlink_to(project.parent)
    return {
        "dotdot": "../outside/canary.md",
        "absolute": str(canary / "canary.md"),
        "absolute-dotdot": str(project / ".." / "outside" / "canary.md"),
        "drive": "C:\\outside\\canary.md",
        "drive-forward": "C:/outside/canary.md",
        "unc": "\\\\server\\share\\outside\\canary.md",
        "backslash-dotdot": "..\\outside\\canary.md",
        "symlink-file": str(project / "link.md"),
        "symlink-dir": str(project / "linkdir" / "canary.md"),
        "symlink-up": "up/outside/canary.py",
        "file-url": f"file://{canary / 'canary.md'}",
        "nul": "canary.md\x00../../outside/canary.md",
    }


@pytest.mark.parametrize("tool", ["Read", "Write", "Edit"])
def test_hook_file_paths_outside_the_project_are_never_read_or_recorded(
    jail: Jail, tool: str
) -> None:
    hostile = _hostile_paths(jail)
    for path in hostile.values():
        jail.hook("PreToolUse", tool_name=tool, tool_input={"file_path": path})
        jail.hook(
            "PostToolUse",
            tool_name=tool,
            tool_input={"file_path": path, "content": "x"},
            tool_response={"filePath": path, "file": {"content": CANARY}},
        )
        jail.hook("PreToolUse", tool_name=tool, tool_input={"file_path": path})
    service.reindex(jail.store)
    jail.assert_contained()
    assert [r.get("path") for r in _actions(jail.store)] == []  # nothing recorded as a path
    # The session's state is a snapshot plus append-only events (kernel/storage/session.py): read both.
    state = "".join(p.read_text() for p in (jail.store / "state" / "sessions").glob("c1.*"))
    assert state  # the session's state was written (its hooks ran), only without the paths
    assert "outside" not in state and "canary" not in state


def test_a_hard_link_to_an_outside_file_is_never_read_into_the_anatomy(jail: Jail) -> None:
    # A hard link is a second name for the same file: memdir cannot tell where the other name
    # lives, so it lists the file by size only and never reads it.
    os.link(jail.canary / "canary.md", jail.project / "hard.md")
    os.link(jail.canary / "canary.py", jail.project / "hard.py")
    jail.hook(
        "PostToolUse",
        tool_name="Write",
        tool_input={"file_path": str(jail.project / "hard.py")},
        tool_response={"filePath": str(jail.project / "hard.py")},
    )
    jail.cli("scan")
    anatomy = json.loads((jail.store / "anatomy.json").read_text())["files"]
    for name in ("hard.md", "hard.py"):
        entry = anatomy.get(name)
        assert entry is None or (entry["description"], entry["symbols"], entry["sha"]) == (
            "",
            [],
            "",
        ), entry
    jail.cli("find", "leaked_symbol")
    jail.cli("map")
    jail.assert_contained()


def test_anatomy_scan_follows_no_link_out_of_the_project(jail: Jail) -> None:
    project = jail.project
    (project / "src").mkdir()
    (project / "src" / "app.py").write_text('"""The app."""\n')
    (project / "notes.md").symlink_to(jail.canary / "canary.md")
    (project / "vendor-link").symlink_to(jail.canary)
    (project / "src" / "up").symlink_to(project.parent)
    (project / "root").symlink_to("/")
    (project / "..\\outside\\canary.md").write_text("# a file with backslashes in its name\n")
    git(project, "add", "notes.md", "vendor-link", "src")  # git tracks symlinks as files
    for listing in ("git", "walk"):  # tracked by git, then listed by the walk outside git
        if listing == "walk":
            (project / ".git").rename(project / ".git-away")
        assert jail.cli("scan").exit_code == 0
        jail.cli("find", "canary leaked_symbol")
        anatomy = json.loads((jail.store / "anatomy.json").read_text())["files"]
        assert "src/app.py" in anatomy
        linked = ("notes", "vendor-link", "root", "src/up")
        assert not any(name.startswith(linked) for name in anatomy), listing
    jail.assert_contained()


# --- record ids -------------------------------------------------------------------------------

HOSTILE_IDS = [
    "../../outside/f-0000000000cnry",
    "../outside",
    "..",
    "/etc/hostname",
    "C:\\outside\\x",
    "\\\\server\\share\\x",
    "records/../../../outside/x",
    "f-0000000000cnry",
    "~/x",
]


def test_record_ids_can_name_nothing_outside_the_store(jail: Jail) -> None:
    made = service.remember(jail.store, "The staging cluster runs in eu-west-1").record.id
    for record_id in HOSTILE_IDS:
        for args in (
            ("get", record_id),
            ("correct", record_id, "--text", "x y z"),
            ("reject", record_id, "--reason", "r"),
            ("forget", record_id, "--reason", "r"),
            ("graph", record_id),
            ("log", record_id),
            ("diff", record_id),
            ("purge", record_id, "--yes"),
            ("bug", "fixed", record_id),
            ("remember", "Linked belief", "--link", record_id),
            ("rollback", record_id, "--yes"),
        ):
            result = jail.cli(*args)
            assert result.exit_code in (2, 4), (args, result.output)  # usage, or not found
    results = jail.mcp(
        [
            (tool, {"id": record_id, **extra})
            for record_id in HOSTILE_IDS
            for tool, extra in (
                ("memory_get", {}),
                ("memory_correct", {"text": "x y z"}),
                ("memory_forget", {"reason": "r"}),
                ("memory_graph", {}),
            )
        ]
    )
    assert all(getattr(r, "is_error", True) for r in results)
    assert service.get(jail.store, made).status == "active"
    jail.assert_contained()


def test_a_record_file_symlinked_out_of_the_store_is_not_a_record(jail: Jail) -> None:
    folder = jail.store / "records" / "fact"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "f-0000000000cnry.md").symlink_to(jail.canary / "f-0000000000cnry.md")
    service.reindex(jail.store)
    assert jail.cli("get", "f-0000000000cnry").exit_code == 4
    assert jail.cli("recall", "CANARY outside project").exit_code == 0
    jail.hook("SessionStart", source="startup")
    jail.hook("UserPromptSubmit", prompt="what is the CANARY outside the project?")
    jail.cli("export")
    jail.assert_contained()


def test_a_kind_folder_symlinked_out_of_the_store_stops_every_command(jail: Jail) -> None:
    (jail.store / "records" / "rule").symlink_to(jail.canary)  # writes would land outside
    jail.before = _snapshot(jail.canary)
    for args in (("remember", "Never deploy on Fridays", "--kind", "rule"), ("list",), ("scan",)):
        result = jail.cli(*args)
        assert result.exit_code == 1, result.output
        error = json.loads(result.stdout)["error"]
        assert error["code"] == "store_layout" and "records/rule" in error["message"]
    jail.hook("UserPromptSubmit", prompt="from now on never deploy on Fridays")
    listed = jail.mcp(
        [("memory_list", {}), ("memory_remember", {"text": "A rule", "kind": "rule"})]
    )
    for result in listed[:2]:
        assert result.is_error and "store_layout" in text_of(result)
    jail.assert_contained()


# --- the store's own folders --------------------------------------------------------------------


@pytest.mark.parametrize("folder", ["journal", "actions", "state"])
def test_a_store_folder_symlinked_outside_is_neither_read_nor_written(
    jail: Jail, folder: str
) -> None:
    # A store is shared through git, and git checks out symlinks: a teammate's store may hold
    # journal -> ~/somewhere. memdir refuses to follow it rather than read or write there.
    target = jail.store / folder
    if target.exists():
        import shutil

        shutil.rmtree(target)
    target.symlink_to(jail.canary / "sub")
    jail.before = _snapshot(jail.canary)
    for args in (
        ("journal", "user", "A turn that must stay in the store"),
        ("search", "CANARY outside"),
        ("threads",),
        ("observe", "--once", "--offline", "--from-start"),
        ("remember", "Writes go to the store"),
        ("stats",),
    ):
        result = jail.cli(*args)
        assert result.exit_code in (0, 1), result.output
        if result.exit_code:
            assert folder in result.output and "symlink" in result.output, result.output
    jail.hook("UserPromptSubmit", prompt="Tell me about the CANARY outside the project")
    jail.hook("PostToolUse", tool_name="Bash", tool_input={"command": "ls"}, tool_response={})
    jail.hook("Stop", last_assistant_message="done")
    jail.assert_contained()


def test_a_journal_day_file_symlinked_outside_is_neither_read_nor_appended(jail: Jail) -> None:
    journal = jail.store / "journal"
    journal.mkdir(exist_ok=True)
    day = journal / "2026-01-01.jsonl"
    day.symlink_to(jail.canary / "sub" / "2026-01-01.jsonl")
    jail.cli("journal", "user", "on the linked day", "--at", "2026-01-01T10:00:00Z")
    jail.cli("search", "CANARY outside")
    jail.cli("reindex")
    jail.cli("observe", "--once", "--offline", "--from-start")
    jail.assert_contained()


# --- --store, MEMDIR_STORE, imports, MCP arguments ---------------------------------------------


@pytest.mark.parametrize(
    "named", ["canary", "canary-sub", "relative", "drive", "unc", "project", "root"]
)
def test_store_option_naming_anything_but_a_store_changes_nothing_there(
    jail: Jail, named: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    value = {
        "canary": str(jail.canary),
        "canary-sub": str(jail.canary / "sub"),
        "relative": "../outside",
        "drive": "C:\\outside",
        "unc": "\\\\server\\share",
        "project": str(jail.project),
        "root": "/",
    }[named]
    project_before = sorted(p.name for p in jail.project.iterdir())
    for args in (
        ("remember", "Hello"),
        ("journal", "user", "Hello"),
        ("scan",),
        ("reindex",),
        ("export",),
        ("sync",),
        ("health",),
        ("import", "--from", "jsonl", str(jail.canary / "sub" / "2026-01-01.jsonl")),
    ):
        result = jail.cli(*args, "--store", value)
        assert result.exit_code == 1, (args, result.output)
        assert json.loads(result.stdout)["error"]["code"] == "no_store"
    monkeypatch.setenv("MEMDIR_STORE", value)
    assert jail.cli("recall", "anything").exit_code == 1
    jail.hook("UserPromptSubmit", prompt="remember that hooks write nothing here")
    monkeypatch.delenv("MEMDIR_STORE")
    assert sorted(p.name for p in jail.project.iterdir()) == project_before
    assert service.list_records(jail.store) == []
    jail.assert_contained()


def test_imported_lines_cannot_place_files_outside_the_store(jail: Jail) -> None:
    lines = [
        {"id": "../../../outside/evil", "kind": "fact", "text": "escape by id"},
        {"id": "f-0000000000aaaa", "kind": "../../../outside", "text": "escape by kind"},
        {"id": "/tmp/evil", "kind": "fact", "text": "absolute id"},
        {"id": "C:\\evil", "kind": "fact", "text": "drive id"},
        {"id": "f-0000000000bbbb", "kind": "fact", "text": "kept", "scope": "../../x"},
    ]
    source = jail.project.parent / "import.jsonl"
    source.write_text("".join(json.dumps(line) + "\n" for line in lines))
    done = jail.cli("import", "--from", "jsonl", str(source))
    answer = json.loads(done.stdout)
    assert answer["imported"] == 1 and len(answer["refused"]) == 4, answer
    transcript = jail.project.parent / "claude.jsonl"
    transcript.write_text(
        json.dumps(
            {
                "type": "user",
                "uuid": "u1",
                "sessionId": "../../../outside/session",
                "message": {"role": "user", "content": "a turn with a hostile session id"},
            }
        )
        + "\n"
    )
    assert (
        json.loads(jail.cli("import", "--from", "claude-transcript", str(transcript)).stdout)[
            "turns"
        ]
        == 1
    )
    stored = [p.relative_to(jail.store).as_posix() for p in _files(jail.store / "records")]
    assert stored == ["records/fact/f-0000000000bbbb.md"]
    beside = {p.name for p in jail.project.parent.iterdir()}
    assert beside == {"project", "outside", "import.jsonl", "claude.jsonl"}
    jail.assert_contained()


def test_mcp_arguments_naming_outside_paths_read_and_write_nothing_there(jail: Jail) -> None:
    outside = str(jail.canary / "canary.md")
    results = jail.mcp(
        [
            ("journal_write", {"who": "user", "text": "turn", "session": "../../../outside/s"}),
            ("bug_log", {"error": "ImportError in loader", "fix": "pin it", "file": outside}),
            ("code_find", {"query": outside}),
            ("memory_recall", {"query": outside}),
            ("memory_remember", {"text": "Paths are only text", "links": ["../../outside/x"]}),
            ("bug_search", {"query": "../../outside"}),
        ]
    )
    assert results[0].is_error is False
    # A bug's file must be inside the project: an outside path is refused, naming the rule.
    assert results[1].is_error is True and "inside the project" in text_of(results[1])
    jail.assert_contained()
