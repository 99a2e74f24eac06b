"""wolfmem's needle tags and Talewell's record layer, as their users expect them (issue 11).

Needle tags (``[坑] …``) become tags on every write path and filter list, recall, stats and
forget; ``--alias "a,b,c"`` is a list; ``--observed-at`` is kept; entities carry a type; and
``reindex`` writes the ``records/index.json`` catalogue. Each "must not" is paired with the
"must" on the same store.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from memdir.kernel.lang.text import needle_tags
from tests.conftest import run_cli

# wolfmem's own examples (seeds/001): the tag is the first thing in the fact.
WOLFMEM = [
    "[决定] 观察者改用 httpx 直连 LLM 端点并带真超时",
    "[坑] C2C 内联键盘硬限制 5 行,按钮超行发送必失败",
    "[隐私] 私聊底账禁止发往境外模型,数据不出境",
    "[安全] 令牌只进配置文件,不进日志",
]


def _json(*args: str, code: int = 0) -> dict:
    result = run_cli(*args, "--json")
    assert result.exit_code == code, result.output + result.stderr
    return json.loads(result.stdout)


def test_needle_tags_are_read_from_the_start_of_the_text_only() -> None:
    assert needle_tags("[决定] [安全] tokens only in config") == ("决定", "安全")
    assert needle_tags("  [pitfall] pytest -x hides failures") == ("pitfall",)
    assert needle_tags("use [坑] later in the text") == ()
    assert needle_tags("[[f-01m8ystq63r9nn]] is linked") == ()  # a wiki link
    assert needle_tags("[ ] unchecked box") == ()
    assert needle_tags("[12] a citation") == ()


def test_a_needle_tag_filters_list_recall_and_stats(store: Path) -> None:
    ids = [_json("remember", text)["id"] for text in WOLFMEM]
    plain = _json("remember", "The keyboard rows limit is documented in the API guide")["id"]

    pit = _json("list", "--tag", "坑")["results"]
    assert [r["id"] for r in pit] == [ids[1]]
    assert pit[0]["tags"] == ["坑"]
    assert pit[0]["text"].startswith("[坑]")  # the text stays as written
    assert [r["id"] for r in _json("list", "--tag", "[安全]")["results"]] == [ids[3]]

    both = [r["id"] for r in _json("recall", "键盘 5 行")["results"]]
    assert ids[1] in both
    tagged = [r["id"] for r in _json("recall", "键盘 5 行", "--tag", "坑")["results"]]
    assert tagged == [ids[1]]
    keyboard = [r["id"] for r in _json("recall", "keyboard rows limit")["results"]]
    assert plain in keyboard
    assert plain not in [
        r["id"] for r in _json("recall", "keyboard rows limit", "--tag", "坑")["results"]
    ]

    assert _json("stats")["tags"] == {"决定": 1, "坑": 1, "安全": 1, "隐私": 1}


def test_forget_by_tag_previews_then_forgets_only_that_tag(store: Path) -> None:
    ids = [_json("remember", text)["id"] for text in WOLFMEM]
    preview = run_cli("forget", "--tag", "坑", "--json")
    assert preview.exit_code == 2  # no --yes: nothing ran (as purge and rollback)
    assert ids[1] in json.loads(preview.stdout)["error"]["message"]
    assert _json("get", ids[1])["status"] == "active"  # a preview changes nothing

    done = _json("forget", "--tag", "坑", "--yes", "--reason", "fixed upstream")
    assert done["forgotten"] == [ids[1]]
    assert _json("get", ids[1])["status"] == "forgotten"
    active = {r["id"] for r in _json("list", "--status", "active")["results"]}
    assert active == {ids[0], ids[2], ids[3]}
    assert ids[1] not in [r["id"] for r in _json("recall", "键盘 5 行")["results"]]
    events = _json("audit", ids[1])
    assert "forget" in json.dumps(events)


def test_forget_by_match_and_its_usage_errors(store: Path) -> None:
    keep = _json("remember", "Deploys happen on Tuesdays")["id"]
    drop = _json("remember", "The staging cache is Redis 6")["id"]
    done = _json("forget", "--match", "staging cache redis", "--yes")
    assert done["forgotten"] == [drop]
    assert _json("get", keep)["status"] == "active"
    assert run_cli("forget").exit_code == 2
    assert run_cli("forget", keep, "--tag", "x").exit_code == 2
    assert run_cli("forget", "--tag", "nothing-has-this", "--yes").exit_code == 0


def test_alias_is_a_comma_separated_list_as_in_talewell(store: Path) -> None:
    doc = _json("remember", "Leo 不吃辣", "--alias", "饮食,辣,diet", "--alias", "food")
    assert doc["aliases"] == ["饮食", "辣", "diet", "food"]
    assert [r["id"] for r in _json("recall", "diet")["results"]] == [doc["id"]]
    assert _json("remember", "Builds run on CI", "--tag", "ci, build")["tags"] == ["ci", "build"]


def test_observed_at_is_kept_and_checked(store: Path) -> None:
    doc = _json("remember", "The team moved to Berlin", "--observed-at", "2024-03-01")
    assert doc["observed_at"] == "2024-03-01"
    assert run_cli("remember", "Later fact", "--observed-at", "next tuesday").exit_code == 2
    assert run_cli("remember", "Future fact", "--observed-at", "2999-01-01").exit_code == 2


def test_entities_carry_a_type_listed_recalled_and_exported_by_it(
    store: Path, tmp_path: Path
) -> None:
    ana = _json("remember", "Ana leads billing", "--kind", "entity", "--entity-type", "person")
    api = _json("remember", "billing-api serves invoices", "--kind", "entity",
                "--entity-type", "Service")  # fmt: skip
    assert ana["source"]["entity_type"] == "person"
    assert api["source"]["entity_type"] == "service"
    assert [r["id"] for r in _json("list", "--entity-type", "person")["results"]] == [ana["id"]]
    found = [r["id"] for r in _json("recall", "billing", "--entity-type", "service")["results"]]
    assert found == [api["id"]]
    assert {r["id"] for r in _json("recall", "billing")["results"]} == {ana["id"], api["id"]}
    bad = run_cli("remember", "Not an entity", "--entity-type", "person")
    assert bad.exit_code == 2 and "kind entity" in bad.stderr
    assert run_cli("remember", "x y", "--kind", "entity", "--entity-type", "a b").exit_code == 2

    out = tmp_path / "amp"
    assert run_cli("export", "--to", "amp", str(out)).exit_code == 0
    assert (out / "memory" / "entities" / "person" / f"{ana['id']}.md").exists()
    assert (out / "memory" / "entities" / "service" / f"{api['id']}.md").exists()


def test_reindex_writes_a_git_ignored_catalogue(store: Path) -> None:
    first = _json("remember", "[决定] Use pnpm", "--kind", "decision")["id"]
    gone = _json("remember", "The cache is Redis")["id"]
    run_cli("forget", gone)
    assert run_cli("reindex").exit_code == 0
    catalogue = json.loads((store / "records" / "index.json").read_text(encoding="utf-8"))
    assert catalogue["schema"] == "memdir-catalogue/1" and catalogue["count"] == 2
    by_id = {r["id"]: r for r in catalogue["records"]}
    assert by_id[first]["tags"] == ["决定"] and by_id[first]["status"] == "active"
    assert by_id[first]["path"] == f"records/decision/{first}.md"
    assert by_id[gone]["status"] == "forgotten"
    ignored = subprocess.run(
        ["git", "-C", str(store), "check-ignore", "records/index.json"],
        capture_output=True,
        text=True,
    )
    assert ignored.returncode == 0
    tracked = subprocess.run(
        ["git", "-C", str(store), "ls-files", "records"], capture_output=True, text=True
    ).stdout
    assert "index.json" not in tracked and f"{first}.md" in tracked


def test_imported_facts_get_their_needle_tags(store: Path, tmp_path: Path) -> None:
    notes = tmp_path / "CLAUDE.md"
    notes.write_text(f"# Project\n\n- {WOLFMEM[0]}\n- Plain note without a tag\n", "utf-8")
    result = run_cli("import", "--from", "claude-md", str(notes))
    assert result.exit_code == 0, result.output + result.stderr
    assert [r["text"] for r in _json("list", "--tag", "决定")["results"]] == [WOLFMEM[0]]
    backup = tmp_path / "backup.jsonl"
    assert run_cli("export", "-o", str(backup)).exit_code == 0
    lines = [json.loads(line) for line in backup.read_text("utf-8").splitlines()]
    tags = {doc["text"]: doc["tags"] for doc in lines}
    assert "决定" in tags[WOLFMEM[0]]
    assert "决定" not in tags["Plain note without a tag"]
