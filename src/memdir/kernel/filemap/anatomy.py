"""Anatomy: the project's file map (path, size, token estimate, description, symbols, hash).

``anatomy.json`` in the store is the source of truth; ``anatomy.md`` is rendered from it
(DESIGN §2). A scan lists the project's files with ``git ls-files`` (so ``.gitignore`` is
respected) or, outside git, a walk; either way it never enters virtualenvs, dependency,
vendored, build or cache trees whatever the user's own excludes say (case B26), never follows
a symlink out of the project or into a loop (case B27), and never lists a secret file
(``.env*``, keys, keystores, credentials, DESIGN §10.5). Descriptions are redacted before they
are stored, and symbol names that are secrets are left out. Files over
:data:`MAX_DESCRIBE_BYTES`, and hard-linked files (whose other names may lie outside the
project), are listed but not read.

An ``anatomy.json`` that cannot be read is never overwritten: the scan that replaces it first
keeps it as ``anatomy.json.unreadable-<time>``, and hooks leave it alone.

Imports: standard library only.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import time
from collections.abc import Callable, Iterable
from pathlib import Path, PurePosixPath

from memdir.kernel.base.atomic import write_atomic, write_text_atomic
from memdir.kernel.base.clock import now_iso
from memdir.kernel.base.errors import MemdirError
from memdir.kernel.lang.redact import find_secrets, is_secret_path, redact
from memdir.kernel.lang.text import truncate

TYPE_CHECKING = False  # the Edit hook never imports typing (start-up cost)
if TYPE_CHECKING:
    from typing import Any

ANATOMY_JSON = "anatomy.json"
ANATOMY_MD = "anatomy.md"
FORMAT = 1
MAX_FILES = 20_000
"""Most files listed; the rest are counted as skipped ("cap"), never silently dropped."""
MAX_DESCRIBE_BYTES = 512 * 1024
"""Files larger than this are listed by size only: descriptions and symbols are not read."""
DESCRIPTION_CHARS = 120
MAX_SYMBOLS = 24

EXCLUDED_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        ".memdir",
        ".wolf",
        "node_modules",
        "bower_components",
        ".venv",
        "venv",
        "env",
        ".env",
        "site-packages",
        "dist-packages",
        "__pycache__",
        ".tox",
        ".nox",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".hypothesis",
        ".cache",
        ".gradle",
        ".idea",
        ".next",
        ".nuxt",
        ".svelte-kit",
        ".turbo",
        ".parcel-cache",
        "target",
        "dist",
        "build",
        "out",
        "coverage",
        "htmlcov",
        "vendor",
        "third_party",
        "Pods",
        ".terraform",
        ".direnv",
        ".eggs",
        "elm-stuff",
        ".bundle",
        ".stack-work",
        "_build",
        "deps",
    }
)
"""Folders never entered: environments, dependencies, vendored code, builds and caches (B26)."""

GENERATED = re.compile(r"(?:\.min\.(?:js|css)|\.map|\.lock|-lock\.json|\.pyc|\.pyo|\.so|\.o|\.a)$")
_BINARY_SNIFF_BYTES = 8192


class Entry:
    """One file of the map (a plain class: the Edit hook imports this module, issue 16)."""

    __slots__ = ("description", "imports", "mtime_ns", "path", "sha", "size", "symbols", "tokens")

    def __init__(
        self,
        path: str,
        size: int,
        tokens: int,
        mtime_ns: int,
        sha: str = "",
        description: str = "",
        symbols: list[str] | None = None,
        imports: list[str] | None = None,
    ) -> None:
        self.path = path  # relative to the project root, "/"-separated
        self.size = size  # bytes
        self.tokens = tokens  # ceil(size / 4)
        self.mtime_ns = mtime_ns
        self.sha = sha  # first 16 hex of SHA-256; "" when not read
        self.description = description
        self.symbols = symbols if symbols is not None else []
        self.imports = imports if imports is not None else []  # project files this one imports

    def to_json(self) -> dict[str, Any]:
        """Return the entry as stored in ``anatomy.json``."""
        return {
            "size": self.size,
            "tokens": self.tokens,
            "mtime_ns": self.mtime_ns,
            "sha": self.sha,
            "description": self.description,
            "symbols": self.symbols,
            "imports": self.imports,
        }


class Scan:
    """The outcome of a scan: the entries and what was skipped, by reason."""

    __slots__ = ("entries", "not_utf8", "seconds", "skipped")

    def __init__(
        self,
        entries: dict[str, Entry],
        skipped: dict[str, int],
        seconds: float,
        not_utf8: list[str] | None = None,
    ) -> None:
        self.entries = entries
        self.skipped = skipped
        self.seconds = seconds
        self.not_utf8 = not_utf8 if not_utf8 is not None else []  # names from shown_name()

    def to_json(self) -> dict[str, Any]:
        """Return a summary for ``memdir scan --json``."""
        return {
            "files": len(self.entries),
            "skipped": dict(sorted(self.skipped.items())),
            "not_utf8": list(self.not_utf8),
            "seconds": round(self.seconds, 3),
        }


class AnatomyUnreadableError(MemdirError):
    """``anatomy.json`` exists but cannot be read; it is left as it is."""

    code = "anatomy_unreadable"


# --- listing ---------------------------------------------------------------------------------


def _excluded(parts: Iterable[str]) -> bool:
    return any(part in EXCLUDED_DIRS or part.endswith(".egg-info") for part in parts)


def _git_files(root: Path) -> list[str] | None:
    import subprocess  # only a full scan lists files (the Edit hook never does)

    try:
        done = subprocess.run(
            [
                "git",
                "-C",
                str(root),
                "ls-files",
                "-z",
                "--cached",
                "--others",
                "--exclude-standard",
            ],
            capture_output=True,
            check=False,
            timeout=30,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0:
        return None
    # Names are bytes: one that is not UTF-8 keeps its bytes (as surrogates), never a "?".
    return [p for p in done.stdout.decode("utf-8", "surrogateescape").split("\0") if p]


def _walk_files(root: Path, skipped: dict[str, int]) -> list[str]:
    found: list[str] = []
    for folder, dirs, files in os.walk(root, followlinks=False):
        kept = []
        for name in dirs:
            if name in EXCLUDED_DIRS or name.endswith(".egg-info"):
                skipped["excluded folder"] = skipped.get("excluded folder", 0) + 1
            elif (Path(folder) / name / "pyvenv.cfg").exists():
                skipped["virtualenv"] = skipped.get("virtualenv", 0) + 1
            else:
                kept.append(name)
        dirs[:] = kept
        rel = Path(folder).relative_to(root)
        found += [(rel / name).as_posix() for name in files]
    return found


def shown_name(rel: str) -> str:
    """Return a file name for display: each byte that is not UTF-8 as a backslash-x escape."""
    return rel.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def list_files(root: Path, skipped: dict[str, int], not_utf8: list[str] | None = None) -> list[str]:
    """Return the project files to map, relative and sorted, counting what was left out.

    Args:
        root: The project root.
        skipped: Counts by reason, added to.
        not_utf8: Gets the name (see :func:`shown_name`) of each file whose name is not UTF-8:
            such a file cannot be named in the map's JSON, so it is reported, never dropped
            unnamed.
    """
    listed = _git_files(root)
    if listed is None:
        listed = _walk_files(root, skipped)
    out = []
    resolved_root = root.resolve()
    for rel in sorted(set(listed)):
        parts = PurePosixPath(rel).parts
        reason = None
        if not _is_utf8(rel):
            reason = "name not UTF-8"
            if not_utf8 is not None:
                not_utf8.append(shown_name(rel))
        elif _excluded(parts[:-1]):
            reason = "excluded folder"
        elif is_secret_path(rel):
            reason = "secret file"
        elif GENERATED.search(rel):
            reason = "generated or binary"
        else:
            path = root / rel
            if path.is_symlink():
                try:
                    target = path.resolve(strict=True)
                except (OSError, RuntimeError):
                    reason = "broken or looping symlink"
                else:
                    if not target.is_relative_to(resolved_root):
                        reason = "symlink out of the project"
                    elif target.is_dir():
                        reason = "symlinked folder"
        if reason:
            skipped[reason] = skipped.get(reason, 0) + 1
            continue
        out.append(rel)
    return out


def _is_utf8(name: str) -> bool:
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


# --- describing ------------------------------------------------------------------------------

_PY_DOC = re.compile(
    r'^\s*(?:#![^\n]*\n)?(?:#[^\n]*\n|\s)*[rubRUB]*("""|\'\'\')\s*(.+?)\s*(?:\1|\n)', re.S
)
_COMMENT = re.compile(r"^\s*(?://+|#+|/\*+|\*(?=\s)|--|;+)\s*(.+?)\s*(?:\*/)?$")
_HEADING = re.compile(r"^\s*#{1,6}\s+(.+?)\s*$")
_SYMBOLS = [
    re.compile(r"^(?:async\s+)?def\s+([A-Za-z_]\w*)|^class\s+([A-Za-z_]\w*)", re.M),  # Python
    re.compile(
        r"^\s*(?:export\s+)?(?:default\s+)?(?:async\s+)?(?:function\*?|class|interface|type|enum)"
        r"\s+([A-Za-z_$][\w$]*)|^\s*export\s+(?:const|let|var)\s+([A-Za-z_$][\w$]*)",
        re.M,
    ),  # JavaScript / TypeScript
    re.compile(r"^func\s+(?:\([^)]*\)\s*)?([A-Za-z_]\w*)|^type\s+([A-Za-z_]\w*)", re.M),  # Go
    re.compile(r"^\s*(?:pub\s+)?(?:fn|struct|enum|trait)\s+([A-Za-z_]\w*)", re.M),  # Rust
]
_LANG_SYMBOLS = {
    ".py": 0,
    ".js": 1,
    ".jsx": 1,
    ".ts": 1,
    ".tsx": 1,
    ".mjs": 1,
    ".cjs": 1,
    ".go": 2,
    ".rs": 3,
}
_PY_IMPORT = re.compile(
    r"^[ \t]*(?:from[ \t]+(\.*[\w.]*)[ \t]+import[ \t]+\(?[ \t]*([\w \t,]+)|import[ \t]+([\w.]+))",
    re.M,
)
_JS_IMPORT = re.compile(
    r"""(?:import\s[^'"]*?from\s*|import\s*\(?\s*|require\s*\(\s*)['"]([^'"]+)['"]"""
)


def _describe(rel: str, text: str) -> str:
    suffix = PurePosixPath(rel).suffix.lower()
    found = ""
    if suffix == ".py":
        match = _PY_DOC.match(text)
        if match:
            found = match.group(2)
    if not found and suffix in {".md", ".markdown", ".rst", ".txt"}:
        for line in text.splitlines()[:40]:
            heading = _HEADING.match(line)
            if heading:
                found = heading.group(1)
                break
    if not found:
        for line in text.splitlines()[:15]:
            match = _COMMENT.match(line)
            if match and not line.lstrip().startswith("#!") and len(match.group(1)) > 3:
                found = match.group(1)
                break
    return truncate(redact(" ".join(found.split())), DESCRIPTION_CHARS)


def _symbols(rel: str, text: str) -> list[str]:
    which = _LANG_SYMBOLS.get(PurePosixPath(rel).suffix.lower())
    if which is None:
        return []
    names: list[str] = []
    for match in _SYMBOLS[which].finditer(text):
        name = next((g for g in match.groups() if g), None)
        if name and name not in names and not find_secrets(name):  # AKIA… is an identifier
            names.append(name)
        if len(names) >= MAX_SYMBOLS:
            break
    return names


def _raw_imports(rel: str, text: str) -> list[str]:
    suffix = PurePosixPath(rel).suffix.lower()
    if suffix == ".py":
        found: list[str] = []
        for match in _PY_IMPORT.finditer(text):
            if match.group(3):
                found.append(match.group(3))
                continue
            base = match.group(1)
            joiner = "" if base.endswith(".") else "."
            names = [n for n in re.split(r"[ \t,]+", match.group(2)) if n and n != "as"]

            # "from pkg import core" names the module pkg/core.py when it exists, else pkg.
            found += [f"{base}{joiner}{name}|{base}" for name in names[:8]]
        return found

    if suffix in {".js", ".jsx", ".ts", ".tsx", ".mjs", ".cjs", ".vue", ".svelte"}:
        return [m.group(1) for m in _JS_IMPORT.finditer(text)]
    return []


def _resolve_import(rel: str, name: str, known: set[str]) -> str | None:
    if "|" in name:  # a "from X import a" pair: the submodule X.a, else the module X
        for option in name.split("|"):
            found = _resolve_import(rel, option, known)
            if found:
                return found
        return None
    here = PurePosixPath(rel).parent

    suffix = PurePosixPath(rel).suffix.lower()
    candidates: list[str] = []
    if suffix == ".py":
        dots = len(name) - len(name.lstrip("."))
        module = name.lstrip(".").replace(".", "/")
        bases = [here]
        for _ in range(max(dots - 1, 0)):
            bases = [bases[0].parent]
        if dots == 0:
            bases = [PurePosixPath(""), PurePosixPath("src"), here]
        for base in bases:
            stem = (base / module).as_posix() if module else base.as_posix()
            candidates += [f"{stem}.py", f"{stem}/__init__.py"]
    elif name.startswith("."):
        stem = os.path.normpath((here / name).as_posix())
        candidates += [stem] + [f"{stem}{ext}" for ext in (".ts", ".tsx", ".js", ".jsx", ".mjs")]
        candidates += [f"{stem}/index{ext}" for ext in (".ts", ".tsx", ".js", ".jsx")]
    for candidate in candidates:
        clean = candidate.lstrip("./") if candidate.startswith("./") else candidate
        if clean in known and clean != rel:
            return clean
    return None


def read_entry(root: Path, rel: str) -> Entry | None:
    """Describe one project file, or return ``None`` when it is gone or not a regular file."""
    path = root / rel
    try:
        stat = path.stat()
    except OSError:
        return None
    if not os.path.isfile(path):
        return None
    entry = Entry(rel, stat.st_size, -(-stat.st_size // 4), stat.st_mtime_ns)

    if stat.st_size > MAX_DESCRIBE_BYTES or stat.st_nlink > 1:
        # A hard link is a second name for a file whose other names may lie outside the
        # project; memdir cannot tell, so it lists the file by size and never reads it.
        return entry
    try:
        data = path.read_bytes()
    except OSError:
        return entry
    entry.sha = hashlib.sha256(data).hexdigest()[:16]
    if b"\0" in data[:_BINARY_SNIFF_BYTES]:
        return entry
    text = data.decode("utf-8", "replace")
    entry.description = _describe(rel, text)
    entry.symbols = _symbols(rel, text)
    entry.imports = _raw_imports(rel, text)  # resolved against the whole map afterwards
    return entry


def resolve_entry(data: dict[str, Any], rel: str) -> None:
    """Resolve one stored entry's raw import names to the project files they name."""
    entry = data["files"][rel]
    known = set(data["files"])
    resolved: list[str] = []
    for name in entry.get("imports", []):
        target = name if name in known else _resolve_import(rel, name, known)
        if target and target != rel and target not in resolved:
            resolved.append(target)
    entry["imports"] = resolved


def _resolve_all(entries: dict[str, Entry]) -> None:

    known = set(entries)
    for rel, entry in entries.items():
        resolved = []
        for name in entry.imports:
            target = _resolve_import(rel, name, known) if name not in known else name
            if target and target not in resolved:
                resolved.append(target)
        entry.imports = resolved


def scan(root: Path, *, max_files: int = MAX_FILES) -> Scan:
    """Map the project at ``root``; see the module docstring for what is left out."""
    started = time.monotonic()
    skipped: dict[str, int] = {}
    not_utf8: list[str] = []
    files = list_files(root, skipped, not_utf8)
    if len(files) > max_files:
        skipped["over the file cap"] = len(files) - max_files
        files = files[:max_files]
    entries: dict[str, Entry] = {}
    for rel in files:
        entry = read_entry(root, rel)
        if entry is not None:
            entries[rel] = entry
        else:
            skipped["unreadable"] = skipped.get("unreadable", 0) + 1
    _resolve_all(entries)
    return Scan(entries, skipped, time.monotonic() - started, not_utf8)


# --- storing ---------------------------------------------------------------------------------


def load(store: Path) -> dict[str, Any]:
    """Read ``anatomy.json``: ``{"files": {path: entry}}``; an empty map when there is none.

    Raises:
        AnatomyUnreadableError: the file exists but is not a readable anatomy.
    """
    path = store / ANATOMY_JSON
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {"format": FORMAT, "files": {}}
    except (OSError, ValueError, RecursionError) as exc:
        raise AnatomyUnreadableError(
            f"{path} cannot be read ({exc}); it was left as it is. `memdir scan` keeps a copy "
            "and rebuilds it"
        ) from exc
    if not isinstance(data, dict) or not isinstance(data.get("files"), dict):
        raise AnatomyUnreadableError(f"{path} is not an anatomy map; it was left as it is")
    return data


def save(store: Path, data: dict[str, Any]) -> None:
    """Write ``anatomy.json`` atomically (one file per line) and re-render ``anatomy.md``."""
    data["format"] = FORMAT
    data["updated_at"] = now_iso()
    write_atomic(store / ANATOMY_JSON, encode(data))
    write_text_atomic(store / ANATOMY_MD, render_markdown(data))


_FILES_OPEN = b', "files": {'
_FOOTER = b"}}"


def encode(data: dict[str, Any]) -> bytes:
    """Return ``anatomy.json``'s bytes: a JSON object with one mapped file per line.

    The first line holds every other key and opens ``"files"``, each following line is one
    ``"path": {entry}``, the last closes both objects. Any JSON reader reads it; a hook updates
    one file's line without parsing the rest (:func:`update`).
    """
    meta = {k: v for k, v in data.items() if k != "files"}
    head = json.dumps(meta, ensure_ascii=False, sort_keys=True).encode("utf-8")[:-1]
    lines = [(head + _FILES_OPEN) if meta else b'{"files": {']
    files = data["files"]
    body = [_entry_line(rel, files[rel]) for rel in sorted(files)]
    return (
        b"\n".join([*lines, b",\n".join(body), _FOOTER]) + b"\n"
        if body
        else (b"\n".join([*lines, _FOOTER]) + b"\n")
    )


def _entry_line(rel: str, entry: dict[str, Any]) -> bytes:
    key = json.dumps(rel, ensure_ascii=False)
    return f"{key}: {json.dumps(entry, ensure_ascii=False, sort_keys=True)}".encode()


class _Keys:
    """The paths a map's body names, answered by searching its bytes (no parse of 5,000 lines)."""

    def __init__(self, blob: bytes, extra: set[str]) -> None:
        self.blob = blob
        self.extra = extra

    def __contains__(self, rel: object) -> bool:
        if not isinstance(rel, str):
            return False
        return rel in self.extra or _key_bytes(rel) in self.blob


def _key_bytes(rel: str) -> bytes:
    """How a body line of :func:`encode` starts, after the newline before it."""
    return b"\n" + json.dumps(rel, ensure_ascii=False).encode("utf-8", "surrogateescape") + b": "


def update(store: Path, root: Path, rels: Iterable[str]) -> None:
    """Re-describe the project files ``rels`` in ``anatomy.json`` and ``anatomy.md``.

    A file that is gone leaves the map. The caller holds the store lock. Only the lines of the
    named files are rewritten when the map is in :func:`encode`'s layout, by searching and
    splicing its bytes (a map of any size costs about the same); otherwise the map is read and
    written whole, once, into that layout. Both files are derived data (``memdir scan``
    rebuilds them), so they are replaced atomically but not flushed to disk.

    Raises:
        AnatomyUnreadableError: ``anatomy.json`` exists but is not a readable anatomy.
    """
    wanted = list(dict.fromkeys(rels))
    path = store / ANATOMY_JSON
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raw = b""
    except OSError as exc:
        raise AnatomyUnreadableError(
            f"{path} cannot be read ({exc}); it was left as it is"
        ) from exc
    cut = raw.find(b"\n")
    head = raw[:cut]
    if (
        cut < 0
        or not raw.endswith(b"\n" + _FOOTER + b"\n")
        or not head.endswith((_FILES_OPEN, b'{"files": {'))
    ):
        _update_whole(store, root, wanted)
        return
    entries = {rel: read_entry(root, rel) for rel in wanted}
    known = _Keys(raw, {rel for rel, entry in entries.items() if entry is not None})
    md_lines: dict[str, str | None] = {}
    splices: list[tuple[int, int, bytes]] = []  # (start, end, new bytes) of raw, in any order
    added: list[bytes] = []
    for rel, entry in entries.items():
        at = raw.find(_key_bytes(rel))  # the newline before the file's line
        stop = raw.find(b"\n", at + 1)  # the newline after it
        comma = b"," if at >= 0 and raw[stop - 1 : stop] == b"," else b""
        if entry is None:
            if at >= 0:
                splices.append((at + 1, stop + 1, b""))  # the line and the newline after it
                md_lines[rel] = None
            continue
        stored = entry.to_json()
        stored["imports"] = _resolved(rel, stored["imports"], known)  # type: ignore[arg-type]
        line = _entry_line(rel, stored)
        md_lines[rel] = _md_line(rel, stored)
        if at >= 0:
            splices.append((at + 1, stop, line + comma))
        else:
            added.append(line)
    try:
        meta = json.loads(head[: -len(_FILES_OPEN)] + b"}") if head.endswith(_FILES_OPEN) else {}
    except ValueError:
        _update_whole(store, root, wanted)
        return
    meta["format"] = FORMAT
    meta["updated_at"] = now_iso()
    head = json.dumps(meta, ensure_ascii=False, sort_keys=True).encode("utf-8")[:-1] + _FILES_OPEN
    pieces = [head, b"\n", *(line + b",\n" for line in added)]
    done = cut + 1
    for begin, finish, replacement in sorted(splices):
        pieces += [raw[done:begin], replacement]
        done = finish
    pieces.append(raw[done:])
    out = b"".join(pieces)
    # a removed last line, or lines added to an empty map, leave one comma too many
    tail = b",\n" + _FOOTER + b"\n"
    if out.endswith(tail):
        out = out[: -len(tail)] + b"\n" + _FOOTER + b"\n"
    write_atomic(path, out, durable=False)
    _patch_markdown(store, md_lines, lambda: json.loads(out))


def _update_whole(store: Path, root: Path, rels: list[str]) -> None:
    """:func:`update` the slow way: read the whole map, change it, write it whole."""
    data = load(store)
    for rel in rels:
        entry = read_entry(root, rel)
        if entry is None:
            data["files"].pop(rel, None)
        else:
            data["files"][rel] = entry.to_json()
            resolve_entry(data, rel)
    save(store, data)


def _resolved(rel: str, names: list[str], known: set[str]) -> list[str]:
    resolved: list[str] = []
    for name in names:
        target = name if name in known else _resolve_import(rel, name, known)
        if target and target != rel and target not in resolved:
            resolved.append(target)
    return resolved


def _md_line(rel: str, entry: dict[str, Any]) -> str:
    """Return the line ``anatomy.md`` shows for one file (see :func:`render_markdown`)."""
    desc = f" — {entry['description']}" if entry.get("description") else ""
    return f"- `{PurePosixPath(rel).name}` (~{entry.get('tokens', 0)} tok){desc}"


def _md_heading(rel: str) -> str:
    parent = str(PurePosixPath(rel).parent)
    return f"## {'/' if parent == '.' else parent + '/'}"


def _patch_markdown(
    store: Path, changes: dict[str, str | None], whole: Callable[[], dict[str, Any]]
) -> None:
    """Rewrite the ``anatomy.md`` lines of changed files; render it whole when that is unsure.

    ``changes`` maps a path to its new line (``None``: the file left the map). A line is
    replaced in place, a new one is put in order in its folder's section when the folder has
    exactly one section; anything else (a new folder, a folder left empty) renders it whole.
    """
    path = store / ANATOMY_MD
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        text = ""
    for rel, line in changes.items():
        patched = _patch_md_line(text, rel, line) if text else None
        if patched is None:
            write_text_atomic(path, render_markdown(whole()), durable=False)
            return
        text = patched
    write_text_atomic(path, text, durable=False)


def _patch_md_line(text: str, rel: str, line: str | None) -> str | None:
    """Return ``anatomy.md`` with one file's line changed, or ``None`` when unsure."""
    if "\n" in rel or "`" in rel:
        return None
    heading = "\n" + _md_heading(rel) + "\n"
    at = text.find(heading)
    if at < 0 or text.find(heading, at + 1) >= 0:
        return None  # a new folder, or one whose files sit in two sections
    start = at + len(heading)
    end = start
    while text.startswith("- ", end):
        end = text.find("\n", end) + 1
        if end == 0:
            return None
    section = text[start:end].split("\n")[:-1]
    name = PurePosixPath(rel).name
    prefix = f"- `{name}` (~"
    found = next((n for n, item in enumerate(section) if item.startswith(prefix)), None)
    if found is not None:
        if line is None:
            if len(section) == 1:
                return None  # the folder's last file: its heading goes too
            del section[found]
        else:
            section[found] = line
    elif line is not None:
        position = 0
        while position < len(section) and section[position][3:].split("`", 1)[0] < name:
            position += 1
        section.insert(position, line)
    return text[:start] + "".join(item + "\n" for item in section) + text[end:]


def keep_unreadable(store: Path) -> Path | None:
    """Move an unreadable ``anatomy.json`` aside (never delete it); return where it went."""
    path = store / ANATOMY_JSON
    if not path.exists():
        return None
    try:
        load(store)
    except AnatomyUnreadableError:
        target = store / f"{ANATOMY_JSON}.unreadable-{int(time.time())}"
        os.replace(path, target)
        return target
    return None


def render_markdown(data: dict[str, Any]) -> str:
    """Return ``anatomy.md``: one line per file, grouped by folder."""
    lines = ["# Project anatomy", "", "Generated by memdir from anatomy.json; do not edit.", ""]
    folder = None
    for rel in sorted(data["files"]):
        entry = data["files"][rel]
        heading = _md_heading(rel)
        if heading != folder:
            folder = heading
            lines += ["", heading]
        lines.append(_md_line(rel, entry))
    return "\n".join(lines) + "\n"
