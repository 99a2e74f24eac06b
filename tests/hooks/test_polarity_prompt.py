"""A prompt that asks to remember the reverse of an active rule: stored, and the agent is told."""

from __future__ import annotations

from pathlib import Path

from memdir import service
from tests.hooks.conftest import Hook


def test_a_requested_reverse_rule_is_stored_and_the_contradiction_injected(
    store: Path, hook: Hook
) -> None:
    old = service.remember(store, "Always use tabs for indentation in Makefiles", kind="rule")
    run = hook(
        "UserPromptSubmit", prompt="From now on, never use tabs for indentation in Makefiles."
    )
    texts = {r.text: r.id for r in service.list_records(store)}
    assert set(texts) == {
        "Always use tabs for indentation in Makefiles",
        "Never use tabs for indentation in Makefiles",
    }
    assert "memdir stored" in run.context
    assert f"contradicts {old.record.id}" in run.context
    again = hook(
        "UserPromptSubmit", prompt="From now on, always use tabs for indentation in Makefiles."
    )
    assert "already knew" in again.context and "contradicts" not in again.context
    assert len(service.list_records(store)) == 2
