"""Hook routing (B49), input over real pipes (B50) and ``memdir hook EVENT --preview``."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from memdir import service
from memdir.kernel.storage import session
from tests.conftest import git
from tests.hooks.conftest import _base_env, run_hook


def _repo_with_store(root: Path) -> Path:
    root.mkdir()
    git(root, "init", "-q")
    (root / "README.md").write_text(f"# {root.name}\n")
    git(root, "add", "README.md")
    git(root, "commit", "-qm", "initial")
    return service.init(root).store


def _texts(store: Path) -> list[str]:
    return [r.text for r in service.list_records(store)]


def _journal_text(store: Path) -> str:
    return "".join(p.read_text() for p in (store / "journal").glob("*.jsonl"))


# --- B49: a hook belongs to the session's project ---------------------------------------------


def test_b49_a_cwd_in_another_repo_never_moves_the_session_there(tmp_path: Path) -> None:
    a = _repo_with_store(tmp_path / "a")
    b = _repo_with_store(tmp_path / "b")
    prompt = "remember that project A deploys to eu-west-1"
    payload = {"session_id": "s1", "cwd": str(b.parent / "src"), "prompt": prompt}
    (b.parent / "src").mkdir()
    run_hook(
        "UserPromptSubmit",
        payload,
        cwd=b.parent,
        env={"CLAUDE_PROJECT_DIR": str(a.parent)},
    )
    assert _texts(a) == ["Project A deploys to eu-west-1"]
    assert "eu-west-1" in _journal_text(a)
    assert _texts(b) == [] and not list((b / "journal").glob("*.jsonl"))


def test_b49_without_a_project_variable_the_store_recorded_at_start_wins(tmp_path: Path) -> None:
    """Codex sets no project-dir variable: the session's start records its store."""
    a = _repo_with_store(tmp_path / "a")
    b = _repo_with_store(tmp_path / "b")
    start = {"session_id": "cx", "cwd": str(a.parent), "source": "startup"}
    run_hook("SessionStart", start, cwd=a.parent, host="codex")
    wandered = {"session_id": "cx", "cwd": str(b.parent), "prompt": "remember that A uses tabs"}
    run_hook("UserPromptSubmit", wandered, cwd=b.parent, host="codex")
    assert _texts(a) == ["A uses tabs"] and _texts(b) == []
    # another session that starts in B belongs to B
    other = {"session_id": "cy", "cwd": str(b.parent), "source": "startup"}
    run_hook("SessionStart", other, cwd=b.parent, host="codex")
    said = {"session_id": "cy", "cwd": str(b.parent), "prompt": "remember that B uses spaces"}
    run_hook("UserPromptSubmit", said, cwd=b.parent, host="codex")
    assert _texts(b) == ["B uses spaces"] and _texts(a) == ["A uses tabs"]


def test_without_a_variable_or_recorded_store_the_process_cwd_beats_the_payload_cwd(
    tmp_path: Path,
) -> None:
    """A hook runs in its project: a payload cwd in another repo never routes it there."""
    proj = _repo_with_store(tmp_path / "proj")
    other = _repo_with_store(tmp_path / "other")
    said = {"session_id": "s3", "cwd": str(other.parent), "prompt": "remember that s3 uses zsh"}
    run_hook("UserPromptSubmit", said, cwd=proj.parent)
    # Must not: the other repo's store gets the belief (or the journal line).
    assert _texts(other) == [] and not list((other / "journal").glob("*.jsonl"))
    # The right thing: the store of the project the hook ran in has it.
    assert _texts(proj) == ["S3 uses zsh"]
    # A hook started outside any store still finds the project by its payload cwd.
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    again = {"session_id": "s4", "cwd": str(proj.parent), "prompt": "remember that s4 uses fish"}
    run_hook("UserPromptSubmit", again, cwd=outside)
    assert sorted(_texts(proj)) == ["S3 uses zsh", "S4 uses fish"]


# --- B50: stdin always read to its end; big fields cut, the event kept ------------------------


def _pipe_hook(event: str, data: bytes, cwd: Path) -> tuple[float, bytes]:
    """Run a hook with ``data`` written through a real pipe in chunks, as a host does.

    Returns the wall time and stdout; fails when the write breaks (EPIPE) or the hook fails.
    """
    started = time.monotonic()
    process = subprocess.Popen(
        [sys.executable, "-m", "memdir", "hook", event],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=cwd,
        env=_base_env(),
    )
    assert process.stdin is not None
    for start in range(0, len(data), 65536):
        process.stdin.write(data[start : start + 65536])  # BrokenPipeError would fail the test
    process.stdin.close()
    assert process.stdout is not None and process.stderr is not None
    out, err = process.stdout.read(), process.stderr.read()
    process.stdout.close()
    process.stderr.close()
    assert process.wait(timeout=60) == 0, err
    return time.monotonic() - started, out


@pytest.mark.slow
def test_b50_a_5mb_write_keeps_its_action_row_and_the_writer_never_breaks(store: Path) -> None:
    project = store.parent
    big = "x = 1\n" * 900_000  # 5.4 MB
    (project / "big.py").write_text(big)
    payload = {
        "session_id": "s1",
        "cwd": str(project),
        "hook_event_name": "PostToolUse",
        "tool_name": "Write",
        "tool_input": {"file_path": str(project / "big.py"), "content": big},
        "tool_response": {"type": "create", "filePath": str(project / "big.py"), "content": big},
    }
    data = json.dumps(payload).encode()
    assert len(data) > 10_000_000
    _pipe_hook("PostToolUse", data, project)
    lines = [x for p in (store / "actions").glob("*.jsonl") for x in p.read_text().splitlines()]
    rows = [json.loads(line) for line in lines]
    assert [(r["tool"], r["path"], r["ok"]) for r in rows] == [("Write", "big.py", True)]
    assert session.load(store, "s1")["written"] == ["big.py"]
    assert all(len(line) < 2000 for line in lines)


@pytest.mark.slow
def test_b50_a_5mb_prompt_still_stores_the_belief_at_its_end_within_the_deadline(
    store: Path,
) -> None:
    filler = "lorem ipsum dolor sit amet, consectetur adipiscing elit. " * 90_000  # 5.2 MB
    prompt = filler + "\n\nremember that the deploy day is Friday"
    payload = {"session_id": "s1", "cwd": str(store.parent), "prompt": prompt}
    elapsed, _ = _pipe_hook("UserPromptSubmit", json.dumps(payload).encode(), store.parent)
    assert _texts(store) == ["The deploy day is Friday"]
    journal = _journal_text(store)
    assert "deploy day is Friday" in journal and "characters cut by memdir" in journal
    assert len(journal) < 200_000  # the journal keeps the head and tail, not 5 MB
    errors = store / "state" / "hook-errors.log"
    assert not errors.exists() or "gave up" not in errors.read_text()
    assert elapsed < 10


def test_b50_a_payload_over_the_parse_limit_keeps_its_event(store: Path) -> None:
    """Past the parse limit only the two ends are kept: the prompt's end is still seen."""
    from memdir.kernel.hostio import hookio

    prompt = "a" * 300_000 + " remember that the release train leaves on Monday"
    data = json.dumps(
        {"session_id": "s9", "cwd": "/p", "hook_event_name": "UserPromptSubmit", "prompt": prompt}
    ).encode()

    class Chunked:
        def __init__(self, payload: bytes) -> None:
            self.payload, self.at = payload, 0

        def read(self, size: int) -> bytes:
            chunk = self.payload[self.at : self.at + size]
            self.at += len(chunk)
            return chunk

    value, problem = hookio.read_payload(Chunked(data), limit=100_000)  # type: ignore[arg-type]
    assert problem == ""
    assert value["session_id"] == "s9" and value["hook_event_name"] == "UserPromptSubmit"
    assert value["prompt"].startswith("aaaa")
    assert value["prompt"].endswith("remember that the release train leaves on Monday")
    assert len(value["prompt"]) < 40_000


# --- memdir hook EVENT --preview ----------------------------------------------------------------


def _preview(store: Path, *args: str, payload: dict[str, Any] | None = None) -> Any:
    return subprocess.run(
        [sys.executable, "-m", "memdir", "hook", *args, "--preview"],
        input=json.dumps(payload or {}).encode(),
        capture_output=True,
        cwd=store.parent,
        env=_base_env(),
        timeout=60,
        check=False,
    )


def _snapshot(store: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(store)): p.read_bytes()
        for p in store.rglob("*")
        if p.is_file() and ".git" not in p.parts and not p.name.startswith("index.sqlite")
    }


def test_preview_shows_exactly_what_the_agent_would_get_and_writes_nothing(store: Path) -> None:
    service.remember(store, "Never push on Fridays", kind="rule")
    service.remember(store, "The payment service retries three times")
    before = _snapshot(store)
    shown = _preview(store, "SessionStart")
    asked = _preview(
        store,
        "UserPromptSubmit",
        "--prompt",
        "how often does the payment service retry? remember that retries use jitter",
    )
    assert shown.returncode == 0 and asked.returncode == 0
    assert _snapshot(store) == before  # no journal, no record, no session state
    assert [r.text for r in service.list_records(store)] == [
        "The payment service retries three times",
        "Never push on Fridays",
    ]
    assert 'would store (fact): "Retries use jitter"' in asked.stdout.decode()
    assert "retries three times" in asked.stdout.decode()
    real = run_hook(
        "SessionStart",
        {"session_id": "s1", "cwd": str(store.parent), "source": "startup"},
        cwd=store.parent,
    )
    assert shown.stdout.decode() == real.context + "\n"
    as_json = _preview(store, "SessionStart", "--json")
    assert json.loads(as_json.stdout) == real.json


def test_preview_says_when_there_is_nothing_and_when_there_is_no_store(
    store: Path, tmp_path: Path
) -> None:
    empty = _preview(store, "SessionStart")
    assert empty.returncode == 0 and empty.stdout == b"" and b"nothing" in empty.stderr
    elsewhere = tmp_path / "plain"
    elsewhere.mkdir()
    missing = subprocess.run(
        [sys.executable, "-m", "memdir", "hook", "SessionStart", "--preview"],
        input=b"{}",
        capture_output=True,
        cwd=elsewhere,
        env={**_base_env(), "HOME": str(tmp_path)},
        timeout=60,
        check=False,
    )
    assert missing.returncode == 4 and b"no memdir store" in missing.stderr
    bad = _preview(store, "NoSuchEvent")
    assert bad.returncode == 2 and b"no hook event" in bad.stderr


def test_memdir_digest_is_the_session_start_preview(store: Path) -> None:
    service.remember(store, "Never push on Fridays", kind="rule")
    before = _snapshot(store)

    def memdir(*args: str) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run(
            [sys.executable, "-m", "memdir", *args],
            capture_output=True,
            cwd=store.parent,
            env=_base_env(),
            timeout=60,
            check=False,
            stdin=subprocess.DEVNULL,
        )

    digest = memdir("digest")
    assert digest.returncode == 0 and b"Never push on Fridays" in digest.stdout
    assert digest.stdout == _preview(store, "SessionStart").stdout
    asked = memdir("digest", "--prompt", "remember that tags are signed")
    assert b'would store (fact): "Tags are signed"' in asked.stdout
    assert _snapshot(store) == before
    assert [r.text for r in service.list_records(store)] == ["Never push on Fridays"]
