"""What a fresh user trying memdir saw, through the real CLI: exit codes (DESIGN §9) and messages."""

import json
from pathlib import Path

import pytest

from tests.conftest import run_cli


def _json(args: list[str], code: int = 0) -> dict:
    result = run_cli(*args, "--json")
    assert result.exit_code == code, result.output + result.stderr
    return json.loads(result.stdout)


def _observer_candidate(text: str) -> str:
    """Journal ``text`` as the person and let the offline observer propose it; return its id."""
    assert run_cli("journal", "user", text, "--session", "s1").exit_code == 0
    done = _json(["observe", "--once", "--offline", "--from-start"])
    [record_id] = done["candidates"]
    return record_id


def test_accepting_a_candidate_in_review_gives_it_the_owners_authority(
    store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An accepted observer candidate is the owner's: an agent can then only propose."""
    record_id = _observer_candidate("We decided to deploy on Fridays")
    assert _json(["get", record_id])["origin"] == "observer"

    accepted = run_cli("review", "--accept", record_id)
    assert accepted.exit_code == 0, accepted.stderr
    assert f"{record_id}  active" in accepted.stdout
    doc = _json(["get", record_id])
    assert (doc["status"], doc["origin"]) == ("active", "owner")
    assert doc["source"]["channel"] == "observer"  # where it came from is kept
    [event] = [e for e in _json(["audit", record_id])["results"] if e["op"] == "accept"]
    assert (event["origin"], event["from_origin"]) == ("owner", "observer")

    monkeypatch.setenv("CLAUDECODE", "1")  # the agent's shell
    proposed = run_cli("correct", record_id, "--text", "We deploy on Mondays")
    assert proposed.exit_code == 0
    assert "proposed; the owner decides in `memdir review`" in proposed.stdout
    monkeypatch.delenv("CLAUDECODE")
    after = _json(["get", record_id])
    assert (after["status"], after["text"]) == ("active", "We decided to deploy on Fridays")
