"""Properties over hostile input: record files, hook payloads, CLI arguments, MCP arguments.

Each property holds for every input hypothesis draws, and the draws are derandomized (one
fixed sequence per test, no example database) so CI sees the same inputs on every run. The
record round trip here extends ``tests/records/test_codec.py`` (which covers text, aliases and
body through the tolerant reader) to every field, the kernel's own reader, strict YAML and
hand-written files; the hook, CLI and MCP properties are new.
"""

from __future__ import annotations

import dataclasses
import io
import json
import re
import subprocess
import sys
import time
from pathlib import Path, PurePath
from typing import Any

import anyio
import pytest
import yaml
from click.testing import CliRunner
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from memdir import service
from memdir.hooks import payload as hook_payload
from memdir.hooks.context import Context
from memdir.hooks.dispatch import HANDLERS
from memdir.kernel.base import errors as errors_mod
from memdir.kernel.base.errors import RecordParseError
from memdir.kernel.base.ids import SAFE_ID
from memdir.kernel.base.model import ACCEPTED_ORIGINS, FIELD_ORDER, KINDS, SCOPES, STATUSES, Record
from memdir.kernel.hostio import hookio, hosttable
from memdir.kernel.storage.recordfile import ADVISORY, dump, read_canonical
from memdir.records.codec import parse, read_file
from tests.conftest import text_of

# One fixed sequence of examples per test: deterministic in CI, no .hypothesis folder written
# into the project under test. Stores are built once per test and shared by its examples.
FIXED = settings(
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

TEXT = st.text(alphabet=st.characters(codec="utf-8"), max_size=40)
"""Any Unicode text that can be written as UTF-8 (controls, bidi, CJK, emoji)."""
HOSTILE_TEXT = st.one_of(
    # Lone surrogates too: a JSON "\\ud800" escape (a JavaScript host cutting an emoji in
    # half, case B02) decodes to one.
    st.text(alphabet=st.characters(blacklist_categories=()), max_size=40),
    st.sampled_from(
        [
            "",
            " ",
            "../../etc/passwd",
            "C:\\x\\y.txt",
            "\\\\server\\share\\f",
            "\x00",
            "\x1b[31m",
            "</memdir-memory>",
            "\ud800",
            "🦊" * 30,
            "-" * 3,
            "null",
            "-1",
            "1e309",
        ]
    ),
)
ERROR_CODES = {
    cls.code
    for cls in vars(errors_mod).values()
    if isinstance(cls, type) and issubclass(cls, errors_mod.MemdirError)
} | {"anatomy_unreadable", "io_error", "llm_unavailable", "llm_malformed"}


def _json_values(leaf: st.SearchStrategy[Any] | None = None) -> st.SearchStrategy[Any]:
    """JSON values of any shape (what a host or client may send)."""
    scalars = st.one_of(
        st.none(),
        st.booleans(),
        st.integers(min_value=-(2**70), max_value=2**70),
        st.floats(allow_nan=False, allow_infinity=False),
        HOSTILE_TEXT,
        *([leaf] if leaf is not None else []),
    )
    return st.recursive(
        scalars,
        lambda inner: st.one_of(
            st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)
        ),
        max_leaves=12,
    )


# --- records: writer and readers ------------------------------------------------------------

_CLEAN = TEXT.filter(lambda s: s.strip() == s and s != "")
_TAG = _CLEAN.filter(lambda s: s.lstrip("#").strip() == s)
_IDS = st.from_regex(SAFE_ID, fullmatch=True)
_STAMP = st.one_of(st.just(""), _CLEAN)
_FINITE = st.floats(allow_nan=False, allow_infinity=False)
_SOURCE_VALUES = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-(2**64), 2**64), _FINITE, TEXT),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(TEXT, inner, max_size=3)),
    max_leaves=6,
)
_EXTRA_KEYS = st.from_regex(re.compile(r"[a-z_][a-z0-9_.-]{0,12}"), fullmatch=True).filter(
    lambda k: k not in FIELD_ORDER and k != "title"
)


def _unique(items: st.SearchStrategy[str]) -> st.SearchStrategy[tuple[str, ...]]:
    return st.lists(items, max_size=3, unique=True).map(tuple)


RECORDS = st.builds(
    Record,
    id=_IDS,
    kind=st.sampled_from(KINDS),
    text=TEXT.filter(lambda s: s.strip() != ""),
    status=st.sampled_from(STATUSES),
    origin=st.sampled_from(ACCEPTED_ORIGINS),
    importance=st.integers(1, 10),
    confidence=st.floats(0.0, 1.0),
    aliases=_unique(_CLEAN),
    tags=_unique(_TAG),
    links=_unique(_CLEAN),
    supersedes=st.none() | _CLEAN,
    superseded_by=st.none() | _CLEAN,
    created_at=_STAMP,
    updated_at=_STAMP,
    observed_at=_STAMP,
    source=st.dictionaries(TEXT, _SOURCE_VALUES, max_size=4),
    scope=st.sampled_from(SCOPES),
    reason=st.none() | TEXT.filter(lambda s: s.strip() != ""),
    # Bodies are text files: LF line ends, ending in a newline (CR is read as a line end).
    body=TEXT.map(lambda b: b.replace("\r", "")).map(
        lambda b: b if not b or b.endswith("\n") else b + "\n"
    ),
    extra=st.lists(
        st.tuples(_EXTRA_KEYS, _SOURCE_VALUES.map(lambda v: " " + json.dumps(v))),
        max_size=3,
        unique_by=lambda pair: pair[0],
    ).map(tuple),
)


def _path(record: Record) -> PurePath:
    return PurePath(f"records/{record.kind}/{record.id}.md")


def _front(written: str) -> dict[str, Any]:
    return yaml.safe_load(written.split("\n---\n", 1)[0][len("---\n") :])


@settings(FIXED, max_examples=250)
@given(record=RECORDS)
@example(
    record=Record(
        id="f-01jc9x2k7q4fz2",
        kind="fact",
        text="tiny confidence",
        confidence=1e-05,
        source={"weight": 2.5e-10, "big": 1e300},
    )
)
def test_every_field_survives_the_kernel_reader_the_tolerant_reader_and_strict_yaml(
    record: Record,
) -> None:
    written = dump(record)
    kernel = read_canonical(written, _path(record), record.scope)
    assert kernel is not None and kernel.record == record  # the hook path reads it without YAML
    assert parse(written, _path(record)).record == record
    front = _front(written)
    expected = record.to_json()
    for key in FIELD_ORDER:  # any YAML 1.1 tool reads the same values: nothing is coerced
        assert front.get(key) == expected[key], key  # valid time is omitted while unset


_YAMLISH = st.one_of(
    TEXT,
    st.sampled_from(
        [
            "yes",
            "~",
            "2026-05-24",
            "10:00",
            "[a, b",
            "{x: 1}",
            "&anchor x",
            "*undefined",
            "!!binary aGVsbG8=",
            "!!python/object:os.system x",
            "!!set {a, b}",
            "!!float .nan",
            "!!int 99999999999999999999",
            "|\n  block\n  text",
            '"unterminated',
            "- item\n- other",
            "[" * 40 + "]" * 40,
            "0x1F",
            "-",
            "?",
            "%TAG",
        ]
    ),
)
_KEYS = st.one_of(st.sampled_from([*FIELD_ORDER, "title", "status", "id"]), _EXTRA_KEYS)
HAND_WRITTEN = st.builds(
    lambda bom, fence, pairs, close, body, newline: (
        ("\ufeff" if bom else "")
        + (fence + "\n")
        + "".join(f"{k}: {v}\n" for k, v in pairs)
        + ("---\n" if close else "")
        + body
    ).replace("\n", newline),
    st.booleans(),
    st.sampled_from(["---", "--- ", "---x", ""]),
    st.lists(st.tuples(_KEYS, _YAMLISH), max_size=8),
    st.booleans(),
    TEXT,
    st.sampled_from(["\n", "\r\n", "\r"]),
)


@settings(FIXED, max_examples=200)
@given(text=st.one_of(HAND_WRITTEN, st.text(max_size=200)))
@example(
    text="---\nid: f-01jc9x2k7q4fz2\nkind: fact\ntext: deep\naliases: " + "[" * 5000 + "\n---\n"
)
@example(
    text="---\nid: f-01jc9x2k7q4fz2\nkind: fact\ntext: deep\nsource: " + "{" * 5000 + "\n---\n"
)
@example(text="---\nid: f-01jc9x2k7q4fz2\ntext: deep\ntags: " + "[" * 900 + "]" * 900 + "\n---\n")
@example(text="---\nid: f-01jc9x2k7q4fz2\ntext: deep\nx: " + "[" * 900 + "]" * 900 + "\n---\n")
@example(
    text="---\nid: f-01jc9x2k7q4fz2\ntext: deep\nsource: {a: " + "[" * 900 + "]" * 900 + "}\n---\n"
)
def test_any_hand_written_file_reads_or_is_quarantined_and_a_rewrite_is_a_fixed_point(
    text: str,
) -> None:
    path = PurePath("records/fact/f-01jc9x2k7q4fz2.md")
    try:
        parsed = parse(text, path)
    except RecordParseError as err:  # quarantined, with a reason; never another exception
        reason = str(err)
        parsed = None
    if parsed is None:
        assert reason
        return
    rewritten = dump(parsed.record)
    again = parse(rewritten, path)
    body = parsed.record.body
    expected = dataclasses.replace(
        parsed.record, body=body + "\n" if body and not body.endswith("\n") else body
    )
    assert again.record == expected  # the next write through memdir keeps every value
    # Canonical bytes; only what no rewrite can fix (an id unlike the file name) is still said.
    assert again.canonical and all(w.code in ADVISORY for w in again.warnings)


@settings(FIXED, max_examples=150)
@given(data=st.binary(max_size=300))
def test_any_bytes_on_disk_read_as_a_record_or_quarantine(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "f-01jc9x2k7q4fz2.md"
    path.write_bytes(b"---\nid: f-01jc9x2k7q4fz2\nkind: fact\n" + data)
    reason = "read"
    try:
        read_file(path, "records/fact/f-01jc9x2k7q4fz2.md")
    except RecordParseError as err:
        reason = str(err)
    assert reason


# --- hooks: the stdin parser and every handler ------------------------------------------------

HOSTS = [*hook_payload.EVENT_ALIASES, "no-such-host"]
EVENT_NAMES = sorted(
    {*hosttable.CANONICAL_EVENTS, *(n for a in hook_payload.EVENT_ALIASES.values() for n in a)}
    | {"", "NoSuchEvent", "sessionstart"}
)
_TOOLS = st.sampled_from(
    [*hook_payload.TOOL_ALIASES, "mcp__memdir__memory_remember", "WebFetch", ""]
)
_PATHS = st.one_of(
    st.sampled_from(
        [
            "README.md",
            "src/app.py",
            "../outside.txt",
            "/etc/hostname",
            "C:\\Windows\\win.ini",
            "\\\\server\\share\\x",
            ".env",
            ".memdir/memdir.toml",
            "a\x00b",
            "",
            ".",
        ]
    ),
    HOSTILE_TEXT,
)
_TOOL_INPUT = st.fixed_dictionaries(
    {},
    optional={
        "file_path": st.one_of(_PATHS, _json_values()),
        "path": _PATHS,
        "offset": _json_values(),
        "limit": _json_values(),
        "command": st.one_of(HOSTILE_TEXT, _json_values()),
        "content": HOSTILE_TEXT,
    },
)
PAYLOADS = st.fixed_dictionaries(
    {},
    optional={
        "session_id": st.one_of(HOSTILE_TEXT, _json_values()),
        "sessionId": HOSTILE_TEXT,
        "hook_event_name": st.one_of(st.sampled_from(EVENT_NAMES), _json_values()),
        "prompt": st.one_of(
            HOSTILE_TEXT,
            st.sampled_from(["remember that the build uses make", "from now on use tabs"]),
            _json_values(),
        ),
        "tool_name": st.one_of(_TOOLS, _json_values()),
        "toolName": _TOOLS,
        "tool_input": st.one_of(_TOOL_INPUT, _json_values()),
        "toolArgs": _json_values(),
        "tool_response": _json_values(),
        "source": st.one_of(
            st.sampled_from(["startup", "resume", "compact", "clear"]), HOSTILE_TEXT
        ),
        "trigger": _json_values(),
        "reason": _json_values(),
        "last_assistant_message": st.one_of(HOSTILE_TEXT, _json_values()),
        "agent_id": _json_values(),
        "file_path": _PATHS,
        "command": HOSTILE_TEXT,
        "workspace_roots": _json_values(),
        "cwd": _json_values(),
    },
)


@settings(FIXED, max_examples=300)
@given(
    data=st.one_of(
        st.binary(max_size=200),
        _json_values().map(lambda v: json.dumps(v).encode()),
        PAYLOADS.map(lambda v: json.dumps(v).encode()),
        st.sampled_from([b"\xef\xbb\xbf{}", b"{}" * 3, b'{"a": 1} trailing', b"\n{}\n"]),
    ),
    host=st.sampled_from(HOSTS),
    event=st.sampled_from(EVENT_NAMES),
)
def test_the_stdin_parser_and_normaliser_accept_anything(
    data: bytes, host: str, event: str
) -> None:
    value, problem = hookio.read_payload(io.BytesIO(data))
    assert isinstance(value, dict) and isinstance(problem, str)
    _normalises_and_renders(value, host, event)


@pytest.mark.parametrize(
    "data",
    [b"[" * 100_000, b'{"a":' * 50_000, b'{"a":' + b"[" * 100_000, b"{" + b" " * 5_000_000],
    ids=["deep-array", "deep-object", "deep-value", "over-the-limit"],
)
def test_deep_or_huge_payloads_read_as_nothing_with_a_reason(data: bytes) -> None:
    value, problem = hookio.read_payload(io.BytesIO(data))
    assert value == {}
    assert problem


def _normalises_and_renders(value: dict[str, Any], host: str, event: str) -> None:
    normalised = hook_payload.normalise(host, event, value)
    assert normalised.name in (*hosttable.CANONICAL_EVENTS, "")
    for field in ("host", "session", "cwd", "source", "prompt", "tool", "last_message"):
        assert isinstance(getattr(normalised, field), str), field
    assert isinstance(normalised.file_path, str) and isinstance(normalised.tool_input, dict)
    for result in (
        hook_payload.HookResult(context="x"),
        hook_payload.HookResult(deny_reason="y"),
        hook_payload.HookResult(),
    ):
        answer = hook_payload.render(host, normalised, result)
        assert answer is None or json.loads(hookio.encode_response(answer)) == answer


@pytest.fixture
def quiet_spawns(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """Record instead of starting the detached ``memdir sync`` that SessionEnd spawns."""
    from types import SimpleNamespace

    from memdir.hooks import session_end

    started: list[list[str]] = []

    def record(args: list[str], **_: Any) -> None:
        started.append(list(args))

    monkeypatch.setattr(
        session_end, "subprocess", SimpleNamespace(Popen=record, DEVNULL=subprocess.DEVNULL)
    )
    return started


@pytest.fixture
def ruled_store(store: Path) -> Path:
    """A store with one owner rule, so digests and recall have something to inject."""
    service.remember(store, "Never commit directly to main", kind="rule")
    return store


@settings(FIXED, max_examples=200)
@given(
    payload=PAYLOADS,
    host=st.sampled_from(HOSTS),
    event=st.sampled_from(sorted(HANDLERS)),
)
@example(
    payload={"prompt": "remember that the tests use \ud83e half an emoji"},
    host="claude-code",
    event="UserPromptSubmit",
)
@example(payload={"last_assistant_message": "cut \ud83e"}, host="claude-code", event="Stop")
@example(
    payload={"session_id": "\udcff", "source": "\ud800"}, host="claude-code", event="SessionStart"
)
@example(
    payload={"tool_name": "Bash", "tool_input": {"command": "echo \ud800"}},
    host="codex",
    event="PostToolUse",
)
@example(
    payload={"tool_name": "Read", "tool_input": {"file_path": "a\x00b"}},
    host="claude-code",
    event="PreToolUse",
)
@example(
    payload={"tool_name": "Write", "tool_input": {"file_path": "a\x00b"}},
    host="claude-code",
    event="PostToolUse",
)
@example(
    payload={"tool_name": "Write", "tool_input": {"file_path": "\udcff.py"}},
    host="claude-code",
    event="PostToolUse",
)
def test_every_handler_accepts_any_payload_shape_in_process(
    ruled_store: Path, quiet_spawns: list[list[str]], payload: dict[str, Any], host: str, event: str
) -> None:
    store = ruled_store
    value, _ = hookio.read_payload(io.BytesIO(json.dumps(payload).encode()))
    hook_event = hook_payload.normalise(host, event, value)
    assume(hook_event.name in HANDLERS)
    import importlib

    context = Context(store, store.parent, time.monotonic() + 30)
    try:
        result = importlib.import_module(HANDLERS[hook_event.name]).handle(hook_event, context)
    finally:
        context.close()
    if result is not None:
        answer = hook_payload.render(host, hook_event, result)
        assert answer is None or json.loads(hookio.encode_response(answer)) == answer


@settings(FIXED, max_examples=30)
@given(
    data=st.one_of(
        st.binary(max_size=100),
        PAYLOADS.map(lambda v: json.dumps(v).encode()),
    ),
    host=st.sampled_from(HOSTS),
    event=st.sampled_from(EVENT_NAMES),
)
def test_a_real_hook_process_exits_zero_with_nothing_or_one_json_object(
    store: Path, data: bytes, host: str, event: str
) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "memdir", "hook", event, "--host", host],
        input=data,
        capture_output=True,
        cwd=store.parent,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0
    assert done.stderr == b""
    if done.stdout:
        text = done.stdout.decode("utf-8")
        assert text.endswith("\n") and text.count("\n") == 1
        assert isinstance(json.loads(text), dict)
    log = store / "state" / "hook-errors.log"
    logged = log.read_text(encoding="utf-8") if log.exists() else ""
    assert "Traceback" not in logged, logged


# --- CLI arguments ----------------------------------------------------------------------------

ARG = st.text(
    alphabet=st.one_of(
        st.characters(codec="utf-8", blacklist_characters="\x00"),
        st.characters(min_codepoint=0xDC80, max_codepoint=0xDCFF),  # undecodable argv bytes
    ),
    max_size=30,
)
"""What a shell can pass: any text but NUL; bytes that are not UTF-8 arrive as surrogates."""
KNOWN_IDS = ("f-0000000000aaaa", "r-0000000000bbbb")
"""Records :func:`known_records` writes, so ids and queries reach real records too."""
VALUE = st.one_of(
    ARG,
    st.sampled_from(
        ["0", "-1", "11", "1e9", "nan", "2026-13-45", "2999-01-01T00:00:00Z", "--json", "-"]
    ),
    st.sampled_from([*KNOWN_IDS, "fact", "rule", "active", "5", "2026-01-01T10:00:00Z", "main"]),
)


@pytest.fixture
def known_records(store: Path) -> Path:
    """Write two records with fixed ids by hand, as a person or another tool would."""
    for record_id, kind, text in (
        (KNOWN_IDS[0], "fact", "The main database is PostgreSQL"),
        (KNOWN_IDS[1], "rule", "Never commit directly to main"),
    ):
        record = Record(id=record_id, kind=kind, text=text, created_at="2026-01-01T00:00:00Z")
        path = store / "records" / kind / f"{record_id}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(dump(record), encoding="utf-8")
    return store


_: None = None  # a value slot in a command template
TEMPLATES: list[tuple[str | None, ...]] = [
    ("get", _),
    ("recall", _, "--kind", _),
    ("recall", _, "-n", _),
    ("list", "--status", _, "-n", _),
    ("remember", _, "--kind", _),
    ("remember", _, "--importance", _),
    ("remember", _, "--alias", _, "--tag", _),
    ("remember", _, "--link", _, "--body", _),
    ("remember", _, "--origin", _),
    ("correct", _, "--text", _, "--reason", _),
    ("correct", "--match", _, "--text", _),
    ("reject", _, "--reason", _),
    ("forget", _, "--reason", _),
    ("graph", _, "--depth", _),
    ("log", _, "-n", _),
    ("diff", _),
    ("rollback", _, "--yes"),
    ("purge", _),
    ("journal", _, _, "--at", _),
    ("journal", _, _, "--session", _),
    ("search", _, "-n", _, "--session", _),
    ("bug", "log", "--error", _, "--fix", _),
    ("bug", "search", _),
    ("bug", "fixed", _),
    ("review", "--accept", _),
    ("review", "--edit", _, _),
    ("threads", "--within", _),
    ("stats", "--session", _),
    ("map", "--budget", _),
    ("find", _),
    ("export", "--status", _),
    (_,),
    (_, _),
]


@st.composite
def _commands(draw: st.DrawFn) -> tuple[list[str], bool]:
    """Return ``(argv, json)``: ``json`` when ``--json`` is surely parsed as the flag."""
    values: list[str] = []
    args: list[str] = []
    for part in draw(st.sampled_from(TEMPLATES)):
        if part is None:
            values.append(draw(VALUE))
        args.append(values[-1] if part is None else part)
    as_json = draw(st.booleans())
    if as_json:
        args.append("--json")
    store = draw(st.one_of(st.none(), st.none(), st.none(), VALUE))
    if store is not None:
        values.append(store)
        args += ["--store", store]
    return args, as_json and not any(v.startswith("-") for v in values)


@settings(FIXED, max_examples=400)
@given(command=_commands())
@example(command=(["journal", "user", "\udcff bytes that are not UTF-8"], False))
@example(command=(["journal", "\udcff", "text"], False))
@example(command=(["remember", "\udcff"], False))
@example(command=(["recall", "\udcff", "--json"], True))
@example(command=(["get", "x", "--store", "\udcff"], False))
def test_any_cli_arguments_exit_with_a_documented_code_and_no_traceback(
    known_records: Path, command: tuple[list[str], bool]
) -> None:
    args, as_json = command
    from memdir.cli.app import cli

    result = CliRunner().invoke(cli, args, input="")
    assert result.exit_code in {0, 1, 2, 3, 4}, (result.exit_code, result.output)
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(
        result.exception
    )
    assert "Traceback" not in result.output
    if as_json and result.exit_code != 2:
        answer = json.loads(result.stdout)
        assert isinstance(answer, dict)
        if result.exit_code:
            assert answer["error"]["code"] in ERROR_CODES


@settings(FIXED, max_examples=12)
@given(command=_commands())
@example(command=(["journal", "user", "\udcff bytes that are not UTF-8"], False))
def test_the_installed_command_never_prints_a_traceback(
    store: Path, command: tuple[list[str], bool]
) -> None:
    args = command[0]
    assume(args[:1] != ["serve"])  # an MCP server waits for a client on stdin
    done = subprocess.run(
        [sys.executable, "-m", "memdir", *args],
        capture_output=True,
        cwd=store.parent,
        stdin=subprocess.DEVNULL,
        timeout=60,
        check=False,
    )
    assert done.returncode in {0, 1, 2, 3, 4}
    assert b"Traceback" not in done.stdout + done.stderr, done.stderr.decode(errors="replace")


# --- MCP tool arguments -------------------------------------------------------------------------

TOOL_PARAMETERS: dict[str, list[str]] = {
    "memory_recall": ["query", "limit", "kind"],
    "memory_remember": ["text", "kind", "aliases", "tags", "importance", "links"],
    "memory_get": ["id"],
    "memory_correct": ["id", "text", "reason"],
    "memory_forget": ["id", "reason"],
    "memory_list": ["kind", "status", "limit"],
    "memory_index": [],
    "memory_graph": ["id", "depth"],
    "journal_write": ["who", "text", "session"],
    "observe_once": [],
    "memory_stats": [],
    "pending_threads": ["within_minutes"],
    "memory_hygiene": [],
    "bug_log": ["error", "fix", "file"],
    "bug_search": ["query", "limit"],
    "code_find": ["query", "limit"],
}
_CLEAR = re.compile(
    r"^(?:Error executing tool \w+: )?(?:(?P<code>[a-z_]+): |\d+ validation errors? for |Unknown tool)"
)


@st.composite
def _tool_calls(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    tool = draw(st.sampled_from([*TOOL_PARAMETERS, "memory_delete"]))
    names = TOOL_PARAMETERS.get(tool, ["id"])
    chosen = draw(st.lists(st.sampled_from([*names, "origin", "status", "x"]), unique=True))
    arguments = {
        name: draw(_json_values(st.sampled_from(["fact", "rule", "f-0000000000zzzz"])))
        for name in chosen
    }
    return tool, arguments


def _call_all(store: Path, calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    from mcp.client.client import Client

    from memdir.mcp.server import build_server

    results: list[Any] = []

    async def main() -> None:
        async with Client(build_server(store)) as client:
            for tool, arguments in calls:
                results.append(await client.call_tool(tool, arguments))
            results.append(await client.call_tool("memory_stats", {}))  # still serving

    anyio.run(main)
    return results


@settings(FIXED, max_examples=60)
@given(calls=st.lists(_tool_calls(), min_size=1, max_size=5))
@example(
    calls=[
        ("memory_remember", {"text": "deep tags", "tags": "[" * 5000}),
        ("memory_remember", {"text": "half an emoji \ud83e"}),
        ("journal_write", {"who": "user\udcff", "text": "cut \ud83e", "session": "\ud800"}),
        ("bug_log", {"error": "E \ud800", "fix": "f", "file": "\udcff"}),
        ("memory_correct", {"id": "../../x", "text": "y"}),
        ("memory_graph", {"id": "f-0000000000zzzz", "depth": 5}),
        ("code_find", {"query": "\x00", "limit": 1}),
    ]
)
def test_any_mcp_arguments_give_a_result_or_a_clear_tool_error(
    store: Path, calls: list[tuple[str, dict[str, Any]]]
) -> None:
    results = _call_all(store, calls)
    for (tool, arguments), result in zip(calls, results, strict=False):
        text = text_of(result) if result.content else ""
        if result.is_error:
            match = _CLEAR.match(text)
            assert match, (tool, arguments, text)
            assert match.group("code") is None or match.group("code") in ERROR_CODES, text
            assert "Traceback" not in text
        else:
            assert isinstance(json.loads(text), dict)
    assert not results[-1].is_error
    assert all(r.origin == "agent" for r in service.list_records(store))
