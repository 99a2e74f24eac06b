"""The record format (DESIGN §3): canonical writing, tolerant reading, the YAML cases."""

from pathlib import PurePath

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from memdir.kernel.base.errors import RecordParseError
from memdir.kernel.base.model import Record
from memdir.kernel.storage.recordfile import dump, read_canonical
from memdir.records.codec import parse

PATH = PurePath("records/fact/f-01jc9x2k7q4fz2.md")


def _record(**fields: object) -> Record:
    base: dict[str, object] = {"id": "f-01jc9x2k7q4fz2", "kind": "fact", "text": "x"}
    base.update(fields)
    return Record(**base)  # type: ignore[arg-type]


# B07: values that YAML would coerce or mis-read come back byte for byte.
@pytest.mark.parametrize(
    "text",
    [
        "Plan: phase 2 (split: core)",
        "key: value # not a comment",
        "- leading dash",
        "'single' \"double\"",
        "yes",
        "null",
        "0o17",
        "on",
        "no",
        "2026-05-24",
        "10:00",
        "1.10",
        "~",
        "@at & *star !bang %percent",
        "multi\nline\r\ntext\twith tab",
        "\u2028line separator\u0085nel\ufeffbom\x7fdel",
    ],
)
def test_canonical_writing_round_trips_strings_that_yaml_would_coerce(text: str) -> None:
    alias = f"<{text}>"
    record = _record(text=text, aliases=(alias,), reason=text)
    written = dump(record)
    strict = yaml.safe_load(written.split("---\n")[1])
    assert strict["text"] == text
    assert strict["aliases"] == [alias]
    parsed = parse(written, PATH)
    assert parsed.record.text == text
    assert parsed.canonical


@settings(max_examples=300, deadline=None)
@given(
    text=st.text(alphabet=st.characters(codec="utf-8"), min_size=1, max_size=80).filter(
        lambda s: s.strip()
    ),
    aliases=st.lists(st.text(alphabet=st.characters(codec="utf-8"), max_size=20), max_size=3),
    body=st.text(alphabet=st.characters(codec="utf-8"), max_size=80),
    importance=st.integers(1, 10),
)
def test_dump_parse_dump_is_a_fixed_point(
    text: str, aliases: list[str], body: str, importance: int
) -> None:
    cleaned_aliases = tuple(dict.fromkeys(a.strip() for a in aliases if a.strip()))
    record = _record(text=text, aliases=cleaned_aliases, body=body, importance=importance)
    written = dump(record)
    again = parse(written, PATH).record
    assert again.text == text
    assert again.aliases == cleaned_aliases
    assert dump(again) == dump(parse(dump(again), PATH).record)
    assert yaml.safe_load(written.split("\n---\n")[0][4:])["text"] == text


STANDUP = """---
id: f-01jc9x2k7q4fz2
kind: fact
text: Standup notes
created: 2026-05-24
updated: 2026-05-24T09:30:00+09:00
start: 06:20
end: 10:00
version: 1.10
---
Body here.
"""


# B09: dates and times stay the strings they were; other lines survive a rewrite byte for byte.
def test_foreign_keys_keep_their_raw_text_through_a_rewrite() -> None:
    parsed = parse(STANDUP, PATH)
    record = parsed.record
    assert dict(record.extra) == {
        "created": " 2026-05-24",
        "updated": " 2026-05-24T09:30:00+09:00",
        "start": " 06:20",
        "end": " 10:00",
        "version": " 1.10",
    }
    rewritten = dump(
        record.__class__(**{**record.__dict__, "tags": ("x",)}) if False else _replace_tags(record)
    )
    for line in (
        "created: 2026-05-24",
        "updated: 2026-05-24T09:30:00+09:00",
        "start: 06:20",
        "end: 10:00",
        "version: 1.10",
    ):
        assert line + "\n" in rewritten
    assert parse(rewritten, PATH).record.tags == ("x",)


def _replace_tags(record: Record) -> Record:
    import dataclasses

    return dataclasses.replace(record, tags=("x",))


CANONICAL = dump(_record(text="Cache settings", tags=("a",), body="body\n"))


# B10: BOM, CRLF and a closing fence at EOF without newline read the same.
@pytest.mark.parametrize(
    "variant",
    [
        "\ufeff" + CANONICAL,
        CANONICAL.replace("\n", "\r\n"),
        "\ufeff" + CANONICAL.replace("\n", "\r\n"),
        CANONICAL.replace("---\nbody\n", "---"),
    ],
    ids=["bom", "crlf", "bom+crlf", "fence-at-eof"],
)
def test_bom_crlf_and_eof_fence_give_identical_metadata(variant: str) -> None:
    record = parse(variant, PATH).record
    assert (record.id, record.text, record.tags) == ("f-01jc9x2k7q4fz2", "Cache settings", ("a",))
    assert "\ufeff" not in dump(record)
    assert "\r" not in dump(record)


def test_a_missing_closing_fence_still_reads_and_warns() -> None:
    text = "---\nid: f-01jc9x2k7q4fz2\nkind: fact\ntext: no fence here\n\nThe body starts here.\n"
    parsed = parse(text, PATH)
    assert parsed.record.text == "no fence here"
    assert parsed.record.body.startswith("The body starts here.")
    assert [w.code for w in parsed.warnings] == ["missing_fence"]


# B11: list values arrive in many shapes and leave as clean lists.
@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ('["alpha", "beta gamma"]', ("alpha", "beta gamma")),
        ("[alpha, beta gamma]", ("alpha", "beta gamma")),
        ("alpha, beta", ("alpha", "beta")),
        ('["#alpha", "beta"]', ("alpha", "beta")),
        ("[]", ()),
        ("\n  - alpha\n  - '#beta'", ("alpha", "beta")),
    ],
)
def test_tags_in_any_shape_become_a_clean_list(raw: str, expected: tuple[str, ...]) -> None:
    text = f"---\nid: f-01jc9x2k7q4fz2\nkind: fact\ntext: t\ntags: {raw}\n---\n"
    record = parse(text.replace("tags: \n", "tags:\n"), PATH).record
    assert record.tags == expected
    assert "tags: " + str(list(expected)).replace("'", '"') in dump(record)


DUPLICATE = """---
id: f-01jc9x2k7q4fz2
kind: fact
text: Cache settings
status: active
status: rejected
---
"""


# B12: a duplicated key keeps the record visible; the last value wins; a warning names it.
def test_a_duplicated_key_keeps_the_record_with_the_last_value_and_a_warning() -> None:
    parsed = parse(DUPLICATE, PATH)
    assert parsed.record.text == "Cache settings"
    assert parsed.record.status == "rejected"
    codes = [(w.code, w.message) for w in parsed.warnings]
    assert codes[0][0] == "duplicate_key"
    assert "'status'" in codes[0][1]
    assert dump(parsed.record).count("status:") == 1


def test_hand_written_yaml_with_bare_dates_and_booleans_reads_as_strings() -> None:
    text = "---\nid: f-01jc9x2k7q4fz2\nkind: fact\ntext: yes\nimportance: 7\nobserved_at: 2026-11-30\n---\n"
    record = parse(text, PATH).record
    assert record.text == "yes"
    assert record.importance == 7
    assert record.observed_at == "2026-11-30"


def test_a_line_that_is_not_yaml_keeps_its_raw_text_and_warns() -> None:
    text = '---\nid: f-01jc9x2k7q4fz2\nkind: fact\ntext: "unterminated\nimportance: 3\n---\n'
    parsed = parse(text, PATH)
    assert parsed.record.text == '"unterminated'
    assert parsed.record.importance == 3
    assert [w.code for w in parsed.warnings] == ["yaml_fallback"]


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("just a note without front matter\n", "no front matter"),
        ("---\nid: f-01jc9x2k7q4fz2\nkind: fact\n---\n", "missing text"),
        ("---\nid: f-01jc9x2k7q4fz2\nkind: gossip\ntext: t\n---\n", "kind 'gossip'"),
        ("---\nid: f-01jc9x2k7q4fz2\nkind: fact\ntext: t\nstatus: maybe\n---\n", "status 'maybe'"),
        ("---\nid: ../../etc\nkind: fact\ntext: t\n---\n", "not a valid record id"),
        ("---\nid: f-01jc9x2k7q4fz2\nkind: fact\ntext: t\norigin: untrusted\n---\n", "refused"),
    ],
)
def test_files_that_cannot_make_a_record_raise_naming_the_problem(text: str, reason: str) -> None:
    with pytest.raises(RecordParseError, match=reason):
        parse(text, PATH)


def test_hand_made_files_fall_back_to_file_name_folder_and_title() -> None:
    text = "---\ntitle: Deploy Checklist\n---\nRun the smoke tests first.\n"
    record = parse(text, PurePath("records/procedure/deploy-checklist.md")).record
    assert (record.id, record.kind, record.text) == (
        "deploy-checklist",
        "procedure",
        "Deploy Checklist",
    )
    assert record.origin == "import"


def test_read_canonical_declines_files_it_did_not_write() -> None:
    assert read_canonical(STANDUP, PATH) is None
    assert read_canonical(DUPLICATE, PATH) is None
    assert read_canonical(CANONICAL, PATH) is not None
