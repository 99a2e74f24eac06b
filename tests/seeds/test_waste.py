"""The waste report on Claude Code 2.1.332's recorded hook payloads and recorded outputs (item 2)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from memdir import service
from memdir.service.channel import cli_caller
from tests.conftest import run_cli
from tests.hooks.conftest import run_hook
from tests.hooks.test_claude_code_replay import payload
from tests.hosts.conformance.conftest import PROJECT_FILES

OUTPUTS = {
    f["name"]: f
    for f in json.loads(
        (Path(__file__).parent / "fixtures" / "command_outputs.json").read_text(encoding="utf-8")
    )
}


@pytest.fixture
def project(store: Path) -> Path:
    root = store.parent
    for rel, text in PROJECT_FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    # a large file read and never edited: the recorded git log
    (root / "docs").mkdir(exist_ok=True)
    (root / "docs" / "history.txt").write_text(OUTPUTS["git-log"]["stdout"])
    return root


def _replay(project: Path, name: str, session: str = "", **changes: Any) -> None:
    data = payload(name, project)
    if session:
        data["session_id"] = session
    data.update(changes)
    run_hook(data["hook_event_name"], data, cwd=project)


def _waste(**options: str) -> dict[str, Any]:
    result = run_cli("stats", "--waste", "--json", *[x for kv in options.items() for x in kv])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _codes(report: dict[str, Any]) -> set[str]:
    return {f["code"] for f in report["findings"]}


def test_a_clean_session_has_no_waste(project: Path) -> None:
    _replay(project, "SessionStart-startup")
    _replay(project, "PostToolUse-Read")
    _replay(project, "PostToolUse-Edit")
    assert _waste()["findings"] == []


def test_reads_refusals_and_noisy_output_are_found_with_evidence_and_fixes(
    project: Path,
) -> None:
    _replay(project, "SessionStart-startup")
    read = payload("PostToolUse-Read", project)
    rel = Path(read["tool_input"]["file_path"]).relative_to(project).as_posix()
    for _ in range(3):  # read in full three times, no edit between
        _replay(project, "PostToolUse-Read")
    _replay(project, "PreToolUse-Read")  # memdir refuses the re-read ...
    _replay(project, "PostToolUse-Read")  # ... and it is read in full again
    big = {**read["tool_input"], "file_path": str(project / "docs" / "history.txt")}
    _replay(project, "PostToolUse-Read", tool_input=big)
    manifest = project / ".memdir" / "memdir.toml"  # a host whose output memdir cannot shorten
    manifest.write_text(manifest.read_text().replace('mode = "shape"', 'mode = "note"'))
    find = OUTPUTS["find"]
    _replay(
        project,
        "PostToolUse-Bash",
        tool_input={"command": find["command"]},
        tool_response={"stdout": find["stdout"], "stderr": "", "interrupted": False},
    )
    report = _waste()
    by_code = {f["code"]: f for f in report["findings"]}
    assert {"repeated_read", "retried_refusal", "large_unedited_read", "noisy_command"} <= set(
        by_code
    )
    assert by_code["repeated_read"]["evidence"]["file"] == rel
    assert "duplicate_read" in by_code["repeated_read"]["fix"]
    assert by_code["retried_refusal"]["evidence"]["file"] == rel
    assert by_code["large_unedited_read"]["evidence"]["file"] == "docs/history.txt"
    assert by_code["noisy_command"]["evidence"]["command"] == "find src tests"
    assert '"note"' in by_code["noisy_command"]["fix"]  # names the setting as it is
    assert report["tokens"] > 6000
    dream = json.loads(run_cli("dream", "--json").stdout)
    assert _codes(dream["waste"]) == _codes(report)
    text = run_cli("stats", "--waste").stdout
    assert "repeated_read" in text and "fix:" in text


def test_unused_injections_and_a_store_no_one_updates(project: Path) -> None:
    owner = cli_caller({})
    kept = service.remember(
        project / ".memdir", "Releases are tagged vYYYY.MM", kind="rule", caller=owner
    ).record
    used = service.remember(
        project / ".memdir", "Staging lives at staging.example.test", kind="fact", caller=owner
    ).record
    for n in range(3):
        sid = f"sess-{n}"
        _replay(project, "SessionStart-startup", session=sid)
        _replay(project, "PostToolUse-Read", session=sid)
        if n == 0:
            _replay(
                project,
                "PostToolUse-Bash",
                session=sid,
                tool_input={"command": f"memdir get {used.id}"},
                tool_response={"stdout": "", "stderr": "", "interrupted": False},
            )
    report = _waste()
    unused = [f for f in report["findings"] if f["code"] == "unused_injection"]
    assert [f["evidence"]["record"] for f in unused] == [kept.id]  # the one opened is used
    stale = [f for f in report["findings"] if f["code"] == "stale_store"]
    assert stale and stale[0]["evidence"]["sessions"] == 3
    assert "memdir remember" in stale[0]["fix"]
    service.remember(project / ".memdir", "The build needs Node 22", kind="fact", caller=owner)
    assert "stale_store" not in _codes(_waste())
