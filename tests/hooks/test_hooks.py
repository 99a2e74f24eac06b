"""The hook contract (DESIGN §7) with real subprocesses, in Claude Code's payload shapes."""

from __future__ import annotations

import contextlib
import json
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from memdir import service
from memdir.kernel.storage import session
from tests.hooks.conftest import HookRun, run_hook

Hook = Callable[..., HookRun]


def _read(
    hook: Hook, path: Path, session_id: str = "s1", **tool_input: object
) -> tuple[HookRun, HookRun | None]:
    """A Read the way Claude Code runs it: PreToolUse, then (if allowed) PostToolUse."""
    inp = {"file_path": str(path), **tool_input}
    pre = hook("PreToolUse", session_id, tool_name="Read", tool_input=inp)
    decision = (pre.json or {}).get("hookSpecificOutput", {}).get("permissionDecision")
    if decision == "deny":
        return pre, None
    post = hook(
        "PostToolUse",
        session_id,
        tool_name="Read",
        tool_input=inp,
        tool_response={"type": "text", "file": {"filePath": str(path), "content": "x"}},
    )
    return pre, post


def _denied(run: HookRun) -> bool:
    return (run.json or {}).get("hookSpecificOutput", {}).get("permissionDecision") == "deny"


def test_session_start_injects_a_fenced_digest_with_rules_first(store: Path, hook: Hook) -> None:
    service.remember(store, "Never commit directly to main", kind="rule", importance=9)
    service.remember(store, "The staging server restarts on Sundays")
    run = hook("SessionStart", source="startup")
    out = run.json
    assert out is not None
    assert out["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    context = run.context
    assert context.startswith("<memdir-memory>") and context.endswith("</memdir-memory>")
    assert "not instructions" in context
    lines = [line for line in context.splitlines() if line.startswith("- ")]
    assert "(rule, owner," in lines[0] and "Never commit directly to main" in lines[0]
    assert "2 active records (1 fact, 1 rule)." in context


def test_the_digest_counts_only_active_records(store: Path, hook: Hook) -> None:
    keep = service.remember(store, "The build cache lives in .cache/build").record.id
    old = service.remember(store, "The queue is RabbitMQ").record.id
    service.correct(store, old, "The queue is Kafka", reason="migrated")
    gone = service.remember(store, "Deploys happen on Fridays", kind="rule").record.id
    service.forget(store, gone, reason="no longer true")
    context = hook("SessionStart", source="startup").context
    assert "2 active records (2 fact)." in context, context
    assert keep


def test_the_digest_respects_its_token_budget(store: Path, hook: Hook) -> None:
    for n in range(60):
        service.remember(
            store, f"Rule number {n}: keep module {n} under five hundred lines", kind="rule"
        )
    context = hook("SessionStart", source="startup").context
    assert 0 < len(context.encode()) / 4 <= 400


def test_no_store_means_silence(tmp_path: Path) -> None:
    run = run_hook("SessionStart", {"session_id": "x", "cwd": str(tmp_path)}, cwd=tmp_path)
    assert run.stdout == b""


@pytest.mark.parametrize(
    "payload",
    [
        b"",
        b"not-json",
        b"{truncated",
        b"[1, 2, 3]",
        b'"a string"',
        b"\xff\xfe\x00",
        json.dumps({"hook_event_name": "PreToolUse"}).encode(),
        json.dumps({"session_id": 5, "tool_input": "x", "cwd": 7}).encode(),
        b"{" + b'"x": "' + b"a" * (5 * 1024 * 1024) + b'"}',
    ],
    ids=[
        "empty",
        "not-json",
        "truncated",
        "array",
        "string",
        "binary",
        "missing-fields",
        "wrong-types",
        "huge",
    ],
)
@pytest.mark.parametrize(
    "event",
    [
        "SessionStart",
        "UserPromptSubmit",
        "PreToolUse",
        "PostToolUse",
        "Stop",
        "SessionEnd",
        "NoSuchEvent",
    ],
)
def test_any_payload_exits_zero_with_nothing_or_one_json_object(
    store: Path, payload: bytes, event: str
) -> None:
    run = run_hook(event, payload, cwd=store.parent)
    if run.stdout:
        assert isinstance(run.json, dict)  # exactly one JSON object

    assert b"Traceback" not in run.stdout


def test_malformed_input_is_logged_and_shown_by_health(store: Path) -> None:
    run_hook("PreToolUse", b"not-json", cwd=store.parent)
    log = (store / "state" / "hook-errors.log").read_text()
    assert "not JSON" in log
    report = service.health(store)
    assert any(f.code == "hook_errors" for f in report.findings)


def test_duplicate_full_read_is_denied_once_with_a_reason_and_the_retry_passes(
    store: Path, hook: Hook
) -> None:
    target = store.parent / "README.md"
    first_pre, _ = _read(hook, target)
    assert first_pre.stdout == b""
    second_pre, _ = _read(hook, target)
    assert _denied(second_pre)
    reason = second_pre.json["hookSpecificOutput"]["permissionDecisionReason"]  # type: ignore[index]
    assert "offset/limit" in reason and "README.md" in reason
    retry_pre, _ = _read(hook, target)
    assert not _denied(retry_pre)  # once per file: the retry passes


def test_ranged_reads_changed_files_and_subagents_are_never_denied(store: Path, hook: Hook) -> None:
    target = store.parent / "README.md"
    _read(hook, target)
    assert not _denied(_read(hook, target, offset=1, limit=5)[0])
    sub = hook(
        "PreToolUse",
        tool_name="Read",
        tool_input={"file_path": str(target)},
        agent_id="agent-1",
        agent_type="Explore",
    )
    assert not _denied(sub)
    time.sleep(0.01)
    target.write_text("# changed\n")
    assert not _denied(_read(hook, target)[0])


def test_compaction_disarms_the_gate_even_without_precompact(store: Path, hook: Hook) -> None:
    target = store.parent / "README.md"
    _read(hook, target)
    hook("SessionStart", source="compact")  # PreCompact never ran (B36 b)
    assert not _denied(_read(hook, target)[0])


def test_precompact_twice_is_one_checkpoint_and_never_blocks(store: Path, hook: Hook) -> None:
    first = hook("PreCompact", session="c1", trigger="auto", transcript_path="/tmp/t.jsonl")
    second = hook("PreCompact", session="c1", trigger="auto", transcript_path="/tmp/t.jsonl")
    assert first.stdout == second.stdout == b""
    state = session.load(store, "c1")
    assert len(state["compactions"]) == 1


def test_compact_start_reinjects_the_rules(store: Path, hook: Hook) -> None:
    service.remember(store, "Never push on Fridays", kind="rule")
    hook("SessionStart", source="startup")
    again = hook("SessionStart", source="compact")
    assert "Never push on Fridays" in again.context
    assert "compacted" in again.context


# B16: two sessions on one store never reset each other's state.
def test_parallel_sessions_keep_their_own_state(store: Path, hook: Hook) -> None:
    (store.parent / "a.py").write_text("a = 1\n")
    (store.parent / "b.py").write_text("b = 2\n")
    hook("SessionStart", "A", source="startup")
    hook(
        "PostToolUse",
        "A",
        tool_name="Write",
        tool_input={"file_path": str(store.parent / "a.py")},
        tool_response={"filePath": "a.py", "type": "create"},
    )
    hook("SessionStart", "B", source="startup")
    hook(
        "PostToolUse",
        "B",
        tool_name="Write",
        tool_input={"file_path": str(store.parent / "b.py")},
        tool_response={"filePath": "b.py", "type": "create"},
    )
    hook("Stop", "A", last_assistant_message="done A", stop_hook_active=False)
    hook("Stop", "B", last_assistant_message="done B", stop_hook_active=False)
    assert session.load(store, "A")["written"] == ["a.py"]
    assert session.load(store, "B")["written"] == ["b.py"]


# B37: a resumed session keeps its state; a duplicate SessionEnd is a no-op.
def test_resume_after_an_early_end_keeps_one_session_record(store: Path, hook: Hook) -> None:
    hook("SessionStart", "R", source="startup")
    for n in range(2):
        hook("UserPromptSubmit", "R", prompt=f"topic X question {n}")
    hook("SessionEnd", "R", reason="prompt_input_exit")
    hook("SessionStart", "R", source="resume")
    for n in range(5):
        hook("UserPromptSubmit", "R", prompt=f"topic Y question {n}")
    hook("SessionEnd", "R", reason="prompt_input_exit")
    hook("SessionEnd", "R", reason="prompt_input_exit")
    state = session.load(store, "R")
    assert state["prompts"] == 7
    assert len(state["ends"]) == 2
    assert session.session_ids(store) == ["R"]  # one state, however many events
    turns = service.search(store, "topic question", limit=20, session="R").hits
    assert len(turns) == 7


def test_prompt_is_journaled_redacted_and_private_spans_dropped(store: Path, hook: Hook) -> None:
    hook(
        "UserPromptSubmit",
        prompt="deploy with key sk-proj-EXAMPLE000000000000000000000000 "
        "<private>my salary is 100k</private> please",
    )
    day = next((store / "journal").glob("*.jsonl")).read_text()
    assert "EXAMPLE0000" not in day and "salary" not in day
    assert "[REDACTED:openai-key]" in day


def test_an_explicit_request_becomes_an_owner_record_citing_the_journal(
    store: Path, hook: Hook
) -> None:
    run = hook(
        "UserPromptSubmit", prompt="Fix the flaky test. Also, remember that CI runs on Node 20."
    )
    assert "memdir stored" in run.context
    records = service.list_records(store)
    assert [(r.text, r.origin, r.source["channel"]) for r in records] == [
        ("CI runs on Node 20", "owner", "hook")
    ]
    citation = records[0].source["journal"]
    file, span = citation.split(":")
    start, end = (int(x) for x in span.split("-"))
    line = (store / file).read_bytes()[start:end]
    assert b"remember that CI runs on Node 20" in line


def test_a_lost_index_never_lets_a_hook_relearn_a_rejected_belief(store: Path, hook: Hook) -> None:
    """The index is derived data: deleting it loses nothing, and no check is skipped meanwhile."""
    rejected = service.remember(store, "Always deploy on Fridays after lunch", kind="rule")
    service.reject(store, rejected.record.id, reason="we never deploy on Fridays")
    for path in store.glob("index.sqlite*"):
        path.unlink()
    prompt = "remember that we always deploy on Fridays after lunch"
    run = hook("UserPromptSubmit", prompt=prompt)
    assert "memdir did not store" in run.context and "rebuilt" in run.context
    assert len(list((store / "records").rglob("*.md"))) == 1

    def indexed() -> int:
        with contextlib.closing(sqlite3.connect(store / "index.sqlite")) as conn:
            return int(conn.execute("SELECT count(*) FROM records").fetchone()[0])

    deadline = time.monotonic() + 60  # the detached `memdir reindex` the hook started
    while indexed() == 0 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert indexed() == 1
    # The spooled request is tried again by the next hook, and refused again: never relearned.
    hook("SessionStart", session="s9", source="startup")
    assert len(list((store / "records").rglob("*.md"))) == 1
    assert not list((store / "state" / "explicit-spool").glob("*.json"))
    again = hook("UserPromptSubmit", prompt=prompt, session="s2")
    assert "memdir did not store" in again.context and "rejected" in again.context
    assert [r.status for r in service.list_records(store)] == ["rejected"]


def test_prompt_recall_injects_only_relevant_records_not_already_shown(
    store: Path, hook: Hook
) -> None:
    service.remember(store, "The payment service retries three times with jitter")
    service.remember(store, "Logs are shipped to Loki")
    assert hook("UserPromptSubmit", prompt="what colour is the sky").context == ""
    first = hook("UserPromptSubmit", prompt="how many retries does the payment service do?")
    assert "retries three times" in first.context and "Loki" not in first.context
    again = hook("UserPromptSubmit", prompt="payment service retries again?")
    assert "retries three times" not in again.context


def test_a_prompt_of_weak_words_injects_nothing_and_a_real_question_does(
    store: Path, hook: Hook
) -> None:
    service.remember(store, "Never use pytest -x in CI; the full failure list is needed")
    service.remember(store, "Use pnpm, not npm, for the web frontend")
    for prompt in ("rename the variable x to total", "fix it", "make it like the other module"):
        assert hook("UserPromptSubmit", prompt=prompt).context == "", prompt
    asked = hook("UserPromptSubmit", prompt="should CI run pytest with -x?").context
    assert "Never use pytest -x in CI" in asked and "pnpm" not in asked


def test_the_preamble_is_told_once_per_context_and_again_after_compaction(
    store: Path, hook: Hook
) -> None:
    from memdir.kernel.lang import fence

    service.remember(store, "The payment service retries three times with jitter")
    service.remember(store, "Invoices are rendered with WeasyPrint templates")
    first = hook("UserPromptSubmit", prompt="how does the payment service handle retries?")
    assert fence.HEADER in first.context and "retries three times" in first.context
    second = hook("UserPromptSubmit", prompt="which templates render the invoices?")
    assert "WeasyPrint" in second.context and fence.HEADER not in second.context
    assert second.context.startswith(f"<{fence.TAG}>\n")  # still fenced as memdir's data
    hook("PreCompact", trigger="manual")  # Codex and Gemini CLI compact without a SessionStart
    service.remember(store, "Refunds go through the payment service's refund queue")
    after = hook("UserPromptSubmit", prompt="how are refunds queued in the payment service?")
    assert "refund queue" in after.context and fence.HEADER in after.context
    state = session.load(store, "s1")
    assert state["preambled"] is True and state["ledger"]["injected_tokens"] > 0


def test_a_near_duplicate_is_not_injected_beside_or_after_the_record_it_repeats(
    store: Path, hook: Hook
) -> None:
    for filler in ("Logs are shipped to Loki", "The API is versioned under /v2", "Use pnpm"):
        service.remember(store, filler)
    service.remember(store, "Staging deploys run every night at two from the release branch")
    service.remember(store, "Staging deploys run every night at 02:00 UTC from the release branch")
    first = hook("UserPromptSubmit", prompt="when do staging deploys run from the release branch?")
    assert first.context.count("Staging deploys run every night") == 1
    again = hook("UserPromptSubmit", prompt="staging deploys from the release branch: when?")
    assert "Staging deploys" not in again.context  # the session holds it already
    other = hook("UserPromptSubmit", "s2", prompt="do staging deploys use the release branch?")
    assert other.context.count("Staging deploys run every night") == 1  # a new session: shown


def test_a_record_the_agent_saved_through_mcp_is_not_injected_back_to_it(
    store: Path, hook: Hook, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memdir.kernel.storage import saves

    hook("UserPromptSubmit", "s-mcp", prompt="hello")  # the session starts before the save
    made = service.remember(store, "The billing worker retries failed Stripe charges hourly")
    monkeypatch.setenv("MEMDIR_SESSION_ID", "s-mcp")  # as the MCP server serving s-mcp marks it
    saves.mark(store, tool="memory_remember", record_id=made.record.id)
    prompt = "how often does the billing worker retry failed Stripe charges?"
    assert "billing worker" not in hook("UserPromptSubmit", "s-mcp", prompt=prompt).context
    assert "billing worker" in hook("UserPromptSubmit", "s-other", prompt=prompt).context


def test_stop_journals_the_answer_and_queues_one_reminder(store: Path, hook: Hook) -> None:
    (store.parent / "x.py").write_text("x = 1\n")
    hook(
        "PostToolUse",
        tool_name="Edit",
        tool_input={"file_path": str(store.parent / "x.py")},
        tool_response={"filePath": "x.py"},
    )
    stop = hook("Stop", last_assistant_message="I edited x.py", stop_hook_active=False)
    assert stop.stdout == b""  # never blocks stopping
    reminded = hook("UserPromptSubmit", prompt="thanks")
    assert "saved no memory" in reminded.context
    hook("Stop", last_assistant_message="ok", stop_hook_active=False)
    assert "saved no memory" not in hook("UserPromptSubmit", prompt="next").context
    turns = [h.who for h in service.search(store, "edited", limit=5).hits]
    assert "assistant" in turns


def test_no_reminder_when_a_belief_was_written(store: Path, hook: Hook) -> None:
    (store.parent / "x.py").write_text("x = 1\n")
    hook(
        "PostToolUse",
        tool_name="Write",
        tool_input={"file_path": str(store.parent / "x.py")},
        tool_response={"filePath": "x.py"},
    )
    hook(
        "PostToolUse",
        tool_name="Bash",
        tool_input={"command": 'memdir remember "x is one"'},
        tool_response={"stdout": "f-1", "stderr": "", "interrupted": False},
    )
    hook("Stop", last_assistant_message="done", stop_hook_active=False)
    assert "saved no memory" not in hook("UserPromptSubmit", prompt="ok").context


def test_post_tool_batch_resurfaces_rules_every_n_batches(store: Path, hook: Hook) -> None:
    manifest = store / "memdir.toml"
    manifest.write_text(manifest.read_text().replace("resurface_every = 25", "resurface_every = 3"))
    service.remember(store, "Always run the linter before committing", kind="rule")
    outputs = [hook("PostToolBatch", tool_calls=[]).context for _ in range(6)]
    assert [bool(o) for o in outputs] == [False, False, True, False, False, True]
    assert "Always run the linter" in outputs[2]


def test_a_store_whose_every_record_is_quarantined_is_not_cold(store: Path, hook: Hook) -> None:
    """A built index of only unreadable files must not refuse every prompt as 'rebuilding'."""
    alpha = service.remember(store, "Alpha one is the first record").record.id
    (store / "records" / "fact" / f"{alpha}.md").write_bytes(b"\x00garbage\n")
    assert service.reindex(store).quarantined == 1
    for text in ("cold store works", "the cold store keeps working"):
        run = hook("UserPromptSubmit", prompt=f"remember that {text}")
        # Must not: the 'being rebuilt, say it again' refusal, on every prompt.
        assert "rebuilt" not in run.context and "did not store" not in run.context
        # The right thing: the explicit request is stored as the owner's.
        assert "memdir stored" in run.context
    texts = sorted((r.text, r.origin) for r in service.list_records(store))
    assert texts == [("Cold store works", "owner"), ("The cold store keeps working", "owner")]


def _prompt_while_the_store_is_held(store: Path, hook: Hook, prompt: str) -> HookRun:
    """Send ``prompt`` while this process holds the store lock past the hook's budget."""
    from memdir.kernel.storage.lock import store_lock

    with store_lock(store, "test holds the store"):
        run = hook("UserPromptSubmit", prompt=prompt)
    assert "it will be stored on memdir's next run" in run.context
    assert service.list_records(store) == []
    assert list((store / "state" / "explicit-spool").glob("*.json"))
    return run


def _journal_line(store: Path, citation: str) -> bytes:
    file, span = citation.split(":")
    start, end = (int(x) for x in span.split("-"))
    return (store / file).read_bytes()[start:end]


@pytest.mark.slow
def test_an_explicit_request_the_prompt_hook_ran_out_of_time_for_is_stored_by_the_next_hook(
    store: Path, hook: Hook
) -> None:
    from memdir.service import memory

    memory.observe_once(store, offline=True)  # the observer has run before: it reads new turns
    _prompt_while_the_store_is_held(store, hook, "remember that the deploy window is Tuesday")
    hook("SessionStart", session="s2", source="startup")  # the next hook run, any event
    records = service.list_records(store)
    # The right thing: the owner's active record, citing the prompt's journal line.
    assert [(r.text, r.origin, r.status) for r in records] == [
        ("The deploy window is Tuesday", "owner", "active")
    ]
    assert b"the deploy window is Tuesday" in _journal_line(store, records[0].source["journal"])
    assert not list((store / "state" / "explicit-spool").glob("*.json"))
    # Must not: the observer, reading the same prompt, demotes it or adds a candidate.
    memory.observe_once(store, offline=True)
    after = service.list_records(store, statuses=("active", "candidate"))
    assert [(r.id, r.origin, r.status) for r in after] == [(records[0].id, "owner", "active")]


@pytest.mark.slow
def test_the_observer_completes_a_spooled_request_as_the_owner_not_a_candidate(
    store: Path, hook: Hook
) -> None:
    from memdir.service import memory

    memory.observe_once(store, offline=True)
    _prompt_while_the_store_is_held(store, hook, "remember that releases are cut on Fridays")
    memory.observe_once(store, offline=True)  # the observer is the next run
    records = service.list_records(store, statuses=("active", "candidate"))
    assert [(r.text, r.origin, r.status) for r in records] == [
        ("Releases are cut on Fridays", "owner", "active")
    ]
    assert not list((store / "state" / "explicit-spool").glob("*.json"))


def test_hook_help_tells_a_person_the_events_and_logs_no_failure(store: Path) -> None:
    """`memdir hook --help` is a person asking: usage on stdout, exit 0, nothing logged."""
    done = subprocess.run(
        [sys.executable, "-m", "memdir", "hook", "--help"],
        capture_output=True,
        text=True,
        cwd=store.parent,
        timeout=30,
        check=False,
    )
    assert done.returncode == 0
    assert done.stdout.startswith("Usage: memdir hook EVENT") and "UserPromptSubmit" in done.stdout
    assert not (store / "state" / "hook-errors.log").exists()
