"""Rejected-value tombstones (issue 10, mark 1): a rejected value is never learned again.

Each refusal is paired with the right thing being there on the same store.
"""

import json
from pathlib import Path

import pytest

from memdir import service
from memdir.kernel.base.caller import Caller
from memdir.kernel.base.errors import RejectedBeliefError
from tests.conftest import git, run_cli

WRONG = "Deploys go out on Fridays after lunch."
RIGHT = "Deploys go out on Tuesdays before noon."
AGENT = Caller("agent", "mcp")

VARIANTS = {
    "case": "DEPLOYS GO OUT ON FRIDAYS AFTER LUNCH.",
    "whitespace": "Deploys  go\tout on   Fridays after lunch.",
    "punctuation": "Deploys go out, on Fridays -- after lunch!!!",
    "full-width": "Ｄｅｐｌｏｙｓ ｇｏ ｏｕｔ ｏｎ Ｆｒｉｄａｙｓ ａｆｔｅｒ ｌｕｎｃｈ.",
    "math-bold": "𝐃𝐞𝐩𝐥𝐨𝐲𝐬 go out on 𝐅𝐫𝐢𝐝𝐚𝐲𝐬 after lunch.",
    "zero-width": "Depl\u200boys go o\u200dut on Fri\u200bdays af\u2060ter lu\ufeffnch.",
    "cyrillic": "Dерlоys gо оut оn Fridаys аftеr lunсh.",  # е р о а с are Cyrillic
}


def _active_texts(store: Path) -> list[str]:
    return [r.text for r in service.list_records(store, statuses=["active", "candidate"])]


def _rejected(store: Path) -> str:
    wrong = service.remember(store, WRONG, kind="decision").record
    service.reject(store, wrong.id, "we never deploy on Fridays")
    return wrong.id


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_every_look_alike_of_a_rejected_value_is_refused_and_the_right_one_is_kept(
    store: Path, name: str
) -> None:
    _rejected(store)
    with pytest.raises(RejectedBeliefError, match="tombstone"):
        service.remember(store, VARIANTS[name], kind="decision")
    with pytest.raises(RejectedBeliefError):
        service.remember(store, VARIANTS[name], kind="decision", caller=AGENT)
    # the right thing is there: a different value is accepted and recalled
    right = service.remember(store, RIGHT, kind="decision").record
    assert _active_texts(store) == [RIGHT]
    assert [h.doc["id"] for h in service.recall(store, "deploys Tuesdays").hits] == [right.id]


def test_the_ledger_holds_keys_only_and_is_committed(store: Path) -> None:
    rid = _rejected(store)
    ledger = (store / "audit" / "tombstones.jsonl").read_text()
    entry = json.loads(ledger.splitlines()[0])
    assert entry["event"] == "add" and entry["record"] == rid
    assert entry["key"].startswith("sha256:")
    assert "Friday" not in ledger and "deploy" not in ledger.lower()
    assert git(store, "status", "--porcelain") == ""


def test_a_correction_into_a_rejected_value_is_refused(store: Path) -> None:
    _rejected(store)
    other = service.remember(store, RIGHT, kind="decision").record
    with pytest.raises(RejectedBeliefError):
        service.correct(store, other.id, VARIANTS["zero-width"])
    assert _active_texts(store) == [RIGHT]


def test_import_from_jsonl_refuses_the_rejected_value_and_imports_the_other_line(
    store: Path, tmp_path: Path
) -> None:
    _rejected(store)
    source = tmp_path / "in.jsonl"
    lines = [
        {"id": "d-01m8aaaaaaaaaa", "kind": "decision", "text": VARIANTS["cyrillic"]},
        {"id": "d-01m8bbbbbbbbbb", "kind": "decision", "text": RIGHT},
    ]
    source.write_text("".join(json.dumps(x) + "\n" for x in lines))
    done = run_cli("import", "--from", "jsonl", str(source), "--json")
    assert done.exit_code == 0, done.output
    out = json.loads(done.stdout)
    assert out["imported"] == 1
    assert out["refused"] == [{"line": 1, "why": "tombstoned"}]
    assert _active_texts(store) == [RIGHT]  # the right line is there, the rejected one is not


def test_purge_of_the_rejected_record_keeps_the_tombstone(store: Path) -> None:
    rid = _rejected(store)
    service.purge(store, rid, yes=True, caller=Caller("owner", "cli"))
    assert "Friday" not in (store / "audit" / "tombstones.jsonl").read_text()
    with pytest.raises(RejectedBeliefError):
        service.remember(store, WRONG, kind="decision")
    right = service.remember(store, RIGHT, kind="decision").record
    assert _active_texts(store) == [right.text]


def test_only_the_owner_lifts_a_tombstone_and_then_the_value_is_accepted(
    store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rid = _rejected(store)
    monkeypatch.setenv("CLAUDECODE", "1")  # an agent's shell
    refused = run_cli("tombstone", "lift", rid, "--json")
    assert refused.exit_code == 3
    assert json.loads(refused.stdout)["error"]["code"] == "owner_only"
    with pytest.raises(RejectedBeliefError):
        service.remember(store, WRONG, kind="decision")
    monkeypatch.delenv("CLAUDECODE")
    lifted = run_cli("tombstone", "lift", "--text", VARIANTS["case"], "--json")
    assert lifted.exit_code == 0, lifted.output
    assert json.loads(lifted.stdout)["record"] == rid
    again = service.remember(store, WRONG, kind="decision", caller=Caller("owner", "cli"))
    assert again.created and again.record.status == "active"
    assert run_cli("tombstone", "lift", rid).exit_code == 4  # nothing left to lift
    assert git(store, "status", "--porcelain") == ""


def test_a_review_style_reject_then_reactivation_by_edit_is_refused(store: Path) -> None:
    """The check lives in the one write path: any status change back to a live text is caught."""
    from memdir.kernel.storage import lifecycle

    rid = _rejected(store)
    other = service.remember(store, RIGHT, kind="decision").record
    with service.opened(store) as handle, pytest.raises(RejectedBeliefError):
        lifecycle.update(
            handle, other.id, op="review-edit", caller=Caller("owner", "cli"), text=WRONG.upper()
        )
    assert _active_texts(store) == [RIGHT]
    assert service.get(store, rid).status == "rejected"


def test_restating_a_superseded_value_corrects_its_successor_for_the_owner(store: Path) -> None:
    old = service.remember(store, "The queue is RabbitMQ in production.", kind="fact").record
    new = service.correct(store, old.id, "The queue is Kafka in production.").record
    back = service.remember(store, "The queue is RabbitMQ in production.", kind="fact")
    assert back.record.supersedes == new.id
    assert service.get(store, new.id).status == "superseded"
    assert _active_texts(store) == ["The queue is RabbitMQ in production."]


def test_restating_a_superseded_value_is_refused_for_the_agent_with_a_pointer(
    store: Path,
) -> None:
    old = service.remember(store, "The queue is RabbitMQ in production.", kind="fact").record
    new = service.correct(store, old.id, "The queue is Kafka in production.").record
    with pytest.raises(RejectedBeliefError, match=new.id):
        service.remember(store, "The queue is RabbitMQ in production.", caller=AGENT)
    assert _active_texts(store) == ["The queue is Kafka in production."]


def test_health_names_a_tombstoned_value_that_arrived_by_hand(store: Path) -> None:
    rid = _rejected(store)
    other = service.remember(store, RIGHT, kind="decision").record
    assert not [f for f in service.health(store).findings if f.code == "tombstoned_value_active"]
    path = store / "records" / "decision" / f"{other.id}.md"
    path.write_text(path.read_text().replace(RIGHT, VARIANTS["cyrillic"]))
    named = [f for f in service.health(store).findings if f.code == "tombstoned_value_active"]
    assert [f.path for f in named] == [f"records/decision/{other.id}.md"]
    assert rid in named[0].message


def test_rolling_back_a_reject_lifts_its_tombstone_and_an_unrolled_reject_still_refuses(
    store: Path,
) -> None:
    from memdir.kernel.storage import audit

    kept = service.remember(store, RIGHT, kind="decision").record
    service.reject(store, kept.id, "not sure")
    rid = _rejected(store)
    reject_commit = git(store, "rev-parse", "HEAD").strip()
    service.rollback(store, reject_commit, yes=True, caller=Caller("owner", "cli"))
    # the rolled-back reject: the record is active, its value may be remembered again
    assert service.get(store, rid).status == "active"
    again = service.remember(store, WRONG, kind="decision", caller=AGENT)
    assert again.record.text == WRONG
    codes = [f.code for f in service.health(store).findings]
    assert "tombstoned_value_active" not in codes
    last = json.loads((store / "audit" / "tombstones.jsonl").read_text().splitlines()[-1])
    assert last["event"] == "lift" and last["record"] == rid and last["origin"] == "owner"
    event = next(e for e in reversed(audit.read(store)) if e["op"] == "rollback")
    assert event["reason"] == f"lifts tombstone {last['key']}"
    # committed with the rollback, nothing left over
    assert git(store, "status", "--porcelain") == ""
    assert "audit/tombstones.jsonl" in git(store, "show", "--name-only", "--format=", "HEAD")
    # the reject that was not rolled back still refuses its value
    with pytest.raises(RejectedBeliefError, match="tombstone"):
        service.remember(store, RIGHT, kind="decision", caller=AGENT)


def test_import_from_jsonl_refuses_restating_a_superseded_value_and_keeps_its_successor(
    store: Path, tmp_path: Path
) -> None:
    old = service.remember(store, "The queue is RabbitMQ in production.", kind="fact").record
    new = service.correct(store, old.id, "The queue is Kafka in production.").record
    source = tmp_path / "in.jsonl"
    lines = [
        {"id": "f-01m8cccccccccc", "kind": "fact", "text": "The queue is RabbitMQ in production"},
        {"id": "f-01m8dddddddddd", "kind": "fact", "text": "Logs are shipped to Loki."},
    ]
    source.write_text("".join(json.dumps(x) + "\n" for x in lines))
    done = run_cli("import", "--from", "jsonl", str(source), "--json")
    assert done.exit_code == 0, done.output
    out = json.loads(done.stdout)
    assert out["refused"] == [{"line": 1, "why": "superseded", "by": new.id}]
    assert out["imported"] == 1
    assert sorted(_active_texts(store)) == [
        "Logs are shipped to Loki.",
        "The queue is Kafka in production.",
    ]


def test_the_ascii_shortcut_of_the_fold_keys_as_the_general_path_does() -> None:
    """Bulk imports fold ASCII text by a shortcut; its keys must be the general path's."""
    import unicodedata

    from memdir.kernel.base import valuekey

    every_ascii = "".join(chr(c) for c in range(128))
    texts = [every_ascii, "Use npm.", "  Never use pytest -x in CI!\t\n", "ABC_def-123", "\x00\x7f"]
    for text in texts:
        assert text.isascii()
        general = valuekey.fold(text + "\u00e9")  # one non-ASCII letter: the general path
        assert valuekey.fold(text) + unicodedata.normalize("NFKC", "\u00e9") == general
    assert valuekey.value_key("Use npm.") == valuekey.value_key("ＵＳＥ  n\u200bpm")
