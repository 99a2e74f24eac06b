"""The seams issue 10 asks for: one store layout, one project_relative(), Caller on updates."""

from __future__ import annotations

import os
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
