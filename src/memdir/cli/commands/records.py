"""Record commands: remember, recall, get, list, correct, reject, forget, purge, graph, index."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from memdir import service
from memdir.cli.output import (
    emit,
    json_option,
    note,
    one_line,
    resolve,
    store_option,
    terminal_safe,
)
from memdir.kernel.base.caller import Caller
from memdir.kernel.base.errors import ProvenanceError, UsageError
from memdir.kernel.base.model import KINDS, STATUSES, Kind, Record
from memdir.kernel.lang.text import truncate
from memdir.kernel.storage.lifecycle import Written
from memdir.service.channel import cli_caller

ORIGIN_CHOICES = ("owner", "agent")
"""What ``remember --origin`` offers: ``untrusted`` and ``system`` are refused on every path."""


def _caller(claimed: str | None) -> Caller:
    """Return the caller of a CLI write: decided by the environment, never raised by a flag."""
    actual = cli_caller()
    if claimed is None:
        return actual
    if claimed == "owner" and not actual.is_owner:
        raise ProvenanceError(
            "refused: this command runs inside a coding agent's session, so it writes "
            "origin agent; only a person's own terminal writes owner records"
        )
    return Caller(claimed, actual.channel, actual.host, actual.session)


def emit_written(done: Written, *, as_json: bool) -> None:
    """Print the outcome of correct, reject or forget: the record, or the proposal made instead.

    A proposal (the agent asked to change the owner's record) prints ``{"proposed": true,
    "proposal": …, "record": <unchanged>, "note": …}`` with ``--json``, else one line that
    says it was proposed, not done.
    """
    if done.proposal is None:
        note(f"memdir: {done.note}", as_json=as_json)
        emit(done.record.to_json(), as_json=as_json, render=lambda r: r["id"])
        return
    value = {
        "proposed": True,
        "proposal": done.proposal.to_json(),
        "record": done.record.to_json(),
        "note": done.note,
    }
    emit(value, as_json=as_json, render=lambda v: f"memdir: {v['note']}")


def _read_text(text: str) -> str:
    if text == "-":
        return sys.stdin.read()
    return text


def render_record(record: Record) -> str:
    """Return a record as readable ``key: value`` lines plus its body.

    A value's line breaks are shown as ``\\n``, so stored text cannot forge a line.
    """
    lines = []
    for key, value in record.to_json().items():
        if key == "body":
            continue
        if isinstance(value, list):
            value = ", ".join(value)
        elif isinstance(value, dict):
            value = ", ".join(f"{k}={v}" for k, v in value.items() if v is not None)
        if value in (None, "", []):
            continue
        lines.append(f"{key}: {one_line(str(value))}")
    if record.body.strip():
        lines += ["", record.body.rstrip()]
    return "\n".join(lines)


def _line(doc: dict[str, Any], width: int = 100, id_width: int = 0) -> str:
    scope = "" if doc.get("scope", "project") == "project" else f" [{doc['scope']}]"
    text = truncate(doc["text"].replace("\n", " "), width)
    return f"{doc['id']:<{id_width}}  {doc['status']:<10} {doc['kind']:<10} {text}{scope}"


def _lines(docs: list[dict[str, Any]], width: int = 100) -> list[str]:
    """One :func:`_line` per doc, ids padded to the longest (``pr-``, ``ep-`` ids are longer)."""
    id_width = max((len(d["id"]) for d in docs), default=0)
    return [_line(d, width, id_width) for d in docs]


@click.command()
@click.argument("text")
@click.option(
    "--kind",
    "kind",
    type=click.Choice(KINDS),
    default="fact",
    show_default=True,
    help="What sort of belief.",
)
@click.option(
    "--alias",
    "aliases",
    multiple=True,
    help='Other words for it: a comma-separated list ("a,b,c"), repeatable.',
)
@click.option(
    "--tag",
    "tags",
    multiple=True,
    help='Labels: a comma-separated list, repeatable. A leading "[word]" in TEXT is a tag too.',
)
@click.option(
    "--paths",
    "paths",
    multiple=True,
    help='Scope it to files: globs, comma-separated or repeated ("src/billing/**,*.sql").',
)
@click.option(
    "--importance",
    type=click.IntRange(1, 10),
    default=None,
    help="1..10 (default 5); weighs recall.",
)
@click.option("--link", "links", multiple=True, help="Id of a related record (repeatable).")
@click.option("--body", default="", help="Longer prose; [[id]] in it links records.")
@click.option(
    "--observed-at",
    "observed_at",
    default=None,
    metavar="DATE",
    help="When it was observed (ISO date or time; default today). Recall's recency reads it.",
)
@click.option(
    "--entity-type",
    "entity_type",
    default=None,
    metavar="TYPE",
    help="With --kind entity: person, service, team… (AMP's entities/<type>/).",
)
@click.option(
    "--origin",
    "claimed",
    type=click.Choice(ORIGIN_CHOICES),
    default=None,
    help="Who it came from; decided by the terminal, a flag can only lower it.",
)
@click.option(
    "--valid-from",
    default=None,
    metavar="DATE",
    help="When it became true in the world (YYYY-MM-DD or ISO time; default: today).",
)
@click.option(
    "--valid-until",
    default=None,
    metavar="DATE",
    help="When it stops (stopped) being true, exclusive (default: still true).",
)
@store_option
@json_option
def remember(
    text: str,
    kind: Kind,  # click.Choice(KINDS) checked it
    aliases: tuple[str, ...],
    tags: tuple[str, ...],
    paths: tuple[str, ...],
    importance: int | None,
    links: tuple[str, ...],
    body: str,
    observed_at: str | None,
    entity_type: str | None,
    claimed: str | None,
    valid_from: str | None,
    valid_until: str | None,
    store: Path | None,
    as_json: bool,
) -> None:
    """Remember one belief and print its id (TEXT "-" reads standard input).

    A near-duplicate of an active record updates that record instead; a
    near-duplicate of a rejected record is refused (exit 3). A belief that
    contradicts an active one ("never" beside "always") is stored, and stderr
    names the record it contradicts and how to keep either. With --paths the
    belief is told to the agent when it reads or edits a matching file (and in
    the digest only when such a file was touched), not in every session.

    \b
    Example:
        memdir remember "Use pnpm, not npm, in this repository" --kind preference
        memdir remember "Amounts are integer cents" --kind rule --paths "src/billing/**"
    """
    tags = (*tags, *service.path_tags(paths))
    done = service.remember(
        resolve(store),
        _read_text(text),
        kind=kind,
        caller=_caller(claimed),
        aliases=split_list(aliases),
        tags=split_list(tags),
        links=links,
        importance=importance,
        body=body,
        valid_from=valid_from,
        valid_until=valid_until,
        observed_at=observed_at,
        entity_type=entity_type,
    )
    if not done.created or done.conflicts:  # a contradiction is stored, and said
        note(f"memdir: {done.note}", as_json=as_json)
    emit(done.record.to_json(), as_json=as_json, render=lambda r: r["id"])


PREVIEW_IDS = 10
"""How many ids a refused bulk forget names in its message (the rest are counted)."""


def _count(n: int) -> str:
    return f"{n} record" if n == 1 else f"{n} records"


def split_list(values: tuple[str, ...]) -> tuple[str, ...]:
    """Return the items of comma-separated option values: ``("a,b", "c")`` → ``("a", "b", "c")``.

    Talewell's ``--alias "饮食,辣,diet"`` is a list; the ideographic comma (``，``) separates
    too. A value that is a JSON array (``'["a, b"]'``) is passed whole, for the lifecycle to
    read as that array (case B11).
    """
    out: list[str] = []
    for value in values:
        if value.strip().startswith("["):
            out.append(value)
            continue
        out.extend(part.strip() for part in value.replace("，", ",").split(",") if part.strip())
    return tuple(out)


FILTER_OPTIONS = (
    click.option(
        "--tag",
        "tags",
        multiple=True,
        help="Only records with this tag (repeatable; [坑] and 坑 are one tag).",
    ),
    click.option(
        "--entity-type",
        "entity_types",
        multiple=True,
        metavar="TYPE",
        help="Only entities of this type (repeatable).",
    ),
)


def _filters(command: Any) -> Any:
    for option in reversed(FILTER_OPTIONS):
        command = option(command)
    return command


def _render_recall(result: dict[str, Any]) -> str:
    if not result["results"]:
        return f"no active records match {result['query']!r}"
    lines = []
    id_width = max(len(hit["id"]) for hit in result["results"])
    for hit in result["results"]:
        scope = "" if hit.get("scope") == "project" else f" [{hit['scope']}]"
        text = truncate(hit["text"].replace("\n", " "), 100)
        row = f"{hit['id']:<{id_width}}  {hit['kind']:<10} {hit['score']:8.3f}  {text}{scope}"
        lines.append(row)
        if "explain" in hit:
            ex = hit["explain"]
            factors = "  ".join(f"{k} {v}" for k, v in ex.items() if k != "matched")
            lines.append(f"    matched: {', '.join(ex['matched']) or '-'}  {factors}")
    return "\n".join(lines)


@click.command()
@click.argument("query")
@click.option(
    "-n",
    "--limit",
    type=click.IntRange(1, 1000),
    default=None,
    help="Most records to return (default: the manifest's, 10).",
)
@click.option(
    "--kind", "kinds", multiple=True, type=click.Choice(KINDS), help="Only this kind (repeatable)."
)
@click.option("--include-candidates", is_flag=True, help="Also return candidates awaiting review.")
@click.option("--explain", is_flag=True, help="Show matched terms and every factor of the score.")
@click.option(
    "--as-of",
    default=None,
    metavar="DATE",
    help="What was true in the world then (valid time), as memdir believes it now.",
)
@click.option(
    "--believed-at",
    default=None,
    metavar="DATE",
    help="What memdir believed then, read from its own history (record time).",
)
@_filters
@store_option
@json_option
def recall(
    query: str,
    limit: int | None,
    kinds: tuple[str, ...],
    include_candidates: bool,
    explain: bool,
    as_of: str | None,
    believed_at: str | None,
    tags: tuple[str, ...],
    entity_types: tuple[str, ...],
    store: Path | None,
    as_json: bool,
) -> None:
    """Find the active records most relevant to QUERY, best first.

    Score = BM25 relevance x recency (0.85..1.0) x importance weight (0.8..1.25).
    Only what is true now is returned, unless --as-of or --believed-at asks about another
    time (a date is its whole UTC day).

    \b
    Example:
        memdir recall "package manager" --explain
        memdir recall "message queue" --as-of 2026-02-15
    """
    result = service.recall(
        resolve(store),
        query,
        limit=limit,
        kinds=kinds,
        include_candidates=include_candidates,
        explain=explain,
        as_of=as_of,
        believed_at=believed_at,
        tags=tags,
        entity_types=entity_types,
    )
    emit(result.to_json(), as_json=as_json, render=_render_recall)


@click.command()
@click.argument("record_id", metavar="ID")
@store_option
@json_option
def get(record_id: str, store: Path | None, as_json: bool) -> None:
    """Show one record, whatever its status, and how often recall returned it.

    \b
    Example:
        memdir get p-01jc9x2k7q4fz2
    """
    target = resolve(store)
    record = service.get(target, record_id)
    stats = service.recall_stats(target, record.id)
    if as_json:
        emit({**record.to_json(), "recall": stats}, as_json=True, render=str)
        return
    last = f", last {stats['last_hit'][:10]}" if stats["last_hit"] else ""
    line = f"recalled: {stats['hits']} times ({stats['injected']} injected per prompt){last}"
    emit(record, as_json=False, render=lambda r: render_record(r) + "\n" + line)


@click.command(name="list")
@click.option(
    "--kind", "kinds", multiple=True, type=click.Choice(KINDS), help="Only this kind (repeatable)."
)
@click.option(
    "--status",
    "statuses",
    multiple=True,
    type=click.Choice(STATUSES),
    help="Only this status (repeatable; default: every status).",
)
@click.option("-n", "--limit", type=click.IntRange(1), default=None, help="Most records to list.")
@_filters
@store_option
@json_option
def list_(
    kinds: tuple[str, ...],
    statuses: tuple[str, ...],
    limit: int | None,
    tags: tuple[str, ...],
    entity_types: tuple[str, ...],
    store: Path | None,
    as_json: bool,
) -> None:
    """List records, most recently updated first.

    \b
    Example:
        memdir list --status active --kind rule
        memdir list --tag 坑
        memdir list --entity-type person
    """
    records = service.list_records(
        resolve(store),
        kinds=kinds,
        statuses=statuses,
        limit=limit,
        tags=tags,
        entity_types=entity_types,
    )
    emit(
        {"results": [r.to_json() for r in records]},
        as_json=as_json,
        render=lambda v: "\n".join(_lines(v["results"])) or "no records",
    )


@click.command()
@click.argument("record_id", metavar="ID", required=False)
@click.option("--text", "text", required=True, help="The corrected belief.")
@click.option("--reason", default=None, help="Why the old one was wrong.")
@click.option(
    "--valid-until",
    default=None,
    metavar="DATE",
    help="The old belief was true until DATE (not wrong); the new one is true from then.",
)
@click.option(
    "--match",
    "match",
    default=None,
    help="Instead of ID: correct the one active record that best matches this query.",
)
@store_option
@json_option
def correct(
    record_id: str | None,
    text: str,
    reason: str | None,
    valid_until: str | None,
    match: str | None,
    store: Path | None,
    as_json: bool,
) -> None:
    """Supersede a record with a corrected one and print the new id.

    The old record becomes superseded (kept in history, never recalled). Run by a
    coding agent on the owner's record, it makes a proposal the owner decides in
    `memdir review` instead, and changes nothing.

    \b
    Example:
        memdir correct p-01jc9x2k7q4fz2 --text "Use bun, not npm" --reason "switched in May"
        memdir correct d-01m8… --text "The queue is Kafka" --valid-until 2026-03-01
    """
    if (record_id is None) == (match is None):
        raise UsageError("give either ID or --match QUERY")
    target = resolve(store)
    caller = cli_caller()
    if match is not None:
        done = service.correct_match(
            target, match, text, reason=reason, caller=caller, valid_until=valid_until
        )
    else:
        done = service.correct(
            target, record_id or "", text, reason=reason, caller=caller, valid_until=valid_until
        )
    emit_written(done, as_json=as_json)


def _status_command(name: str, status_word: str) -> click.Command:
    @click.command(name=name)
    @click.argument("record_id", metavar="ID")
    @click.option(
        "--reason",
        required=name == "reject",
        help=f"Why it is {status_word}" + ("." if name == "reject" else " (optional)."),
    )
    @store_option
    @json_option
    def command(record_id: str, reason: str | None, store: Path | None, as_json: bool) -> None:
        target = resolve(store)
        if name == "reject":
            done = service.reject(target, record_id, reason or "", caller=cli_caller())
        else:
            done = service.forget(target, record_id, reason, caller=cli_caller())
        if done.proposal is not None:
            emit_written(done, as_json=as_json)
            return
        emit(done.record.to_json(), as_json=as_json, render=lambda r: done.note)

    command.__doc__ = {
        "reject": "Mark a belief wrong: never recalled, never re-learned.\n\n"
        '\b\nExample:\n    memdir reject f-01jc9x2k7q4fz2 --reason "we never used Redis"',
        "forget": "Retire a belief: out of recall; its file and history stay.\n\n"
        '\b\nExample:\n    memdir forget f-01jc9x2k7q4fz2 --reason "no longer relevant"',
    }[name]
    command.help = command.__doc__
    return command


reject = _status_command("reject", "wrong")


@click.command()
@click.argument("record_id", metavar="[ID]", required=False)
@click.option("--reason", default=None, help="Why it is retired (optional).")
@click.option(
    "--tag", "tags", multiple=True, help="Instead of ID: every live record with this tag."
)
@click.option(
    "--match",
    "match",
    default=None,
    metavar="QUERY",
    help="Instead of ID: every live record recall returns for QUERY.",
)
@click.option("--yes", is_flag=True, help="With --tag or --match: forget without asking.")
@store_option
@json_option
def forget(
    record_id: str | None,
    reason: str | None,
    tags: tuple[str, ...],
    match: str | None,
    yes: bool,
    store: Path | None,
    as_json: bool,
) -> None:
    """Retire a belief: out of recall; its file and history stay.

    With --tag or --match it retires every live (active or candidate) record
    selected, after showing them: it asks first in a terminal, and elsewhere
    forgets only with --yes (without it, it lists them, changes nothing and
    exits 2, as purge and rollback do without --yes).

    \b
    Example:
        memdir forget f-01jc9x2k7q4fz2 --reason "no longer relevant"
        memdir forget --tag 坑
        memdir forget --match "redis cache" --yes
    """
    from memdir.service import selection

    chosen = sum([record_id is not None, bool(tags), match is not None])
    if chosen != 1:
        raise UsageError("give one of: a record ID, --tag TAG, --match QUERY")
    if record_id is not None:
        if yes:
            raise UsageError("--yes is for --tag and --match")
        target = resolve(store)
        done = service.forget(target, record_id, reason, caller=cli_caller())
        if done.proposal is not None:
            emit_written(done, as_json=as_json)
            return
        emit(done.record.to_json(), as_json=as_json, render=lambda r: done.note)
        return
    target = resolve(store)
    records = selection.select(target, tags=tags, match=match)
    preview = _lines([r.to_json() for r in records])
    if not records:
        emit(
            {"selected": [], "forgotten": [], "proposed": []},
            as_json=as_json,
            render=lambda v: "nothing to forget: no live record matches",
        )
        return
    if not yes:
        if as_json or not sys.stdin.isatty():
            # A preview without its confirmation is a usage error, as purge and rollback
            # without --yes are (exit 2, DESIGN §9): the script asked for nothing that ran.
            if not as_json:
                click.echo(terminal_safe("\n".join(preview)))
            shown = ", ".join(r.id for r in records[:PREVIEW_IDS])
            more = f" and {len(records) - PREVIEW_IDS} more" if len(records) > PREVIEW_IDS else ""
            raise UsageError(
                f"nothing forgotten: {_count(len(records))} "
                f"{'matches' if len(records) == 1 else 'match'} ({shown}{more}); "
                "add --yes to forget them"
            )
        click.echo("\n".join(preview))
        if not click.confirm(f"Forget these {_count(len(records))}?", default=False):
            click.echo("nothing forgotten")
            return
    written = selection.forget_all(target, records, reason, cli_caller())
    forgotten = [w.record.id for w in written if w.proposal is None and w.changed]
    proposed = [w.record.id for w in written if w.proposal is not None]
    emit(
        {"selected": [r.id for r in records], "forgotten": forgotten, "proposed": proposed},
        as_json=as_json,
        render=lambda v: (
            f"forgot {len(forgotten)} records"
            + (f"; {len(proposed)} proposed for the owner's review" if proposed else "")
        ),
    )


@click.command()
@click.argument("record_id", metavar="ID")
@click.option(
    "--depth",
    type=click.IntRange(1, 10),
    default=1,
    show_default=True,
    help="How many links to follow.",
)
@store_option
@json_option
def graph(record_id: str, depth: int, store: Path | None, as_json: bool) -> None:
    """Show the records linked to and from ID (links and [[id]] references).

    Retired records appear by id and status only; missing ones are marked dangling.

    \b
    Example:
        memdir graph d-01jc9w00007kq1 --depth 2
    """
    found = service.graph(resolve(store), record_id, depth)

    def render(g: dict[str, Any]) -> str:
        lines = []
        for n in g["nodes"]:
            mark = "*" if n["id"] == g["root"] else " "
            state = "dangling " if n["status"] == "missing" else ""  # the status says the rest

            lines.append(
                f"{mark} {n['id']}  {state}{n['status']:<10} {truncate(n.get('text', ''), 80)}"
            )
        lines += [f"    {e['src']} -> {e['dst']} ({e['via']})" for e in g["edges"]]
        return "\n".join(lines)

    emit(found.to_json(), as_json=as_json, render=render)


@click.command(name="index")
@click.option("--markdown", is_flag=True, help="Render as Markdown, one section per kind.")
@click.option(
    "--backend",
    metavar="URI",
    default=None,
    help="Rebuild the index at URI from the records and journal, then read from it: "
    "postgres://… (a team's PostgreSQL; needs memdir[postgres]) or sqlite (the local one). "
    "Set [index] backend in memdir.toml to make every command use it.",
)
@store_option
@json_option
def index_(markdown: bool, backend: str | None, store: Path | None, as_json: bool) -> None:
    """Print the compact catalogue of active records (for injection into an agent).

    \b
    Example:
        memdir index --markdown
        memdir index --backend 'postgresql://db.example/memdir'
    """
    folder = resolve(store)
    built: dict[str, Any] | None = None
    if backend is not None:
        if backend != "sqlite" and not backend.startswith(("postgres://", "postgresql://")):
            raise click.BadParameter("use sqlite or a postgres:// URI", param_hint="--backend")
        built = service.build_index(folder, backend)
    records = service.catalogue(folder, backend=backend)

    def render(value: dict[str, Any]) -> str:
        rows = value["results"]
        if not markdown:
            return "\n".join(_lines(rows, 120)) or "no active records"
        out: list[str] = ["# Memory index", ""]
        kind = None
        for d in rows:
            if d["kind"] != kind:
                kind = d["kind"]
                out += ["", f"## {kind}"] if len(out) > 2 else [f"## {kind}"]
            out.append(f"- {truncate(d['text'].replace(chr(10), ' '), 160)} [{d['id']}]")
        return "\n".join(out) if rows else "# Memory index\n\n(no active records)"

    def render_built(value: dict[str, Any]) -> str:
        info = value["built"]
        vector = info["server"].get("pgvector")
        lines = [
            f"built the {info['backend']} index: {info['records']} records, {info['turns']} "
            f"journal turns, {info['quarantined']} quarantined, in {info['took_ms']} ms"
        ]
        if info["backend"] == "postgres":
            lines.append(
                f"PostgreSQL {info['server'].get('server_version', '?')}; pgvector "
                + (f"{vector} is installed, unused" if vector else "is not installed")
                + " (memdir's recall is lexical: it stores no embeddings)"
            )
        return "\n".join(lines) + "\n" + render(value)

    out: dict[str, Any] = {"results": [r.to_json() for r in records]}
    if built is not None:
        out["built"] = built
    emit(out, as_json=as_json, render=render_built if built is not None else render)


@click.command()
@click.argument("record_id", metavar="ID")
@click.option("--yes", is_flag=True, help="Confirm: purge rewrites history and cannot be undone.")
@store_option
@json_option
def purge(record_id: str, yes: bool, store: Path | None, as_json: bool) -> None:
    """Erase a record: its file (working tree, index, every commit) and the log lines with its text.

    Prints an erasure report of every place it was removed from, and names other
    records that still hold the text; it never edits them. Use forget to retire a
    belief while keeping its history; purge is for text that must not exist.
    Only the owner may purge: from a coding agent's shell it is refused (exit 3).

    \b
    Example:
        memdir purge f-01jc9x2k7q4fz2 --yes
    """
    report = service.purge(resolve(store), record_id, yes=yes, caller=cli_caller())

    def render(v: dict[str, Any]) -> str:
        lines = [f"purged {v['purged']} from:"]
        lines += [f"  {p['place']:<13} {p['detail']}" for p in v["places"]]
        lines += [f"note: {c}" for c in v["caveats"]]
        return "\n".join(lines)

    emit(report.to_json(), as_json=as_json, render=render)


def _pin_command(name: str) -> click.Command:
    @click.command(name=name)
    @click.argument("record_id", metavar="ID")
    @store_option
    @json_option
    def command(record_id: str, store: Path | None, as_json: bool) -> None:
        done = service.pin(resolve(store), record_id, pinned=name == "pin", caller=cli_caller())
        note(f"memdir: {done.note}", as_json=as_json)
        emit(done.record.to_json(), as_json=as_json, render=lambda r: r["id"])

    command.help = {
        "pin": "Pin a belief: always in the session digest, under [budgets] pinned_tokens.\n\n"
        "Only the owner pins (exit 3 from an agent's shell); only an active belief.\n\n"
        "\b\nExample:\n    memdir pin r-01jc9x2k7q4fz2",
        "unpin": "Unpin a belief: back to being shown when relevant.\n\n"
        "\b\nExample:\n    memdir unpin r-01jc9x2k7q4fz2",
    }[name]
    return command


pin = _pin_command("pin")
unpin = _pin_command("unpin")


COMMANDS = [
    remember,
    recall,
    get,
    list_,
    correct,
    reject,
    forget,
    purge,
    graph,
    index_,
    pin,
    unpin,
]
