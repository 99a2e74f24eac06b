"""What an agent is told: the session digest, per-prompt recall, and re-surfaced rules.

All three read the index only (never Markdown, DESIGN §5) and return fenced text
(:mod:`memdir.kernel.lang.fence`) under a hard token budget (DESIGN §6):

- **Session digest** (SessionStart): an index of the store, not the store. Counts by kind, how
  many candidates await review, then the owner rules and preferences most relevant to this
  session, then other beliefs relevant to it. Relevance is recall against the session's
  context (the project folder's name, the git branch, the files touched recently), so what goes
  in depends on the work at hand, not on age. Records tagged ``pinned`` (``memdir pin``) always
  come first, any kind, under their own budget (``[budgets] pinned_tokens``). A record scoped
  to paths (tags ``path:GLOB``, from ``remember --paths``) is shown only when a file the session
  touched matches one of its globs; :func:`scoped_for_file` finds those for one file (the
  PostToolUse hook injects them when the agent reads or edits it).
- **Prompt recall** (UserPromptSubmit): the records most relevant to the prompt, only those
  scoring at least ``[recall] prompt_min_score``, leaving out what this session already saw.
- **Rules** (PostToolBatch, after compaction): the top rules again, short.

Imports: standard library only.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from memdir.kernel.base import validity
from memdir.kernel.base.layout import StoreLayout, layout
from memdir.kernel.index.recall import Hit, recall
from memdir.kernel.lang import fence, pathscope
from memdir.kernel.lang.polarity import opposed
from memdir.kernel.lang.text import STOP_WORDS, estimate_tokens, similarity

TYPE_CHECKING = False  # the hook path never imports typing or dataclasses (start-up cost)
if TYPE_CHECKING:
    from typing import Any

    from memdir.kernel.index.interface import IndexBackend

ORIGIN_ORDER = {"owner": 0, "import": 1, "agent": 2, "observer": 3}
PINNED_TAG = "pinned"
RULE_KINDS = ("rule", "preference")
MIRROR_FLAG = StoreLayout.MIRROR_FLAG
"""``state/`` file naming the ids the Claude Code auto-memory mirror carries (store.mirror)."""


class Injection:
    """Fenced text for the agent, the records it carries, and the tokens it left out.

    ``withheld``: estimated tokens of what would have been injected but the context already
    held (the preamble after its first time, records shown before and their near-duplicates).
    """

    __slots__ = ("ids", "text", "withheld")

    def __init__(self, text: str, ids: tuple[str, ...], withheld: int = 0) -> None:
        self.text = text
        self.ids = ids
        self.withheld = withheld


def _item(doc: dict[str, Any]) -> fence.Item:
    date = (doc.get("updated_at") or doc.get("created_at") or "")[:10]
    origin = doc["origin"] if doc.get("scope", "project") == "project" else f"{doc['origin']}, user"
    return fence.Item(doc["id"], doc["kind"], origin, date, doc["text"])


def _filter(served: validity.Served | None, scope: str = "project") -> validity.Served:
    """Return the read filter to query with: ``served``, else active, true now, of ``scope``.

    The hooks pass their store's (:func:`memdir.kernel.storage.identity.read_filter`: scope
    and project identity, tombstoned values); every query below puts it in its ``WHERE``.
    """
    return served if served is not None else validity.Served(scope=scope)


def git_branch(project: Path) -> str:
    """Return the checked-out branch of the repository at ``project`` ("" when unknown).

    Read from ``.git/HEAD`` (following a worktree's ``gitdir:`` file), not by running git.
    """
    dot_git = project / ".git"
    try:
        if dot_git.is_file():
            pointer = dot_git.read_text(encoding="utf-8").strip()
            if pointer.startswith("gitdir:"):
                target = Path(pointer[7:].strip())
                dot_git = target if target.is_absolute() else project / target
        head = (dot_git / "HEAD").read_text(encoding="utf-8").strip()
    except OSError:
        return ""
    return head[len("ref: refs/heads/") :] if head.startswith("ref: refs/heads/") else ""


def context_query(project: Path, branch: str, files: Iterable[str]) -> str:
    """Return the words that describe a session's context: folder, branch and file names."""
    words = [project.name, re.sub(r"[/_.-]+", " ", branch)]
    for rel in files:
        words.append(re.sub(r"[/_.-]+", " ", rel))
    return " ".join(w for w in words if w)


def _ordered_rules(
    index: IndexBackend, query: str, served: validity.Served, limit: int = 40
) -> list[dict[str, Any]]:
    relevant = {
        h.doc["id"]: h.score
        for h in recall(index, query, limit=limit, kinds=RULE_KINDS, served=served).hits
    }
    docs = index.list_docs(kinds=RULE_KINDS, limit=500, served=served)

    def key(doc: dict[str, Any]) -> tuple[int, int, float, int, str]:
        pinned = 0 if PINNED_TAG in doc.get("tags", []) else 1
        return (
            pinned,
            ORIGIN_ORDER.get(doc["origin"], 9),
            -relevant.get(doc["id"], 0.0),
            -int(doc.get("importance", 5)),
            str(doc.get("id")),
        )

    return sorted(docs, key=key)


def scoped_docs(index: IndexBackend, store: Path | None = None) -> list[dict[str, Any]]:
    """Return the active records scoped to paths (kept in ``state/`` while records are unchanged).

    Args:
        index: The store's index, scanned only when the cached list is stale.
        store: The store folder, for the cache (:mod:`memdir.kernel.lang.pathscope`), or None.
    """
    if store is not None:
        kept = pathscope.cached(store)
        if kept is not None:
            return kept
    docs = [d for d in index.list_docs(statuses=("active",)) if pathscope.path_globs(d)]
    if store is not None:
        pathscope.save(store, docs)
    return docs


def scoped_for_file(
    index: IndexBackend,
    rel: str | list[str],
    *,
    store: Path | None = None,
    budget_tokens: int = 150,
    exclude: Iterable[str] = (),
) -> Injection:
    """Return the path-scoped records whose globs match ``rel`` and were not yet shown.

    Args:
        index: The store's index.
        rel: The file the agent read or edited, relative to the project (or several).
        store: The store folder, for the cache of :func:`scoped_docs`.
        budget_tokens: Hard cap on the fenced block.
        exclude: Ids the agent's context already holds.

    Returns:
        The fenced block (empty when nothing applies) and the ids it carries.
    """
    skip = set(exclude)
    files = [rel] if isinstance(rel, str) else list(rel)
    docs = [
        d for d in scoped_docs(index, store) if d["id"] not in skip and pathscope.matches(d, files)
    ]
    if not docs:
        return Injection("", ())
    docs.sort(key=lambda d: (ORIGIN_ORDER.get(d["origin"], 9), -int(d.get("importance", 5))))
    text, kept = fence.render(
        [_item(doc) for doc in docs],
        title=f"Beliefs scoped to {', '.join(files[:3])}:",
        budget_tokens=budget_tokens,
    )
    return Injection(text, tuple(item.id for item in kept))


def _relevant_scoped(doc: dict[str, Any], touched: list[str]) -> bool:
    """Whether a record is shown: unscoped, or scoped to a glob a touched file matches."""
    return not pathscope.path_globs(doc) or pathscope.matches(doc, touched)


def mirrored_ids(store: Path) -> frozenset[str]:
    """Return the ids the Claude Code auto-memory mirror carries (empty when it is off).

    One read of ``state/mirror-claude.json``; no directory scan.
    """
    import json

    try:
        with open(layout(store).state_path(MIRROR_FLAG), encoding="utf-8") as fh:
            flag = json.load(fh)
    except (OSError, ValueError):
        return frozenset()
    ids = flag.get("ids") if isinstance(flag, dict) else None
    return frozenset(i for i in ids if isinstance(i, str)) if isinstance(ids, list) else frozenset()


MAX_SKIPPED = 200
"""Most extra candidates per-prompt recall ranks to make up for records it must skip."""

DEMOTED = StoreLayout.DEMOTED  # in state/
"""Ids ``[policy] max_active`` keeps out of injection (written by ``memdir.store.capacity``)."""


def demoted_ids(store: Path) -> frozenset[str]:
    """Return the ids demoted out of injection (empty when no cap is set). One small read."""
    import json

    try:
        with open(layout(store).state_path(DEMOTED), encoding="utf-8") as fh:
            body = json.load(fh)
    except (OSError, ValueError):
        return frozenset()
    ids = body.get("ids") if isinstance(body, dict) else None
    return frozenset(i for i in ids if isinstance(i, str)) if isinstance(ids, list) else frozenset()


def session_digest(
    index: IndexBackend,
    *,
    project: Path,
    files: Iterable[str] = (),
    budget_tokens: int = 400,
    pending_review: int | None = None,
    compacted: bool = False,
    exclude: Iterable[str] = (),
    mirrored: frozenset[str] = frozenset(),
    demoted: frozenset[str] = frozenset(),
    pinned_tokens: int = 150,
    touched: Iterable[str] | None = None,
    user_index: IndexBackend | None = None,
    extra_notes: Iterable[str] = (),
    served: validity.Served | None = None,
    user_served: validity.Served | None = None,
) -> Injection:
    """Return the SessionStart digest for a session in ``project`` (see the module docstring).

    Pinned records come first under ``pinned_tokens`` of their own, on top of
    ``budget_tokens``. A path-scoped record is shown only when a file in ``touched`` (default:
    ``files``; after a compaction, every file the session read or wrote) matches its globs.
    ``extra_notes`` go after the counts (the write budgets a store passed).

    ``exclude`` names records the agent's context already holds (a resumed session's earlier
    injections): they are left out, and when nothing else is left the digest is empty, since
    its counts and hints are in that context too (DESIGN §10.10). ``mirrored`` ids (what the
    Claude Code auto-memory mirror already carries, see :func:`mirrored_ids`) are left out too;
    a note says where they are. ``demoted`` ids (past a ``[policy] max_active`` cap, see
    :func:`demoted_ids`) are never injected. ``user_index``
    (the user store's, when there is one) adds the person's cross-project rules and
    preferences after the project's, labelled ``user``.

    ``served`` and ``user_served`` are the two stores' read filters
    (:func:`memdir.kernel.storage.identity.read_filter`; default: active, true now, of the
    store's scope), applied in every index query the digest makes.
    """
    served = _filter(served)
    user_served = _filter(user_served, "user")
    skip = set(exclude)
    counts = index.count_by("kind", status="active")
    statuses = index.count_by("status")
    active = index.list_docs(limit=1, served=served)
    if not active:
        return Injection("", ())
    by_kind = ", ".join(f"{n} {kind}" for kind, n in sorted(counts.items()))
    waiting = statuses.get("candidate", 0) if pending_review is None else pending_review
    notes = [
        f"{statuses.get('active', 0)} active records ({by_kind}).",
        "Recall more with `memdir recall QUERY` (or the memory_recall tool); correct a wrong "
        "belief with `memdir correct ID --text …`.",
    ]
    if waiting:
        notes.append(f"{waiting} candidate belief(s) await review (`memdir review`).")
    notes += list(extra_notes)  # write budgets passed (once per session)
    files = list(files)
    near = list(files if touched is None else touched)
    query = context_query(project, git_branch(project), files)
    rules = [d for d in _ordered_rules(index, query, served) if _relevant_scoped(d, near)]
    if user_index is not None:
        mine = _ordered_rules(user_index, query, user_served)
        rules += [doc for doc in mine if doc["origin"] == "owner" and _relevant_scoped(doc, near)]
    pinned = [
        d
        for d in index.list_docs(limit=500, served=served)
        if PINNED_TAG in (d.get("tags") or ()) and d["id"] not in mirrored
    ]
    pinned.sort(key=lambda d: (ORIGIN_ORDER.get(d["origin"], 9), -int(d.get("importance", 5))))
    pinned_items, pinned_cost = [], 0
    for doc in pinned:
        if doc["id"] in skip or not _relevant_scoped(doc, near):
            continue
        cost = estimate_tokens(_item(doc).render()) + 1
        if pinned_cost + cost <= pinned_tokens:
            pinned_items.append(_item(doc))
            pinned_cost += cost
    seen = {doc["id"] for doc in rules} | {doc["id"] for doc in pinned} | mirrored
    if mirrored:
        rules = [doc for doc in rules if doc["id"] not in mirrored]
        notes.append(
            f"{len(mirrored)} owner rule(s) and preference(s) are in Claude Code's auto-memory "
            "(memdir_rules.md, memdir_preferences.md) and are not repeated here."
        )
    others = [
        doc
        for doc in (h.doc for h in recall(index, query, limit=10, served=served).hits)
        if doc["id"] not in seen and _relevant_scoped(doc, near)
    ]
    title = (
        "Context was compacted; the rules and preferences still apply:"
        if compacted
        else "Rules and preferences first, then beliefs relevant to this session:"
    )
    rules = [d for d in rules if d["id"] not in {i.id for i in pinned_items}]
    budget = budget_tokens
    if pinned_items:  # their own budget, whatever the frame and notes take of the main one
        frame, _ = fence.render([], title=title, notes=notes)
        budget = max(budget_tokens, estimate_tokens(frame) + 1) + pinned_cost
    text, kept = fence.render(
        [
            *pinned_items,
            *(_item(doc) for doc in [*rules, *others] if doc["id"] not in skip | demoted),
        ],
        title=title,
        notes=notes,
        budget_tokens=budget,
    )
    if skip and not kept:
        return Injection("", ())
    return Injection(text, tuple(item.id for item in kept))


PROMPT_POOL = 20
"""Records recall hands the injection rule for one prompt, best first."""
WEAK_WORDS = frozenset(
    """
    fix fixed fixes add added adds make makes made change changes changed update updates
    updated use uses using used like run runs running file files module modules function
    functions code line lines thing things stuff work works working need needs want wants
    please thanks thank ok okay yes yeah sure continue go try help new old get got put set
    show look looks see write remove delete rename move call test tests one two way
    """.split()  # noqa: SIM905 - a word list reads best as text
)
"""Prompt words too common in coding requests to carry a record on their own ("fix the typo",
"rename x", "make it like the other module"): a record matched only by these, by one-character
words or by numbers is never injected."""
PROMPT_MIN_SCORE = 1.0
"""The default ``[recall] prompt_min_score`` (chosen with the constants of :data:`PROMPT_RULE`)."""
PROMPT_RULE: dict[str, float] = {
    "min_score": PROMPT_MIN_SCORE,
    "relative": 0.7,
    "min_strong": 1.0,
    "named": 1.0,
    "coverage": 0.7,
}
"""The per-prompt injection rule (:func:`injectable`), chosen on LoCoMo conversations 0-3 and
the coding prompts of even index by ``memdir bench inject --tune`` (mean of recall and the share
of no-relevant-belief prompts given nothing); conversations 4-6 were only measured
(docs/benchmarks.md)."""
COVERAGE_WORDS = 4
"""A prompt's strong words counted by the coverage test at most."""
NEAR_DUPLICATE = 0.5
"""Shingle similarity at or above which a record is not injected beside one it nearly repeats."""


def _repeats(text: str, held: str) -> bool:
    """Whether ``text`` nearly repeats ``held``: similar, and not its contradiction."""
    return similarity(text, held) >= NEAR_DUPLICATE and not opposed(text, held)


HELD_COMPARED = 40
"""Most of the session's earlier injections a new one is compared with for near-duplicates."""
LEGACY_RULE: dict[str, float] = {
    "min_score": 2.0,
    "relative": 0.0,
    "min_strong": 0.0,
    "named": 0.0,
    "coverage": 0.0,
}
"""The rule before issue 16: an absolute score threshold alone."""


_NAME = re.compile(r"(?<![\w'])([A-Z][a-z]+(?:[A-Z][a-z]+)*)\b")


def prompt_names(prompt: str) -> frozenset[str]:
    """Return the names a prompt mentions: capitalised words not opening a sentence, lowercased.

    "What did Caroline realize after her race?" names ``caroline``; "Fix the typo" names
    nothing (a sentence's first word is capitalised anyway).
    """
    found = set()
    for match in _NAME.finditer(prompt):
        before = prompt[: match.start()].rstrip()
        if not before or before[-1] in ".!?:;\n\"'(":
            continue
        word = match.group(1).lower()
        if word not in STOP_WORDS and word not in WEAK_WORDS:
            found.add(word)
    return frozenset(found)


def _strong(word: str) -> bool:
    return len(word) > 1 and not word.isdigit() and word.lower() not in WEAK_WORDS


def strong_words(prompt: str) -> int:
    """Return how many distinct query words of ``prompt`` are strong (not weak, not stop words)."""
    from memdir.kernel.lang.text import QUESTION_WORDS, query_terms, term_words

    surface = term_words(prompt)
    terms = query_terms(prompt, extra_stop_words=QUESTION_WORDS)
    return sum(1 for t in terms if _strong(surface.get(t, t)))


def injectable(
    hits: list[Hit],
    *,
    limit: int = 5,
    min_score: float = 2.0,
    relative: float = 0.0,
    min_strong: float = 1.0,
    names: frozenset[str] = frozenset(),
    coverage: float = 0.0,
    prompt_words: int = 0,
    named: float = 1.0,
) -> list[Hit]:
    """Return the hits worth injecting for a prompt, best first (the injection rule).

    Args:
        hits: Recall's hits for the prompt, best first, with their matched words.
        limit: Most hits to keep.
        min_score: A hit scoring below this is dropped.
        relative: A hit scoring below ``relative × the best score`` is dropped.
        min_strong: A hit must match at least this many query words that are not weak
            (:data:`WEAK_WORDS`, one character, a number).
        names: The prompt's names (:func:`prompt_names`): when it has any, a hit must match
            one of them ("What did Caroline…" is not answered by a record about Melanie).
        coverage: A hit must match at least this share of the prompt's ``prompt_words``
            strong words (:func:`strong_words`), counted up to :data:`COVERAGE_WORDS` (a long
            prompt with one relevant clause still reaches it).
        prompt_words: How many strong words the prompt has.
        named: 0 to ignore ``names`` (the rule before issue 16).

    Returns:
        The kept hits, at most ``limit``.
    """
    if not hits:
        return []
    best = hits[0].score
    kept = []
    for hit in hits:
        if hit.score < min_score or hit.score < relative * best:
            continue
        if sum(1 for word in hit.matched if _strong(word)) < min_strong:
            continue
        if named and names and not names & {word.lower() for word in hit.matched}:
            continue
        strong = sum(1 for word in hit.matched if _strong(word))
        if prompt_words and strong < coverage * min(prompt_words, COVERAGE_WORDS):
            continue
        kept.append(hit)
    return kept[:limit]


def rule_grid() -> list[dict[str, float]]:
    """Return the constants :func:`injectable` is tuned over (``memdir bench inject --tune``)."""
    return [
        {"min_score": s, "relative": r, "min_strong": m, "named": n, "coverage": c}
        for s in (1.0, 0.0, 2.0, 3.0, 5.0)  # ties go to the first: 1.0 keeps tiny stores working
        for r in (0.0, 0.5, 0.6, 0.7, 0.8)
        for m in (0.0, 1.0, 2.0)
        for n in (0.0, 1.0)
        for c in (0.0, 0.34, 0.5, 0.6, 0.7)
    ]


def prompt_recall(
    index: IndexBackend,
    prompt: str,
    *,
    budget_tokens: int = 300,
    min_score: float = PROMPT_MIN_SCORE,
    exclude: Iterable[str] = (),
    limit: int = 5,
    notes: Iterable[str] = (),
    preamble: bool = True,
    user_index: IndexBackend | None = None,
    demoted: frozenset[str] = frozenset(),
    served: validity.Served | None = None,
    user_served: validity.Served | None = None,
) -> Injection:
    """Return what a prompt earns: the records that pass :func:`injectable` and are new here.

    Args:
        index: The store's index.
        prompt: The person's prompt.
        budget_tokens: Hard cap on the fenced block.
        min_score: ``[recall] prompt_min_score``.
        exclude: Ids the session's context already holds (injected before, stored from its
            prompts): never injected again, and a record nearly the same as one of them
            (:data:`NEAR_DUPLICATE`) is left out too, as is a near-duplicate of a record
            kept before it.
        limit: Most records.
        notes: Lines that go in the same fence first (what memdir just stored, reminders).
        preamble: Whether the fence opens with :data:`fence.HEADER`; a session is told it
            once (and again after a compaction), not on every prompt.
        user_index: The user store's index: searched too, its records labelled ``user``
            (issue 10, mark 4).
        served: The project store's read filter (scope and project identity, tombstoned
            values; :func:`memdir.kernel.storage.identity.read_filter`), in the index query;
            default active, true now, project scope.
        user_served: The user store's (default: active, true now, user scope).
        demoted: Ids past a ``[policy] max_active`` cap (:func:`demoted_ids`): never injected.

    Returns:
        The fenced text ("" when nothing earns a place) and the ids it carries.
    """
    skip = list(dict.fromkeys(exclude))
    held_ids = set(skip)
    notes = list(notes)
    extra = len(skip) + min(len(demoted), MAX_SKIPPED)
    served = _filter(served)
    pool = [
        h
        for h in recall(index, prompt, limit=PROMPT_POOL + extra, min_score=0.0, served=served).hits
        if h.doc["id"] not in demoted
    ]
    if user_index is not None:
        pool += recall(
            user_index,
            prompt,
            limit=PROMPT_POOL,
            min_score=0.0,
            served=_filter(user_served, "user"),
        ).hits
        pool.sort(key=lambda h: -h.score)
    earned = injectable(
        pool,
        limit=len(pool),
        min_score=min_score,
        names=prompt_names(prompt),
        prompt_words=strong_words(prompt),
        **{k: v for k, v in PROMPT_RULE.items() if k != "min_score"},
    )
    held = _held_texts(index, skip[-HELD_COMPARED:]) if earned else []
    fresh: list[Hit] = []
    withheld = skipped = 0
    for hit in earned:
        text = str(hit.doc.get("text", ""))
        if hit.doc["id"] in held_ids or any(_repeats(text, o) for o in held):
            if skipped < limit:  # what the old rule would have shown again, at most ``limit``
                withheld += estimate_tokens(_item(hit.doc).render()) + 1
                skipped += 1
            continue
        held.append(text)
        fresh.append(hit)
        if len(fresh) == limit:
            break
    if not fresh and not notes:
        return Injection("", (), withheld)
    text, kept = fence.render(
        [_item(h.doc) for h in fresh],
        title="Relevant to this prompt:" if fresh else "",
        notes=notes,
        budget_tokens=budget_tokens,
        header=preamble,
    )
    if not preamble:
        withheld += estimate_tokens(fence.HEADER) + 1
    return Injection(text, tuple(item.id for item in kept), withheld)


def _held_texts(index: IndexBackend, ids: list[str]) -> list[str]:
    """Return the texts of the records ``ids`` names (those still in the index)."""
    texts = []
    for record_id in ids:
        doc = index.get_doc(record_id)
        if doc is not None:
            texts.append(str(doc.get("text", "")))
    return texts


def top_rules(
    index: IndexBackend,
    *,
    project: Path,
    budget_tokens: int = 150,
    limit: int = 5,
    served: validity.Served | None = None,
) -> Injection:
    """Return the top owner rules again (re-surfacing after tool batches and compaction).

    ``served``: the store's read filter (default: active, true now, project scope).
    """
    rules = [
        d
        for d in _ordered_rules(index, project.name, _filter(served))
        if d["kind"] == "rule" and not pathscope.path_globs(d)  # those come with their files
    ][:limit]
    if not rules:
        return Injection("", ())
    text, kept = fence.render(
        [_item(doc) for doc in rules],
        title="Standing rules (reminder):",
        budget_tokens=budget_tokens,
    )
    return Injection(text, tuple(item.id for item in kept))
