"""The Claude Code auto-memory mirror: ``memdir mirror claude``.

Claude Code 2.1.332 keeps an auto-memory folder per project,
``<config>/projects/<slug>/memory/`` (``<config>`` is ``$CLAUDE_CONFIG_DIR`` or ``~/.claude``).
The slug is the project's git root (memdir's project root, the main worktree's) with every
character outside ``[A-Za-z0-9]`` replaced by ``-``; a slug longer than 200 characters keeps
its first 200 and gets ``-`` plus the base-36 absolute value of a 32-bit string hash
(``h = h*31 + code unit``) of the path. Each memory file has front matter (``name``,
``description``, ``type``) and is recalled by Claude Code only up to its first 4096 bytes
(its prompt says: keep each memory file under 4 KB including front matter).

The mirror writes one file per kind — ``memdir_rules.md`` and ``memdir_preferences.md`` — with
the owner's active records of that kind, most relevant first (pinned, then importance, then
the newest), one line each with its id. Its front matter carries a marker
(``memdir_mirror``) and the SHA-256 of its body (``memdir_hash``): a file is memdir's only
when both are there and the hash matches, so a file someone wrote or edited is never touched.
A file is rewritten only when its bytes would change; when a kind has no active owner
records its file is unlinked, so a copy never outlives its source. What does not fit under
:data:`LIMIT_BYTES` is dropped, least relevant first, and reported.

The machine-local flag ``state/mirror-claude.json`` says mirroring is on and which ids the
mirror carries; the SessionStart digest reads it (:func:`memdir.kernel.index.digest.mirrored_ids`)
and leaves those ids out for Claude Code. Memdir's own files are refreshed after every write
through the CLI or MCP server while the flag exists; ``memdir mirror claude --off`` removes
the files and the flag. ``MEMORY.md`` (Claude Code's index) is never written.

Imports: standard library and the kernel.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memdir.kernel.base.atomic import write_text_atomic
from memdir.kernel.base.errors import MemdirError
from memdir.kernel.index.digest import MIRROR_FLAG, PINNED_TAG
from memdir.kernel.storage import gitio, paths

if TYPE_CHECKING:
    from memdir.kernel.index.interface import IndexBackend


LIMIT_BYTES = 4096
"""Claude Code recalls only the first 4096 bytes of a memory file (front matter included)."""
SLUG_MAX = 200
MARKER = "memdir_mirror"
HASH_KEY = "memdir_hash"
FILES = {"rule": "memdir_rules.md", "preference": "memdir_preferences.md"}
TITLES = {
    "rule": ("memdir rules", "Standing do-not-repeat rules the owner set in memdir"),
    "preference": ("memdir preferences", "How the owner prefers work done (from memdir)"),
}


def _java_hash(text: str) -> int:
    """Return the 32-bit string hash Claude Code uses (over UTF-16 code units)."""
    h = 0
    data = text.encode("utf-16-le")
    for i in range(0, len(data), 2):
        h = (h * 31 + int.from_bytes(data[i : i + 2], "little")) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def _base36(number: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        number, rest = divmod(number, 36)
        out = digits[rest] + out
        if number == 0:
            return out


def claude_slug(project: Path) -> str:
    """Return Claude Code's folder name for ``project`` under ``<config>/projects/``.

    Args:
        project: The project's root (absolute).

    Returns:
        The path with non-alphanumerics as ``-``; over 200 characters, cut and hashed.
    """
    text = str(project)
    # JavaScript's replace(/[^a-zA-Z0-9]/g, "-") works on UTF-16 code units.
    slug = "".join(
        c if c.isascii() and c.isalnum() else "-" * (2 if ord(c) > 0xFFFF else 1) for c in text
    )
    if len(slug) <= SLUG_MAX:
        return slug
    return f"{slug[:SLUG_MAX]}-{_base36(abs(_java_hash(text)))}"


def claude_memory_dir(project: Path, env: dict[str, str] | None = None) -> Path:
    """Return Claude Code's auto-memory folder for ``project``.

    Args:
        project: The project's root.
        env: The environment to read ``CLAUDE_CONFIG_DIR`` and ``HOME`` from (default: ours).
    """
    env = dict(os.environ) if env is None else env
    config = env.get("CLAUDE_CONFIG_DIR") or str(Path(env.get("HOME") or Path.home()) / ".claude")
    return Path(config) / "projects" / claude_slug(project.absolute()) / "memory"


@dataclass
class Mirrored:
    """What one refresh of the mirror did."""

    directory: str
    written: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    foreign: list[str] = field(default_factory=list)  # same name, not memdir's: left alone
    dropped: list[str] = field(default_factory=list)  # ids over the size limit
    ids: list[str] = field(default_factory=list)  # ids the mirror carries

    def to_json(self) -> dict[str, Any]:
        """Return the outcome as a JSON object."""
        return {
            "directory": self.directory,
            "written": self.written,
            "unchanged": self.unchanged,
            "removed": self.removed,
            "foreign": self.foreign,
            "dropped": self.dropped,
            "mirrored": len(self.ids),
        }


def _digest(body: str) -> str:
    return hashlib.sha256(body.encode("utf-8")).hexdigest()


def _split(text: str) -> tuple[dict[str, str], str] | None:
    if not text.startswith("---\n"):
        return None
    end = text.find("\n---\n", 3)
    if end < 0:
        return None
    keys = {}
    for line in text[4:end].splitlines():
        key, sep, value = line.partition(":")
        if sep:
            keys[key.strip()] = value.strip()
    return keys, text[end + 5 :]


def is_ours(path: Path) -> bool:
    """Return whether ``path`` is a mirror file memdir wrote and nobody changed since.

    Args:
        path: A file in the auto-memory folder.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return False
    parts = _split(text)
    if parts is None:
        return False
    keys, body = parts
    return MARKER in keys and keys.get(HASH_KEY) == _digest(body)


def _ranked(index: IndexBackend, kind: str) -> list[dict[str, Any]]:
    docs = [
        d for d in index.list_docs(kinds=(kind,), statuses=("active",)) if d["origin"] == "owner"
    ]
    docs.sort(key=lambda d: (str(d.get("updated_at") or ""), str(d["id"])), reverse=True)
    docs.sort(
        key=lambda d: (0 if PINNED_TAG in d.get("tags", []) else 1, -int(d.get("importance", 5)))
    )
    return docs


def _line(doc: dict[str, Any]) -> str:
    return f"- {' '.join(str(doc['text']).split())} ({doc['id']})\n"


def render(kind: str, docs: list[dict[str, Any]]) -> tuple[str, list[str], list[str]]:
    """Return the mirror file for ``kind``, the ids it carries and the ids it dropped.

    Records are kept in the order given (most relevant first) while the whole file stays
    within :data:`LIMIT_BYTES`; the rest are dropped and a last line says how many.
    """
    name, description = TITLES[kind]

    def build(lines: list[str], dropped: int) -> str:
        body = "".join(lines)
        if dropped:
            body += f"- …and {dropped} more in memdir (`memdir list --kind {kind}`).\n"
        head = (
            f"---\nname: {name}\ndescription: {description}; edit them with memdir, not here\n"
            f"type: feedback\n{MARKER}: claude/1\n{HASH_KEY}: {_digest(body)}\n---\n"
        )
        return head + body

    lines = [_line(d) for d in docs]
    keep = len(lines)
    text = build(lines, 0)
    while keep and len(text.encode("utf-8")) > LIMIT_BYTES:
        keep -= 1
        text = build(lines[:keep], len(lines) - keep)
    return text, [d["id"] for d in docs[:keep]], [d["id"] for d in docs[keep:]]


def flag_path(store: Path) -> Path:
    """Return the machine-local flag that says mirroring is on (``state/mirror-claude.json``)."""
    return paths.layout(store).state_path(MIRROR_FLAG)


def enabled(store: Path) -> bool:
    """Return whether the Claude Code mirror is on for ``store``."""
    return flag_path(store).is_file()


def refresh(index: IndexBackend, store: Path, directory: Path) -> Mirrored:
    """Bring the mirror files in ``directory`` up to date with the store; set the flag.

    Args:
        index: The store's index (up to date).
        store: The store folder (for the flag).
        directory: Claude Code's auto-memory folder for the project (created when needed).

    Returns:
        What was written, left unchanged, removed, left alone (foreign) and dropped.

    Raises:
        OSError: the folder or a file could not be written.
    """
    done = Mirrored(str(directory))
    for kind, name in FILES.items():
        path = directory / name
        docs = _ranked(index, kind)
        exists = path.exists() or path.is_symlink()
        if exists and (path.is_symlink() or not is_ours(path)):
            done.foreign.append(str(path))
            continue
        if not docs:
            if exists:
                path.unlink()
                done.removed.append(str(path))
            continue
        text, ids, dropped = render(kind, docs)
        done.ids += ids
        done.dropped += dropped
        if exists and path.read_bytes() == text.encode("utf-8"):
            done.unchanged.append(str(path))
            continue
        directory.mkdir(parents=True, exist_ok=True)
        write_text_atomic(path, text)
        done.written.append(str(path))
    _write_flag(store, directory, done.ids)
    return done


def _head(store: Path) -> str:
    try:
        return gitio.head_commit(store)
    except MemdirError:
        return ""


def _write_flag(store: Path, directory: Path, ids: list[str]) -> None:
    flag = {"directory": str(directory), "ids": ids, "head": _head(store)}
    paths.state_dir(store)
    write_text_atomic(flag_path(store), json.dumps(flag) + "\n", durable=False)


def refresh_if_changed(index: IndexBackend, store: Path) -> Mirrored | None:
    """Refresh the mirror when it is on and the store's git head moved since the last refresh.

    Cheap when nothing changed: one read of the flag and of git's ``HEAD``. Never raises:
    a mirror that cannot be written is left for the next write or ``memdir mirror claude``.

    Returns:
        What the refresh did, or ``None`` when mirroring is off or nothing changed.
    """
    try:
        flag = json.loads(flag_path(store).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(flag, dict) or not flag.get("directory"):
        return None
    if flag.get("head") and flag.get("head") == _head(store):
        return None
    try:
        return refresh(index, store, Path(str(flag["directory"])))
    except (OSError, MemdirError):
        return None


def disable(store: Path) -> Mirrored:
    """Turn the mirror off: unlink memdir's own mirror files and the flag.

    Files that are not memdir's (no marker, or edited since) are left and reported.
    """
    try:
        flag = json.loads(flag_path(store).read_text(encoding="utf-8"))
        directory = Path(str(flag["directory"]))
    except (OSError, ValueError, KeyError, TypeError):
        return Mirrored("")
    done = Mirrored(str(directory))
    for name in FILES.values():
        path = directory / name
        if path.is_symlink() or (path.exists() and not is_ours(path)):
            done.foreign.append(str(path))
        elif path.exists():
            path.unlink()
            done.removed.append(str(path))
    flag_path(store).unlink(missing_ok=True)
    return done
