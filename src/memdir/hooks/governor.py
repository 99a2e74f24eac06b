"""The shell output governor: keep noisy command output from flooding the agent's context.

Two steps, each within what the host's hooks allow (DESIGN §7; checked against the pinned
binaries, see docs/economy.md):

- **Before** (PreToolUse, every host whose PreToolUse sees the shell tool): an unbounded noisy
  command (a test runner, a build, a package install, ``git log`` without a count, ``find``
  without a depth or a ``head``, ``cat`` of a large file) gets a note with a bounded form to
  use instead. The command is never rewritten and never refused.
- **After** (PostToolUse): where the host lets a hook *replace* a tool's output (Claude Code's
  ``updatedToolOutput``), a successful noisy command's output above ``[governor] min_tokens`` is
  cut to its first and last lines, with a count of what was left out and the path of the whole
  output, saved (redacted) under ``state/outputs/``. Output of a command that failed, or whose
  text reports a failure (a failing test, an error), is never shaped: the agent sees all of it.

``[governor] mode``: ``shape`` (both steps, the default), ``note`` (only the note before) or
``off``. ``[governor] skip`` lists shell-style patterns of commands left alone, and a command
carrying ``# memdir:full`` is left alone too.

Imports: standard library only (and the kernel, lazily, when output is shaped).
"""

from __future__ import annotations

import fnmatch
import re

from memdir.kernel.base.layout import StoreLayout, layout

TYPE_CHECKING = False  # the hook path never imports typing (start-up cost)
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

MARK = "# memdir:full"
"""A command carrying this comment is never noted or shaped."""
OUTPUTS = StoreLayout.OUTPUTS
OUTPUTS_KEPT = 20
"""Whole outputs kept under ``state/outputs/`` (oldest removed first: they are copies)."""
REPORTS_FAILURES = frozenset({"tests", "build", "install"})
"""Kinds whose output text can report a failure even when the command exits 0."""
CAT_BYTES = 20_000
"""A ``cat`` of a file larger than this is a long read."""

NOTE_AFTER = frozenset({"gemini"})
"""Hosts whose PreToolUse cannot add context (Gemini CLI 0.61.0's BeforeTool has no such
field): the note rides on the command's result instead, for the next command."""
REPLACES_OUTPUT = frozenset({"claude-code"})
"""Hosts whose PostToolUse may replace a shell tool's output (Claude Code: ``updatedToolOutput``
for every tool). Codex 0.171.0 replaces only MCP tools' output; Gemini CLI 0.61.0 can only
*block* a result, which shows it as a failed call; both get the note before instead."""

_KINDS: list[tuple[str, re.Pattern[str]]] = [
    (
        "tests",
        re.compile(
            r"^(?:(?:python3?|uv run|poetry run)\s+-m\s+)?(?:pytest|py\.test|tox|nox)\b"
            r"|^(?:npm|pnpm|yarn|bun)\s+(?:run\s+)?test\b|^(?:npx\s+)?(?:jest|vitest|mocha)\b"
            r"|^(?:cargo|go)\s+test\b|^(?:mvn|\./mvnw)\s+(?:-\S+\s+)*test\b|^\./gradlew\s+test\b"
        ),
    ),
    (
        "install",
        re.compile(
            r"^(?:npm|pnpm|yarn|bun)\s+(?:install|i|add|ci)\b|^(?:npm|pnpm|yarn|bun)\s*$"
            r"|^(?:python3?\s+-m\s+)?pip3?\s+install\b|^uv\s+(?:pip\s+install|sync|add)\b"
            r"|^(?:sudo\s+)?apt(?:-get)?\s+install\b|^poetry\s+install\b|^bundle\s+install\b"
            r"|^cargo\s+(?:fetch|install)\b|^go\s+mod\s+download\b"
        ),
    ),
    (
        "build",
        re.compile(
            r"^make\b|^cmake\s+--build\b|^(?:npm|pnpm|yarn|bun)\s+run\s+build\b"
            r"|^(?:cargo|go)\s+build\b|^(?:npx\s+)?tsc\b|^(?:mvn|\./mvnw|\./gradlew)\b"
            r"|^docker\s+build\b"
        ),
    ),
    ("git log", re.compile(r"^git\s+(?:-C\s+\S+\s+)?log\b")),
    ("find", re.compile(r"^find\b")),
    ("cat", re.compile(r"^cat\s+[^|;&<>]+$")),
]
_QUIET = re.compile(
    r"(?:^|\s)(?:-q|-qq|--quiet|--silent|-s|--no-progress|--loglevel[= ](?:error|silent))\b"
)
_PIPED = re.compile(r"\|\s*(?:head|tail|grep|rg|wc|less|more|sed|awk|sort|uniq|cut|jq)\b")
_REDIRECTED = re.compile(r"(?<![0-9&])>\s*(?!&)\S")
_GIT_COUNT = re.compile(r"(?:^|\s)(?:-n\s*\d+|-\d+|--max-count[= ]\d+|--since[= ]|--after[= ])")
_FIND_BOUND = re.compile(r"\s-maxdepth\s+\d|\s-quit\b")
_FAILURE = re.compile(
    r"\bFAIL(?:ED|URES?)?\b|\bERROR\b|\bError\b|\berror(?:\[|:)|Traceback \(most recent|"
    r"npm ERR!|\bpanic(?:ked)?\b|^fatal:|\bfailed\b(?! to (?:fetch|resolve) optional)|"
    r"\bexception\b|\bAssertionError\b",
    re.M | re.I,
)
_COUNT_FAILED = re.compile(r"\b0 (?:failed|errors?)\b", re.I)


def _first(command: str) -> str:
    """The command's first simple command, without leading ``cd X &&`` or variable settings."""
    text = command.strip()
    text = re.sub(r"^(?:cd\s+\S+\s*&&\s*)+", "", text)
    text = re.sub(r"^(?:[A-Z_][A-Z0-9_]*=\S*\s+)+", "", text)
    return text


def skipped(command: str, patterns: list[str] | tuple[str, ...]) -> bool:
    """Whether the user marked ``command`` to be left alone (the mark, or ``[governor] skip``).

    Args:
        command: The shell command line.
        patterns: Shell-style patterns (``fnmatch``) matched against the whole command and its
            first simple command: ``"pytest tests/e2e*"``, ``"make release"``.
    """
    if MARK in command:
        return True
    first = _first(command)
    return any(
        fnmatch.fnmatchcase(command.strip(), p) or fnmatch.fnmatchcase(first, p) for p in patterns
    )


def classify(command: str, cwd: Path | None = None) -> str:
    """Return the kind of noisy command ``command`` is, or ``""`` when it is not known as one.

    Kinds: ``tests``, ``install``, ``build``, ``git log``, ``find``, ``cat`` (a file over
    :data:`CAT_BYTES`, looked up from ``cwd``).
    """
    first = _first(command)
    for kind, pattern in _KINDS:
        if pattern.search(first):
            if kind == "cat":
                return "cat" if _large_cat(first, cwd) else ""
            return kind
    return ""


def _large_cat(first: str, cwd: Path | None) -> bool:
    import os

    names = [w for w in first.split()[1:] if not w.startswith("-")]
    total = 0
    for name in names:
        path = name if cwd is None or os.path.isabs(name) else os.path.join(cwd, name)
        try:
            total += os.stat(path).st_size
        except OSError:
            continue
    return total > CAT_BYTES


def bounded(command: str, kind: str) -> bool:
    """Whether ``command`` already limits what it prints (a pipe into ``head``, a quiet flag…)."""
    if _PIPED.search(command) or _REDIRECTED.search(command):
        return True
    if kind == "git log":
        return bool(_GIT_COUNT.search(command))
    if kind == "find":
        return bool(_FIND_BOUND.search(command))
    if kind == "cat":
        return False
    return bool(_QUIET.search(command))


def suggestion(command: str, kind: str) -> str:
    """Return the note for an unbounded noisy command: what it costs and a bounded form."""
    first = _first(command).split("\n")[0][:120]
    forms = {
        "tests": f"`{first} -q` (pytest: `-q --tb=short`; others: their quiet flag), or "
        f"`set -o pipefail; {first} 2>&1 | tail -n 60` (the summary and failures are at the end)",
        "install": f"`{first} --silent` (npm) / `-q` (pip, apt-get), or "
        f"`set -o pipefail; {first} 2>&1 | tail -n 30`",
        "build": f"`set -o pipefail; {first} 2>&1 | tail -n 60` (errors are at the end)",
        "git log": "`git log --oneline -n 20` (add `-- PATH` for one file's history)",
        "find": f"`{first} -maxdepth 3 | head -n 100`, or `git ls-files | grep PATTERN`",
        "cat": "a ranged read (`sed -n '1,200p' FILE`, `head -n 200 FILE`) or `grep -n` for "
        "what you need",
    }
    return (
        f"memdir: `{first}` is a {kind} command that can print a lot, and every line of its "
        f"output enters your context. Prefer a bounded form: {forms[kind]}. Add `{MARK}` to a "
        "command to keep its whole output."
    )


def failed_text(text: str) -> bool:
    """Whether output text reports a failure (a failing test, an error) that must stay whole."""
    cleaned = _COUNT_FAILED.sub("", text)
    return bool(_FAILURE.search(cleaned))


def shape(text: str, *, min_tokens: int, head: int, tail: int, saved: str = "") -> str | None:
    """Return ``text`` cut to its first ``head`` and last ``tail`` lines, or ``None`` to keep it.

    Args:
        text: A successful command's output.
        min_tokens: Output at or under this many tokens (ceil(UTF-8 bytes / 4)) is kept whole.
        head: Lines kept from the start.
        tail: Lines kept from the end.
        saved: Where the whole output was saved (named in the marker line), or ``""``.

    Returns:
        The shortened output with one marker line where lines were left out, or ``None`` when
        the output is small enough, or would not get shorter.
    """
    if -(-len(text.encode("utf-8")) // 4) <= min_tokens:
        return None
    lines = text.splitlines()
    if len(lines) <= head + tail + 1:
        return None
    left = len(lines) - head - tail
    where = f"; the whole output is in {saved}" if saved else ""
    marker = f"[memdir: {left} lines left out here (the command succeeded){where}]"
    return "\n".join([*lines[:head], marker, *lines[-tail:]]) + "\n"


def save_output(store: Path, text: str) -> str:
    """Save a command's whole output (redacted) under ``state/outputs/``; return its path.

    Keeps the newest :data:`OUTPUTS_KEPT` files; ``""`` when it cannot be written.
    """
    import os
    import time

    from memdir.kernel.lang.redact import redact

    folder = layout(store).state_path(OUTPUTS)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}.txt"
        path.write_text(redact(text), encoding="utf-8")
        kept = sorted(folder.glob("*.txt"), key=lambda p: p.stat().st_mtime)
        for old in kept[:-OUTPUTS_KEPT]:
            old.unlink(missing_ok=True)
    except OSError:
        return ""
    return str(path)


def output_text(response: Any) -> str:
    """Return the text a shell tool's response carries (stdout and stderr; Codex's string)."""
    if isinstance(response, str):
        return response
    if isinstance(response, dict):
        parts = [response.get(k) for k in ("stdout", "stderr", "output", "llmContent")]
        return "\n".join(p for p in parts if isinstance(p, str) and p)
    return ""
