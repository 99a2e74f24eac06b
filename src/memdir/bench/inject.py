"""``memdir bench inject``: does per-prompt injection earn its tokens? Measured on LoCoMo.

For each conversation of a LoCoMo-format file it builds a fresh store whose records are the
conversation's per-session ``observation`` facts (one ``fact`` record each, dated by its
session, remembering the dialogue turns it cites), and asks every question as a prompt through
the UserPromptSubmit path's selection (:func:`memdir.kernel.digest.prompt_recall`, the store's
manifest defaults). A second store holds a small coding project's beliefs
(:data:`CODING_RECORDS`) and takes ordinary coding prompts (:data:`CODING_PROMPTS`).

A prompt is *answerable* when some record cites one of its gold evidence turns (categories 1-4;
a question whose evidence no observation cites is left unscored and counted), and has *no
relevant belief* when it is one of LoCoMo's adversarial questions (category 5: they ask about
the other speaker, or about something never said) or a coding prompt that names no stored
belief. Per system:

- ``recall``: the share of answerable prompts whose injection holds a cited record;
- ``precision``: the share of injected records that are cited by the prompt's evidence (a
  record injected for a prompt with no relevant belief counts against it);
- ``silent``: the share of no-relevant-belief prompts with nothing injected (and
  ``silent_all``, over every prompt);
- ``tokens``: the estimated tokens (``ceil(UTF-8 bytes / 4)``) injected per prompt, every
  prompt counted, the fenced block as the agent receives it on a session's first prompt.

The reference is plain BM25: SQLite FTS5 (``unicode61``) over the records' text, stop words
dropped, any-term query, its best five records whose ``-bm25()`` reaches a threshold, in the
same fence. Its threshold is chosen on the *tune* conversations (the first four, or the first
half of a file with fewer than eight) by the same objective memdir's constants were chosen with
(:func:`objective`); the others are *held-out* and reported separately. ``--tune`` also
searches memdir's own rule constants on the tune split and reports what they would give on
both.
"""

from __future__ import annotations

import json
import re
import statistics
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memdir.bench.locomo import parse_evidence
from memdir.kernel.base.errors import UsageError
from memdir.kernel.index import Index, digest
from memdir.kernel.index.foreign import PlainTextSearch
from memdir.kernel.index.recall import Hit, recall
from memdir.kernel.lang import fence
from memdir.kernel.lang.text import STOP_WORDS, estimate_tokens
from memdir.kernel.storage.manifest import SETTINGS
from memdir.store.setup import init_store

LIMIT = 5
"""Most records one prompt may inject (memdir's ``prompt_recall`` default)."""

CODING_RECORDS: tuple[tuple[str, str], ...] = (
    ("rule", "Never use pytest -x in CI; the full failure list is needed"),
    ("rule", "Never commit directly to main; open a pull request"),
    ("rule", "Run ruff format before every commit"),
    ("preference", "Use pnpm, not npm, for the web frontend"),
    ("preference", "Prefer dataclasses over plain dicts for configuration objects"),
    ("preference", "Write commit messages in the imperative mood"),
    ("decision", "Postgres is the production database; SQLite only in unit tests"),
    ("decision", "The public HTTP API is versioned under /v2; /v1 is frozen"),
    ("decision", "Background jobs run on Celery with Redis as the broker"),
    ("decision", "Feature flags live in LaunchDarkly, not in environment variables"),
    ("fact", "The billing service retries Stripe webhooks three times with exponential backoff"),
    ("fact", "Staging deploys automatically from the release branch every night at 02:00 UTC"),
    ("fact", "The docs site is built with MkDocs Material and published to GitHub Pages"),
    ("fact", "Integration tests need Docker running for the Postgres and Redis containers"),
    ("fact", "The mobile app talks to the backend through the GraphQL gateway"),
    ("procedure", "To release: bump the version in pyproject.toml, tag vX.Y.Z, push the tag"),
    ("procedure", "Regenerate the OpenAPI client with make openapi after changing an endpoint"),
    ("fact", "Alembic migrations live in db/migrations and run on container start"),
    ("preference", "Keep functions under 50 lines; split helpers out instead"),
    ("fact", "The search endpoint caches results in Redis for five minutes"),
)
"""A coding project's beliefs: the store the coding prompts are asked against."""

CODING_PROMPTS: tuple[tuple[str, tuple[int, ...]], ...] = (
    ("fix the typo in the README", ()),
    ("rename the variable x to total", ()),
    ("add a docstring to this function", ()),
    ("why does this loop run one time too many?", ()),
    ("make the error message clearer", ()),
    ("explain what this regex does", ()),
    ("sort the imports in utils.py", ()),
    ("can you make this module look like the other one", ()),
    ("split this long function into two", ()),
    ("what does this stack trace mean", ()),
    ("add type hints to parse_config", ()),
    ("remove the unused import", ()),
    ("fix the off-by-one error in the pagination helper", ()),
    ("write a unit test for slugify", ()),
    ("format this JSON file", ()),
    ("translate this comment to English", ()),
    ("the button is misaligned on small screens", ()),
    ("delete the commented-out code", ()),
    ("use a list comprehension here", ()),
    ("what is the time complexity of this", ()),
    ("continue", ()),
    ("yes do it", ()),
    ("looks good, thanks", ()),
    ("undo that last change", ()),
    ("fix", ()),
    ("make it faster", ()),
    ("add logging to the upload handler", ()),
    ("rename the file to snake case", ()),
    ("how do I run the tests in CI?", (0,)),
    ("can I push this straight to main?", (1,)),
    ("install the frontend dependencies", (3,)),
    ("which database do we use in production?", (6,)),
    ("add a new endpoint to the v1 API", (7,)),
    ("where should the new feature flag go?", (9,)),
    ("how many times are Stripe webhooks retried?", (10,)),
    ("when does staging get deployed?", (11,)),
    ("the integration tests fail to connect to Postgres", (13,)),
    ("how do I cut a release?", (15,)),
    ("I changed an endpoint, what else needs updating?", (16,)),
    ("where do the database migrations live?", (17,)),
    ("how long are search results cached?", (19,)),
    ("set up a Celery worker for the email job", (8,)),
)
"""Ordinary coding prompts with the :data:`CODING_RECORDS` each needs (none: inject nothing)."""


@dataclass(frozen=True, slots=True)
class Prompt:
    """One prompt with the record ids that answer it (empty: nothing should be injected)."""

    group: str  # the conversation's sample id, or "coding"
    text: str
    category: str  # a LoCoMo category name, or "coding"
    relevant: frozenset[str]


@dataclass
class Candidate:
    """What a system found for one prompt before its injection rule: (id, score, hit)."""

    prompt: Prompt
    hits: list[tuple[str, float, Any]]


@dataclass
class Tally:
    """Running totals of one system on one split."""

    answerable: int = 0
    found: int = 0
    injected: int = 0
    injected_relevant: int = 0
    irrelevant_prompts: int = 0
    silent: int = 0
    prompts: int = 0
    silent_all: int = 0
    tokens: list[int] = field(default_factory=list)
    later: list[int] = field(default_factory=list)

    def add(self, prompt: Prompt, ids: list[str], tokens: int, later: int) -> None:
        """Score one prompt's injection.

        ``ids`` were injected; ``tokens`` with the preamble, ``later`` without it (as on a
        session's later prompts).
        """
        self.prompts += 1
        self.tokens.append(tokens)
        self.later.append(later)
        self.injected += len(ids)
        self.injected_relevant += sum(1 for i in ids if i in prompt.relevant)
        if not ids:
            self.silent_all += 1
        if prompt.relevant:
            self.answerable += 1
            self.found += 1 if prompt.relevant & set(ids) else 0
        else:
            self.irrelevant_prompts += 1
            self.silent += 0 if ids else 1

    def summary(self) -> dict[str, Any]:
        """Return the figures in percent (tokens per prompt as a mean)."""

        def pct(a: int, b: int) -> float:
            return round(100 * a / b, 1) if b else 0.0

        return {
            "recall": pct(self.found, self.answerable),
            "precision": pct(self.injected_relevant, self.injected),
            "silent": pct(self.silent, self.irrelevant_prompts),
            "silent_all": pct(self.silent_all, self.prompts),
            "tokens": round(statistics.fmean(self.tokens), 1) if self.tokens else 0.0,
            "tokens_later": round(statistics.fmean(self.later), 1) if self.later else 0.0,
            "answerable": self.answerable,
            "no_relevant": self.irrelevant_prompts,
        }


def objective(summary: dict[str, Any]) -> float:
    """Return what a rule's constants are chosen to maximise: mean of recall and silent."""
    return float(summary["recall"] + summary["silent"]) / 2


_WORD = re.compile(r"\w+")


def _words(text: str) -> list[str]:
    words = [w for w in _WORD.findall(text.lower()) if w not in STOP_WORDS]
    return list(dict.fromkeys(words)) or _WORD.findall(text.lower())


def _observations(sample: dict[str, Any], group: str) -> list[dict[str, Any]]:
    """Return the sample's observation records: ``{id, text, date, cites}``."""
    talk = sample["conversation"]
    found: list[dict[str, Any]] = []
    for key, by_speaker in sorted(
        sample.get("observation", {}).items(), key=lambda kv: _session_number(kv[0])
    ):
        session = _session_number(key)
        stamp = _session_date(str(talk.get(f"session_{session}_date_time", "")))
        for speaker_facts in by_speaker.values():
            for n, fact in enumerate(speaker_facts):
                text, cited = fact[0], fact[1] if len(fact) > 1 else []
                cites = parse_evidence(cited if isinstance(cited, list) else [cited])
                record_id = f"obs-{group}-{session}-{n}-{len(found):04d}"
                found.append({"id": record_id, "text": str(text), "date": stamp, "cites": cites})
    return found


def _session_number(key: str) -> int:
    match = re.search(r"session_(\d+)", key)
    return int(match.group(1)) if match else 0


def _session_date(text: str) -> str:
    from datetime import UTC, datetime

    try:
        moment = datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)
    except ValueError:
        return "2023-01-01T00:00:00Z"
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _category(number: int) -> str:
    from memdir.bench.locomo import CATEGORIES

    return CATEGORIES.get(number, str(number))


def load(path: Path) -> list[tuple[str, list[dict[str, Any]], list[Prompt], int]]:
    """Read a LoCoMo-format file: per conversation, its records, prompts and unscored count.

    Raises:
        UsageError: the file cannot be read or is not LoCoMo-shaped.
    """
    try:
        samples = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise UsageError(f"cannot read LoCoMo data: {exc}") from exc
    if not isinstance(samples, list) or not samples:
        raise UsageError(f"{path}: expected a JSON list of LoCoMo samples")
    out = []
    for number, sample in enumerate(samples):
        try:
            group = str(sample["sample_id"])
            records = _observations(sample, group)
            cited: dict[str, set[str]] = {}
            for record in records:
                for turn in record["cites"]:
                    cited.setdefault(turn, set()).add(record["id"])
            prompts, unscored = [], 0
            for qa in sample["qa"]:
                category = int(qa["category"])
                if category == 5:
                    prompts.append(Prompt(group, str(qa["question"]), "adversarial", frozenset()))
                    continue
                relevant = {
                    r for t in parse_evidence(qa.get("evidence", [])) for r in cited.get(t, ())
                }
                if not relevant:
                    unscored += 1
                    continue
                prompts.append(
                    Prompt(group, str(qa["question"]), _category(category), frozenset(relevant))
                )
        except (KeyError, TypeError, ValueError, IndexError) as exc:
            raise UsageError(f"{path}: sample {number} is not LoCoMo-shaped ({exc})") from exc
        if not records:
            raise UsageError(f"{path}: sample {number} has no observation facts")
        out.append((group, records, prompts, unscored))
    return out


def coding() -> tuple[list[dict[str, Any]], list[Prompt]]:
    """Return the coding store's records and its prompts."""
    records = [
        {"id": f"code-{n:02d}", "kind": kind, "text": text, "date": "2026-11-02T10:00:00Z"}
        for n, (kind, text) in enumerate(CODING_RECORDS)
    ]
    prompts = [
        Prompt("coding", text, "coding", frozenset(f"code-{n:02d}" for n in needs))
        for text, needs in CODING_PROMPTS
    ]
    return records, prompts


def _build_store(folder: Path, records: list[dict[str, Any]]) -> Path:
    """Write ``records`` into a fresh store through a bulk import; return the store."""
    from memdir.service.memory import import_records

    store = folder / ".memdir"
    init_store(store, scope="project")
    lines = folder / "records.jsonl"
    with lines.open("w", encoding="utf-8") as fh:
        for record in records:
            row = {
                "id": record["id"],
                "kind": record.get("kind", "fact"),
                "text": record["text"],
                "origin": "owner",
                "created_at": record["date"],
                "updated_at": record["date"],
            }
            fh.write(json.dumps(row) + "\n")
    done = import_records(store, lines)
    if done.refused:
        raise UsageError(f"records refused by the import: {done.refused[:3]}")
    return store


def _memdir_candidates(store: Path, prompts: list[Prompt]) -> list[Candidate]:
    index = Index(store)
    try:
        out = []
        for prompt in prompts:
            found = recall(index, prompt.text, limit=digest.PROMPT_POOL, min_score=0.0)
            out.append(Candidate(prompt, [(h.doc["id"], h.score, h) for h in found.hits]))
        return out
    finally:
        index.close()


def _reference_candidates(records: list[dict[str, Any]], prompts: list[Prompt]) -> list[Candidate]:
    table = PlainTextSearch([r["text"] for r in records])
    try:
        out = []
        for prompt in prompts:
            rows = table.scored(_words(prompt.text), LIMIT)
            out.append(Candidate(prompt, [(records[i]["id"], s, records[i]) for i, s in rows]))
        return out
    finally:
        table.close()


def _fenced_tokens(docs: Iterable[dict[str, Any]], budget: int) -> tuple[list[str], int, int]:
    """Return the ids that fit and the tokens of the block with and without the preamble."""
    docs = list(docs)
    if not docs:
        return [], 0, 0
    items = [
        fence.Item(
            d["id"], d.get("kind", "fact"), d.get("origin", "owner"), "2026-01-01", d["text"]
        )
        for d in docs
    ]
    text, kept = fence.render(items, title="Relevant to this prompt:", budget_tokens=budget)
    later, _ = fence.render(
        items, title="Relevant to this prompt:", budget_tokens=budget, header=False
    )
    return [i.id for i in kept], estimate_tokens(text), estimate_tokens(later)


Rule = Callable[[Candidate], list[dict[str, Any]]]


def memdir_rule(**constants: float) -> Rule:
    """Return memdir's injection rule with ``constants`` (see :func:`digest.injectable`)."""

    def rule(candidate: Candidate) -> list[dict[str, Any]]:
        hits: list[Hit] = [h for _, _, h in candidate.hits]
        kept = digest.injectable(
            hits,
            limit=LIMIT,
            names=digest.prompt_names(candidate.prompt.text),
            prompt_words=digest.strong_words(candidate.prompt.text),
            **constants,
        )
        return [h.doc for h in kept]

    return rule


def threshold_rule(threshold: float) -> Rule:
    """Return the reference rule: its best :data:`LIMIT` records scoring at least ``threshold``."""

    def rule(candidate: Candidate) -> list[dict[str, Any]]:
        return [doc for _, score, doc in candidate.hits if score >= threshold][:LIMIT]

    return rule


def score(candidates: list[Candidate], rule: Rule, budget: int) -> Tally:
    """Apply ``rule`` to every candidate list and tally the injections."""
    tally = Tally()
    for candidate in candidates:
        ids, tokens, later = _fenced_tokens(rule(candidate), budget)
        tally.add(candidate.prompt, ids, tokens, later)
    return tally


def _split(groups: list[str]) -> tuple[set[str], set[str]]:
    cut = 4 if len(groups) >= 8 or len(groups) == 7 else max(1, len(groups) // 2)
    tune = set(groups[:cut])
    return tune, set(groups[cut:]) or tune


def _choose(
    candidates: list[Candidate], rules: dict[str, Rule], budget: int
) -> tuple[str, dict[str, Any]]:
    best: tuple[float, float, str] | None = None
    figures: dict[str, Any] = {}
    for name, rule in rules.items():
        summary = score(candidates, rule, budget).summary()
        key = (objective(summary), -summary["tokens"], name)
        if best is None or key[:2] > best[:2]:
            best, figures = key, summary
    assert best is not None
    return best[2], figures


REFERENCE_THRESHOLDS = tuple(round(0.5 * n, 1) for n in range(41))
"""-bm25() thresholds the reference may choose from on the tune split."""


def run(path: Path, *, tune: bool = False) -> dict[str, Any]:
    """Run the benchmark and return the ``--json`` document.

    Raises:
        UsageError: the file is not LoCoMo-shaped or has no observations.
    """
    conversations = load(path)
    budget = int(SETTINGS["prompt_tokens"])  # type: ignore[call-overload]
    code_records, code_prompts = coding()
    ours: list[Candidate] = []
    theirs: list[Candidate] = []
    with tempfile.TemporaryDirectory(prefix="memdir-inject-") as tmp:
        for group, records, prompts, _ in [
            *conversations,
            ("coding", code_records, code_prompts, 0),
        ]:
            folder = Path(tmp) / group
            folder.mkdir()
            store = _build_store(folder, records)
            ours += _memdir_candidates(store, prompts)
            theirs += _reference_candidates(records, prompts)
    tune_groups, held_groups = _split([c[0] for c in conversations])
    coding_tune = {p.text for p in code_prompts[::2]}

    def part(candidates: list[Candidate], tuning: bool) -> list[Candidate]:
        groups = tune_groups if tuning else held_groups
        return [
            c
            for c in candidates
            if (c.prompt.group in groups)
            or (c.prompt.group == "coding" and (c.prompt.text in coding_tune) == tuning)
        ]

    shipped = memdir_rule(**digest.PROMPT_RULE)
    reference = {f"{t}": threshold_rule(t) for t in REFERENCE_THRESHOLDS}
    chosen, _ = _choose(part(theirs, True), reference, budget)
    result: dict[str, Any] = {
        "conversations": len(conversations),
        "tune": sorted(tune_groups),
        "held_out": sorted(held_groups),
        "unscored": sum(c[3] for c in conversations),
        "budget_tokens": budget,
        "reference_threshold": float(chosen),
        "splits": {},
    }
    for split, tuning in (("tune", True), ("held_out", False)):
        mine, other = part(ours, tuning), part(theirs, tuning)
        rows = {
            "memdir": _by_category(mine, shipped, budget),
            "reference_bm25": _by_category(other, reference[chosen], budget),
            "memdir_before": _by_category(mine, memdir_rule(**digest.LEGACY_RULE), budget),
        }
        result["splits"][split] = rows
    if tune:
        grid = {json.dumps(c): memdir_rule(**c) for c in digest.rule_grid()}
        best, _ = _choose(part(ours, True), grid, budget)
        result["tuned_constants"] = json.loads(best)
        for split, tuning in (("tune", True), ("held_out", False)):
            result["splits"][split]["memdir_tuned"] = _by_category(
                part(ours, tuning), grid[best], budget
            )
    return result


def _by_category(candidates: list[Candidate], rule: Rule, budget: int) -> dict[str, Any]:
    total = score(candidates, rule, budget).summary()
    groups: dict[str, list[Candidate]] = {}
    for c in candidates:
        groups.setdefault(c.prompt.category, []).append(c)
    total["per_category"] = {
        name: score(group, rule, budget).summary() for name, group in sorted(groups.items())
    }
    return total


def render(result: dict[str, Any]) -> str:
    """Return the human-readable table of :func:`run`'s result."""
    lines = [
        f"{result['conversations']} conversations (tune: {', '.join(result['tune'])}; held-out: "
        f"{', '.join(result['held_out'])}) plus a coding store; {result['unscored']} questions "
        "unscored (no observation cites their evidence)",
        f"reference threshold chosen on tune: -bm25 >= {result['reference_threshold']}",
    ]
    if "tuned_constants" in result:
        lines.append(f"memdir constants chosen on tune: {result['tuned_constants']}")
    header = (
        f"{'split':9} {'system':16} {'recall':>7} {'precis.':>7} {'silent':>7} {'silent*':>7} "
        f"{'tokens':>7} {'later':>7}"
    )
    lines += ["", header]
    for split, rows in result["splits"].items():
        for name, s in rows.items():
            lines.append(
                f"{split:9} {name:16} {s['recall']:7.1f} {s['precision']:7.1f} "
                f"{s['silent']:7.1f} {s['silent_all']:7.1f} {s['tokens']:7.1f} "
                f"{s['tokens_later']:7.1f}"
            )
    lines.append(
        "recall: answerable prompts given a cited record; silent: prompts with no relevant "
        "belief given nothing; silent*: all prompts given nothing; tokens: mean per prompt "
        "(later: without the preamble, as on a session's later prompts)"
    )
    return "\n".join(lines)
