"""Shared helpers for the host conformance suite: real host CLIs against a loopback model API.

Every test module here drives one released host CLI (pinned in ``.ci/install-hosts``, installed
under ``$MEMDIR_HOSTS_PREFIX/node_modules/.bin``, default ``/opt/memdir-hosts``) through a
scripted session, in a throwaway HOME, inside a project where memdir was installed with the real
``memdir install``. The host talks to a :class:`LoopbackServer` on 127.0.0.1 that answers from a
script and records every request, so a test can assert what reached the model; afterwards
:func:`read_state` reads what memdir kept.

Modules mark their tests ``slow`` and ``enable_socket`` (pytest-socket is on; loopback only)::

    pytestmark = [pytest.mark.slow, pytest.mark.enable_socket]

Helpers (all plain functions or classes, so a module-scoped fixture can use them):

- :func:`host_binary` — the host's executable, or a loud skip (a failure when ``CI`` is set).
- :func:`make_sandbox` — a throwaway HOME and a git project with memdir installed for a host.
- :class:`LoopbackServer` — a threaded HTTP server with a per-host ``answer`` function.
- :func:`payload_logger` — a hook command that copies each payload a host sends into a folder.
- :func:`read_state` — memdir's records, journal, actions, anatomy, sessions and hook errors.
- :func:`write_fixture` — a payload trimmed and with its paths rewritten, as a recorded fixture.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import yaml

from memdir.service.channel import AGENT_MARKERS

if TYPE_CHECKING:
    from memdir.kernel.storage.session import SessionState

HOSTS_PREFIX = Path(os.environ.get("MEMDIR_HOSTS_PREFIX") or "/opt/memdir-hosts")
"""Where ``.ci/install-hosts`` put the pinned host CLIs."""
FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
"""Recorded payloads: ``tests/hosts/fixtures/<host>-<version>/<Event>[-<what>].json``."""
RECORD_ENV = "MEMDIR_RECORD_FIXTURES"
"""Set to 1 to (re)write the recorded fixtures from a conformance run."""
KEPT_ENV = (
    "PATH",
    "LANG",
    "LC_ALL",
    "TZ",
    "TMPDIR",
    "USER",
    "LOGNAME",
    "SHELL",
    "SYSTEMROOT",
    "PYTHONPATH",
)
"""The only variables a host inherits from the test run: no real keys, no agent markers
(PYTHONPATH, so memdir's hooks run the same code as the test)."""


# --------------------------------------------------------------------------- binaries


def host_binary(name: str) -> Path:
    """Return the pinned host CLI ``name`` (``claude``, ``codex``, ``gemini``).

    Skips the calling test with a loud reason when it is not installed; under CI (``CI`` set)
    a missing host is a failure, since ``.ci/run`` installs them first.
    """
    path = HOSTS_PREFIX / "node_modules" / ".bin" / name
    if path.exists() and os.access(path, os.X_OK):
        return path
    reason = (
        f"HOST CLI MISSING: {path} is not installed, so the {name} conformance tests did NOT "
        f"run. Install the pinned hosts with `.ci/install-hosts {HOSTS_PREFIX}` (needs the npm "
        "registry), or set MEMDIR_HOSTS_PREFIX."
    )
    if os.environ.get("CI"):
        pytest.fail(reason)
    pytest.skip(reason)


# --------------------------------------------------------------------------- sandbox


@dataclass
class Sandbox:
    """A throwaway HOME and a project with memdir installed for one host."""

    host: str
    root: Path  # everything lives under it
    home: Path
    project: Path
    env: dict[str, str]  # the environment every host and memdir process runs with
    install: dict[str, Any] = field(default_factory=dict)  # `memdir install --json` output

    @property
    def store(self) -> Path:
        """The project's store folder."""
        return self.project / ".memdir"

    def run(
        self,
        args: list[str],
        *,
        input_text: str | None = None,
        timeout: float = 120,
        env: Mapping[str, str] | None = None,
        cwd: Path | None = None,
    ) -> subprocess.CompletedProcess[str]:
        """Run a command in the project with the sandbox environment; never raise on exit code.

        A command that overruns ``timeout`` is killed with its whole process group and
        reported as a test failure naming it.
        """
        with subprocess.Popen(
            args,
            cwd=cwd or self.project,
            env={**self.env, **(env or {})},
            stdin=subprocess.PIPE if input_text is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        ) as proc:
            try:
                out, err = proc.communicate(input_text, timeout=timeout)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                out, err = proc.communicate()
                pytest.fail(
                    f"{shlex.join(args)} overran {timeout:g} s\n--- stdout\n{out[-3000:]}"
                    f"\n--- stderr\n{err[-3000:]}"
                )
            return subprocess.CompletedProcess(args, proc.returncode, out, err)

    def memdir(self, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        """Run ``python -m memdir ARGS`` (this checkout) in the project."""
        return self.run([sys.executable, "-m", "memdir", *args], timeout=timeout)


def sandbox_env(home: Path, extra_path: Iterable[Path] = ()) -> dict[str, str]:
    """Return a minimal environment rooted at ``home``.

    Only :data:`KEPT_ENV` is inherited; HOME, XDG folders, the user store and git identity point
    inside ``home``; this interpreter's folder (so ``memdir`` is on PATH, as after a pipx
    install) and ``extra_path`` come first on PATH.
    """
    env = {k: os.environ[k] for k in KEPT_ENV if k in os.environ}
    path = [str(p) for p in extra_path] + [str(Path(sys.executable).parent)]
    env["PATH"] = os.pathsep.join([*path, env.get("PATH", os.defpath)])
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_DATA_HOME=str(home / ".local" / "share"),
        XDG_CACHE_HOME=str(home / ".cache"),
        XDG_STATE_HOME=str(home / ".local" / "state"),
        MEMDIR_HOME=str(home / "memdir-user"),
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_CONFIG_NOSYSTEM="1",
        GIT_AUTHOR_NAME="Test Person",
        GIT_COMMITTER_NAME="Test Person",
        GIT_AUTHOR_EMAIL="test@example.invalid",
        GIT_COMMITTER_EMAIL="test@example.invalid",
        NO_COLOR="1",
        CI=os.environ.get("CI", ""),
    )
    for name, _ in AGENT_MARKERS:
        env.pop(name, None)
    return {k: v for k, v in env.items() if v != ""}


PROJECT_FILES = {
    "README.md": "# demo project\n\nA tiny project the conformance suite works in.\n",
    "src/app.py": "".join(f"def step_{n}():\n    return {n}\n\n\n" for n in range(40)),
    "notes.txt": "alpha\nbeta\ngamma\n",
}
"""The files every sandbox project starts with (committed)."""


def make_sandbox(
    root: Path,
    host: str,
    *,
    install_args: Iterable[str] = (),
    observer: bool = False,
    extra_path: Iterable[Path] = (),
) -> Sandbox:
    """Create ``root/home`` and a git project ``root/project``, and install memdir for ``host``.

    The install is the real command, ``python -m memdir install --host HOST --dir PROJECT
    --json`` plus ``install_args``, run with the sandbox environment. With ``observer`` false
    (the default) the store's background observer is turned off, so nothing writes while a
    test reads the store.

    Raises:
        AssertionError: the install failed (its output is in the message).
    """
    home, project = root / "home", root / "project"
    home.mkdir(parents=True)
    project.mkdir()
    box = Sandbox(host, root, home, project, sandbox_env(home, extra_path))
    for rel, text in PROJECT_FILES.items():
        (project / rel).parent.mkdir(parents=True, exist_ok=True)
        (project / rel).write_text(text)
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "initial"]):
        done = box.run(["git", *args])
        assert done.returncode == 0, done.stderr
    done = box.memdir(
        "install", "--host", host, "--dir", str(project), "--json", *install_args, timeout=120
    )
    assert done.returncode == 0, f"memdir install failed:\n{done.stdout}\n{done.stderr}"
    box.install = json.loads(done.stdout) if done.stdout.strip().startswith("{") else {}
    if not observer:
        manifest = box.store / "memdir.toml"
        text = manifest.read_text()
        manifest.write_text(
            text.replace("observe_every_seconds = 300", "observe_every_seconds = 0")
        )
    return box


def payload_logger(folder: Path) -> str:
    """Return a shell command that saves the hook payload on its stdin as a new file in ``folder``.

    Add it as an extra hook (in the sandbox HOME's user settings, not in memdir's entries) to
    record exactly what the host sends; the files are named ``<nanoseconds>-<pid>.json``.
    """
    folder.mkdir(parents=True, exist_ok=True)
    target = shlex.quote(str(folder))
    return f'cat > {target}/"$(date +%s%N)-$$.json"'


def logged_payloads(folder: Path) -> list[dict[str, Any]]:
    """Return the payloads :func:`payload_logger` saved, oldest first (unreadable ones skipped)."""
    found = []
    for path in sorted(folder.glob("*.json"), key=lambda p: int(p.name.split("-")[0])):
        try:
            value = json.loads(path.read_text(encoding="utf-8"))
        except (ValueError, OSError):
            continue
        if isinstance(value, dict):
            found.append(value)
    return found


# --------------------------------------------------------------------------- model stand-in


@dataclass
class Request:
    """One HTTP request the host made to the stand-in."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    @property
    def json(self) -> Any:
        """The body as JSON (``None`` when empty or not JSON)."""
        try:
            return json.loads(self.body) if self.body else None
        except ValueError:
            return None


@dataclass
class Reply:
    """What the stand-in answers: a status, headers and a body (bytes, or chunks to stream)."""

    status: int = 200
    body: bytes | Iterable[bytes] = b""
    content_type: str = "application/json"
    headers: dict[str, str] = field(default_factory=dict)

    @classmethod
    def of_json(cls, value: Any, status: int = 200) -> Reply:
        """A JSON reply."""
        return cls(status, json.dumps(value).encode())

    @classmethod
    def sse(cls, events: Iterable[tuple[str | None, Any]]) -> Reply:
        """A ``text/event-stream`` reply of ``(event name or None, JSON data)`` pairs."""
        chunks = []
        for name, data in events:
            head = f"event: {name}\n" if name else ""
            chunks.append(f"{head}data: {json.dumps(data)}\n\n".encode())
        return cls(200, chunks, "text/event-stream", {"Cache-Control": "no-cache"})


Answer = Callable[[Request], Reply]


class LoopbackServer:
    """A threaded HTTP server on 127.0.0.1 that records every request and answers via ``answer``.

    Use as a context manager; ``url`` is its base address. ``answer`` runs in the server's
    threads, under a lock (so a script advances one request at a time); an exception in it
    becomes a 500 reply and is kept in ``errors`` for the test to report.
    """

    def __init__(self, answer: Answer) -> None:
        self.answer = answer
        self.requests: list[Request] = []
        self.errors: list[str] = []
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                request = Request(self.command, self.path, dict(self.headers.items()), body)
                with server._lock:
                    server.requests.append(request)
                    try:
                        reply = server.answer(request)
                    except Exception as exc:  # noqa: BLE001 - reported to the test, not lost
                        import traceback

                        server.errors.append(f"{self.command} {self.path}: {exc!r}")
                        server.errors.append(traceback.format_exc())
                        reply = Reply.of_json({"error": {"message": repr(exc)}}, 500)
                self.send_response(reply.status)
                self.send_header("Content-Type", reply.content_type)
                for key, value in reply.headers.items():
                    self.send_header(key, value)
                if isinstance(reply.body, bytes):
                    self.send_header("Content-Length", str(len(reply.body)))
                    self.end_headers()
                    if self.command != "HEAD":
                        self.wfile.write(reply.body)
                    return
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                for chunk in reply.body:
                    self.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
                    self.wfile.flush()
                self.wfile.write(b"0\r\n\r\n")

            do_GET = do_POST = do_HEAD = do_PUT = do_DELETE = _handle

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        """The base address, ``http://127.0.0.1:PORT``."""
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def __enter__(self) -> LoopbackServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)


# --------------------------------------------------------------------------- memdir's state


@dataclass
class State:
    """What memdir kept in a store after a host session."""

    records: list[dict[str, Any]]  # front matter of every record file
    journal: list[dict[str, Any]]  # every turn, in file order
    actions: list[dict[str, Any]]  # every action row, in file order
    anatomy: dict[str, Any]  # anatomy.json
    sessions: dict[str, SessionState]  # state/sessions/<key>.json, by session id
    hook_errors: str  # state/hook-errors.log ('' when there is none)

    def records_with(self, text: str) -> list[dict[str, Any]]:
        """Records whose text contains ``text`` (case-insensitive)."""
        return [r for r in self.records if text.lower() in str(r.get("text", "")).lower()]


def _jsonl(folder: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for path in sorted(folder.glob("*.jsonl")) if folder.is_dir() else []:
        rows.extend(json.loads(line) for line in path.read_text().splitlines() if line.strip())
    return rows


def read_state(store: Path) -> State:
    """Return what memdir kept in ``store`` (the ``.memdir`` folder)."""
    records = []
    for path in sorted((store / "records").rglob("*.md")):
        front = path.read_text(encoding="utf-8").split("---\n", 2)[1]
        records.append(yaml.safe_load(front))
    from memdir.kernel.storage import session  # snapshots folded with their appended events

    sessions = {str(value.get("id")): value for value in session.all_states(store)}
    anatomy_file = store / "anatomy.json"
    errors = store / "state" / "hook-errors.log"
    return State(
        records=records,
        journal=_jsonl(store / "journal"),
        actions=_jsonl(store / "actions"),
        anatomy=json.loads(anatomy_file.read_text()) if anatomy_file.exists() else {},
        sessions=sessions,
        hook_errors=errors.read_text() if errors.exists() else "",
    )


# --------------------------------------------------------------------------- fixtures


def trim(value: Any, rewrite: Mapping[str, str], max_chars: int = 400) -> Any:
    """Return ``value`` with every string's paths rewritten and long strings cut.

    ``rewrite`` maps a real path (the sandbox's) to the one a fixture shows (``/home/dev/…``);
    longer keys are applied first. A string over ``max_chars`` keeps its head and tail around
    ``…[cut N chars]…``.
    """
    if isinstance(value, dict):
        return {k: trim(v, rewrite, max_chars) for k, v in value.items()}
    if isinstance(value, list):
        return [trim(v, rewrite, max_chars) for v in value]
    if isinstance(value, str):
        for real in sorted(rewrite, key=len, reverse=True):
            value = value.replace(real, rewrite[real])
        if len(value) > max_chars:
            half = max_chars // 2
            cut = len(value) - 2 * half
            value = f"{value[:half]}…[cut {cut} chars]…{value[-half:]}"
    return value


def write_fixture(payload: dict[str, Any], dest: Path, rewrite: Mapping[str, str]) -> Path:
    """Write ``payload`` trimmed (:func:`trim`) as pretty JSON at ``dest``; it must be < 20 KB.

    Raises:
        AssertionError: the trimmed payload is still 20 KB or more.
    """
    text = json.dumps(trim(payload, rewrite), indent=2, ensure_ascii=False) + "\n"
    assert len(text.encode()) < 20_000, f"{dest.name} is too big for a fixture"
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(text, encoding="utf-8")
    return dest


def recording() -> bool:
    """Whether this run should (re)write the recorded fixtures (``MEMDIR_RECORD_FIXTURES=1``)."""
    return os.environ.get(RECORD_ENV, "") not in ("", "0")


@pytest.fixture(scope="module")
def module_root(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Path:
    """A fresh folder per test module, for its sandbox."""
    return tmp_path_factory.mktemp(request.module.__name__.rsplit(".", 1)[-1])
