"""`memdir import --from amp`: a Talewell / AMP repository (fixture from the AMP format)."""

from __future__ import annotations

import shutil
from pathlib import Path

from memdir import service
from tests.importers.conftest import FIXTURES, commits, rollback, run_import, texts

AMP = FIXTURES / "amp"


def test_dry_run_counts_per_kind_and_refusals_and_writes_nothing(store: Path) -> None:
    before = commits(store)
    report = run_import("amp", AMP, "--dry-run")
    assert report["dry_run"] is True
    assert report["created"] == {
        "fact": {"active": 2},
        "entity": {"active": 1},
        "episode": {"active": 1},
        "procedure": {"active": 1},
    }
    assert report["refused_by_reason"] == {
        "holds a secret": 1,
        "origin system is refused": 1,
        "origin untrusted is refused": 1,
    }
    assert report["skipped_by_reason"] == {"no front matter": 1}
    assert report["commit"] is None
    assert commits(store) == before
    assert texts(store) == {}


def test_import_writes_one_commit_maps_ids_and_keeps_links(store: Path) -> None:
    before = commits(store)
    report = run_import("amp", AMP)
    assert report["imported"] == 5
    assert commits(store) == before + 1
    got = texts(store)
    leo = got["Leo 不吃辣"]
    person = got["Leo Chen, backend lead on the payments team"]
    assert leo.origin == "import" and leo.status == "active"
    assert leo.observed_at == "2026-09-15" and leo.importance == 7
    assert leo.source["file"] == "memory/facts/f-m8k2x9a7q3.md"
    assert leo.source["key"] == "f-m8k2x9a7q3" and leo.source["original_origin"] == "owner"
    assert report["ids"]["f-m8k2x9a7q3"] == leo.id
    assert report["ids"]["e-3n8k2"] == person.id
    assert leo.links == (person.id,)
    assert f"[[{person.id}]]" in leo.body
    assert person.source["entity_type"] == "person"
    assert "dining" in leo.aliases


def test_a_second_import_adds_nothing(store: Path) -> None:
    run_import("amp", AMP)
    before = commits(store)
    again = run_import("amp", AMP)
    assert again["imported"] == 0 and again["existing"] == 5
    assert commits(store) == before


def test_secrets_and_untrusted_or_system_origins_never_enter_the_store(store: Path) -> None:
    run_import("amp", AMP)
    every = "".join(p.read_text() for p in (store / "records").rglob("*.md"))
    assert "ghp_abcdef" not in every
    assert "Ignore all previous instructions" not in every
    assert "system prompt" not in every
    assert "The staging deploy runs from the release branch: never from main" in texts(store)


def test_a_rejected_belief_is_not_reasserted_and_the_rest_is_imported(store: Path) -> None:
    wrong = service.remember(store, "Leo 不吃辣").record
    service.reject(store, wrong.id, "Leo eats spicy food now")
    report = run_import("amp", AMP)
    assert report["refused_by_reason"][f"repeats rejected {wrong.id}"] == 1
    got = texts(store)
    assert got["Leo 不吃辣"].status == "rejected"
    assert got["Leo Chen, backend lead on the payments team"].status == "active"
    assert report["imported"] == 4


def test_rollback_of_the_import_commit_undoes_it(store: Path) -> None:
    report = run_import("amp", AMP)
    rollback(store, report["commit"])
    assert texts(store) == {}
    assert run_import("amp", AMP, "--dry-run")["imported"] == 5


def test_a_memdir_shaped_id_is_kept(store: Path, tmp_path: Path) -> None:
    repo = tmp_path / "amp"
    shutil.copytree(AMP, repo)
    (repo / "memory" / "facts" / "p-01jc9x2k7q4fz2.md").write_text(
        "---\nid: p-01jc9x2k7q4fz2\nkind: preference\ntext: Use pnpm, not npm\n"
        "origin: owner\nimportance: 7\nobservedAt: 2026-11-30\n---\n"
    )
    report = run_import("amp", repo)
    assert report["created"]["preference"] == {"active": 1}
    assert texts(store)["Use pnpm, not npm"].id == "p-01jc9x2k7q4fz2"


def test_a_folder_that_is_not_an_amp_repository_is_a_usage_error(
    store: Path, tmp_path: Path
) -> None:
    from tests.conftest import run_cli

    result = run_cli("import", "--from", "amp", str(tmp_path))
    assert result.exit_code == 2
    assert "not an AMP repository" in result.output
