"""The seams issue 10 asks for: one store layout, one project_relative(), Caller on updates."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from memdir.kernel.base.caller import Caller
from memdir.kernel.base.errors import StoreLayoutError, UsageError
from memdir.kernel.storage import lock, session, spool, txn
from memdir.kernel.storage.paths import StoreLayout, layout, project_relative


def test_the_layout_names_every_state_file_once_and_modules_use_it(tmp_path: Path) -> None:
    store = tmp_path / ".memdir"
    store.mkdir()
    place = layout(store)
    assert place.state_path(StoreLayout.INTENT) == store / "state" / "intent.json"
    assert not (store / "state").exists()  # asking for a path creates nothing
    assert place.in_state(StoreLayout.SESSIONS).parent == store / "state"
    assert (store / "state").is_dir()
    assert txn.INTENT_NAME == StoreLayout.INTENT and lock.LOCK_NAME == StoreLayout.LOCK
    assert session.SESSIONS_DIR == StoreLayout.SESSIONS and spool.SPOOL_DIRNAME == StoreLayout.SPOOL
    for bad in ("../outside", "/etc/passwd", "a/../../b", ""):
        with pytest.raises(StoreLayoutError):
            place.state_path(bad)
        with pytest.raises(StoreLayoutError):
            place.path(bad)


def test_a_state_folder_leading_out_of_the_store_is_refused(tmp_path: Path) -> None:
    store = tmp_path / ".memdir"
    store.mkdir()
    (tmp_path / "elsewhere").mkdir()
    os.symlink(tmp_path / "elsewhere", store / "state")
    with pytest.raises(StoreLayoutError, match="outside the store"):
        layout(store).in_state("x.json")
    assert layout(store).state_path("x.json") == store / "state" / "x.json"  # a name, unread


def test_project_relative_is_the_one_rule(tmp_path: Path) -> None:
    project = tmp_path / "p"
    (project / "src").mkdir(parents=True)
    (project / "src" / "a.py").write_text("x = 1\n")
    (tmp_path / "secret.txt").write_text("s\n")
    os.symlink(tmp_path / "secret.txt", project / "src" / "link.txt")
    inside = {
        "src/a.py": "src/a.py",
        str(project / "src" / "a.py"): "src/a.py",
        f"file://{project}/src/a.py": "src/a.py",
        "src/../src/a.py": "src/a.py",
    }
    for given, expected in inside.items():
        assert project_relative(project, given) == expected, given
    outside = [
        "../secret.txt",
        str(tmp_path / "secret.txt"),
        "src/link.txt",  # a symlink out of the project
        ".memdir/records/x.md",
        ".env",
        "src/id_rsa",
        "C:\\Users\\x",
        "..\\..\\x",
        "https://example.invalid/a.py",
        "a\x00b",
        ".",
    ]
    for given in outside:
        assert project_relative(project, given) is None, given


def test_the_bug_log_and_the_hooks_ask_the_same_rule(store: Path) -> None:
    from memdir.service import memory

    outside = str(store.parent.parent / "x.py")
    with pytest.raises(UsageError, match="inside the project"):
        memory.bug_log(store, "E", "f", outside, caller=Caller("agent", "mcp"))
    kept = memory.bug_log(
        store, "E2", "f", str(store.parent / "src" / "b.py"), caller=Caller("agent", "mcp")
    )
    assert "File: src/b.py" in kept.record.body


SRC = Path(__file__).resolve().parents[2] / "src" / "memdir"
HARD_CODED = re.compile(
    r"""/\s*"state"|/\s*(?:paths\.)?STATE_DIRNAME\b|state_dir\([^()]*\)\s*/"""
    r"""|"(?:backups|installs|explicit-spool|intent\.json|intent\.refused\.json)"|"state/\w"""
)
"""A store-relative name joined by hand: ``store / "state" / …``, ``state_dir(store) / …``,
or a ``state/`` file, backups, installs, spool or intent named outside the layout."""


def _hard_coded(text: str) -> list[str]:
    """Code lines (not comments or docstring prose) that join a store name by hand."""
    found = []
    for line in text.splitlines():
        code = line.split("#", 1)[0]
        if HARD_CODED.search(code) and not code.lstrip().startswith(("``", '"""')):
            found.append(line.strip())
    return found


def test_no_module_joins_a_store_relative_name_outside_the_layout() -> None:
    offenders = {
        str(path.relative_to(SRC)): hits
        for path in sorted(SRC.rglob("*.py"))
        if path.name != "layout.py" and (hits := _hard_coded(path.read_text(encoding="utf-8")))
    }
    assert offenders == {}
    # the guard is not vacuous: it finds each kind of join it forbids
    planted = (
        'x = store / "state" / "a.json"\n'
        "y = state_dir(store) / NAME\n"
        'z = store / "state/intent.json"\n'
        'w = base / "backups"\n'
    )
    assert len(_hard_coded(planted)) == 4


def test_every_state_file_name_comes_from_the_layout() -> None:
    from memdir.hooks import context, dispatch, governor, post_tool_use, pre_tool_use
    from memdir.kernel.index import digest
    from memdir.kernel.lang import pathscope
    from memdir.kernel.storage import hits, journal, saves, upkeep
    from memdir.mcp import start
    from memdir.observe import observer, transcripts
    from memdir.store import scan, teamsync

    names = {
        pre_tool_use.NOTED: StoreLayout.GOVERNOR_NOTED,
        context.REINDEX_MARKER: StoreLayout.REINDEX_MARKER,
        post_tool_use.SPOOL: StoreLayout.ANATOMY_SPOOL,
        governor.OUTPUTS: StoreLayout.OUTPUTS,
        dispatch.SESSION_ROOTS: StoreLayout.SESSION_ROOTS,
        observer.STATE_NAME: StoreLayout.OBSERVER,
        observer.LOCK_NAME: StoreLayout.OBSERVER_LOCK,
        transcripts.PROGRESS_NAME: StoreLayout.IMPORTS,
        hits.LOG: StoreLayout.RECALL_HITS,
        hits.STATS: StoreLayout.RECALL_STATS,
        upkeep.STATE: StoreLayout.MAINTAIN,
        upkeep.PID: StoreLayout.MAINTAIN_PID,
        saves.SAVES_FILE: StoreLayout.SAVES,
        journal.MACHINE_FILE: StoreLayout.MACHINE,
        digest.MIRROR_FLAG: StoreLayout.MIRROR_FLAG,
        digest.DEMOTED: StoreLayout.DEMOTED,
        pathscope.CACHE: StoreLayout.PATH_SCOPED,
        teamsync.PENDING: StoreLayout.SYNC_PENDING,
        teamsync.CONFLICT: StoreLayout.SYNC_CONFLICT,
        scan.STAMP_NAME: StoreLayout.RECORDS_STAMP,
        start.SNAPSHOT: StoreLayout.MCP_START,
    }
    assert all(mine is theirs for mine, theirs in names.items())
    values = [v for k, v in vars(StoreLayout).items() if k.isupper()]
    assert len(values) == len(set(values))  # no two names for one file
