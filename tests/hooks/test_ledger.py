"""The token ledger per session and per model, priced: real hook runs, then `memdir stats`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from memdir import service
from memdir.service import prices, project
from tests.conftest import git, run_cli
from tests.hooks.conftest import run_hook

FIXTURES = Path(__file__).parents[1] / "hosts" / "fixtures"


def _recorded(host_dir: str, name: str, store: Path, **fields: Any) -> dict[str, Any]:
    """A recorded host payload, pointed at ``store``'s project."""
    payload = json.loads((FIXTURES / host_dir / name).read_text())
    return {**payload, "cwd": str(store.parent), **fields}


def _read_twice(store: Path, session: str, model: str) -> None:
    """A Claude Code Read of the same file twice: the second is refused by the read gate."""
    target = store.parent / "big.py"
    target.write_text("x = 1\n" * 2000)
    for _ in range(2):
        read = {
            "session_id": session,
            "hook_event_name": "PreToolUse",
            "cwd": str(store.parent),
            "model": model,
            "tool_name": "Read",
            "tool_input": {"file_path": str(target)},
        }
        pre = run_hook("PreToolUse", read, cwd=store.parent)
        if "deny" in pre.stdout.decode():
            return
        post = {
            **read,
            "hook_event_name": "PostToolUse",
            "tool_response": {"file": {"filePath": str(target), "content": "x = 1\n" * 2000}},
        }
        run_hook("PostToolUse", post, cwd=store.parent)
    raise AssertionError("the second full read was not refused")


def test_stats_prices_what_each_model_was_injected_and_saved(store: Path) -> None:
    service.remember(store, "The release branch is called trunk-stable, not main")
    codex = _recorded(
        "codex-0.171.0",
        "UserPromptSubmit.json",
        store,
        prompt="which release branch do we cut from, trunk-stable?",
    )
    run_hook("UserPromptSubmit", codex, cwd=store.parent, host="codex")
    claude = _recorded("claude-code-2.1.332", "SessionStart-compact.json", store, source="startup")
    run_hook("SessionStart", claude, cwd=store.parent)
    _read_twice(store, claude["session_id"], "claude-opus-5-5")

    found = project.stats(store)
    sessions = {s["session"]: s for s in found["sessions"]}
    gpt, opus = sessions[codex["session_id"]], sessions[claude["session_id"]]
    assert (gpt["model"], opus["model"]) == ("gpt-5.5", "claude-opus-5-5")
    assert gpt["balance"]["injected_tokens"] > 0 and gpt["balance"]["saved_tokens"] == 0
    assert gpt["balance"]["injected_usd"] == round(
        gpt["balance"]["injected_tokens"] * prices.DEFAULT_PRICES["gpt-5"] / 1e6, 6
    )
    saved = opus["ledger"]["denied_tokens"]
    assert saved > 1000 and opus["balance"]["saved_tokens"] == saved
    assert opus["balance"]["saved_usd"] == round(
        saved * prices.DEFAULT_PRICES["claude-opus"] / 1e6, 6
    )
    assert set(found["models"]) == {"gpt-5.5", "claude-opus-5-5"}
    assert found["prices"]["as_of"] == prices.PRICES_AS_OF
    shown = run_cli("stats", "--store", str(store)).stdout
    assert "gpt-5.5: injected" in shown and "claude-opus-5-5: injected" in shown
    assert f"as of {prices.PRICES_AS_OF}" in shown


def _ranged_read(store: Path, session: str, response: Any) -> dict[str, Any]:
    """A ranged Read of the refused file (lines 1-100) after the refusal; the session's row."""
    target = store.parent / "big.py"
    ranged = {
        "session_id": session,
        "hook_event_name": "PostToolUse",
        "cwd": str(store.parent),
        "tool_name": "Read",
        "tool_input": {"file_path": str(target), "offset": 1, "limit": 100},
        "tool_response": response,
    }
    run_hook("PostToolUse", ranged, cwd=store.parent)
    (row,) = project.stats(store, session)["sessions"]
    return dict(row)


def test_a_ranged_read_after_a_refusal_takes_what_it_returned_off_the_saving(
    store: Path,
) -> None:
    # The refusal saved the whole file less the 100 lines the agent then read by range.
    _read_twice(store, "s-ranged", "claude-sonnet-4-5")
    shown = "x = 1\n" * 100
    row = _ranged_read(store, "s-ranged", {"file": {"filePath": "big.py", "content": shown}})
    ledger, balance = row["ledger"], row["balance"]
    assert ledger["denied_tokens"] == 3000  # the whole file: 12,000 bytes
    assert ledger["reread_tokens"] == len(shown) // 4 == 150
    assert balance["saved_tokens"] == 3000 - 150


def test_a_read_after_a_refusal_whose_size_is_unknown_cancels_the_saving(store: Path) -> None:
    # The same refusal; this host's answer does not carry the text read: the read counts as
    # the whole file, so the refusal is credited with nothing (never with more than it saved).
    _read_twice(store, "s-blind", "claude-sonnet-4-5")
    row = _ranged_read(store, "s-blind", {"success": True})
    ledger, balance = row["ledger"], row["balance"]
    assert ledger["denied_tokens"] > 1000 and ledger["reread_tokens"] == ledger["denied_tokens"]
    assert balance["saved_tokens"] == 0 and balance["net_tokens"] == -balance["injected_tokens"]


def test_the_manifest_overrides_the_prices_and_a_bad_price_is_refused(store: Path) -> None:
    _read_twice(store, "s-local", "my-local-model")
    (row,) = project.stats(store, "s-local")["sessions"]
    assert row["balance"]["saved_tokens"] > 0 and row["balance"]["saved_usd"] is None  # unpriced
    manifest = store / "memdir.toml"
    text = manifest.read_text()
    commented = '# as_of = "2026-12-01"\n'
    assert commented in text  # the template's [prices] table, its example commented out
    manifest.write_text(text.replace(commented, 'as_of = "2026-12-01"\n"my-local" = 2.0\n'))
    git(store, "commit", "-qam", "prices")
    found = project.stats(store, "s-local")
    saved = found["sessions"][0]["balance"]["saved_tokens"]
    assert found["sessions"][0]["balance"]["saved_usd"] == round(saved * 2.0 / 1e6, 6)
    assert found["prices"]["as_of"] == "2026-12-01"
    manifest.write_text(text.replace(commented, '"my-local" = "cheap"\n'))
    bad = run_cli("stats", "--store", str(store))
    assert bad.exit_code == 1 and "[prices]: my-local must be USD per million" in bad.stderr
