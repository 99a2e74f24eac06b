"""OpenCode 1.18.33 and Kilo Code CLI 7.7.7, their released binaries, with memdir's plugin.

memdir is installed with the real ``memdir install --host opencode`` (``kilo``): its plugin in
``.opencode/plugins/memdir.js`` (``.kilo/plugins/``), its server in ``opencode.json``
(``kilo.json``) ``mcp``, its block in ``AGENTS.md``. The model is a loopback stand-in for an
OpenAI-compatible chat-completions API, declared as a custom provider (``baseURL``) in the
throwaway HOME's global config, with the tool permissions a person grants there. Every other
address goes to a dead loopback proxy (``HTTPS_PROXY``), so nothing leaves the machine.

The session: ``<host> run`` with a "remember that …" prompt, a full read, the same read again
(refused), a ranged read, a write, an edit, a shell command and a failing one, memdir's MCP
``memdir_memory_recall`` and ``memdir_memory_remember``; the last answer reports more tokens
than the model's context, so the host compacts and continues; then ``<host> run --continue``
(a resume) with a prompt that per-prompt recall answers. A ``memdir``
wrapper first on PATH copies each hook payload the plugin sends (``MEMDIR_RECORD_FIXTURES=1``
keeps them under ``tests/hosts/fixtures/<host>-<version>/``).
"""

from __future__ import annotations

import json
import os
import stat
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.hosts.conformance.chat_script import chat_reply
from tests.hosts.conformance.conftest import (
    FIXTURES,
    LoopbackServer,
    Reply,
    Request,
    Sandbox,
    host_binary,
    logged_payloads,
    make_sandbox,
    read_state,
    recording,
    write_fixture,
)

pytestmark = [pytest.mark.slow, pytest.mark.enable_socket]

VERSIONS = {"opencode": "1.18.33", "kilo": "7.7.7"}
"""The pinned releases (``.ci/install-hosts``)."""
CONFIG = {"opencode": "opencode", "kilo": "kilo"}
"""The global config folder under ``~/.config`` and the config file's stem."""
CONTEXT_LIMIT = 60_000
"""The stand-in model's context window: the last answer of the first run reports more."""
REMEMBER = "Please remember that the release branch is called trunk-stable."
AGENT_BELIEF = "Deploys run from the trunk-stable branch every Friday."
RECALL_PROMPT = "Should I run make check before a commit?"
NEW_RULE = "Always run make check before a commit"
"""Stored between the session and its resume: the one thing the resumed session has not seen."""
TAG = "<<t"


def _call(name: str, **args: Any) -> dict[str, Any]:
    return {"tool": name, "args": args}


SCRIPT: dict[str, list[dict[str, Any]]] = {
    "t1": [
        _call("read", filePath="notes.txt"),
        _call("read", filePath="notes.txt"),
        _call("read", filePath="src/app.py", offset=2, limit=3),
        _call("write", filePath="added.txt", content="hello from the plugin host\n"),
        _call("edit", filePath="notes.txt", oldString="beta", newString="BETA"),
        _call("bash", command="ls src", description="List src"),
        _call("bash", command="cat no-such-file.txt", description="Read a missing file"),
        _call("memdir_memory_recall", query="release branch"),
        _call("memdir_memory_remember", text=AGENT_BELIEF, kind="fact"),
        {"text": "All done: notes edited, memory checked.", "tokens": CONTEXT_LIMIT * 2},
    ],
    "t2": [{"text": "Yes: run make check first; releases come from trunk-stable."}],
}
"""The model's side of the session, by the tag of the prompt it answers."""


# --------------------------------------------------------------------------- the stand-in


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(str(p.get("text", "")) for p in content or [] if isinstance(p, dict))


@dataclass
class ChatStandIn:
    """Answers ``POST /v1/chat/completions`` (streamed) from :data:`SCRIPT`.

    A request's step is found from the last user message holding a ``<<tN>>`` tag and the number
    of assistant messages after it. The title generator gets a title; the compaction request
    gets a summary; a request with no tag (the continuation after a compaction) gets a short
    answer. Every request body is kept in ``bodies``; ``served`` lists ``(kind, step)``.
    """

    bodies: list[dict[str, Any]]
    served: list[tuple[str, str]]

    def __call__(self, request: Request) -> Reply:
        """Answer one request."""
        if request.method != "POST" or not request.path.endswith("/chat/completions"):
            return Reply.of_json({"object": "list", "data": [{"id": "stand-in"}]})
        body = request.json or {}
        self.bodies.append(body)
        messages = body.get("messages", [])
        system = _text(messages[0].get("content")) if messages else ""
        if "title generator" in system:
            self.served.append(("title", ""))
            return _stream({"text": "Scripted session"})
        last_user = next(
            (_text(m.get("content")) for m in reversed(messages) if m.get("role") == "user"), ""
        )
        if "anchored summary" in last_user:  # the host's compaction request
            self.served.append(("summary", ""))
            return _stream({"text": "Summary: the scripted session read and edited notes.txt."})
        for index in range(len(messages) - 1, -1, -1):
            message = messages[index]
            content = _text(message.get("content"))
            if message.get("role") == "user" and TAG in content:
                tag = content[content.rindex(TAG) + 2 : content.rindex(TAG) + 4]
                break
        else:
            self.served.append(("untagged", ""))
            return _stream({"text": "Resumed after the compaction; nothing left to do."})
        done = sum(1 for m in messages[index + 1 :] if m.get("role") == "assistant")
        steps = SCRIPT.get(tag, [])
        step = steps[done] if done < len(steps) else {"text": f"Done with {tag}."}
        self.served.append((tag, str(done)))
        return _stream(step)


def _stream(step: dict[str, Any]) -> Reply:
    return chat_reply(step, call_id=f"call_{time.monotonic_ns()}")


# --------------------------------------------------------------------------- the run


@dataclass
class HostRun:
    """Everything one scripted session left behind."""

    host: str
    box: Sandbox
    standin: ChatStandIn
    server_errors: list[str]
    runs: list[Any]
    payloads: list[dict[str, Any]]
    seconds: float

    @property
    def output(self) -> str:
        """Every run's stdout and stderr."""
        return "\n".join(r.stdout + "\n" + r.stderr for r in self.runs)

    def payloads_for(self, event: str) -> list[dict[str, Any]]:
        """The payloads the plugin sent memdir for ``event``, in order."""
        return [p for p in self.payloads if p.get("hook_event_name") == event]


def _wrapper(folder: Path, payloads: Path) -> Path:
    """A ``memdir`` first on PATH that copies each hook payload, then runs this checkout's."""
    folder.mkdir(parents=True, exist_ok=True)
    payloads.mkdir(parents=True, exist_ok=True)
    script = folder / "memdir"
    script.write_text(
        "#!/bin/sh\n"
        'if [ "$1" = hook ]; then\n'
        f'  f="{payloads}/$(date +%s%N)-$$.json"; tee "$f" | "{sys.executable}" -m memdir "$@"\n'
        "else\n"
        f'  exec "{sys.executable}" -m memdir "$@"\n'
        "fi\n"
    )
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return folder


def _global_config(box: Sandbox, host: str, url: str) -> None:
    """The person's own config: the loopback provider and the tool permissions they grant."""
    folder = box.home / ".config" / CONFIG[host]
    folder.mkdir(parents=True, exist_ok=True)
    config = {
        "provider": {
            "loopback": {
                "npm": "@ai-sdk/openai-compatible",
                "name": "Loopback stand-in",
                "options": {"baseURL": f"{url}/v1", "apiKey": "not-a-real-key"},
                "models": {
                    "stand-in": {
                        "name": "stand-in",
                        "tool_call": True,
                        "limit": {"context": CONTEXT_LIMIT, "output": 4000},
                    }
                },
            }
        },
        "model": "loopback/stand-in",
        "small_model": "loopback/stand-in",
        "permission": "allow",  # the person allows every tool, MCP tools included
        "autoupdate": False,
        "share": "disabled",
    }
    (folder / f"{CONFIG[host]}.json").write_text(json.dumps(config, indent=2))


def _host_env(host: str) -> dict[str, str]:
    prefix = "KILO" if host == "kilo" else "OPENCODE"
    dead = "http://127.0.0.1:9"
    return {
        f"{prefix}_DISABLE_MODELS_FETCH": "1",
        f"{prefix}_DISABLE_AUTOUPDATE": "1",
        f"{prefix}_DISABLE_LSP_DOWNLOAD": "1",
        "KILO_DISABLE_SESSION_INGEST": "1",
        "HTTPS_PROXY": dead,
        "HTTP_PROXY": dead,
        "NO_PROXY": "127.0.0.1,localhost",
        # the host's own `npm install` of its plugin SDK into .opencode/ (.kilo/) fails at
        # once instead of downloading: memdir's plugin imports nothing from it
        "npm_config_registry": f"{dead}/",
        "npm_config_fetch_retries": "0",
    }


KILO_ENV = "MEMDIR_CONFORMANCE_KILO"
"""Set to 1 to run Kilo's session too (``.ci/run`` sets it): its 10-step run took 105 to 176 s
on the shared 2-core machine at load 1 to 5, 2 to 4 minutes under load 16 (OpenCode's: 40 to
90 s), so a local fast loop may leave it out."""
TURN_SECONDS = {"opencode": 150.0, "kilo": 360.0}


@pytest.fixture(
    scope="module",
    params=[
        "opencode",
        pytest.param(
            "kilo",
            marks=pytest.mark.skipif(
                not os.environ.get(KILO_ENV), reason=f"Kilo's session runs with {KILO_ENV}=1"
            ),
        ),
    ],
)
def host_run(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> HostRun:
    """Run the scripted session once per host for the whole module."""
    host = str(request.param)
    binary = host_binary(host)
    root = tmp_path_factory.mktemp(host)
    wrapper = _wrapper(root / "bin", root / "payloads")
    box = make_sandbox(root, host, extra_path=[wrapper])
    standin = ChatStandIn([], [])
    started = time.monotonic()
    env = _host_env(host)
    with LoopbackServer(standin) as server:
        _global_config(box, host, server.url)
        runs = [
            box.run(
                # words, not one argument: `run` would keep one argument's quotes in the prompt
                [str(binary), "run", *f"{REMEMBER} Then look at notes.txt. <<t1>>".split()],
                env=env,
                timeout=TURN_SECONDS[host],
            ),
            box.memdir("remember", NEW_RULE, "--kind", "rule"),
            box.run(
                [str(binary), "run", "--continue", *f"{RECALL_PROMPT} <<t2>>".split()],
                env=env,
                timeout=TURN_SECONDS[host],
            ),
        ]
    debug = os.environ.get("MEMDIR_CONFORMANCE_DEBUG")
    if debug:  # keep what the host printed and sent, to read after a failure
        Path(debug).mkdir(parents=True, exist_ok=True)
        Path(debug, f"{host}.json").write_text(
            json.dumps(
                {
                    "bodies": standin.bodies,
                    "served": standin.served,
                    "runs": [
                        {"rc": r.returncode, "stdout": r.stdout, "stderr": r.stderr} for r in runs
                    ],
                },
                indent=1,
            )
        )
    return HostRun(
        host=host,
        box=box,
        standin=standin,
        server_errors=list(server.errors),
        runs=runs,
        payloads=[p for p in logged_payloads(root / "payloads") if "hook_event_name" in p],
        seconds=time.monotonic() - started,
    )


def _tool_results(run: HostRun) -> dict[str, list[str]]:
    """Each tool call's result as the model received it, by ``name:arguments``."""
    names: dict[str, str] = {}
    results: dict[str, list[str]] = {}
    for body in run.standin.bodies:
        for message in body.get("messages", []):
            for call in message.get("tool_calls") or []:
                names[call["id"]] = f"{call['function']['name']}:{call['function']['arguments']}"
            if message.get("role") == "tool":
                key = names.get(message.get("tool_call_id"), "?")
                text = _text(message.get("content"))
                if text not in results.setdefault(key, []):
                    results[key].append(text)
    return results


def _model_bodies(run: HostRun) -> list[dict[str, Any]]:
    """The agent's own requests (not the title generator's)."""
    return [
        b
        for b in run.standin.bodies
        if "title generator" not in _text((b.get("messages") or [{}])[0].get("content"))
    ]


def _result(run: HostRun, tool: str, **args: Any) -> str:
    key = f"{tool}:{json.dumps(args, separators=(',', ':'))}"
    found = _tool_results(run).get(key)
    assert found, f"no result for {key}: {sorted(_tool_results(run))}"
    return found[0]


# --------------------------------------------------------------------------- the host's side


def test_the_whole_session_ran(host_run: HostRun) -> None:
    """Both runs exit 0, every scripted step was served, and the session stays short."""
    for run in host_run.runs:
        assert run.returncode == 0, (
            f"{host_run.host} exited {run.returncode}:\n{run.stderr[-3000:]}"
        )
    assert host_run.server_errors == []
    steps = [step for tag, step in host_run.standin.served if tag == "t1"]
    assert len(set(steps)) == len(SCRIPT["t1"]), host_run.standin.served
    assert host_run.seconds < 2 * TURN_SECONDS[host_run.host], (
        f"the {host_run.host} session took {host_run.seconds:.0f} s"
    )


def test_digest_and_recall_reached_the_model(host_run: HostRun) -> None:
    """The first prompt carries the digest and the "stored" note; the resume's prompt carries
    per-prompt recall of the stored belief, and the digest of the resumed session."""
    fence = "<memdir-memory>"
    first = next(b for b in _model_bodies(host_run) if "<<t1>>" in json.dumps(b))
    user = [_text(m.get("content")) for m in first["messages"] if m.get("role") == "user"]
    assert any(fence in u and "Recalled memory from memdir" in u for u in user), user
    assert any("trunk-stable" in u and "stored" in u for u in user), user
    last = next(b for b in reversed(_model_bodies(host_run)) if "<<t2>>" in json.dumps(b))
    prompt = [_text(m.get("content")) for m in last["messages"] if m.get("role") == "user"][-1]
    assert fence in prompt and NEW_RULE in prompt, prompt[-1500:]


def test_second_full_read_was_refused(host_run: HostRun) -> None:
    """The same full read of an unchanged file is refused with memdir's reason; the first read
    and a ranged read pass."""
    results = _tool_results(host_run)
    reads = results.get('read:{"filePath":"notes.txt"}', [])
    assert len(reads) == 2, results.keys()
    assert "alpha" in reads[0] and "memdir" not in reads[0]
    assert "already read in full" in reads[1] and "alpha" not in reads[1], reads[1]
    ranged = _result(host_run, "read", filePath="src/app.py", offset=2, limit=3)
    assert "return 0" in ranged and "already read" not in ranged


def test_mcp_server_connected_and_answered(host_run: HostRun) -> None:
    """The host started memdir's server from its config: recall and remember answered."""
    recall = _result(host_run, "memdir_memory_recall", query="release branch")
    assert "trunk-stable" in recall, recall[:500]
    remember = _result(host_run, "memdir_memory_remember", text=AGENT_BELIEF, kind="fact")
    assert '"id"' in remember and "error" not in remember.lower()[:200], remember[:500]


def test_instructions_reached_the_model(host_run: HostRun) -> None:
    """The AGENTS.md block install wrote is in the system prompt the host sends."""
    system = _text(_model_bodies(host_run)[-1]["messages"][0].get("content"))
    assert "Project memory (memdir)" in system, system[:2000]


def test_compaction_was_checkpointed_and_the_digest_came_back(host_run: HostRun) -> None:
    """The oversized answer made the host compact: memdir saw PreCompact, SessionStart
    (compact) and PostCompact in that order, kept one checkpoint, and the request after the
    compaction carries the post-compaction digest."""
    if host_run.host == "kilo":
        pytest.skip(
            "Kilo 7.7.7's `kilo run` did not compact on the same over-limit usage (no summary "
            "request reached the stand-in): compaction is not proven with Kilo's binary"
        )
    assert ("summary", "") in host_run.standin.served, host_run.standin.served
    order = [
        (p["hook_event_name"], p.get("source", ""))
        for p in host_run.payloads
        if p["hook_event_name"] in ("PreCompact", "PostCompact", "SessionStart")
    ]
    assert ("PreCompact", "") in order and ("PostCompact", "") in order, order
    pre = order.index(("PreCompact", ""))
    assert order[pre + 1] == ("SessionStart", "compact"), order
    compactions = [
        c
        for s in read_state(host_run.box.store).sessions.values()
        for c in s.get("compactions", [])
    ]
    assert len(compactions) == 1, compactions
    after = host_run.standin.bodies[host_run.standin.served.index(("summary", "")) + 1 :]
    assert any("Context was compacted" in json.dumps(b) for b in after)


# --------------------------------------------------------------------------- memdir's side


def test_the_stated_belief_and_the_mcp_save_are_stored(host_run: HostRun) -> None:
    """The "remember that …" prompt is an owner belief; the MCP save an agent one."""
    state = read_state(host_run.box.store)
    owner = state.records_with("trunk-stable")
    assert any(r.get("origin") == "owner" and r.get("status") == "active" for r in owner), owner
    assert any(r.get("origin") == "agent" for r in state.records_with("every Friday"))


def test_an_action_row_for_every_tool_call(host_run: HostRun) -> None:
    """Read, write, edit and both shell commands have rows; the failing command says so."""
    rows = read_state(host_run.box.store).actions
    by_tool = json.dumps(rows)
    for name in ("added.txt", "notes.txt", "ls src"):
        assert name in by_tool, by_tool[:2000]
    failing = [r for r in rows if r.get("command") == "cat no-such-file.txt"]
    assert failing and failing[0].get("ok") is False, failing
    assert next(r for r in rows if r.get("command") == "ls src").get("ok") is True


def test_journal_has_both_sides_and_no_injected_memory(host_run: HostRun) -> None:
    """Each prompt is the user's turn, each last answer the assistant's; no fence in a user turn."""
    journal = read_state(host_run.box.store).journal
    users = [t["text"] for t in journal if t.get("who") == "user"]
    assistants = [t["text"] for t in journal if t.get("who") == "assistant"]
    assert any("<<t1>>" in u for u in users) and any("<<t2>>" in u for u in users), users
    assert any("trunk-stable" in a for a in assistants), assistants
    assert not any("<memdir-memory" in u for u in users)


def test_session_events_reached_memdir(host_run: HostRun) -> None:
    """SessionStart (startup, then resume), Stop after each run and SessionEnd at each exit."""
    starts = [p.get("source") for p in host_run.payloads_for("SessionStart")]
    assert starts[0] == "startup" and "resume" in starts, starts
    assert len(host_run.payloads_for("Stop")) >= 2
    assert len(host_run.payloads_for("SessionEnd")) == 2
    sessions = {p.get("session_id") for p in host_run.payloads}
    assert len(sessions) == 1, sessions  # --continue resumes the same session


def test_no_hook_errors(host_run: HostRun) -> None:
    """memdir logged no hook error during the session."""
    assert read_state(host_run.box.store).hook_errors == ""


def test_record_fixtures(host_run: HostRun) -> None:
    """With ``MEMDIR_RECORD_FIXTURES=1``, keep one trimmed payload per event and tool."""
    if not recording():
        pytest.skip("set MEMDIR_RECORD_FIXTURES=1 to rewrite the plugin-host fixtures")
    rewrite = {
        str(host_run.box.project): "/home/dev/project",
        str(host_run.box.home): "/home/dev",
        os.path.dirname(sys.executable): "/home/dev/.local/bin",
    }
    chosen: dict[str, dict[str, Any]] = {}
    for payload in host_run.payloads:
        event = str(payload.get("hook_event_name"))
        name = event
        if "tool_name" in payload:
            name = f"{event}-{payload['tool_name']}"
            command = str((payload.get("tool_input") or {}).get("command", ""))
            if "no-such-file" in command:
                name += "-fail"
        elif event == "SessionStart":
            name = f"{event}-{payload.get('source')}"
        chosen.setdefault(name, payload)
    folder = FIXTURES / f"{host_run.host}-{VERSIONS[host_run.host]}"
    for name, payload in chosen.items():
        write_fixture(payload, folder / f"{name}.json", rewrite)


def _files(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and ".git" not in p.parts and ".memdir" not in p.parts
    }


def test_doctor_asks_opencode_and_leaves_the_project_as_it_found_it(tmp_path: Path) -> None:
    """``opencode mcp list`` writes ``$schema`` and a package into ``.opencode/``: doctor undoes it.

    Paired on the same project: doctor did ask the real binary (its server line is in the
    report), and afterwards every project file is byte for byte what install left.
    """
    binary = host_binary("opencode")
    box = make_sandbox(tmp_path, "opencode", extra_path=[binary.parent])
    before = _files(box.project)
    asked = box.run([sys.executable, "-m", "memdir", "doctor", "--json"], env=_host_env("opencode"))
    report = json.loads(asked.stdout)
    host = next(r for r in report["results"] if r["host"] == "opencode")
    server = next(c for c in host["checks"] if c["check"].startswith("server (opencode"))
    assert "memdir" in server["detail"], server  # the binary answered about memdir's server
    assert _files(box.project) == before  # nothing the host wrote while asked is left
    # the same ask without doctor's guard does change the project (so the test can fail)
    box.run([str(binary), "mcp", "list"], env=_host_env("opencode"))
    assert _files(box.project) != before
