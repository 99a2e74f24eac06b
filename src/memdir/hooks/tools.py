"""What a tool call did, read from the host's tool vocabulary: patches, shell reads, saves.

- **Patches.** Codex edits files with ``apply_patch``; its ``tool_input.command`` holds the patch
  text (``*** Begin Patch`` … ``*** End Patch``). :func:`patch_files` turns its ``*** Add File:``,
  ``*** Update File:`` (optionally followed by ``*** Move to:``) and ``*** Delete File:``
  sections into one change per file.
- **Shell reads** (the rule, deliberate and documented in ``docs/hosts.md``). Codex reads files
  through its shell tool (``cat``, ``sed -n``, ``head``…), so the ``Read`` tool never fires.
  A shell command is looked at only when it is one simple command (no pipe, list, redirection or
  substitution), possibly wrapped in ``bash -lc '…'``; then:

  * ``cat FILE`` with exactly one file and no option is a **full read**: it is logged as a read
    and gated exactly like a full ``Read`` (a re-read of an unchanged file in the same context is
    refused once; the retry passes);
  * ``cat`` with options or several files, ``nl`` and ``bat`` are full reads that are logged
    (and make a later full ``Read`` or ``cat`` of the same file a repeat) but are never refused;
  * ``head``, ``tail`` and ``sed -n`` are **ranged reads**: logged, never refused, and they never
    make a later full read a repeat.

  Anything else (``grep``, ``rg``, pipelines, scripts) is a shell command, logged as such.
- **Saves.** A shell command running ``memdir remember``/``correct`` saves a belief; a save
  through memdir's MCP tools is recognised under every host's naming by
  :func:`memdir.kernel.hostio.hosttable.memdir_mcp_tool`, and the server marks the session itself
  (:mod:`memdir.kernel.storage.saves`).

Imports: standard library only.
"""

from __future__ import annotations

import re
import shlex

PATCH_BEGIN = "*** Begin Patch"
_HEADERS = (
    ("*** Add File: ", "add"),
    ("*** Update File: ", "update"),
    ("*** Delete File: ", "delete"),
)
_MOVE = "*** Move to: "

RANGE_KEYS = ("offset", "limit", "pages", "start_line", "end_line", "view_range")
"""Read-tool arguments that make a read ranged (Claude Code ``offset``/``limit``/``pages``,
Gemini CLI ``start_line``/``end_line``, Copilot CLI ``view_range``): a ranged read is never
gated."""
FULL_READERS = frozenset({"cat", "nl", "bat", "batcat"})
RANGED_READERS = frozenset({"head", "tail", "sed"})
_NOT_SIMPLE = re.compile(r"[|;&<>`\n]|\$\(")
_WRAPPERS = frozenset({"bash", "sh", "zsh", "dash"})

_SAVE_COMMAND = re.compile(r"(?:^|[\s;&|(])memdir\s+(?:remember|correct)\b")
_BUG_COMMAND = re.compile(r"(?:^|[\s;&|(])memdir\s+bug\s+log\b")
_ERROR_TEXT = re.compile(
    r"Traceback \(most recent call last\)|^\s*(?:\w+(?:Error|Exception)|error(?:\[\w+\])?|"
    r"FAILED|FAIL|npm ERR!|panic):?\s",
    re.M,
)


def is_bug_command(command: str) -> bool:
    """Whether a shell command runs ``memdir bug log``."""
    return bool(_BUG_COMMAND.search(command))


def has_error_text(text: str) -> bool:
    """Whether a prompt carries an error message: a traceback, ``FooError: …``, ``FAILED``."""
    return bool(_ERROR_TEXT.search(text))


class FileChange:
    """One file a patch changed: ``op`` is ``add``, ``update``, ``move`` or ``delete``."""

    __slots__ = ("op", "path", "to")

    def __init__(self, op: str, path: str, to: str = "") -> None:
        self.op = op
        self.path = path  # as the patch names it (relative to the tool's working directory)
        self.to = to  # the new path of a moved file

    def __repr__(self) -> str:
        return f"FileChange({self.op!r}, {self.path!r}, {self.to!r})"


def patch_text(tool_input: dict[str, object]) -> str:
    """Return the patch an ``apply_patch`` call carries ("" when there is none).

    Codex puts it in ``command`` (a string, or an argv list ending with it); other shapes use
    ``input`` or ``patch``. A shell command running ``apply_patch <<'EOF'`` carries it too.
    """
    for key in ("command", "input", "patch"):
        value = tool_input.get(key)
        if isinstance(value, list):
            value = "\n".join(item for item in value if isinstance(item, str))
        if isinstance(value, str) and PATCH_BEGIN in value:
            return value
    return ""


def patch_files(text: str) -> list[FileChange]:
    """Return the files a patch changes, in order, one entry per file section.

    Args:
        text: The patch (``*** Begin Patch`` … ``*** End Patch``); hunks are ignored.

    Returns:
        One :class:`FileChange` per ``Add``/``Update``/``Delete`` section; an ``Update``
        followed by ``*** Move to:`` becomes ``move`` with ``to`` set. Empty paths are skipped.
    """
    changes: list[FileChange] = []
    for line in text.splitlines():
        if line.startswith(_MOVE) and changes and changes[-1].op == "update":
            target = line[len(_MOVE) :].strip()
            if target:
                changes[-1].op, changes[-1].to = "move", target
            continue
        for prefix, op in _HEADERS:
            if line.startswith(prefix):
                path = line[len(prefix) :].strip()
                if path:
                    changes.append(FileChange(op, path))
                break
    return changes


def _words(command: str) -> list[str] | None:
    """Return the words of one simple shell command, unwrapping ``bash -lc '…'``; else None."""
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    if len(words) == 3 and words[0].rsplit("/", 1)[-1] in _WRAPPERS and words[1] in ("-c", "-lc"):
        return _words(words[2])
    if not words or _NOT_SIMPLE.search(command):
        return None
    return words


def shell_reads(command: str) -> tuple[list[str], bool, bool]:
    """Return what a shell command reads, by the rule in the module docstring.

    Args:
        command: The shell tool's command line.

    Returns:
        ``(files, full, gated)``: the files it reads as written (relative to its working
        directory, or absolute); whether each is read whole; whether the call is a plain
        ``cat FILE`` that the duplicate-read gate may refuse. ``([], False, False)`` for a
        command that reads no file by this rule.
    """
    words = _words(command) if len(command) < 4096 else None
    if not words:
        return [], False, False
    program = words[0].rsplit("/", 1)[-1]
    args = words[1:]
    if program in FULL_READERS:
        files = [a for a in args if not a.startswith("-") or a == "-"]
        files = [f for f in files if f != "-"]
        plain = program == "cat" and len(args) == 1 and len(files) == 1
        return files, True, plain
    if program == "sed":
        if not args or args[0] != "-n" or len(args) < 3:
            return [], False, False  # sed without -n prints the whole file, or edits it
        if any(a.startswith("-i") for a in args):
            return [], False, False
        return [a for a in args[2:] if not a.startswith("-")], False, False
    if program in RANGED_READERS:
        named: list[str] = []
        skip = False
        for arg in args:
            if skip:
                skip = False
            elif arg in ("-n", "-c"):
                skip = True
            elif not arg.startswith("-") and not arg.startswith("+"):
                named.append(arg)
        return named, False, False
    return [], False, False


def is_save_command(command: str) -> bool:
    """Whether a shell command runs ``memdir remember`` or ``memdir correct``."""
    return bool(_SAVE_COMMAND.search(command))


def exit_status(response: object) -> int | None:
    """Return the exit code a Codex tool response reports (``"Exit code: 1 …"``), if any."""
    if isinstance(response, str):
        found = re.match(r"\s*Exit code:\s*(-?\d+)", response)
        return int(found.group(1)) if found else None
    if isinstance(response, dict):
        for key in ("exit_code", "exitCode"):
            value = response.get(key)
            if isinstance(value, int) and not isinstance(value, bool):
                return value
    return None
