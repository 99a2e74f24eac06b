"""Importing Claude Code transcripts and Codex rollouts: idempotent, streamed, never silent."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from memdir import service
from memdir.kernel.base.errors import UsageError
from memdir.kernel.storage import session
from memdir.service import memory
from tests.conftest import SHARED, run_cli

CLAUDE = sorted((SHARED / "data" / "claude-code-transcripts").glob("*.jsonl"))
CODEX = sorted((SHARED / "data" / "codex-rollouts").glob("*.jsonl"))


def _turns(store: Path) -> list[dict]:
    rows: list[dict] = []
    for path in sorted((store / "journal").glob("*.jsonl")):
        rows += [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return rows


def test_claude_transcripts_import_text_tools_sessions_and_tokens(store: Path) -> None:
    done = memory.import_transcripts(store, CLAUDE, "claude-transcript")
    assert done.turns > 10 and done.files == len(CLAUDE)
    turns = _turns(store)
    assert {t["who"] for t in turns} == {"user", "assistant"}
    assert any("decorators" in t["text"] for t in turns)
    assert all(t["ref"].startswith("claude:") for t in turns)
    assert any("[tools used:" in t["text"] for t in turns if t["who"] == "assistant")
    ledger = session.load(store, "test_session")["ledger"]
    assert ledger["transcript_output_tokens"] > 0
    hits = service.search(store, "python decorator example").hits
    assert hits and hits[0].session


def test_importing_twice_adds_nothing(store: Path) -> None:
    first = memory.import_transcripts(store, CLAUDE, "claude-transcript")
    again = memory.import_transcripts(store, CLAUDE, "claude-transcript")
    assert again.turns == 0
    assert len(_turns(store)) == first.turns


def test_a_copied_transcript_is_deduplicated_by_message_id(store: Path, tmp_path: Path) -> None:
    memory.import_transcripts(store, CLAUDE[:1], "claude-transcript")
    copy = tmp_path / "copy.jsonl"
    copy.write_bytes(CLAUDE[0].read_bytes())
    again = memory.import_transcripts(store, [copy], "claude-transcript")
    assert again.turns == 0 and again.duplicates > 0


def test_a_grown_transcript_imports_only_its_new_lines(store: Path, tmp_path: Path) -> None:
    path = tmp_path / "live.jsonl"
    lines = CLAUDE[0].read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:3]))
    first = memory.import_transcripts(store, [path], "claude-transcript")
    with path.open("ab") as fh:
        fh.write(b"".join(lines[3:]))
    second = memory.import_transcripts(store, [path], "claude-transcript")
    assert first.turns + second.turns == len(_turns(store))
    assert second.duplicates == 0


def test_codex_rollouts_keep_messages_and_tool_names_but_never_encrypted_reasoning(
    store: Path,
) -> None:
    done = memory.import_transcripts(store, CODEX, "codex-rollout")
    turns = _turns(store)
    assert done.turns == 2
    assert [t["who"] for t in turns] == ["user", "assistant"]
    assert turns[0]["text"] == "List the synthetic files."
    assert "exec_command" in turns[1]["text"] and "apply_patch" in turns[1]["text"]
    assert turns[0]["session"] == "11111111-1111-4111-8111-111111111111"
    for path in store.rglob("*"):
        if path.is_file() and ".git" not in path.parts:
            assert b"SYNTHETIC_ENCRYPTED" not in path.read_bytes()
            assert b"I will inspect the synthetic directory" not in path.read_bytes()


def test_a_rollout_we_write_ourselves(store: Path, tmp_path: Path) -> None:
    rollout = tmp_path / "rollout.jsonl"
    rows = [
        {
            "timestamp": "2026-03-01T10:00:00.000Z",
            "type": "session_meta",
            "payload": {"id": "cx-1"},
        },
        {
            "timestamp": "2026-03-01T10:00:01.000Z",
            "type": "response_item",
            "payload": {
                "type": "message",
                "role": "user",
                "content": [
                    {
                        "type": "input_text",
                        "text": "<environment_context>cwd=/x</environment_context>",
                    }
                ],
            },
        },
        {
            "timestamp": "2026-03-01T10:00:02.000Z",
            "type": "response_item",
            "payload": {
                "type": "message",
                "role": "user",
                "content": [
                    {"type": "input_text", "text": "Remember that the API key lives in Vault."}
                ],
            },
        },
        {
            "timestamp": "2026-03-01T10:00:03.000Z",
            "type": "response_item",
            "payload": {"type": "reasoning", "encrypted_content": "SECRET-REASONING"},
        },
        {
            "timestamp": "2026-03-01T10:00:04.000Z",
            "type": "response_item",
            "payload": {"type": "function_call", "name": "shell", "arguments": "{}"},
        },
        {
            "timestamp": "2026-03-01T10:00:05.000Z",
            "type": "response_item",
            "payload": {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "Noted: secrets live in Vault."}],
            },
        },
        {"timestamp": "2026-03-01T10:00:06.000Z", "type": "brand_new_type", "payload": {"x": 1}},
    ]
    rollout.write_text("".join(json.dumps(r) + "\n" for r in rows) + "not json\n")
    done = memory.import_transcripts(store, [rollout], "codex-rollout")
    assert (done.turns, done.bad_lines) == (2, 1)
    texts = [t["text"] for t in _turns(store)]
    assert texts == [
        "Remember that the API key lives in Vault.",
        "Noted: secrets live in Vault.\n[tools used: shell]",
    ]


def test_bad_input_is_an_error_not_a_silent_success(store: Path, tmp_path: Path) -> None:
    with pytest.raises(UsageError):
        memory.import_transcripts(store, [tmp_path], "claude-transcript")
    with pytest.raises(UsageError):
        memory.import_transcripts(store, CLAUDE, "slack-export")
    garbage = tmp_path / "garbage.jsonl"
    garbage.write_text("not json\n[1,2]\n")
    result = run_cli("import", "--from", "claude-transcript", str(garbage), "--json")
    assert json.loads(result.stdout)["bad_lines"] == 2


@pytest.mark.slow
def test_a_large_transcript_imports_in_bounded_memory(store: Path, tmp_path: Path) -> None:
    """About 40 MB of transcript: peak memory must not grow with the file (streamed)."""
    big = tmp_path / "big.jsonl"
    line = {
        "type": "user",
        "sessionId": "big",
        "timestamp": "2026-01-01T00:00:00Z",
        "message": {"role": "user", "content": "x " * 900},
    }
    with big.open("w") as fh:
        for n in range(20_000):
            fh.write(json.dumps({**line, "uuid": f"u{n}"}) + "\n")
    assert big.stat().st_size > 35_000_000
    # The peak is the child's own: Linux's VmHWM starts afresh at exec, while ru_maxrss carries
    # the parent's peak across fork and exec (so a large pytest process would fail the test).
    probe = (
        "import resource, sys; from pathlib import Path; from memdir.service import memory;"
        "done = memory.import_transcripts(Path(sys.argv[1]), [Path(sys.argv[2])], 'claude-transcript');"
        "status = Path('/proc/self/status');"
        "hwm = [l.split()[1] for l in status.read_text().splitlines() if l.startswith('VmHWM')]"
        " if status.exists() else [];"
        "print(done.turns, hwm[0] if hwm else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe, str(store), str(big)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    turns, peak_kib = int(out[0]), int(out[1])
    assert turns == 20_000
    assert peak_kib < 150 * 1024  # far below the file's 36 MB times Python's overhead
