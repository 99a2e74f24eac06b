"""The file map: vendored trees (B26), symlinks out and loops (B27), secrets, map and find."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from memdir.kernel.filemap import anatomy
from memdir.service import project
from tests.conftest import run_cli


def _project_with_vendor(root: Path, vendored: int) -> None:
    (root / "src").mkdir()
    for n in range(30):
        (root / "src" / f"mod{n}.py").write_text(f'"""Module {n}."""\n\ndef f{n}():\n    pass\n')
    for folder in (
        ".venv/lib/python3.12/site-packages/pkg",
        "node_modules/pkg",
        "__pycache__",
        ".tox/py",
    ):
        target = root / folder
        target.mkdir(parents=True)
        for n in range(vendored):
            (target / f"f{n}.py").write_text("x = 1\n")


def test_vendored_environments_never_displace_source_outside_git(tmp_path: Path) -> None:
    _project_with_vendor(tmp_path, 2000)
    started = time.monotonic()
    result = anatomy.scan(tmp_path, max_files=500)
    assert time.monotonic() - started < 5
    assert sorted(result.entries) == sorted(f"src/mod{n}.py" for n in range(30))
    assert result.skipped.get("excluded folder", 0) >= 3


def test_vendored_environments_are_excluded_even_when_git_tracks_them(project: Path) -> None:
    _project_with_vendor(project, 50)
    result = anatomy.scan(project, max_files=500)
    assert {p.split("/")[0] for p in result.entries} <= {"src", "README.md"}
    assert result.skipped["excluded folder"] >= 150


def test_symlinks_to_root_ancestors_and_outside_are_not_followed(tmp_path: Path) -> None:
    root = tmp_path / "p"
    (root / "src").mkdir(parents=True)
    (root / "src" / "main.py").write_text("print(1)\n")
    (root / "rootlink").symlink_to("/")
    (root / "src" / "up").symlink_to("..")
    keys = tmp_path / "ssh"
    keys.mkdir()
    (keys / "id_rsa").write_text("PRIVATE")
    (root / "keys").symlink_to(keys)
    started = time.monotonic()
    result = anatomy.scan(root)
    assert time.monotonic() - started < 5
    assert list(result.entries) == ["src/main.py"]


def test_secret_files_are_never_listed_and_descriptions_are_redacted(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("OPENAI_API_KEY=sk-proj-EXAMPLE000000000000000000000000\n")
    (tmp_path / "id_rsa").write_text("key")
    (tmp_path / "credentials.json").write_text("{}")
    (tmp_path / "config.py").write_text(
        "# token ghp_EXAMPLEEXAMPLEEXAMPLEEXAMPLE0000 lives here\nx = 1\n"
    )
    result = anatomy.scan(tmp_path)
    assert list(result.entries) == ["config.py"]
    assert "EXAMPLEEXAMPLE" not in result.entries["config.py"].description
    assert result.skipped["secret file"] == 3


def test_scan_find_and_map_through_the_cli(store: Path) -> None:
    root = store.parent
    (root / "pkg").mkdir()
    (root / "pkg" / "__init__.py").write_text('"""The package."""\n')
    (root / "pkg" / "core.py").write_text(
        '"""Core engine that schedules jobs."""\n\nclass Scheduler:\n    pass\n'
    )
    for n in range(4):
        (root / "pkg" / f"user{n}.py").write_text(
            f'"""User {n}."""\nfrom pkg import core\nfrom . import core\n'
        )
    assert run_cli("scan").exit_code == 0
    data = json.loads((store / "anatomy.json").read_text())
    assert set(data["files"]["pkg/user0.py"]["imports"]) == {"pkg/core.py"}
    found = json.loads(run_cli("find", "scheduler", "--json").stdout)["results"]
    assert found[0]["path"] == "pkg/core.py"
    ranked = json.loads(run_cli("map", "--budget", "200", "--json").stdout)["results"]
    assert ranked[0]["path"] == "pkg/core.py"
    assert sum(len(r["line"].encode()) for r in ranked) / 4 <= 200


def test_scan_keeps_an_unreadable_anatomy_aside_before_rebuilding(store: Path) -> None:
    (store / "anatomy.json").write_text("{broken")
    project.scan(store)
    kept = list(store.glob("anatomy.json.unreadable-*"))
    assert len(kept) == 1 and kept[0].read_text() == "{broken"
    assert json.loads((store / "anatomy.json").read_text())["files"]


def test_find_without_a_scan_says_what_to_run(store: Path) -> None:
    result = run_cli("find", "anything")
    assert result.exit_code == 4
    assert "memdir scan" in result.stderr


def _whole(store: Path, root: Path) -> tuple[dict[str, Any], str]:
    """The map and page a full rebuild gives, without the time stamp."""
    data = {"files": {rel: e.to_json() for rel, e in anatomy.scan(root).entries.items()}}
    for rel in data["files"]:
        anatomy.resolve_entry(data, rel)
    return data["files"], anatomy.render_markdown(data)


def test_an_update_rewrites_only_changed_lines_and_equals_a_full_rebuild(store: Path) -> None:
    root = store.parent
    for folder in ("pkg", "pkg/sub", "docs"):
        (root / folder).mkdir(parents=True, exist_ok=True)
    (root / "pkg" / "core.py").write_text('"""Core engine."""\n\nclass Engine:\n    pass\n')
    (root / "pkg" / "b.py").write_text('"""Bee."""\nfrom pkg import core\n')
    (root / "pkg" / "sub" / "deep.py").write_text('"""Deep."""\n')
    (root / "docs" / "guide.md").write_text("# The guide\n")
    project.scan(store)
    before = (store / "anatomy.json").read_bytes()
    mapped = len(json.loads(before)["files"])
    assert mapped >= 4
    assert before.count(b"\n") == mapped + 2  # one line per file, the first and last lines
    # an edit, a new file in a known folder, a new folder, a deletion
    (root / "pkg" / "b.py").write_text(
        '"""Bee, rewritten."""\nfrom pkg import core\ndef g():\n  1\n'
    )
    (root / "pkg" / "a.py").write_text('"""Ay."""\nfrom pkg import b\n')
    (root / "new").mkdir()
    (root / "new" / "n.py").write_text('"""En."""\n')
    (root / "docs" / "guide.md").unlink()
    (root / "pkg" / "sub" / "deep.py").unlink()
    steps = (
        ["pkg/b.py"],
        ["pkg/a.py"],
        ["new/n.py", "docs/guide.md", "README.md", "pkg/sub/deep.py"],
    )
    for rels in steps:
        anatomy.update(store, root, rels)
        data = json.loads((store / "anatomy.json").read_text())  # still plain JSON
        assert data["format"] == anatomy.FORMAT
    files, page = _whole(store, root)
    assert data["files"] == files
    assert data["files"]["pkg/a.py"]["imports"] == ["pkg/b.py"]
    assert "guide.md" not in (store / "anatomy.md").read_text()
    assert (store / "anatomy.md").read_text() == page


def test_an_update_of_a_map_in_the_old_layout_rewrites_it_whole(store: Path) -> None:
    root = store.parent
    (root / "x.py").write_text('"""Ex."""\n')
    data = {"format": 1, "files": {"gone.py": {"size": 1, "description": "old"}}}
    (store / "anatomy.json").write_text(json.dumps(data, indent=1))
    anatomy.update(store, root, ["x.py", "gone.py"])
    assert set(json.loads((store / "anatomy.json").read_text())["files"]) == {"x.py"}
    assert "`x.py`" in (store / "anatomy.md").read_text()
