"""Read a basic-memory project (a folder of Markdown notes) into candidate records.

Format (basic-memory's documented note format; facts only): each ``*.md`` file is an entity
with YAML front matter (``title``, default the file stem; ``type``, default ``note``;
``tags``; ``permalink``), free prose, observations anywhere in the file as
``- [category] content #tag (context)`` and relations as ``- relation_type [[Target]]
(context)``.

Mapping: the note becomes one ``entity`` candidate (text: its title; aliases: its permalink;
body: its prose; ``source.entity_type``: its type). Each observation becomes a candidate of
the kind its category names (``decision`` → decision, ``preference`` → preference,
``rule`` / ``constraint`` / ``requirement`` / ``gotcha`` → rule, ``procedure`` / ``howto`` /
``technique`` / ``method`` → procedure, ``bug`` / ``issue`` → bug, else fact) linked to its
note's entity, with the category and ``#tags`` as tags and the context in the body.
Relations become links from the note's entity to the target note's entity when the target is
a note of the project (by title or permalink); the relation's name and any target outside the
project are kept in the entity's body. basic-memory's SQLite index is derived from the files
and is not read.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

from memdir.importers.pipeline import (
    Item,
    as_list,
    belief_key,
    front_matter,
    make_record,
    read_text,
    skip,
    stable_id,
)
from memdir.kernel.base.errors import UsageError
from memdir.kernel.lang.text import normalized_text

FORMAT = "basic-memory"
CATEGORIES = {
    "decision": "decision",
    "preference": "preference",
    "rule": "rule",
    "constraint": "rule",
    "requirement": "rule",
    "gotcha": "rule",
    "procedure": "procedure",
    "howto": "procedure",
    "technique": "procedure",
    "method": "procedure",
    "bug": "bug",
    "issue": "bug",
}
_OBSERVATION = re.compile(r"^\s*[-*]\s+\[([^\]\[]+)\]\s+(.+?)\s*$")
_RELATION = re.compile(r"^\s*[-*]\s+([\w-]+)\s+\[\[([^\]]+)\]\]\s*(?:\((.*)\))?\s*$")
_CONTEXT = re.compile(r"\s*\(([^()]*)\)\s*$")
_HASHTAG = re.compile(r"(?:^|\s)#([\w-]+)")


def _notes(root: Path) -> list[Path]:
    return sorted(
        p
        for p in root.rglob("*.md")
        if not any(part.startswith(".") for part in p.relative_to(root).parts)
    )


def _day(path: Path) -> str:
    return datetime.fromtimestamp(path.stat().st_mtime, UTC).strftime("%Y-%m-%d")


def _entity_id(title: str) -> str:
    return stable_id("entity", f"{FORMAT}\nentity\n{normalized_text(title)}", "2000-01-01")


def read(path: Path, *, scope: str = "project") -> Iterator[Item]:
    """Yield candidate items for every note of the basic-memory project at ``path``.

    Raises:
        UsageError: ``path`` is not a folder holding Markdown notes.
    """
    notes = _notes(path) if path.is_dir() else []
    if not notes:
        raise UsageError(f"{path} is not a basic-memory project (no Markdown notes)")
    names: dict[str, str] = {}  # title / permalink / stem, normalised → entity id
    for note in notes:
        text = read_text(note) or ""
        values, _, _ = front_matter(text)
        title = str(values.get("title") or note.stem)
        for name in (title, str(values.get("permalink") or ""), note.stem):
            if name:
                names.setdefault(normalized_text(name), _entity_id(title))
    for note in notes:
        yield from _note(path, note, names, scope)


def _note(root: Path, note: Path, names: dict[str, str], scope: str) -> Iterator[Item]:
    rel = note.relative_to(root).as_posix()
    text = read_text(note)
    if text is None:
        yield skip(rel, "file too large")
        return
    values, body, first = front_matter(text)
    if not values:
        body, first = text, 1
    title = str(values.get("title") or note.stem)
    entity = _entity_id(title)
    day = _day(note)
    prose: list[str] = []
    links: list[str] = []
    for offset, line in enumerate(body.split("\n")):
        number = first + offset
        observation = _OBSERVATION.match(line)
        relation = _RELATION.match(line)
        if relation:
            target = relation.group(2).split("|")[0].strip()
            target_id = names.get(normalized_text(target))
            if target_id and target_id != entity:
                links.append(target_id)
            prose.append(line.strip())
            continue
        if observation:
            yield _observation(observation, rel, number, entity, title, day, scope)
            continue
        prose.append(line)
    body_text = "\n".join(prose).strip()
    record = make_record(
        fmt=FORMAT,
        kind="entity",
        text=title,
        key=f"{FORMAT}\nentity\n{normalized_text(title)}",
        file=rel,
        place={"line": 1},
        status="candidate",
        observed_at=day,
        aliases=[a for a in [str(values.get("permalink") or "")] if a and a != title],
        tags=as_list(values.get("tags")),
        links=links,
        body=body_text,
        extra_source={"entity_type": str(values.get("type") or "note")},
        scope=scope,
        record_id=entity,
    )
    yield Item(f"{rel}:1", record) if record else skip(rel, "a note without a title")


def _observation(
    match: re.Match[str], rel: str, number: int, entity: str, title: str, day: str, scope: str
) -> Item:
    category = match.group(1).strip()
    content = match.group(2)
    context = ""
    found = _CONTEXT.search(content)
    if found:
        context, content = found.group(1).strip(), content[: found.start()]
    tags = _HASHTAG.findall(content)
    content = _HASHTAG.sub("", content).strip()
    kind = CATEGORIES.get(category.lower(), "fact")
    record = make_record(
        fmt=FORMAT,
        kind=kind,
        text=content,
        key=belief_key(FORMAT, kind, content),
        file=rel,
        place={"line": number},
        status="candidate",
        observed_at=day,
        tags=[category, *tags],
        links=[entity],
        body=f"{context}\n\nFrom [[{entity}]] ({title})"
        if context
        else f"From [[{entity}]] ({title})",
        scope=scope,
    )
    place = f"{rel}:{number}"
    return Item(place, record) if record else skip(place, "an empty observation")
