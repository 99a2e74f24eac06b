"""Read an OpenWolf ``.wolf/`` folder into memdir records and evidence.

What is read (formats as OpenWolf 2.5 writes them; facts only, no OpenWolf code or text):

- ``cerebrum.md``: Markdown with ``## User Preferences`` (→ ``preference``), ``## Key
  Learnings`` (→ ``fact``), ``## Do-Not-Repeat`` (→ ``rule``) and ``## Decision Log`` (→
  ``decision``). Each bullet (``-``, ``*``, ``+``, ``1.`` or a line starting ``[``) is one
  belief; indented lines continue it; a ``###`` heading inside a section starts an entry whose
  following lines are its body. A leading ``[YYYY-MM-DD]`` becomes the observed date. HTML
  comments (the template's hints) are ignored; bullets under other headings are reported as
  skipped. Read line by line, so a huge file is never held whole.
- ``buglog.json``: ``{"version", "bugs": [...]}`` or a bare array (OpenWolf accepts both).
  Each entry (``id``, ``timestamp``, ``error_message``, ``file``/``files``, ``root_cause``,
  ``fix``, ``tags``, ``related_bugs``, ``occurrences``, ``last_seen``) becomes a ``bug``
  record; secrets in it are masked, as memdir's own bug log masks them.
- ``memory.md``: ``## Session: YYYY-MM-DD HH:MM`` headings over table rows ``| time | action
  | files | outcome | ~tokens |`` (hook rows have four cells). Each row becomes an action-log
  row (evidence, never a belief). ``> Consolidated session (N actions)`` lines are reported:
  OpenWolf already deleted those rows.
- ``anatomy.md``: ``## dir/`` headings over ``- `name` — description (~N tok)`` lines. Each
  file that still exists in the project joins memdir's file map.

Everything else in ``.wolf/`` (config, token ledger, STATUS.md, hooks state) is not memory and
is not read.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from memdir.importers.pipeline import (
    Item,
    belief_key,
    make_record,
    observed_date,
    skip,
    stable_id,
)
from memdir.kernel.base.errors import UsageError
from memdir.kernel.lang.redact import redact
from memdir.kernel.lang.text import truncate

FORMAT = "openwolf"
SECTIONS: dict[str, str] = {
    "userpreferences": "preference",
    "preferences": "preference",
    "keylearnings": "fact",
    "learnings": "fact",
    "donotrepeat": "rule",
    "decisionlog": "decision",
    "decisions": "decision",
}
"""Section heading, lower case with only letters kept → memdir kind."""
_BULLET = re.compile(r"^(?:[-*+]|\d+[.)])\s+(.*)$")
_DATED = re.compile(r"^\*{0,2}\[?(\d{4}-\d{2}-\d{2})\]?\*{0,2}\s*(?:[:—–-]\s*)?(.*)$")
_BRACKET = re.compile(r"^(\[.*)$")
_ROW_CELLS = re.compile(r"^\|(.*)\|\s*$")
_SESSION = re.compile(r"^##\s+Session:\s*(\d{4}-\d{2}-\d{2})(?:\s+(\d{1,2}:\d{2}))?")
_ANATOMY_LINE = re.compile(
    r"^[-*]\s+`([^`]+)`(?:\s+[—–-]\s+(.*?))?\s*(?:\(~[\d.,]+k?\s*tok\))?\s*$"
)


def _wolf_dir(path: Path) -> Path:
    if path.is_dir() and path.name != ".wolf" and (path / ".wolf").is_dir():
        path = path / ".wolf"
    if not path.is_dir() or not any(
        (path / name).exists() for name in ("cerebrum.md", "buglog.json", "memory.md", "anatomy.md")
    ):
        raise UsageError(
            f"{path} is not an OpenWolf folder (no cerebrum.md, buglog.json, memory.md "
            "or anatomy.md)"
        )
    return path


def read(path: Path, *, scope: str = "project") -> Iterator[Item]:
    """Yield the items of the OpenWolf folder at ``path`` (``.wolf/`` or the project holding it).

    Raises:
        UsageError: ``path`` holds none of OpenWolf's files.
    """
    wolf = _wolf_dir(path)
    if (wolf / "cerebrum.md").is_file():
        yield from read_cerebrum(wolf / "cerebrum.md", scope=scope)
    if (wolf / "buglog.json").is_file():
        yield from read_buglog(wolf / "buglog.json", scope=scope)
    if (wolf / "memory.md").is_file():
        yield from read_memory(wolf / "memory.md")
    if (wolf / "anatomy.md").is_file():
        yield from read_anatomy(wolf / "anatomy.md")


def _section_kind(heading: str) -> str | None:
    key = re.sub(r"[^a-z]", "", heading.lower())
    return SECTIONS.get(key)


def _entry(kind: str, text: str, body: str, line: int, file: str, scope: str) -> Item:
    place = f"{file}:{line}"
    match = _DATED.match(text)
    observed = None
    if match and observed_date(match.group(1)):
        observed, text = match.group(1), match.group(2)
    record = make_record(
        fmt=FORMAT,
        kind=kind,
        text=text,
        key=belief_key(FORMAT, kind, text),
        file=file,
        place={"line": line},
        observed_at=observed,
        body=body,
        scope=scope,
    )
    return Item(place, record) if record else skip(place, "empty entry")


def read_cerebrum(  # noqa: C901 - a streamed line reader: one branch per cerebrum construct
    path: Path, *, scope: str = "project", file: str = "cerebrum.md"
) -> Iterator[Item]:
    """Yield one item per cerebrum entry (see the module docstring), streamed line by line."""
    kind: str | None = None
    section = ""
    current: list[Any] | None = None  # [line, text, body lines]
    in_comment = False

    def flush() -> Iterator[Item]:
        nonlocal current
        if current is not None and kind is not None:
            yield _entry(kind, current[1], "\n".join(current[2]), current[0], file, scope)
        current = None

    with path.open(encoding="utf-8", errors="replace") as fh:
        for number, raw in enumerate(fh, 1):
            line = raw.rstrip("\n").rstrip("\r").lstrip("\ufeff")
            if in_comment:
                if "-->" in line:
                    in_comment = False
                    line = line.split("-->", 1)[1]
                else:
                    continue
            line = re.sub(r"<!--.*?-->", "", line)
            if "<!--" in line:
                line, in_comment = line.split("<!--", 1)[0], True
            stripped = line.strip()
            if line.startswith(("## ", "# ")):
                yield from flush()
                section = line.lstrip("#").strip()
                kind = _section_kind(section) if line.startswith("## ") else None
                continue
            if not stripped or stripped.startswith(">") or stripped == "---":
                continue
            if line.startswith("###"):
                yield from flush()
                if kind is None:
                    continue
                current = [number, line.lstrip("#").strip(), []]
                continue
            bullet = _BULLET.match(line) or (
                re.match(r"^(\[.*)$", line) if line[:1] == "[" else None
            )
            if bullet:
                yield from flush()
                if kind is None:
                    if section:
                        yield skip(f"{file}:{number}", f"section {section!r} is not mapped")
                    continue
                current = [number, bullet.group(1).strip(), []]
                continue
            if current is not None:
                if current[2] or not line[:1].isspace():
                    current[2].append(stripped)  # a heading entry's body, or prose after it
                else:
                    current[1] += " " + stripped  # an indented continuation of the bullet
            elif kind is not None:
                yield skip(f"{file}:{number}", "text outside a bullet")
        yield from flush()


def _bugs(data: Any) -> list[Any] | None:
    if isinstance(data, list):
        return data
    if isinstance(data, dict) and isinstance(data.get("bugs"), list):
        return list(data["bugs"])
    return None


def read_buglog(path: Path, *, scope: str = "project", file: str = "buglog.json") -> Iterator[Item]:
    """Yield one ``bug`` item per entry of ``buglog.json`` (an object or a bare array)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8", errors="replace") or "[]")
    except ValueError:
        yield skip(file, "not JSON")
        return
    bugs = _bugs(data)
    if bugs is None:
        yield skip(file, "neither a list of bugs nor an object with a bugs list")
        return
    ids: dict[str, str] = {}
    for bug in bugs:
        if isinstance(bug, dict) and bug.get("id"):
            ids[str(bug["id"])] = stable_id(
                "bug", f"{FORMAT}\nbug\n{bug['id']}", str(bug.get("timestamp") or "")
            )
    for number, bug in enumerate(bugs):
        place = f"{file}#{number}"
        if not isinstance(bug, dict):
            yield skip(place, "a bug entry that is not an object")
            continue
        error = bug.get("error_message") or bug.get("error") or bug.get("message")
        if not isinstance(error, str) or not error.strip():
            yield skip(place, "a bug entry without error_message")
            continue
        error = redact(error)
        parts = [f"Error: {error.strip()}"]
        for label, key in (("Root cause", "root_cause"), ("Fix", "fix")):
            if isinstance(bug.get(key), str) and bug[key].strip():
                parts.append(f"{label}: {redact(bug[key]).strip()}")
        files = [bug["file"]] if isinstance(bug.get("file"), str) else []
        files += [f for f in bug.get("files") or [] if isinstance(f, str)]
        files = [redact(f) for f in files]
        if files:
            parts.append("File: " + ", ".join(files))
        extra: dict[str, Any] = {
            "occurrences": _count(bug.get("occurrences")),
            "last_seen": str(bug.get("last_seen") or bug.get("timestamp") or ""),
        }
        if files:
            extra["file"] = files[0]
        bug_id = str(bug.get("id") or f"#{number}")
        tags = [t for t in bug.get("tags") or [] if isinstance(t, str)]
        record = make_record(
            fmt=FORMAT,
            kind="bug",
            text=truncate(" ".join(error.split()), 200),
            key=f"{FORMAT}\nbug\n{bug_id}",
            file=file,
            place={"key": bug_id},
            observed_at=str(bug.get("timestamp") or "") or None,
            body="\n\n".join(parts) + "\n",
            tags=[*tags, "open"],
            links=[ids[str(r)] for r in bug.get("related_bugs") or [] if str(r) in ids],
            scope=scope,
            record_id=ids.get(bug_id),
            extra=tuple((k, " " + json.dumps(v, ensure_ascii=False)) for k, v in extra.items()),
        )
        yield Item(place, record) if record else skip(place, "empty bug")


def _count(value: Any) -> int:
    try:
        return max(1, int(value))
    except (TypeError, ValueError):
        return 1


def read_memory(path: Path, *, file: str = "memory.md") -> Iterator[Item]:
    """Yield one action-log item per row of ``memory.md``, streamed line by line."""
    day: str | None = None
    started = ""
    with path.open(encoding="utf-8", errors="replace") as fh:
        for number, raw in enumerate(fh, 1):
            line = raw.strip()
            place = f"{file}:{number}"
            session = _SESSION.match(line)
            if session:
                day, started = session.group(1), session.group(2) or "00:00"
                continue
            if line.startswith(">") and "consolidated" in line.lower():
                yield skip(place, "session consolidated by OpenWolf (its rows are gone)")
                continue
            cells_match = _ROW_CELLS.match(line)
            if not cells_match:
                continue
            cells = [c.strip() for c in cells_match.group(1).split("|")]
            if not cells or set(cells[0]) <= set("-: ") or cells[0].lower() == "time":
                continue
            row_day = observed_date(cells[0]) or day
            if row_day is None or len(cells) < 3:
                yield skip(place, "an action row outside a session")
                continue
            clock = cells[0] if re.fullmatch(r"\d{1,2}:\d{2}", cells[0]) else "00:00"
            hours, minutes = clock.split(":")
            action = cells[1]
            files = cells[2] if len(cells) >= 5 else ""
            outcome = cells[3] if len(cells) >= 5 else cells[2]
            row: dict[str, Any] = {
                "at": f"{row_day}T{int(hours):02d}:{minutes}:00Z",
                "session": f"openwolf-{day or row_day}-{started.replace(':', '')}",
                "tool": "openwolf",
                "summary": redact(truncate(action, 500)),
                "ok": True,
                "source": {"format": FORMAT, "file": file, "line": number},
            }
            if files and files not in ("—", "-"):
                row["paths"] = redact(truncate(files, 500))
            if outcome:
                row["outcome"] = redact(truncate(outcome, 300))
            yield Item(place, evidence={"log": "actions", "day": row_day, "row": row})


def read_anatomy(path: Path, *, file: str = "anatomy.md") -> Iterator[Item]:
    """Yield one file-map item per ``anatomy.md`` file line, streamed line by line."""
    folder = ""
    with path.open(encoding="utf-8", errors="replace") as fh:
        for number, raw in enumerate(fh, 1):
            line = raw.strip()
            if line.startswith("## "):
                folder = line[3:].strip()
                folder = "" if folder in ("./", ".") else folder.rstrip("/") + "/"
                continue
            match = _ANATOMY_LINE.match(line)
            if not match:
                continue
            rel = folder + match.group(1)
            yield Item(
                f"{file}:{number}",
                evidence={
                    "log": "anatomy",
                    "row": {"path": rel, "description": redact((match.group(2) or "").strip())},
                },
            )
