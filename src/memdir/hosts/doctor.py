"""``memdir doctor``: will each installed host really run memdir's hooks and reach its server?

For every host memdir is installed into (its install record, or its entries found in the
host's files), the doctor checks memdir's own wiring in the host's files (a host that rewrote
its settings and dropped entries, case B41), that the hook command can be found, and then asks
the host itself where the host can answer: ``claude mcp get memdir``, Codex's app-server
``hooks/list`` (each hook's trust status) and ``codex mcp list --json``, ``gemini mcp list``.
Each question has a timeout; a host binary that is not on PATH is reported as "cannot ask",
never as a pass. The doctor only reads: it never writes a host's trust store.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import selectors
import shlex
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from memdir.hosts import install as installer
from memdir.hosts.base import HostSpec
from memdir.hosts.registry import HOSTS

ASK_TIMEOUT_SECONDS = 30.0
"""How long the doctor waits for one host command."""


def _check(name: str, ok: bool | None, detail: str, fix: str = "") -> dict[str, Any]:
    return {"check": name, "ok": ok, "detail": detail, "fix": fix}


def _scope_installed(spec: HostSpec, project: Path, store: Path | None) -> str | None:
    """Return ``"personal"``/``"shared"`` when memdir is installed for ``spec``, else None."""
    if store is not None:
        record = installer.read_record(store, spec, project)
        if record.get("scope") in ("personal", "shared"):
            return str(record["scope"])
    for scope_name in ("personal", "shared"):
        hooks = spec.scope(scope_name == "shared").get("hooks")
        path = project / str(hooks)
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        if installer.MARKER in text:
            return scope_name
    return None


def _our_commands(
    spec: HostSpec, hooks_file: Path, hooks: dict[str, Any], host_event: str
) -> list[str]:
    """Memdir's hook commands for ``host_event`` in a host's hooks table (any file format)."""
    if spec.hooks_format == "cline-scripts":
        script = hooks_file / host_event
        try:
            text = script.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return []
        ok = installer.MARKER in text and os.access(script, os.X_OK)
        return [text.rsplit("exec ", 1)[-1].strip()] if ok else []
    entries = hooks.get(host_event, [])
    if spec.hooks_format in installer.FLAT_FORMATS:
        handlers = [h for h in entries if isinstance(h, dict)]
    else:
        handlers = [h for g in entries if isinstance(g, dict) for h in g.get("hooks", [])]
    return [str(h.get("command", h.get("bash"))) for h in handlers if installer.is_our_handler(h)]


def _wiring(  # noqa: C901 - one check per piece of a host's wiring (hooks, MCP, instructions)
    spec: HostSpec, project: Path, shared: bool
) -> list[dict[str, Any]]:
    scope = spec.scope(shared)
    fix = f"memdir install --host {spec.name}" + (" --shared" if shared else "")
    checks: list[dict[str, Any]] = []
    if scope.get("plugin"):
        return _plugin_wiring(spec, project, shared)
    hooks_file = project / str(scope.get("hooks"))
    hooks: dict[str, Any] | None = {}
    if spec.hooks_format == "cline-scripts":
        if not hooks_file.is_dir():
            checks.append(_check("hooks", False, f"{hooks_file} is missing", fix))
            hooks = None
    else:
        try:
            data = json.loads(hooks_file.read_text(encoding="utf-8"))
            hooks = data.get("hooks", {}) if isinstance(data, dict) else {}
            if not isinstance(hooks, dict):
                raise ValueError('"hooks" is not an object')
        except FileNotFoundError:
            checks.append(_check("hooks", False, f"{hooks_file} is missing", fix))
            hooks = None
        except (OSError, ValueError) as exc:
            checks.append(
                _check(
                    "hooks", False, f"{hooks_file} cannot be read ({exc})", f"fix it, then {fix}"
                )
            )
            hooks = None
    commands: list[str] = []
    if hooks is not None:
        missing = []
        wanted = spec.hook_events()
        for host_event in wanted:
            found = _our_commands(spec, hooks_file, hooks, host_event)
            commands += found
            if not found:
                missing.append(host_event)
        if missing:
            checks.append(
                _check(
                    "hooks",
                    False,
                    f"memdir's hooks for {', '.join(missing)} are missing from {hooks_file} "
                    "(the host or someone rewrote the file)",
                    fix,
                )
            )
        else:
            checks.append(_check("hooks", True, f"all {len(wanted)} hooks in {hooks_file}"))
    if commands:
        first = shlex.split(commands[0])[0]
        where = (
            shutil.which(first)
            if os.sep not in first
            else (first if Path(first).exists() else None)
        )
        if where is None:
            checks.append(
                _check(
                    "command",
                    False,
                    f"the hook command `{first}` cannot be found from this shell",
                    installer.PATH_HELP,
                )
            )
        else:
            checks.append(_check("command", True, f"hooks run {where}"))
    mcp = str(scope.get("mcp") or "")
    if not mcp:  # a host whose MCP settings memdir does not write (Cline's live in the editor)
        return checks + _instructions_check(project, scope, fix)
    if mcp == "~/.claude.json":
        mcp_file = installer.claude_config_file()
    else:
        mcp_file = Path.home() / mcp[2:] if mcp.startswith("~/") else project / mcp
    try:
        text = mcp_file.read_text(encoding="utf-8")
    except OSError:
        text = ""
    has_server = '"memdir"' in text or "[mcp_servers.memdir]" in text
    checks.append(
        _check(
            "mcp entry",
            has_server,
            f"memdir's server {'in' if has_server else 'missing from'} {mcp_file}",
            "" if has_server else fix,
        )
    )
    return checks + _instructions_check(project, scope, fix)


def _instructions_check(project: Path, scope: dict[str, object], fix: str) -> list[dict[str, Any]]:
    instructions = project / str(scope.get("instructions"))
    try:
        block = installer.BLOCK_BEGIN in instructions.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        block = False
    return [
        _check(
            "instructions",
            block,
            f"memdir's block {'in' if block else 'missing from'} {instructions}",
            "" if block else fix,
        )
    ]


def _plugin_wiring(spec: HostSpec, project: Path, shared: bool) -> list[dict[str, Any]]:
    """Check a plugin host's wiring: memdir's plugin file, the command it runs, MCP, block."""
    scope = spec.scope(shared)
    fix = f"memdir install --host {spec.name}"
    plugin = project / str(scope.get("plugin"))
    try:
        text = plugin.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        text = ""
    checks = []
    if not text.startswith(installer.PLUGIN_MARK):
        detail = f"{plugin} is missing" if not text else f"{plugin} is not memdir's plugin"
        checks.append(_check("plugin", False, detail, fix))
    else:
        stale = text != installer.plugin_text(spec.name, str(scope.get("command", "path")))
        checks.append(
            _check(
                "plugin",
                not stale,
                f"memdir's plugin in {plugin}"
                + (" is from another memdir version" if stale else ""),
                fix if stale else "",
            )
        )
        found = re.search(r"const COMMAND = (\[.*?\]);", text)
        command = json.loads(found.group(1))[0] if found else "memdir"
        where = shutil.which(command) if os.sep not in command else command
        if where is None or not Path(where).exists():
            checks.append(
                _check(
                    "command",
                    False,
                    f"the plugin's command `{command}` cannot be found from this shell",
                    installer.PATH_HELP,
                )
            )
        else:
            checks.append(_check("command", True, f"the plugin runs {where}"))
    if scope.get("mcp"):
        checks.append(_plugin_mcp_check(project / str(scope.get("mcp")), fix))
    instructions = project / str(scope.get("instructions"))
    try:
        block = installer.BLOCK_BEGIN in instructions.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        block = False
    checks.append(
        _check(
            "instructions",
            block,
            f"memdir's block {'in' if block else 'missing from'} {instructions}",
            "" if block else fix,
        )
    )
    return checks


def _plugin_mcp_check(mcp_file: Path, fix: str) -> dict[str, Any]:
    """Check memdir's server entry in an OpenCode-style config (``{"mcp": {"memdir": {...}}}``)."""
    try:
        servers = json.loads(mcp_file.read_text(encoding="utf-8")).get("mcp", {})
    except (OSError, ValueError, AttributeError):
        servers = {}
    ours = isinstance(servers, dict) and isinstance(servers.get("memdir"), dict)
    enabled = ours and servers["memdir"].get("enabled", True) is not False
    return _check(
        "mcp entry",
        bool(enabled),
        f"memdir's server {'in' if enabled else 'missing from (or disabled in)'} {mcp_file}",
        "" if enabled else fix,
    )


def openclaw_config_file() -> Path:
    """Return the path of the operator's OpenClaw config.

    ``$OPENCLAW_CONFIG_PATH``, else ``$OPENCLAW_STATE_DIR/openclaw.json``, else
    ``~/.openclaw/openclaw.json``: OpenClaw 2026.9.6's own order, from its CLI help.
    """
    if os.environ.get("OPENCLAW_CONFIG_PATH"):
        return Path(os.environ["OPENCLAW_CONFIG_PATH"]).expanduser()
    state = os.environ.get("OPENCLAW_STATE_DIR")
    return (Path(state).expanduser() if state else Path.home() / ".openclaw") / "openclaw.json"


def _ask_openclaw(project: Path) -> list[dict[str, Any]]:
    """Check the operator's OpenClaw config for what the install's gates ask.

    memdir never writes that config. The checks: the project is the agent's workspace, and
    memdir's plugin is enabled with conversation access (else OpenClaw never runs its
    ``before_prompt_build`` hook).

    Returns:
        Two checks, ``ok`` None for both when the config is missing or not plain JSON (JSON5
        with more than ``//`` comment lines is not read: reported, not guessed).
    """
    config_file = openclaw_config_file()
    config = _jsonc(config_file)
    if not isinstance(config, dict):
        detail = (
            f"{config_file} is missing"
            if not config_file.exists()
            else f"could not read {config_file} as JSON"
        )
        return [
            _check("workspace (openclaw.json)", None, detail, "see `memdir hosts` (trust:)"),
            _check("plugin consent (openclaw.json)", None, detail, "see `memdir hosts` (trust:)"),
        ]

    def dig(*keys: str) -> Any:
        node: Any = config
        for key in keys:
            node = node.get(key) if isinstance(node, dict) else None
        return node

    workspaces = [dig("agents", "defaults", "workspace")]
    agents = dig("agents", "list")
    if isinstance(agents, list):
        workspaces += [a.get("workspace") for a in agents if isinstance(a, dict)]
    here = project.resolve()
    is_workspace = any(
        isinstance(w, str) and w and Path(w).expanduser().resolve() == here for w in workspaces
    )
    entry = dig("plugins", "entries", "memdir")
    enabled = isinstance(entry, dict) and entry.get("enabled") is True
    access = enabled and dig("plugins", "entries", "memdir", "hooks", "allowConversationAccess")
    return [
        _check(
            "workspace (openclaw.json)",
            is_workspace,
            f"{project} {'is' if is_workspace else 'is not'} an agent workspace in {config_file}",
            "" if is_workspace else f"set agents.defaults.workspace to {project} in {config_file}",
        ),
        _check(
            "plugin consent (openclaw.json)",
            access is True,
            f"plugins.entries.memdir {'enabled with' if access is True else 'lacks enabled and'}"
            f" hooks.allowConversationAccess in {config_file}",
            ""
            if access is True
            else "set plugins.entries.memdir.enabled: true and "
            f"plugins.entries.memdir.hooks.allowConversationAccess: true in {config_file}",
        ),
    ]


def _ask_opencode(
    spec: HostSpec, binary: str, project: Path, timeout: float
) -> list[dict[str, Any]]:
    """Ask ``opencode mcp list`` (``kilo mcp list``) whether memdir's server connects."""
    name = f"server ({spec.binary} mcp list)"
    code, out = _run([binary, "mcp", "list"], project, timeout)
    line = next((ln for ln in out.splitlines() if re.search(r"\bmemdir\b", ln)), "")
    if code is None or not line:
        return [
            _check(
                name,
                False,
                (out.strip() or "no answer")[-300:],
                f"memdir install --host {spec.name}",
            )
        ]
    clean = re.sub(r"\x1b\[[0-9;]*m", "", line).strip()
    return [_check(name, "connected" in clean.lower(), clean)]


def _run(
    argv: list[str], cwd: Path, timeout: float, *, stdout_only: bool = False
) -> tuple[int | None, str]:
    try:
        done = subprocess.run(
            argv,
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired:
        return None, f"no answer within {timeout:.0f} s"
    except OSError as exc:
        return None, str(exc)
    return done.returncode, done.stdout if stdout_only else done.stdout + done.stderr


def _cannot_ask(spec: HostSpec) -> dict[str, Any]:
    return _check(
        "asked the host",
        None,
        f"could not ask {spec.title}: `{spec.binary}` is not on PATH, so whether it runs "
        "memdir's hooks and reaches its server is unknown (not a pass)",
        f"put `{spec.binary}` on PATH and run `memdir doctor` again",
    )


def _ask_claude(binary: str, project: Path, timeout: float) -> list[dict[str, Any]]:
    code, out = _run([binary, "mcp", "get", "memdir"], project, timeout)
    status = re.search(r"Status:\s*(.+)", out)
    if code is None or status is None:
        return [_check("server (claude mcp get memdir)", False, (out.strip() or "no answer")[:300])]
    state = status.group(1).strip()
    issue = re.search(r"Issue:\s*(.+)", out)
    if "Connected" in state:
        return [_check("server (claude mcp get memdir)", True, state)]
    fix = ""
    if "pending" in state.lower() or "approv" in state.lower():
        fix = "run `claude` in the project and approve the memdir server from .mcp.json"
    detail = state + (f": {issue.group(1).strip()}" if issue else "")
    return [_check("server (claude mcp get memdir)", False, detail, fix)]


def _codex_hooks(binary: str, project: Path, timeout: float) -> dict[str, Any] | None:
    """Ask Codex's app-server for ``hooks/list``; return its result or None."""
    requests = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {"clientInfo": {"name": "memdir-doctor", "version": "1"}},
        },
        {"jsonrpc": "2.0", "method": "initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "hooks/list", "params": {"cwds": [str(project)]}},
    ]
    try:
        proc = subprocess.Popen(
            [binary, "app-server"],
            cwd=project,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
    except OSError:
        return None
    if proc.stdin is None or proc.stdout is None:  # pragma: no cover - pipes were asked for
        return None
    try:
        proc.stdin.write(b"".join(json.dumps(r).encode() + b"\n" for r in requests))
        proc.stdin.flush()
        deadline = time.monotonic() + timeout
        selector = selectors.DefaultSelector()
        selector.register(proc.stdout, selectors.EVENT_READ)
        buffer = b""
        while time.monotonic() < deadline:
            if not selector.select(timeout=max(0.0, deadline - time.monotonic())):
                break
            chunk = os.read(proc.stdout.fileno(), 65536)
            if not chunk:
                break
            buffer += chunk
            while b"\n" in buffer:
                line, buffer = buffer.split(b"\n", 1)
                try:
                    message = json.loads(line)
                except ValueError:
                    continue
                if isinstance(message, dict) and message.get("id") == 2:
                    result = message.get("result")
                    return result if isinstance(result, dict) else None
        return None
    except OSError:
        return None
    finally:
        proc.kill()
        proc.wait(timeout=10)
        proc.stdin.close()
        proc.stdout.close()


def _ask_codex(binary: str, project: Path, timeout: float) -> list[dict[str, Any]]:
    checks = []
    listed = _codex_hooks(binary, project, timeout)
    if listed is None:
        checks.append(
            _check(
                "hooks trusted (codex app-server hooks/list)",
                False,
                "Codex gave no hooks/list answer",
            )
        )
    else:
        ours = [
            h
            for entry in listed.get("data", [])
            for h in entry.get("hooks", [])
            if installer.MARKER in str(h.get("command", ""))
        ]
        if not ours:
            checks.append(
                _check(
                    "hooks trusted (codex app-server hooks/list)",
                    False,
                    "Codex does not load memdir's hooks: the project is not trusted, so its "
                    ".codex/ folder is ignored",
                    "run `codex` in the project and trust it (or set "
                    f'[projects."{project}"] trust_level = "trusted" in ~/.codex/config.toml)',
                )
            )
        else:
            bad = sorted(
                {
                    f"{h.get('eventName')}: {h.get('trustStatus')}"
                    for h in ours
                    if h.get("trustStatus") not in ("trusted", "managed")
                }
            )
            if bad:
                checks.append(
                    _check(
                        "hooks trusted (codex app-server hooks/list)",
                        False,
                        f"Codex skips memdir's hooks until trusted ({', '.join(bad)})",
                        "run `codex` in the project, type /hooks and trust memdir's hooks",
                    )
                )
            else:
                checks.append(
                    _check(
                        "hooks trusted (codex app-server hooks/list)",
                        True,
                        f"{len(ours)} hooks trusted",
                    )
                )
    code, out = _run([binary, "mcp", "list", "--json"], project, timeout, stdout_only=True)
    try:
        servers = json.loads(out[out.index("[") :]) if code == 0 and "[" in out else None
    except ValueError:
        servers = None
    if servers is None:
        checks.append(_check("server (codex mcp list)", False, (out.strip() or "no answer")[:300]))
    else:
        mine = [s for s in servers if isinstance(s, dict) and s.get("name") == "memdir"]
        if mine and mine[0].get("enabled"):
            checks.append(_check("server (codex mcp list)", True, "memdir enabled"))
        else:
            checks.append(
                _check(
                    "server (codex mcp list)",
                    False,
                    "Codex does not list memdir's server"
                    if not mine
                    else f"disabled: {mine[0].get('disabled_reason')}",
                    "trust the project in Codex (its .codex/config.toml loads only then)",
                )
            )
    return checks


def _ask_gemini(binary: str, project: Path, timeout: float) -> list[dict[str, Any]]:
    code, out = _run([binary, "mcp", "list"], project, timeout)
    line = next((ln for ln in out.splitlines() if re.search(r"\bmemdir:", ln)), "")
    if code is None or not line:
        detail = "Gemini CLI does not list memdir's server" if code is not None else out
        return [
            _check("server (gemini mcp list)", False, detail[:300], "memdir install --host gemini")
        ]
    state = line.rsplit(" - ", 1)[-1].strip()
    if "Connected" in state:
        return [_check("server (gemini mcp list)", True, state)]
    fix = ""
    if "Disabled" in state:
        fix = "trust the folder in Gemini CLI (accept its folder-trust prompt in the project)"
    return [_check("server (gemini mcp list)", False, state, fix)]


def _jsonc(path: Path) -> Any:
    """Read a JSON file that may start with ``//`` comment lines (Copilot CLI's config)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    body = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("//"))
    try:
        return json.loads(body)
    except ValueError:
        return None


def _trusted(folders: Any, project: Path) -> bool:
    """Whether ``project`` is one of ``folders`` or inside one."""
    if not isinstance(folders, list | dict):
        return False
    resolved = project.resolve()
    for folder in folders:
        try:
            if resolved.is_relative_to(Path(str(folder)).expanduser().resolve()):
                return True
        except (OSError, ValueError):
            continue
    return False


def _ask_copilot(binary: str, project: Path, timeout: float) -> list[dict[str, Any]]:
    home = Path(os.environ.get("COPILOT_HOME") or Path.home() / ".copilot")
    config = _jsonc(home / "config.json")
    config = config if isinstance(config, dict) else {}
    folders = config.get("trustedFolders", config.get("trusted_folders", []))
    trust_fix = "run `copilot` in the project and accept its folder-trust prompt"
    trusted = _trusted(folders, project)
    checks = [
        _check(
            "folder trusted (~/.copilot/config.json)",
            trusted,
            "Copilot CLI trusts this folder"
            if trusted
            else "Copilot CLI skips this repository's hooks and .mcp.json until the folder "
            "is trusted",
            "" if trusted else trust_fix,
        )
    ]
    code, out = _run([binary, "mcp", "get", "memdir"], project, timeout)
    status = re.search(r"Status:\s*(.+)", out)
    if code == 0 and status and "Enabled" in status.group(1):
        checks.append(_check("server (copilot mcp get memdir)", True, status.group(1).strip()))
    else:
        detail = (status.group(1) if status else out.strip() or "no answer")[:300]
        checks.append(_check("server (copilot mcp get memdir)", False, detail, trust_fix))
    return checks


def _ask_qwen(binary: str, project: Path, timeout: float) -> list[dict[str, Any]]:
    code, out = _run([binary, "mcp", "list"], project, timeout)
    line = next((ln for ln in out.splitlines() if re.search(r"\bmemdir\b", ln)), "")
    if code is None or not line:
        detail = "Qwen Code does not list memdir's server" if code is not None else out
        fix = "trust the folder in Qwen Code (accept its folder-trust prompt in the project)"
        return [_check("server (qwen mcp list)", False, detail[:300], fix)]
    if "Connected" in line:
        return [_check("server (qwen mcp list)", True, line.strip()[:300])]
    fix = "trust the folder in Qwen Code, and approve the server (`qwen mcp approve memdir`)"
    return [_check("server (qwen mcp list)", False, line.strip()[:300], fix)]


def _ask_droid(binary: str, project: Path, timeout: float) -> list[dict[str, Any]]:
    code, out = _run([binary, "mcp", "list"], project, timeout)
    line = next((ln for ln in out.splitlines() if re.search(r"\bmemdir\b", ln)), "")
    if code is None or not line:
        detail = "Droid does not list memdir's server" if code is not None else out
        return [
            _check("server (droid mcp list)", False, detail[:300], "memdir install --host droid")
        ]
    ok = bool(re.search(r"connected|enabled|ready", line, re.I)) and not re.search(
        r"disconnected|failed|error|disabled", line, re.I
    )
    return [_check("server (droid mcp list)", ok, line.strip()[:300])]


def _ask_host(
    spec: HostSpec, binary: str | None, project: Path, timeout: float
) -> list[dict[str, Any]]:
    """Ask ``spec``'s host (its binary, or its operator config) whether memdir works in it."""
    if spec.name == "openclaw":  # its gates live in the operator's config, read directly
        return _ask_openclaw(project)
    if not spec.binary:  # an editor: nothing on PATH to ask
        return [_check("asked the host", None, f"{spec.title} has no CLI to ask")]
    if binary is None:
        return [_cannot_ask(spec)]
    if spec.name == "claude-code":
        return _ask_claude(binary, project, timeout)
    if spec.name == "codex":
        return _ask_codex(binary, project, timeout)
    if spec.name == "gemini":
        return _ask_gemini(binary, project, timeout)
    if spec.name in ("opencode", "kilo"):
        return _ask_opencode(spec, binary, project, timeout)
    if spec.name == "copilot":
        return _ask_copilot(binary, project, timeout)
    if spec.name == "qwen":
        return _ask_qwen(binary, project, timeout)
    if spec.name == "droid":
        return _ask_droid(binary, project, timeout)
    return []


@contextlib.contextmanager
def _left_as_found(project: Path, scope: dict[str, object]) -> Iterator[None]:
    """Undo what asking a host wrote into the project: doctor only reads.

    Hosts change their own files when run: ``opencode mcp list`` adds ``$schema`` to
    ``opencode.json`` and installs ``node_modules``, ``package.json`` and a lock file into
    ``.opencode/`` (OpenCode 1.18.33, seen here). The files an install wrote (``scope``'s
    paths) get their bytes back, and entries that appeared directly inside the host's own
    folders (``.opencode/``, ``.kilo/``…; never the project root) are removed.
    """
    files: dict[Path, bytes | None] = {}
    folders: dict[Path, set[str]] = {}
    for value in scope.values():
        if not isinstance(value, str) or ("/" not in value and "." not in value):
            continue  # not a path ("path", "opencode"…)
        if value.startswith(("/", "~")) or ".." in Path(value).parts:
            continue  # a personal file outside the project: never touched here
        path = project / value
        with contextlib.suppress(OSError):
            files[path] = path.read_bytes() if path.is_file() else None
        top = project / Path(value).parts[0]
        if len(Path(value).parts) > 1 and top.is_dir() and not top.is_symlink():
            folders[top] = set(os.listdir(top))
    try:
        yield
    finally:
        for path, data in files.items():
            with contextlib.suppress(OSError):
                if data is not None and path.is_file() and path.read_bytes() != data:
                    path.write_bytes(data)
        for top, before in folders.items():
            with contextlib.suppress(OSError):
                for name in set(os.listdir(top)) - before:
                    extra = top / name
                    if extra.is_dir() and not extra.is_symlink():
                        shutil.rmtree(extra, ignore_errors=True)
                    else:
                        extra.unlink(missing_ok=True)


def diagnose(
    project: Path, store: Path | None, *, timeout: float = ASK_TIMEOUT_SECONDS
) -> list[dict[str, Any]]:
    """Return one report per host memdir is installed into for ``project``.

    Each report: ``{"host", "title", "scope", "checks": [{"check", "ok", "detail", "fix"}],
    "ok"}``; ``ok`` is True (works), False (will not work; ``fix`` says how to repair) or None
    (cannot tell: the host's binary is not on PATH).
    """
    reports = []
    for spec in HOSTS.values():
        if not spec.installable:
            continue
        scope = _scope_installed(spec, project, store)
        if scope is None:
            continue
        shared = scope == "shared"
        checks = _wiring(spec, project, shared)
        binary = shutil.which(spec.binary) if spec.binary else None
        with _left_as_found(project, spec.scope(shared)):
            checks += _ask_host(spec, binary, project, timeout)
        oks = [c["ok"] for c in checks]
        reports.append(
            {
                "host": spec.name,
                "title": spec.title,
                "scope": spec.scope_name(shared),
                "ok": False if False in oks else (None if None in oks else True),
                "checks": checks,
            }
        )
    return reports
