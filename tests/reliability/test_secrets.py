"""The secrets matrix: every secret pattern through every path that persists text.

The patterns are enumerated from the scanner itself (``memdir.kernel.lang.redact``), so a pattern
added there fails :func:`test_every_pattern_has_a_sample` until it has a sample here, and is
then driven through every path below. Each sample carries a *marker*: characters from the
middle of the secret value, after any published prefix that a mask keeps (``sk-proj-``).

For each sample, every path that persists text is exercised on one fresh store: the CLI,
the MCP tools, real hook processes, the observer (offline and with a model on 127.0.0.1),
``memdir scan``, the bug log, transcript and JSON Lines imports, and the hook error log. Then
every file under the project store, the user store and the hook error logs, and every object
in the stores' git databases (``git cat-file --batch-all-objects``: what ``git log -p --all``
shows, and unreachable objects too), is searched for the marker. Paths that mask must also
show the mask and a witness word written beside the secret, so a path that silently stopped
writing cannot pass. Paths that refuse must refuse with exit 3 (``secret``), naming the kind
and never echoing the value.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import anyio
import pytest

from memdir import service
from memdir.kernel.base.model import Record
from memdir.kernel.lang.redact import _patterns, _value_span, find_secrets
from memdir.kernel.storage import paths
from memdir.kernel.storage.recordfile import dump
from memdir.service import project as project_service
from tests.conftest import run_cli, text_of
from tests.hooks.conftest import HookRun, run_hook
from tests.kernel.test_redact import PROSE_SECRETS, PROSE_TALK
from tests.reliability.runner import git_objects

# kind -> (text holding one secret, marker: characters of the secret value itself)
SAMPLES: dict[str, tuple[str, str]] = {
    "private-key": (
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAAQ7zxPKeyBodyLine\n"
        "-----END OPENSSH PRIVATE KEY-----",
        "Q7zxPKeyBody",
    ),
    "aws-access-key": ("AKIAQ7ZXAWSKEY012345", "Q7ZXAWSKEY01"),
    "aws-secret-key": (
        "aws_secret_access_key = Q7zxAwsSecretValue0123456789abcdefABCDEF",
        "Q7zxAwsSecret",
    ),
    "github-token": ("ghp_Q7zxGithubTokenValue0123456789abcd", "Q7zxGithubToken"),
    "anthropic-key": ("sk-ant-api03-Q7zxAnthropicKeyValue0123", "Q7zxAnthropicKey"),
    "openai-key": ("sk-proj-Q7zxOpenaiKeyValue012345678", "Q7zxOpenaiKey"),
    "stripe-key": ("sk_live_Q7zxStripeKeyValue0123", "Q7zxStripeKey"),
    "slack-token": ("xoxb-123456789012-Q7zxSlackTokenValue", "Q7zxSlackToken"),
    "google-api-key": ("AIzaQ7zxGoogleKeyValue0123456789abcdefg", "Q7zxGoogleKey"),
    "gitlab-token": ("glpat-Q7zxGitlabTokenValue0123", "Q7zxGitlabToken"),
    "npm-token": ("npm_Q7zxNpmTokenValue0123456789abcdefghi", "Q7zxNpmToken"),
    "pypi-token": ("pypi-AgEIcHlwaS5vcmcQ7zxPypiTokenValue" + "0123456789" * 3, "Q7zxPypiToken"),
    "jwt": (
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJRN3p4In0.Q7zxJwtSignatureValue0123",
        "Q7zxJwtSignature",
    ),
    "url-password": ("postgres://app:Q7zxUrlPassword01@db.internal:5432/x", "Q7zxUrlPassword"),
    "assigned-secret": ("DB_PASSWORD=Q7zxEnvSecretValue01", "Q7zxEnvSecret"),
    "age-secret-key": ("AGE-SECRET-KEY-1" + "Q7ZXAGESECRETKEY" + "0" * 42, "Q7ZXAGESECRET"),
    "huggingface-token": ("hf_Q7zxHuggingfaceTokenValue0123456789", "Q7zxHuggingface"),
    "digitalocean-token": ("dop_v1_" + "c0ffee" * 10 + "c0ff", "c0ffeec0ffee"),
    "sendgrid-key": ("SG.Q7zxSendgridIdValue01.Q7zxSendgridSecretValue0123", "Q7zxSendgridSecret"),
    "twilio-key": ("SK" + "deadbeef" * 4, "deadbeefdeadbeef"),
    "mailgun-key": ("key-" + "0badc0de" * 4, "0badc0de0badc0de"),
    "shopify-token": ("shpat_" + "feedface" * 4, "feedfacefeedface"),
    "databricks-token": ("dapi" + "abad1dea" * 4, "abad1deaabad1dea"),
    "groq-key": ("gsk_Q7zxGroqKeyValue" + "0" * 32, "Q7zxGroqKey"),
    "replicate-token": ("r8_Q7zxReplicateTokenValue" + "0" * 14, "Q7zxReplicateToken"),
    "linear-key": ("lin_api_Q7zxLinearKeyValue" + "0" * 22, "Q7zxLinearKey"),
    "postman-key": ("PMAK-" + "a1b2c3d4" * 3 + "-" + "e5f6a7b8" * 4 + "c9", "e5f6a7b8e5f6a7b8"),
    "square-token": ("sq0atp-Q7zxSquareTokenValue0123", "Q7zxSquareToken"),
    "telegram-bot-token": ("123456789:AAQ7zxTelegramBotTokenValue01234567", "Q7zxTelegramBot"),
    "webhook-url": (
        "https://hooks.slack.com/services/T0000000/B0000000/Q7zxSlackWebhookSecret",
        "Q7zxSlackWebhook",
    ),
    "auth-header": ("Authorization: Bearer Q7zxBearerTokenValue0123", "Q7zxBearerToken"),
    "cli-password": ("mysql -u root -pQ7zxMysqlPassword01 prod", "Q7zxMysqlPassword"),
    "prose-secret": ("the staging password is Q7zxProsePassword01", "Q7zxProsePassword"),
    "flag-secret": ("wget --password=Q7zxFlagPassword01 https://x", "Q7zxFlagPassword"),
}
PRIVATE = ("<private>Q7zxPrivateDiary entry</private>", "Q7zxPrivateDiary")
"""A ``<private>`` span: dropped whole before anything is written."""

CASES = {**SAMPLES, "private-span": PRIVATE}


def _kinds() -> list[str]:
    return [kind for kind, _, _ in _patterns()]


def test_every_pattern_has_a_sample_and_finds_the_secret_value_in_it() -> None:
    assert sorted(SAMPLES) == sorted(_kinds()), "add a sample for every pattern in redact.py"
    for kind, pattern, group in _patterns():
        text, marker = SAMPLES[kind]
        spans = [_value_span(kind, m, group) for m in pattern.finditer(text)]
        assert any(s and marker in text[s[0] : s[1]] for s in spans), kind  # its own value
        assert any(marker in text[f.start : f.end] for f in find_secrets(text)), (
            kind
        )  # and the scanner as a whole masks it


# --- the lab: a store, a user store, hooks, and the places to search ------------------------


@dataclass
class Lab:
    """One project with its store, the user store, and what the case wrote or printed."""

    store: Path
    user: Path
    kind: str
    text: str
    marker: str
    outputs: list[str] = field(default_factory=list)  # everything memdir printed
    extra_files: list[Path] = field(default_factory=list)  # outputs written outside the store

    @property
    def project(self) -> Path:
        return self.store.parent

    def witness(self, where: str) -> str:
        return f"zebra{where}canary"

    def said(self, where: str) -> str:
        """The text a sink is given: a witness word, then the sample."""
        return f"{self.witness(where)} {self.text}"

    def cli(self, *args: str, code: int = 0) -> Any:
        result = run_cli(*args, "--json")
        self.outputs.append(result.output)
        assert result.exit_code == code, (args[0], result.output)
        return json.loads(result.stdout) if result.stdout.strip() else None

    def hook(self, event: str, payload: dict[str, Any] | bytes, cwd: Path | None = None) -> HookRun:
        if isinstance(payload, dict):
            payload = {
                "session_id": "sec",
                "hook_event_name": event,
                "cwd": str(self.project),
                **payload,
            }
        run = run_hook(event, payload, cwd=cwd or self.project)
        self.outputs.append(run.stdout.decode("utf-8", "replace"))
        return run


def _masks(lab: Lab) -> bool:
    return lab.kind != "private-span"


@pytest.fixture(params=sorted(CASES))
def lab(request: pytest.FixtureRequest, store: Path, isolated_env: Path) -> Lab:
    text, marker = CASES[request.param]
    user = paths.user_store_dir()
    service.init(Path.cwd(), user=True)
    return Lab(store=store, user=user, kind=request.param, text=text, marker=marker)


def _files(root: Path) -> Iterator[Path]:
    if not root.exists():
        return
    for path in sorted(root.rglob("*")):
        if path.is_file() and not path.is_symlink() and ".git/objects" not in path.as_posix():
            yield path


def _leaks(lab: Lab) -> list[str]:
    """Every place the marker reached: files, git objects, printed output."""
    needle = lab.marker.encode()
    found = [
        str(path)
        for root in (lab.store, lab.user)
        for path in _files(root)
        if needle in path.read_bytes()
    ]
    found += [str(path) for path in lab.extra_files if needle in path.read_bytes()]
    found += [
        f"git objects of {repo}" for repo in (lab.store, lab.user) if needle in git_objects(repo)
    ]
    found += [f"output: {out[:200]!r}" for out in lab.outputs if lab.marker in out]
    return found


def _everything(lab: Lab) -> str:
    return "\n".join(
        path.read_text(encoding="utf-8", errors="replace")
        for root in (lab.store, lab.user)
        for path in _files(root)
        if path.suffix != ".sqlite"
    )


# --- paths that refuse ----------------------------------------------------------------------


def _refused(lab: Lab, *args: str) -> None:
    """A CLI write holding the secret exits 3 with code secret, naming the kind."""
    answer = lab.cli(*args, code=3)
    assert answer["error"]["code"] == "secret"
    assert lab.kind in answer["error"]["message"]


def _mcp(lab: Lab, calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    from mcp.client.client import Client

    from memdir.mcp.server import build_server

    results: list[Any] = []

    async def main() -> None:
        async with Client(build_server(lab.store)) as client:
            for tool, arguments in calls:
                results.append(await client.call_tool(tool, arguments))

    anyio.run(main)
    for result in results:
        lab.outputs.append(text_of(result) if result.content else "")
    return results


TARGETS = (
    "The deploy target is the staging cluster",
    "Invoices are generated nightly by cron",
    "The mobile app is written in Kotlin",
    "Logs ship to Loki through promtail",
    "Feature flags live in LaunchDarkly",
    "The search cluster runs OpenSearch",
    "Backups are kept for ninety days",
)
"""Records the write paths act on, unrelated to each other (no near-duplicate merging)."""


def _exercise_refusals(lab: Lab) -> None:
    target = [lab.cli("remember", text)["id"] for text in TARGETS]
    writes = [
        ("remember", lab.said("remember")),
        ("remember", "The CI runners are self-hosted", "--alias", lab.text),
        ("remember", "Releases are tagged from main", "--tag", lab.text),
        ("remember", "Staging resets every Sunday", "--body", lab.text),
        ("correct", target[0], "--text", lab.said("correct")),
        ("correct", target[1], "--text", "Invoices are generated hourly", "--reason", lab.text),
        ("reject", target[2], "--reason", lab.text),
        ("forget", target[3], "--reason", lab.text),
    ]
    for args in writes:
        if _masks(lab):
            _refused(lab, *args)
        else:  # a private span is dropped, and what is left is written
            lab.cli(*args)
    results = _mcp(
        lab,
        [
            ("memory_remember", {"text": lab.said("mcp-remember")}),
            ("memory_remember", {"text": "Queues are on RabbitMQ", "aliases": [lab.text]}),
            ("memory_correct", {"id": target[4], "text": lab.said("mcp-correct")}),
            (
                "memory_correct",
                {"id": target[5], "text": "Search runs on Solr", "reason": lab.text},
            ),
            ("memory_forget", {"id": target[6], "reason": lab.text}),
        ],
    )
    for result in results:
        if _masks(lab):
            assert result.is_error and "secret" in text_of(result), result.content
        else:
            assert not result.is_error, result.content
    if not _masks(lab):
        return
    # A JSON Lines import refuses the line, naming why, and writes nothing of it.
    line = Record(id="f-0000000000sec1", kind="fact", text=lab.said("import")).to_json()
    source = lab.store.parent.parent / "records.jsonl"
    source.write_text(json.dumps(line) + "\n", encoding="utf-8")
    imported = lab.cli("import", "--from", "jsonl", str(source))
    assert imported["refused"] == [{"line": 1, "why": "secret"}]
    source.unlink()  # the person's own file, not memdir's


# --- paths that mask ------------------------------------------------------------------------


class _Model(BaseHTTPRequestHandler):
    """An OpenAI-compatible endpoint on 127.0.0.1 that proposes the secret back."""

    reply: ClassVar[list[dict[str, Any]]] = []
    prompts: ClassVar[list[str]] = []

    def log_message(self, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        _Model.prompts.append(json.dumps(body))
        content = json.dumps(_Model.reply)
        data = json.dumps({"choices": [{"message": {"content": content}}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def _observe_with_a_model(lab: Lab, monkeypatch: pytest.MonkeyPatch) -> None:
    _Model.reply = [{"text": lab.said("llm"), "kind": "fact"}]
    _Model.prompts = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Model)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        monkeypatch.setenv("MEMDIR_LLM_API_BASE", f"http://127.0.0.1:{server.server_address[1]}/v1")
        monkeypatch.setenv("MEMDIR_LLM_MODEL", "fake")
        monkeypatch.setenv("MEMDIR_LLM_TIMEOUT", "10")
        lab.cli("journal", "user", f"We decided to rotate keys weekly. {lab.said('journal-llm')}")
        observed = lab.cli("observe", "--once", "--from-start")
        assert observed["turns"] >= 1 and not observed["errors"], observed
    finally:
        server.shutdown()
        server.server_close()
    assert _Model.prompts, "the model was asked"
    assert not any(lab.marker in prompt for prompt in _Model.prompts)  # journal text is masked


def _transcripts(lab: Lab) -> None:
    folder = lab.project.parent / "transcripts"
    folder.mkdir(exist_ok=True)
    claude = folder / "claude.jsonl"
    claude.write_text(
        json.dumps(
            {
                "type": "user",
                "uuid": f"u-{lab.kind}",
                "sessionId": "t1",
                "timestamp": "2026-01-02T03:04:05Z",
                "message": {
                    "role": "user",
                    "content": [{"type": "text", "text": lab.said("claude")}],
                },
            }
        )
        + "\n",
        encoding="utf-8",
    )
    codex = folder / "codex.jsonl"
    codex.write_text(
        json.dumps({"type": "session_meta", "payload": {"id": "cx"}})
        + "\n"
        + json.dumps(
            {
                "timestamp": "2026-01-02T03:04:06Z",
                "type": "response_item",
                "payload": {
                    "type": "message",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": lab.said("codex")}],
                },
            }
        )
        + "\n",
        encoding="utf-8",
    )
    assert lab.cli("import", "--from", "claude-transcript", str(claude))["turns"] == 1
    assert lab.cli("import", "--from", "codex-rollout", str(codex))["turns"] == 1
    claude.unlink()  # the host's own files, not memdir's
    codex.unlink()


def _project_files(lab: Lab) -> None:
    """Project files whose first comment line or docstring carries the secret."""
    (lab.project / "scanned.py").write_text(
        f'"""{lab.said("scan-doc")}"""\n\ndef run():\n    pass\n', encoding="utf-8"
    )
    (lab.project / "notes.md").write_text(f"# {lab.said('scan-heading')}\n", encoding="utf-8")
    first_line = lab.text.splitlines()[0]
    if first_line.isidentifier():  # identifier-shaped tokens can be symbol names
        (lab.project / "symbols.py").write_text(f"class {first_line}:\n    pass\n")
    if "/" not in first_line and len(first_line.encode()) < 200:  # ... and file names
        named = lab.project / f"{first_line} notes.txt"
        named.write_text("a file whose name holds the secret\n", encoding="utf-8")
        lab.hook(
            "PostToolUse",
            {
                "tool_name": "Read",
                "tool_input": {"file_path": str(named)},
                "tool_response": {"file": {"content": "x"}},
            },
        )


def _exercise_masking(lab: Lab, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Drive every masking path; return the witnesses that must be found in the store."""
    lab.cli("journal", "user", lab.said("cli-journal"))
    _mcp(
        lab,
        [
            ("journal_write", {"who": "user", "text": lab.said("mcp-journal")}),
            ("bug_log", {"error": f"KeyError in {lab.said('mcp-bug')}", "fix": lab.text}),
        ],
    )
    lab.cli(
        "bug", "log", "--error", f"OSError at startup: {lab.said('cli-bug')}", "--fix", lab.text
    )
    # Journaled (masked), and an explicit request refused: the context must not echo it.
    lab.hook("UserPromptSubmit", {"prompt": f"remember that {lab.said('prompt-remember')}"})
    lab.hook("Stop", {"last_assistant_message": lab.said("stop")})
    lab.hook(
        "PostToolUse",
        {
            "tool_name": "Bash",
            "tool_input": {"command": f"echo {lab.said('bash')}"},
            "tool_response": {"stdout": lab.text, "stderr": "", "interrupted": False},
        },
    )
    _project_files(lab)
    lab.hook(
        "PostToolUse",
        {
            "tool_name": "Write",
            "tool_input": {"file_path": str(lab.project / "scanned.py"), "content": lab.text},
            "tool_response": {"filePath": str(lab.project / "scanned.py")},
        },
    )
    lab.cli("scan")
    _transcripts(lab)
    _observe_with_a_model(lab, monkeypatch)
    return [
        "cli-journal",
        "mcp-journal",
        "mcp-bug",
        "cli-bug",
        "prompt-remember",
        "stop",
        "bash",
        "scan-doc",
        "scan-heading",
        "claude",
        "codex",
        "journal-llm",
    ]


def _exercise_error_logs(lab: Lab, tmp_path: Path) -> None:
    elsewhere = tmp_path / "no-store-here"
    elsewhere.mkdir()
    lab.hook("SessionStart", f"{{broken {lab.text}".encode(), cwd=elsewhere)  # the user store
    # What a failing handler logs: its traceback, which may quote the payload.
    paths.log_hook_error(lab.store, "Stop", f"Traceback …\nValueError: {lab.text}")
    paths.log_hook_error(None, "Stop", f"KeyError: {lab.text!r}")
    logs = [lab.store / "state" / paths.HOOK_ERROR_LOG, lab.user / "state" / paths.HOOK_ERROR_LOG]
    assert all(log.exists() for log in logs)


@pytest.mark.enable_socket
def test_no_secret_reaches_any_file_or_output(
    lab: Lab, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _exercise_refusals(lab)
    witnesses = _exercise_masking(lab, monkeypatch)
    _exercise_error_logs(lab, tmp_path)
    project_service.sync(lab.store)  # the journal and logs go into git history too

    leaks = _leaks(lab)
    assert not leaks, "\n".join(leaks)
    written = _everything(lab)
    missing = [w for w in witnesses if lab.witness(w) not in written]
    assert missing == [], "these paths wrote nothing at all"
    if _masks(lab):
        assert f"[REDACTED:{lab.kind}]" in written  # masked, naming the kind


def test_an_export_masks_a_secret_typed_into_a_record_by_hand(store: Path, tmp_path: Path) -> None:
    """A person may type a secret into a record file; ``memdir export`` never carries it out."""
    for kind, (text, _) in SAMPLES.items():
        record = Record(
            id=f"f-hand{kind.replace('-', '')[:10]}", kind="fact", text=f"witness {text}"
        )
        path = store / "records" / "fact" / f"{record.id}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(dump(record), encoding="utf-8")
    out = tmp_path / "backup.jsonl"
    result = run_cli("export", "-o", str(out))
    assert result.exit_code == 0, result.output
    stdout = run_cli("export").stdout
    exported = out.read_text(encoding="utf-8")
    assert exported.count("witness") == len(SAMPLES)
    for kind, (_, marker) in SAMPLES.items():
        assert marker not in exported, kind
        assert marker not in stdout, kind


# --- secrets in prose, through real processes: refused and masked, while talk is kept -------


def _remember(project: Path, text: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "memdir", "remember", text, "--json"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def _journaled(store: Path, prompt: str) -> str:
    """Send ``prompt`` through a real UserPromptSubmit hook; return the journal's text."""
    payload = {
        "session_id": "prose",
        "hook_event_name": "UserPromptSubmit",
        "cwd": str(store.parent),
        "prompt": prompt,
    }
    run_hook("UserPromptSubmit", payload, cwd=store.parent)
    journal = sorted((store / "journal").glob("*.jsonl"))
    assert journal, "the prompt hook wrote no journal"
    return "\n".join(json.loads(line)["text"] for line in journal[-1].read_text().splitlines())


@pytest.mark.slow
@pytest.mark.parametrize(("text", "found"), PROSE_SECRETS.items())
def test_a_secret_in_prose_is_refused_by_remember_and_masked_in_the_journal(
    store: Path, text: str, found: tuple[str, str]
) -> None:
    kind, value = found
    done = _remember(store.parent, text)
    assert done.returncode == 3, done.stdout + done.stderr
    error = json.loads(done.stdout)["error"]
    assert error["code"] == "secret" and kind in error["message"]
    assert value not in done.stdout + done.stderr
    journal = _journaled(store, text)
    assert f"[REDACTED:{kind}]" in journal  # the prompt is journaled, masked
    assert value not in journal
    assert all(value not in record.text for record in service.list_records(store))


@pytest.mark.slow
@pytest.mark.parametrize("text", PROSE_TALK)
def test_prose_about_a_secret_is_remembered_and_journaled_as_written(
    store: Path, text: str
) -> None:
    done = _remember(store.parent, text)
    assert done.returncode == 0, done.stdout + done.stderr
    assert [record.text for record in service.list_records(store)] == [text]
    journal = _journaled(store, text)
    assert text in journal.splitlines()  # kept whole, no mask
