"""Codex 0.171.0, its own released binary, through a scripted session against a loopback model.

The session: memdir is installed with the real ``memdir install --host codex``; the project and
memdir's hooks are trusted in a throwaway ``CODEX_HOME`` the way the user grants them (the
project's ``trust_level``, and each hook's hash written through Codex's own app-server, the
same ``hooks/list`` → ``config/batchWrite`` calls its ``/hooks`` screen makes). Then
``codex exec`` runs one turn: a "remember that …" prompt, a full read (``cat``), the same read
again, a ranged read (``sed -n``), an ``apply_patch`` that adds, updates, moves and deletes, a
shell command and a failing one, and memdir's MCP ``memory_recall`` and ``memory_remember``
(found through Codex's ``tool_search``, as Codex defers MCP tools). The turn reports a token
count over ``model_auto_compact_token_limit``, so ``codex exec resume --last`` compacts the
history before its turn. Every request body Codex sent and every hook payload is kept; a user
hook in ``CODEX_HOME/hooks.json`` copies each payload (``MEMDIR_RECORD_FIXTURES=1`` turns them
into the fixtures under ``tests/hosts/fixtures/codex-0.171.0/``).

The tests then assert from Codex's output and from memdir's state. One test shows the state
before trust: Codex lists memdir's hooks as untrusted and runs none of them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from memdir.kernel.storage import session as session_state
from tests.hosts.conformance.codex_script import (
    CodexScript,
    Step,
    final,
    input_text,
    patch,
    shell,
    text_of,
    user_texts,
)
from tests.hosts.conformance.conftest import (
    FIXTURES,
    LoopbackServer,
    Sandbox,
    host_binary,
    logged_payloads,
    make_sandbox,
    payload_logger,
    read_state,
    recording,
    write_fixture,
)

if TYPE_CHECKING:
    from memdir.kernel.storage.session import SessionState

pytestmark = [pytest.mark.slow, pytest.mark.enable_socket]

VERSION = "0.171.0"
FIXTURE_DIR = FIXTURES / f"codex-{VERSION}"
MODEL = "gpt-5.5"
"""A model Codex knows: its metadata gives the freeform ``apply_patch`` tool and ``tool_search``."""
COMPACT_LIMIT = 5000
"""``model_auto_compact_token_limit``: the first turn reports more, so the resume compacts."""
EVENTS = ("SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop")
LOGGED_EVENTS = (*EVENTS, "PreCompact", "PostCompact")


REMEMBER = "Please remember that the release branch is called trunk-stable."
PATCH = """\
*** Begin Patch
*** Add File: added.txt
+hello from codex
*** Update File: notes.txt
@@
 alpha
-beta
+BETA
*** Update File: src/app.py
*** Move to: src/moved.py
@@
 def step_0():
-    return 0
+    return -1
*** Delete File: README.md
*** End Patch
"""
RECALL_QUERY = "release branch"
AGENT_BELIEF = "Deploys run from the trunk-stable branch every Friday."


def _turns() -> dict[str, list[Step]]:
    """The model's side of the session, by prompt tag."""
    return {
        "t1": [
            shell("cat notes.txt"),
            shell("cat notes.txt"),
            shell("sed -n '2,4p' src/app.py"),
            patch(PATCH),
            shell("ls src"),
            shell("cat no-such-file.txt"),
            Step("search", arguments="memdir memory recall remember"),
            Step(
                "function",
                "memory_recall",
                {"query": RECALL_QUERY},
                namespace="mcp__memdir",
            ),
            Step(
                "function",
                "memory_remember",
                {"text": AGENT_BELIEF, "kind": "fact"},
                namespace="mcp__memdir",
            ),
            final("All done: notes edited, memory checked.", tokens=COMPACT_LIMIT * 2),
        ],
        "t2": [final("Resumed after the compaction; nothing left to do.")],
    }


@dataclass
class CodexRun:
    """Everything one scripted Codex session left behind."""

    box: Sandbox
    script: CodexScript
    server_errors: list[str]
    runs: list[subprocess.CompletedProcess[str]]
    payloads: list[dict[str, Any]]
    hooks_before_trust: list[dict[str, Any]]
    hooks_after_trust: list[dict[str, Any]]
    hook_warnings: list[str]
    seconds: float
    mcp_list: str = ""
    notes: list[str] = field(default_factory=list)

    @property
    def output(self) -> str:
        """Both runs' stdout and stderr."""
        return "\n".join(r.stdout + "\n" + r.stderr for r in self.runs)

    def payloads_for(self, event: str) -> list[dict[str, Any]]:
        """The payloads Codex sent for ``event``, in order."""
        return [p for p in self.payloads if p.get("hook_event_name") == event]


# --------------------------------------------------------------------------- Codex's own tools


class AppServer:
    """``codex app-server`` over stdio (JSON-RPC, one object a line): Codex's own answers."""

    def __init__(self, binary: Path, box: Sandbox, env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(
            [str(binary), "app-server"],
            cwd=box.project,
            env={**box.env, **env},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            start_new_session=True,
        )
        self._next = 0
        self.call("initialize", {"clientInfo": {"name": "memdir-conformance", "version": "1"}})
        self._send({"method": "initialized"})

    def _send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message) + "\n")
        self.proc.stdin.flush()

    def call(self, method: str, params: dict[str, Any]) -> Any:
        """Send one request and return its result (notifications in between are skipped)."""
        self._next += 1
        self._send({"id": self._next, "method": method, "params": params})
        assert self.proc.stdout is not None
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                break
            message = json.loads(line)
            if message.get("id") == self._next:
                assert "error" not in message, f"{method}: {message['error']}"
                return message["result"]
        raise AssertionError(f"codex app-server gave no answer to {method}")

    def hooks(self, project: Path) -> tuple[list[dict[str, Any]], list[str]]:
        """Return the hooks Codex discovered for ``project`` and its warnings and errors."""
        result = self.call("hooks/list", {"cwds": [str(project)]})
        hooks = [h for entry in result["data"] for h in entry["hooks"]]
        problems = [
            str(w) for entry in result["data"] for w in entry.get("warnings", []) + entry["errors"]
        ]
        return hooks, problems

    def trust(self, hooks: list[dict[str, Any]]) -> None:
        """Trust ``hooks`` as ``/hooks`` does: their current hashes into the user config."""
        state = {h["key"]: {"trusted_hash": h["currentHash"]} for h in hooks}
        self.call(
            "config/batchWrite",
            {"edits": [{"keyPath": "hooks.state", "value": state, "mergeStrategy": "upsert"}]},
        )

    def close(self) -> None:
        """End the app-server."""
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        if self.proc.stdout is not None:
            self.proc.stdout.close()


def _codex_home(box: Sandbox, url: str) -> tuple[Path, dict[str, str]]:
    """Write the throwaway CODEX_HOME: the stand-in provider, the project trusted, a logger."""
    home = box.home / ".codex"
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text(
        f'model = "{MODEL}"\n'
        'model_provider = "loopback"\n'
        f"model_auto_compact_token_limit = {COMPACT_LIMIT}\n"
        "\n[model_providers.loopback]\n"
        'name = "loopback stand-in"\n'
        f'base_url = "{url}/v1"\n'
        'wire_api = "responses"\n'
        'env_key = "LOOPBACK_API_KEY"\n'
        f'\n[projects."{box.project}"]\n'
        'trust_level = "trusted"\n'
    )
    logger = payload_logger(box.root / "payloads")
    (home / "hooks.json").write_text(
        json.dumps(
            {
                "hooks": {
                    e: [{"hooks": [{"type": "command", "command": logger}]}] for e in LOGGED_EVENTS
                }
            },
            indent=2,
        )
    )
    return home, {"CODEX_HOME": str(home), "LOOPBACK_API_KEY": "not-a-real-key"}


def _ensure_mcp_entry(box: Sandbox, notes: list[str]) -> None:
    """Run the MCP part even while install does not write the server (noted; a test fails)."""
    config = box.project / ".codex" / "config.toml"
    if config.exists() and "mcp_servers.memdir" in config.read_text():
        return
    notes.append("install wrote no [mcp_servers.memdir]; the session added one by hand")
    with config.open("a") as out:
        out.write('\n[mcp_servers.memdir]\ncommand = "memdir"\nargs = ["serve"]\n')


@pytest.fixture(scope="module")
def codex_run(module_root: Path) -> CodexRun:
    """Run the scripted Codex session once for the whole module."""
    binary = host_binary("codex")
    box = make_sandbox(module_root, "codex")
    scan = box.memdir("scan")  # the file map holds README.md and src/app.py before the session
    assert scan.returncode == 0, scan.stderr
    mapped = set(read_state(box.store).anatomy.get("files", {}))
    assert {"README.md", "src/app.py"} <= mapped, mapped
    script = CodexScript(_turns())
    notes: list[str] = []
    started = time.monotonic()
    with LoopbackServer(script) as server:
        _, env = _codex_home(box, server.url)
        _ensure_mcp_entry(box, notes)
        app = AppServer(binary, box, env)
        try:
            before, _ = app.hooks(box.project)
            app.trust(before)
            after, warnings = app.hooks(box.project)
        finally:
            app.close()
        exec_args = [str(binary), "exec", "--sandbox", "workspace-write", "--skip-git-repo-check"]
        runs = [
            box.run([*exec_args, f"{REMEMBER} Then look at notes.txt. <<t1>>"], env=env),
            box.run([*exec_args, "resume", "--last", "Carry on. <<t2>>"], env=env),
        ]
        mcp_list = box.run([str(binary), "mcp", "list"], env=env).stdout
    return CodexRun(
        box=box,
        script=script,
        server_errors=list(server.errors),
        runs=runs,
        payloads=logged_payloads(box.root / "payloads"),
        hooks_before_trust=before,
        hooks_after_trust=after,
        hook_warnings=warnings,
        seconds=time.monotonic() - started,
        mcp_list=mcp_list,
        notes=notes,
    )


def _memdir_hooks(hooks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [h for h in hooks if "memdir hook" in str(h.get("command"))]


# --------------------------------------------------------------------------- the host's side


def test_codex_ran_the_whole_session(codex_run: CodexRun) -> None:
    """Both runs exit 0, the stand-in saw no unscripted request, and the session stays short."""
    for run in codex_run.runs:
        assert run.returncode == 0, f"codex exited {run.returncode}:\n{run.stderr[-4000:]}"
    assert codex_run.server_errors == []
    served = [tag for tag, _ in codex_run.script.served]
    assert served.count("t1") == len(_turns()["t1"]), served
    assert codex_run.seconds < 120, f"the Codex session took {codex_run.seconds:.0f} s"


def test_codex_trusts_memdir_hooks_once_the_user_does(codex_run: CodexRun) -> None:
    """Untrusted before the user's trust step, trusted after it, with no warning about them."""
    before = _memdir_hooks(codex_run.hooks_before_trust)
    after = _memdir_hooks(codex_run.hooks_after_trust)
    events = {h["eventName"] for h in after}
    assert {"sessionStart", "userPromptSubmit", "preToolUse", "postToolUse", "stop"} <= events
    assert {"preCompact", "postCompact"} <= events
    assert {h["trustStatus"] for h in before} == {"untrusted"}
    assert {h["trustStatus"] for h in after} == {"trusted"}
    assert codex_run.hook_warnings == []


def test_every_memdir_hook_ran_and_completed(codex_run: CodexRun) -> None:
    """Codex's own output shows each event's hooks running and completing, none failing."""
    out = codex_run.output
    for event in (*EVENTS, "PreCompact", "PostCompact"):
        assert f"hook: {event} Completed" in out, f"no completed {event} hook in Codex's output"
    lowered = out.lower()
    assert "hook: " in out and "failed" not in lowered.replace("no such file", "")
    assert "memdir" not in "\n".join(
        line for line in out.splitlines() if line.lower().startswith(("warning", "error"))
    )


def test_memdir_context_reached_the_model(codex_run: CodexRun) -> None:
    """The digest, injected at session start, is in the request bodies as developer context."""
    bodies = codex_run.script.bodies
    fence = "<memdir-memory>\nRecalled memory from memdir"
    assert any(fence in input_text(b) for b in bodies)
    assert any(
        fence in text_of(i) for b in bodies for i in b["input"] if i.get("role") == "developer"
    )
    assert not any(fence in t for b in bodies for t in user_texts(b))
    # UserPromptSubmit: the first request of the turn already tells the model what was stored.
    first = [text_of(i) for i in bodies[0]["input"] if i.get("role") == "developer"]
    assert any(fence in t and "trunk-stable" in t for t in first), first[-1][:500]
    # SessionStart(compact): the turn after the compaction gets the rules again.
    last = [text_of(i) for i in bodies[-1]["input"] if i.get("role") == "developer"]
    assert any(fence in t and "compacted" in t for t in last), [t[:300] for t in last]


def test_the_instruction_block_reached_the_model(codex_run: CodexRun) -> None:
    """The AGENTS.md block install wrote is in what Codex sends (its project doc)."""
    assert any("Project memory (memdir)" in input_text(b) for b in codex_run.script.bodies)


def test_digest_is_not_repeated_after_a_resume_that_compacts(codex_run: CodexRun) -> None:
    """Codex fires SessionStart(resume) and SessionStart(compact) back to back: the turn after
    the compaction holds the post-compaction digest once, and no second copy of any digest."""
    last = codex_run.script.bodies[-1]
    digests = [
        text_of(i)
        for i in last["input"]
        if i.get("role") == "developer" and "Recalled memory from memdir" in text_of(i)
    ]
    assert sum("Context was compacted" in d for d in digests) == 1, digests
    assert sum("active records (" in d for d in digests) == 1, digests  # no resume digest too
    starts = [p.get("source") for p in codex_run.payloads_for("SessionStart")]
    assert starts[-2:] == ["resume", "compact"], starts


def test_mcp_server_connected_and_answered(codex_run: CodexRun) -> None:
    """`codex mcp list` shows the server enabled; recall and remember both answered."""
    assert "memdir" in codex_run.mcp_list and "enabled" in codex_run.mcp_list
    outputs = _tool_outputs(codex_run)
    recall = outputs["memory_recall"]
    assert "trunk-stable" in recall, recall[:500]
    # The result is one JSON text (no structured copy), so it reaches the model as a string.
    remember = outputs["memory_remember"].replace('\\"', '"')
    assert '"id"' in remember and "error" not in remember.lower()[:200], remember[:500]


def test_install_writes_the_mcp_server_into_the_project_codex_config(codex_run: CodexRun) -> None:
    """Install puts ``[mcp_servers.memdir]`` into ``.codex/config.toml`` (not by hand)."""
    assert codex_run.notes == []
    written = {c["path"] for c in codex_run.box.install.get("changed", [])}
    assert ".codex/config.toml" in written


def _tool_outputs(run: CodexRun) -> dict[str, str]:
    """Each called tool's output as the model received it, by tool name (last call wins)."""
    names: dict[str, str] = {}
    outputs: dict[str, str] = {}
    for body in run.script.bodies:
        for item in body.get("input", []):
            if not isinstance(item, dict):
                continue
            if item.get("type") in ("function_call", "custom_tool_call"):
                names[item["call_id"]] = item["name"]
            elif item.get("type") in ("function_call_output", "custom_tool_call_output"):
                output = item.get("output")
                text = output if isinstance(output, str) else json.dumps(output)
                outputs[names.get(item["call_id"], "?")] = text
    return outputs


def test_compaction_went_through_the_stand_in(codex_run: CodexRun) -> None:
    """The resume compacted once, and the turn after it went on from the summary."""
    assert len(codex_run.script.compactions) == 1
    assert "context compacted" in codex_run.runs[1].stderr
    last = codex_run.script.bodies[-1]
    assert "SUMMARY OF THE WORK SO FAR" in input_text(last)


# --------------------------------------------------------------------------- memdir's side


def test_the_stated_belief_is_stored(codex_run: CodexRun) -> None:
    """The "remember that …" prompt and the MCP save both became active records."""
    state = read_state(codex_run.box.store)
    owner = state.records_with("trunk-stable")
    assert any(r.get("origin") == "owner" and r.get("status") == "active" for r in owner), owner
    assert any(r.get("origin") == "agent" for r in state.records_with("every Friday"))


def test_journal_has_both_sides_and_no_injected_memory(codex_run: CodexRun) -> None:
    """User and assistant turns of both runs are journaled; no user turn holds memdir's fence."""
    journal = read_state(codex_run.box.store).journal
    users = [t["text"] for t in journal if t.get("who") == "user"]
    assistants = [t["text"] for t in journal if t.get("who") == "assistant"]
    assert any("<<t1>>" in u for u in users) and any("<<t2>>" in u for u in users), users
    assert any("All done" in a for a in assistants) and any("Resumed" in a for a in assistants)
    assert not any("<memdir-memory" in u or "memdir-memory&gt" in u for u in users)


def _sessions(run: CodexRun) -> list[SessionState]:
    """Every session's state, read through memdir's own session module."""
    return session_state.all_states(run.box.store)


def _actions(run: CodexRun) -> list[dict[str, Any]]:
    return read_state(run.box.store).actions


def test_an_action_row_for_every_shell_command(codex_run: CodexRun) -> None:
    """Each read and shell command Codex ran has a row, the failing one too.

    Codex's PostToolUse for its shell tool carries the command's output and no exit status,
    so memdir cannot tell the failing command from one that succeeded (docs/hosts.md).
    """
    rows = _actions(codex_run)
    commands = [r.get("command") for r in rows if r.get("tool") == "Bash"]
    ran = [c for c in _shell_commands(codex_run) if c != "cat notes.txt"]
    for command in ran:
        assert command in commands, f"no action row for {command!r}: {commands}"
    assert "cat notes.txt" in commands


def _shell_commands(run: CodexRun) -> list[str]:
    return [str(s.arguments["cmd"]) for s in _turns()["t1"] if s.name == "exec_command"]


def _outputs_by_call(run: CodexRun) -> dict[str, str]:
    """Each tool call's output as the model received it, by the call's arguments."""
    calls: dict[str, str] = {}
    outputs: dict[str, str] = {}
    for body in run.script.bodies:
        for item in body.get("input", []):
            if item.get("type") == "function_call":
                calls[item["call_id"]] = json.loads(item["arguments"]).get("cmd", item["name"])
            elif item.get("type") == "function_call_output" and item["call_id"] in calls:
                output = item.get("output")
                text = output if isinstance(output, str) else json.dumps(output)
                outputs.setdefault(item["call_id"], text)
    return {f"{n}:{calls[c]}": outputs[c] for n, c in enumerate(sorted(outputs, key=_call_no))}


def _call_no(call_id: str) -> int:
    return int(call_id.rsplit("_", 1)[-1])


def test_second_full_read_was_refused(codex_run: CodexRun) -> None:
    """The same ``cat`` of an unchanged file is refused once; the first read and the ranged
    ``sed -n`` read pass (memdir's shell-read rule, docs/hosts.md)."""
    outputs = list(_outputs_by_call(codex_run).items())
    (first_key, first), (second_key, second), (ranged_key, ranged) = outputs[:3]
    assert first_key.endswith("cat notes.txt") and second_key.endswith("cat notes.txt")
    assert "gamma" in first and "memdir" not in first
    assert "already read in full" in second and "gamma" not in second, second
    assert ranged_key.endswith("src/app.py") and "return" in ranged


def test_shell_reads_are_logged_as_reads(codex_run: CodexRun) -> None:
    """``cat`` and ``sed -n`` of project files count as reads of those files."""
    reads = json.dumps([s.get("reads") for s in _sessions(codex_run)])
    ledgers = [s.get("ledger", {}) for s in _sessions(codex_run)]
    assert sum(int(x.get("reads", 0)) for x in ledgers) >= 1, ledgers
    assert sum(int(x.get("denied", 0)) for x in ledgers) == 1, ledgers
    assert "notes.txt" in reads or "notes.txt" in json.dumps(_actions(codex_run)), reads


def test_apply_patch_is_an_action_row_per_file(codex_run: CodexRun) -> None:
    """The patch's add, update, move and delete each left a row naming the file."""
    rows = _actions(codex_run)
    paths = json.dumps([r for r in rows if r.get("tool") != "Bash" or "apply_patch" in str(r)])
    for name in ("added.txt", "notes.txt", "src/moved.py", "README.md"):
        assert name in paths, f"no action row for {name}: {paths[:1500]}"


def test_file_map_knows_the_written_files(codex_run: CodexRun) -> None:
    """The file map holds the added and moved-to files, and not the deleted or moved-away ones."""
    state = read_state(codex_run.box.store)
    written = json.dumps([s.get("written") for s in _sessions(codex_run)])
    for name in ("added.txt", "notes.txt", "src/moved.py"):
        assert name in written, written
    files = set(state.anatomy.get("files", {}))
    assert files, "memdir scan built no file map before the session"
    spool = codex_run.box.store / "state" / "anatomy-spool.jsonl"
    spooled = spool.read_text() if spool.exists() else ""
    for name in ("added.txt", "src/moved.py"):
        assert name in files or f'"{name}"' in spooled, (sorted(files), spooled)
    assert "README.md" not in files and "src/app.py" not in files, sorted(files)


def test_one_checkpoint_per_compaction(codex_run: CodexRun) -> None:
    """One compaction, one checkpoint in the session's state."""
    compactions = [c for s in _sessions(codex_run) for c in s.get("compactions", [])]
    assert len(compactions) == len(codex_run.script.compactions) == 1, compactions


def test_no_hook_errors(codex_run: CodexRun) -> None:
    """memdir logged no hook error during the whole session."""
    assert read_state(codex_run.box.store).hook_errors == ""


# --------------------------------------------------------------------------- fixtures


def test_record_fixtures(codex_run: CodexRun) -> None:
    """With ``MEMDIR_RECORD_FIXTURES=1``, keep one trimmed payload per event (and tool kind)."""
    seen = {p.get("hook_event_name") for p in codex_run.payloads}
    assert set(LOGGED_EVENTS) <= seen, seen
    if not recording():
        pytest.skip("set MEMDIR_RECORD_FIXTURES=1 to rewrite the Codex fixtures")
    rewrite = {
        str(codex_run.box.project): "/home/dev/project",
        str(codex_run.box.home): "/home/dev",
        os.path.dirname(sys.executable): "/home/dev/.local/bin",
    }
    chosen: dict[str, dict[str, Any]] = {}
    for payload in codex_run.payloads:
        event = str(payload.get("hook_event_name"))
        name = event
        if event in ("PreToolUse", "PostToolUse"):
            tool = str(payload.get("tool_name"))
            command = str((payload.get("tool_input") or {}).get("command", ""))
            what = {"cat no-such-file.txt": "fail", "sed -n '2,4p' src/app.py": "ranged"}.get(
                command, "read" if command.startswith("cat ") else ""
            )
            name = f"{event}-{tool}" + (f"-{what}" if what else "")
        elif event == "SessionStart":
            name = f"{event}-{payload.get('source')}"
        chosen.setdefault(name, payload)
    for name, payload in chosen.items():
        write_fixture(payload, FIXTURE_DIR / f"{name}.json", rewrite)


# --------------------------------------------------------------------------- before trust


def test_install_and_hosts_say_codex_needs_the_user_to_trust_the_hooks(
    codex_run: CodexRun,
) -> None:
    """A user who installs for Codex is told to trust the hooks with ``/hooks``."""
    box = codex_run.box
    install = box.memdir("install", "--host", "codex", "--dir", str(box.project))
    hosts = box.memdir("hosts")
    assert install.returncode == 0 and hosts.returncode == 0
    assert "/hooks" in install.stdout + install.stderr, install.stdout
    codex_line = hosts.stdout[hosts.stdout.index("codex") :]
    assert "/hooks" in codex_line[: codex_line.find("\ngemini")], hosts.stdout


@pytest.fixture(scope="module")
def untrusted(tmp_path_factory: pytest.TempPathFactory) -> tuple[Sandbox, dict[str, str], Path]:
    """A second sandbox: project trusted, memdir's hooks not (the state right after install)."""
    binary = host_binary("codex")
    box = make_sandbox(tmp_path_factory.mktemp("codex_untrusted"), "codex")
    return box, {}, binary


def test_untrusted_hooks_do_not_run_and_doctor_says_so(
    untrusted: tuple[Sandbox, dict[str, str], Path],
) -> None:
    """Before trust Codex skips memdir's hooks silently; ``--dangerously-bypass-hook-trust``
    (this test only) runs them, so trust is the only gate; ``memdir doctor`` reports it."""
    box, _, binary = untrusted
    script = CodexScript({"t1": [final("untrusted turn done")], "t2": [final("bypass done")]})
    with LoopbackServer(script) as server:
        _, env = _codex_home(box, server.url)
        app = AppServer(binary, box, env)
        try:
            hooks, _ = app.hooks(box.project)
        finally:
            app.close()
        exec_args = [str(binary), "exec", "--sandbox", "workspace-write", "--skip-git-repo-check"]
        plain = box.run([*exec_args, "First prompt, hooks untrusted. <<t1>>"], env=env)
        bypass = box.run(
            [*exec_args, "--dangerously-bypass-hook-trust", "Second prompt. <<t2>>"], env=env
        )
    assert {h["trustStatus"] for h in _memdir_hooks(hooks)} == {"untrusted"}
    assert plain.returncode == 0 and bypass.returncode == 0, plain.stderr + bypass.stderr
    assert "hook: SessionStart" not in plain.stderr
    assert "hook: SessionStart Completed" in bypass.stderr
    users = [t["text"] for t in read_state(box.store).journal if t.get("who") == "user"]
    assert not any("<<t1>>" in u for u in users) and any("<<t2>>" in u for u in users), users
    _doctor_reports_untrusted(box, env)


def test_doctor_reports_untrusted_codex_hooks(
    untrusted: tuple[Sandbox, dict[str, str], Path],
) -> None:
    """``memdir doctor`` asks Codex and reports memdir's hooks as not trusted yet."""
    box, _, _ = untrusted
    with LoopbackServer(CodexScript({})) as server:
        _, env = _codex_home(box, server.url)
        _doctor_reports_untrusted(box, env, required=True)


def _doctor_reports_untrusted(box: Sandbox, env: dict[str, str], *, required: bool = False) -> None:
    # the person has codex on PATH, as doctor needs to ask it
    path = os.pathsep.join([str(host_binary("codex").parent), box.env.get("PATH", "")])
    done = box.run(
        [sys.executable, "-m", "memdir", "doctor"], env={**env, "PATH": path}, timeout=120
    )
    if "No such command" in done.stderr and not required:
        return  # doctor has not landed: test_doctor_reports_untrusted_codex_hooks says so
    text = (done.stdout + done.stderr).lower()
    assert "codex" in text and "skips memdir's hooks until trusted" in text, text
    assert "/hooks" in text, text
    assert done.returncode != 0, text
