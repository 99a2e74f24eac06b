"""memdir export --to amp: a valid Talewell/AMP repository, and round trips with the importer."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from memdir import service
from tests.conftest import git, run_cli

HAS_IMPORTER = importlib.util.find_spec("memdir.importers") is not None and (
    importlib.util.find_spec("memdir.importers.amp") is not None
)
needs_importer = pytest.mark.skipif(not HAS_IMPORTER, reason="memdir import --from amp not here")


def _read_repo(root: Path) -> dict[str, tuple[str, dict[str, Any], str]]:
    """Return every record file of an AMP repository: id → (folder, front matter, body)."""
    out = {}
    for path in sorted((root / "memory").rglob("*.md")):
        text = path.read_text(encoding="utf-8")
        assert text.startswith("---\n")
        front, _, body = text[4:].partition("\n---\n")
        values = yaml.safe_load(front)
        out[values["id"]] = (path.parent.relative_to(root).as_posix(), values, body.strip())
    return out


def _export(store: Path, folder: Path) -> dict[str, Any]:
    result = run_cli("export", "--to", "amp", str(folder), "--store", str(store), "--json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)  # type: ignore[no-any-return]


def test_export_writes_amps_layout_and_keys_and_masks_secrets(store: Path, tmp_path: Path) -> None:
    fact = service.remember(store, "Leo does not eat spicy food", aliases=["diet", "餐厅"]).record
    rule = service.remember(store, "Never force-push to main", kind="rule").record
    ent = service.remember(store, "Leo is the team's designer", kind="entity").record
    old = service.remember(store, "The queue is RabbitMQ").record
    service.correct(store, old.id, "The queue is Kafka: see [[" + fact.id + "]]", reason="moved")
    path = store / "records" / "fact" / f"{fact.id}.md"
    path.write_text(path.read_text() + "\nOld key AKIAZZZZZZZZZZZZZZZZ typed by hand.\n")
    out = _export(store, tmp_path / "amp")
    root = tmp_path / "amp"
    manifest = json.loads((root / "amp.json").read_text())
    assert manifest["schema"].startswith("amp/")
    repo = _read_repo(root)
    assert out["records"] == len(repo) == 4  # active only: the superseded one is not exported
    assert old.id not in repo
    folder, values, body = repo[fact.id]
    assert folder == "memory/facts"
    assert list(values)[:8] == [
        "id",
        "kind",
        "aliases",
        "text",
        "origin",
        "importance",
        "observedAt",
        "links",
    ]
    assert values["text"] == "Leo does not eat spicy food"
    assert values["aliases"] == ["diet", "餐厅"] and values["origin"] == "owner"
    assert "AKIAZZZZ" not in body and "typed by hand" in body
    assert repo[rule.id][0] == "memory/facts" and repo[rule.id][1]["kind"] == "rule"
    assert repo[ent.id][0] == "memory/entities/general"
    kafka = next(v for v in repo.values() if "Kafka" in v[1]["text"])
    assert kafka[1]["text"] == "The queue is Kafka: see [[" + fact.id + "]]"
    assert kafka[1]["supersedes"] == old.id


def test_export_refuses_a_non_empty_folder_that_is_not_amp(store: Path, tmp_path: Path) -> None:
    service.remember(store, "Deploys go out on Tuesdays", kind="rule")
    folder = tmp_path / "src"
    folder.mkdir()
    (folder / "main.py").write_text("print('hi')\n")
    result = run_cli("export", "--to", "amp", str(folder), "--store", str(store))
    assert result.exit_code == 2 and "amp.json" in result.output
    assert sorted(p.name for p in folder.iterdir()) == ["main.py"]
    # …while an earlier export is replaced: a record forgotten since is gone from it
    target = tmp_path / "amp"
    _export(store, target)
    rec = service.remember(store, "Staging is at staging.example.com").record
    _export(store, target)
    assert rec.id in _read_repo(target)
    service.forget(store, rec.id, "gone")
    _export(store, target)
    assert rec.id not in _read_repo(target) and len(_read_repo(target)) == 1


TALEWELL = {
    "memory/facts/f-m8k2x9a7q3.md": (
        "---\nid: f-m8k2x9a7q3\nkind: fact\naliases: [吃饭, dining, 餐厅, 口味]\n"
        "text: Leo 不吃辣\norigin: owner\nimportance: 7\nobservedAt: 2026-09-15\n"
        "links: [e-3n8k2]\n---\n\nSee [[e-3n8k2]] for who Leo is.\n"
    ),
    "memory/entities/person/e-3n8k2.md": (
        "---\nid: e-3n8k2\nkind: entity\naliases: [Leo]\ntext: Leo is a designer\n"
        "origin: owner\nimportance: 5\nobservedAt: 2026-09-14\nlinks: []\n---\n"
    ),
    "memory/episodes/ep-77aa.md": (
        "---\nid: ep-77aa\nkind: episode\naliases: []\ntext: Dinner booked at Lotus\n"
        "origin: agent\nimportance: 3\nobservedAt: 2026-09-16\nlinks: [f-m8k2x9a7q3]\n---\n"
    ),
    "memory/procedures/pr-0b1c.md": (
        "---\nid: pr-0b1c\nkind: procedure\naliases: [booking]\n"
        "text: Book restaurants two days ahead\norigin: owner\nimportance: 6\n"
        "observedAt: 2026-09-10\nlinks: []\n---\n"
    ),
}
AMP_KEYS = ("id", "kind", "aliases", "text", "origin", "importance", "observedAt", "links")


def _amp_fields(repo: dict[str, tuple[str, dict[str, Any], str]]) -> dict[str, Any]:
    return {
        key: (folder, {k: str(values.get(k)) for k in AMP_KEYS}, body)
        for key, (folder, values, body) in repo.items()
    }


@needs_importer
def test_amp_to_memdir_to_amp_is_equal(store: Path, tmp_path: Path) -> None:
    source = tmp_path / "talewell"
    for rel, text in TALEWELL.items():
        (source / rel).parent.mkdir(parents=True, exist_ok=True)
        (source / rel).write_text(text, encoding="utf-8")
    (source / "amp.json").write_text('{"schema": "amp/1"}\n')
    result = run_cli("import", "--from", "amp", str(source), "--store", str(store))
    assert result.exit_code == 0, result.output
    _export(store, tmp_path / "back")
    assert _amp_fields(_read_repo(tmp_path / "back")) == _amp_fields(_read_repo(source))


@needs_importer
def test_memdir_to_amp_to_memdir_keeps_what_amp_carries(store: Path, tmp_path: Path) -> None:
    fact = service.remember(store, "Leo does not eat spicy food", aliases=["diet"]).record
    service.remember(store, "Never force-push to main", kind="rule", importance=9)
    service.remember(store, "Use pnpm, not npm", kind="preference")
    service.remember(store, "Book two days ahead", kind="procedure", links=[fact.id])
    _export(store, tmp_path / "amp")
    other = tmp_path / "other"
    other.mkdir()
    git(other, "init", "-q")
    made = service.init(other).store
    result = run_cli("import", "--from", "amp", str(tmp_path / "amp"), "--store", str(made))
    assert result.exit_code == 0, result.output

    def fields(where: Path) -> dict[str, Any]:
        return {
            r.id: (
                r.kind,
                r.text,
                r.aliases,
                r.importance,
                str(r.observed_at)[:10],
                r.links,
                r.status,
                r.body,
            )
            for r in service.list_records(where)
        }

    assert fields(made) == fields(store)
    assert {r.origin for r in service.list_records(made)} == {"import"}
    again = run_cli("import", "--from", "amp", str(tmp_path / "amp"), "--store", str(made))
    assert again.exit_code == 0
    assert len(service.list_records(made)) == len(service.list_records(store))


def test_export_usage_errors_name_what_is_wrong(store: Path, tmp_path: Path) -> None:
    service.remember(store, "Use pnpm", kind="preference")
    no_dir = run_cli("export", "--to", "amp", "--store", str(store))
    assert no_dir.exit_code == 2 and "--to amp DIR" in no_dir.output
    folder = tmp_path / "d"
    folder.mkdir()
    jsonl_to_dir = run_cli("export", str(folder), "--store", str(store))
    assert jsonl_to_dir.exit_code == 2 and "is a folder" in jsonl_to_dir.output
    assert list(folder.iterdir()) == []
    to_file = run_cli("export", str(tmp_path / "out.jsonl"), "--store", str(store))
    assert to_file.exit_code == 0 and "Use pnpm" in (tmp_path / "out.jsonl").read_text()
