"""Contradictions are not duplicates: `memdir remember`, `correct` and `dream` read polarity.

From a fresh-user trial: with "Always use tabs for indentation in Makefiles" active, remembering
"Never use tabs for indentation in Makefiles" answered "already known" and lost the new rule;
`dream` called opposite beliefs near-duplicates, the same belief in other words a conflict, and
saw nothing to tidy in "Use bun, not npm" beside "Use npm for installs".
"""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path

import pytest

from memdir import service
from tests.conftest import run_cli

ALWAYS = "Always use tabs for indentation in Makefiles"
NEVER = "Never use tabs for indentation in Makefiles"


def _remember(text: str) -> tuple[str, str]:
    """`memdir remember TEXT`: (the id printed, what was said on stderr)."""
    result = run_cli("remember", text)
    assert result.exit_code == 0, result.output
    return result.stdout.strip(), result.stderr


def _active(store: Path) -> dict[str, str]:
    listed = json.loads(run_cli("list", "--json").stdout)["results"]
    return {r["text"]: r["id"] for r in listed if r["status"] == "active"}


def _dream(store: Path) -> dict[str, list[list[str]]]:
    result = run_cli("dream", "--json")
    assert result.exit_code == 0, result.output
    found: dict[str, list[list[str]]] = {}
    for finding in json.loads(result.stdout)["findings"]:
        if finding["code"] in ("near_duplicate", "conflict"):
            found.setdefault(finding["code"], []).append(sorted(finding["ids"]))
    return found


def test_the_reverse_of_a_rule_is_stored_and_named_as_a_contradiction(
    store: Path, memdir_exe: list[str]
) -> None:
    old, _ = _remember(ALWAYS)
    done = subprocess.run(
        [*memdir_exe, "remember", NEVER],
        capture_output=True,
        text=True,
        cwd=store.parent,
        check=False,
    )
    new = done.stdout.strip()
    assert done.returncode == 0, done.stderr
    assert new != old and "already known" not in done.stderr
    assert f"contradicts {old}" in done.stderr
    assert f"memdir correct {old} --text {shlex.quote(NEVER)}" in done.stderr
    assert f"memdir forget {new}" in done.stderr
    assert _active(store) == {ALWAYS: old, NEVER: new}
    assert service.get(store, new).text == NEVER  # the file says what was typed


def test_a_true_duplicate_is_still_known_beside_its_contradiction(store: Path) -> None:
    old, _ = _remember(ALWAYS)
    new, _ = _remember(NEVER)
    again, said = _remember("always use tabs for indentation in makefiles")
    assert (again, said.strip()) == (old, f"memdir: already known: {old}")
    repeat, said = _remember("Never use tabs for indentation in Makefiles.")
    assert (repeat, said.strip()) == (new, f"memdir: already known: {new}")
    assert len(_active(store)) == 2


def test_correcting_the_old_rule_as_told_supersedes_it_by_the_new_record(store: Path) -> None:
    old, _ = _remember(ALWAYS)
    new, said = _remember(NEVER)
    command = said.split("To keep the new one: `")[1].split("`")[0]
    assert shlex.split(command)[:2] == ["memdir", "correct"]
    result = run_cli(*shlex.split(command)[1:])
    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == new  # adopted, not a third copy
    assert service.get(store, old).status == "superseded"
    assert service.get(store, old).superseded_by == new
    assert service.get(store, new).supersedes == old
    assert _active(store) == {NEVER: new}
    assert "conflict" not in _dream(store)


def test_bun_not_npm_then_npm_for_installs_is_stored_with_a_warning(store: Path) -> None:
    bun, _ = _remember("Use bun, not npm")
    npm, said = _remember("Use npm for installs")
    assert npm != bun and f"contradicts {bun}" in said
    again, said = _remember("use bun, not npm.")
    assert again == bun and "already known" in said


def test_the_reverse_of_a_rejected_belief_is_not_refused(store: Path) -> None:
    wrong, _ = _remember(NEVER)
    assert run_cli("reject", wrong, "--reason", "Makefiles need tabs").exit_code == 0
    refused = run_cli("remember", "Never use tabs for indentation in Makefiles!")
    assert refused.exit_code == 3  # the rejected belief itself stays refused
    right, said = _remember(ALWAYS)
    assert right != wrong and "contradicts" not in said  # a rejected record is not live
    assert _active(store) == {ALWAYS: right}


def test_json_remember_prints_the_new_record_only(store: Path) -> None:
    _remember(ALWAYS)
    result = run_cli("remember", NEVER, "--json")
    assert result.exit_code == 0 and result.stderr == ""
    assert json.loads(result.stdout)["text"] == NEVER


@pytest.mark.parametrize(
    ("a", "b", "code"),
    [
        (ALWAYS, NEVER, "conflict"),
        ("Use bun, not npm", "Use npm for installs", "conflict"),
        ("Use bun, not npm", "Use npm, not bun", "conflict"),
        ("Use pnpm, not npm, in this repository", "Use npm for installs", "conflict"),
        ("总是用 tab 缩进 Makefile", "不要用 tab 缩进 Makefile", "conflict"),
        ("Makefile ではタブを使う", "Makefile ではタブを使わない", "conflict"),
        ("Never use tabs in Makefiles", "Do not use tabs in Makefiles", "near_duplicate"),
        ("Use bun, not npm", "Use bun instead of npm", "near_duplicate"),
        ("Use bun, not npm", "Prefer bun over npm", "near_duplicate"),
        ("Never push to main", "Always push tags", None),
    ],
)
def test_dream_labels_each_pair_by_polarity(store: Path, a: str, b: str, code: str | None) -> None:
    first, _ = _remember(a)
    second, _ = _remember(b)
    assert first != second
    found = _dream(store)
    if code is None:
        assert found == {}
    else:
        assert found == {code: [sorted([first, second])]}


def test_dream_advice_fits_the_label(store: Path) -> None:
    old, _ = _remember(ALWAYS)
    new, _ = _remember(NEVER)
    same, _ = _remember("Use bun, not npm")
    twin, _ = _remember("Prefer bun over npm")
    findings = json.loads(run_cli("dream", "--json").stdout)["findings"]
    by_code = {f["code"]: f for f in findings if f["code"] in ("conflict", "near_duplicate")}
    assert f"memdir correct {old} --text {shlex.quote(NEVER)}" in by_code["conflict"]["fix"]
    assert f"memdir correct {new} --text {shlex.quote(ALWAYS)}" in by_code["conflict"]["fix"]
    assert "forget" in by_code["near_duplicate"]["fix"]
    assert sorted(by_code["near_duplicate"]["ids"]) == sorted([same, twin])
