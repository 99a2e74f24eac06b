"""``memdir bench locomo``: evidence recall on LoCoMo conversations, beside two references.

For each conversation it creates a fresh store in a temporary folder, writes every turn through
the journal (speaker as ``who``, the session's date as the turn's time, one second apart; an
image's caption appended as ``[shares a photo: …]``), indexes the journal, and asks every
question through memdir's journal search. A question is scored against its gold evidence turns:

- ``recall@k``: the share of its evidence turns found in the top k, averaged over questions;
- ``recall_all@k``: the share of questions with *all* their evidence in the top k;
- ``mrr``: the mean reciprocal rank of the first evidence turn (0 when none is in the top 50).

Evidence quirks (DESIGN data README): ids are split on ``;``, ``,`` and spaces, ``D:11:26``
reads ``D11:26``, ``D30:05`` reads ``D30:5``; ids that name no turn are dropped, and a question
left without evidence is unscored and counted as such. Every category is scored, the
adversarial one (5) included. ``--audit`` applies the locomo-audit errata
(``correct_evidence`` replaces ``cited_evidence``).

Conversations are also scored in two splits, as ``memdir bench inject`` splits them: *tune*
(the first four of seven; the first half of a shorter file), on which every ranking constant was
chosen, and *held-out* (the others), only measured. With ``--embed`` a second memdir row
re-ranks the same lexical pool with an embedding model (:mod:`memdir.semantic`).

In the same run it scores a plain reference, SQLite FTS5 BM25 with the ``unicode61`` tokenizer
over the same turn texts, the same stop words dropped, any-term query, and prints the published
DRAGON dense-retriever row (Maharana et al., ACL 2024).
"""

from __future__ import annotations

import json
import re
import statistics
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from memdir.kernel.base.errors import UsageError
from memdir.kernel.index import Index
from memdir.kernel.index.foreign import PlainTextSearch
from memdir.kernel.index.recall import SEMANTIC_WEIGHT, TURN_WEIGHTS, search_turns
from memdir.kernel.lang.text import STOP_WORDS
from memdir.kernel.storage import journal
from memdir.store.setup import init_store

TYPE_CHECKING = False
if TYPE_CHECKING:
    from memdir.kernel.index.recall import Similarity

DEFAULT_KS = (5, 10, 25, 50)
DRAGON = {"recall@5": 56.7, "recall@10": 66.2, "recall@25": 76.7, "recall@50": 82.7}
"""Published DRAGON evidence recall on all ten LoCoMo conversations (the LoCoMo paper)."""
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
_EVIDENCE = re.compile(r"^D:?(\d+):0*(\d+)$")


@dataclass(frozen=True, slots=True)
class Question:
    """One scored question: its text, category and gold evidence turn ids."""

    conversation: str
    index: int
    text: str
    category: int
    evidence: frozenset[str]


@dataclass
class Conversation:
    """One LoCoMo sample: its turns in order and its questions."""

    sample_id: str
    turns: list[dict[str, Any]]  # dia_id, speaker, text, at, session
    questions: list[Question] = field(default_factory=list)
    unscored: int = 0


def parse_evidence(raw: Iterable[str]) -> list[str]:
    """Return the well-formed evidence ids in LoCoMo's ``evidence`` list (quirks repaired)."""
    out: list[str] = []
    for item in raw:
        for piece in re.split(r"[;,\s]+", str(item)):
            match = _EVIDENCE.match(piece.strip())
            if match:
                out.append(f"D{int(match.group(1))}:{int(match.group(2))}")
    return out


def _session_time(text: str) -> datetime:
    return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)


def turn_text(turn: dict[str, Any]) -> str:
    """Return a turn's text with its image caption, as the benchmark journals it."""
    text = str(turn.get("text", ""))
    caption = turn.get("blip_caption")
    return f"{text} [shares a photo: {caption}]" if caption else text


def load(path: Path, audit: Path | None = None) -> list[Conversation]:
    """Read LoCoMo-format conversations and their questions.

    Raises:
        UsageError: the file is not LoCoMo-shaped JSON.
    """
    try:
        samples = json.loads(path.read_text(encoding="utf-8"))
        errata = json.loads(audit.read_text(encoding="utf-8")) if audit else []
    except (OSError, ValueError) as exc:
        raise UsageError(f"cannot read LoCoMo data: {exc}") from exc
    if not isinstance(samples, list):
        raise UsageError(f"{path}: expected a JSON list of LoCoMo samples")
    fixes = {e["question_id"]: e["correct_evidence"] for e in errata if "correct_evidence" in e}
    conversations = []
    for number, sample in enumerate(samples):
        try:
            conversations.append(_conversation(number, sample, fixes))
        except (KeyError, TypeError, ValueError) as exc:
            raise UsageError(f"{path}: sample {number} is not LoCoMo-shaped ({exc})") from exc
    return conversations


def _conversation(number: int, sample: dict[str, Any], fixes: dict[str, list[str]]) -> Conversation:
    talk = sample["conversation"]
    turns: list[dict[str, Any]] = []
    sessions = sorted(
        (int(k.split("_")[1]) for k in talk if re.fullmatch(r"session_\d+", k)),
    )
    for n in sessions:
        start = _session_time(talk[f"session_{n}_date_time"])
        for i, turn in enumerate(talk[f"session_{n}"]):
            turns.append(
                {
                    "dia_id": turn["dia_id"],
                    "speaker": turn["speaker"],
                    "text": turn_text(turn),
                    "at": start + timedelta(seconds=i),
                    "session": f"{sample['sample_id']}:{n}",
                }
            )
    conversation = Conversation(sample["sample_id"], turns)
    known = {t["dia_id"] for t in turns}
    for index, qa in enumerate(sample["qa"]):
        raw = fixes.get(f"locomo_{number}_qa{index}", qa.get("evidence", []))
        evidence = frozenset(e for e in parse_evidence(raw) if e in known)
        if not evidence:
            conversation.unscored += 1
            continue
        conversation.questions.append(
            Question(sample["sample_id"], index, qa["question"], int(qa["category"]), evidence)
        )
    return conversation


Searcher = Callable[[str, int], list[str]]
"""(question, k) → dia_ids ranked best first."""


def build_memdir(
    conversation: Conversation,
    folder: Path,
    similarity: Similarity | None = None,
    weight: float = SEMANTIC_WEIGHT,
) -> tuple[Searcher, Callable[[], None]]:
    """Journal a conversation into a fresh store; return memdir's searcher and a closer.

    ``similarity``: an embedding model's :meth:`~memdir.semantic.StaticModel.similarity` to
    fuse in (lexical only when ``None``), with ``weight`` (the model's ``weight``).
    """
    store = folder / conversation.sample_id / ".memdir"
    init_store(store, scope="project")
    where: dict[tuple[str, int], str] = {}
    for turn in conversation.turns:
        ref = journal.append_turn(
            store, turn["speaker"], turn["text"], session=turn["session"], at=turn["at"]
        )
        where[(ref.file.split("/")[-1], ref.offset)] = turn["dia_id"]
    index = Index(store)
    journal.sync_journal(index, store)

    def search(question: str, k: int) -> list[str]:
        _, hits = search_turns(
            index,
            question,
            limit=k,
            weights=TURN_WEIGHTS,
            similarity=similarity,
            semantic_weight=weight,
        )
        return [where[(h.file, h.offset)] for h in hits]

    return search, index.close


_WORD = re.compile(r"\w+")


def build_reference(conversation: Conversation) -> tuple[Searcher, Callable[[], None]]:
    """Index the same turns in a plain FTS5 table (unicode61); any-term BM25 search."""
    table = PlainTextSearch([turn["text"] for turn in conversation.turns])
    ids = [turn["dia_id"] for turn in conversation.turns]

    def search(question: str, k: int) -> list[str]:
        words = [w for w in _WORD.findall(question.lower()) if w not in STOP_WORDS]
        words = list(dict.fromkeys(words)) or _WORD.findall(question.lower())
        return [ids[i] for i in table.search(words, k)]

    return search, table.close


@dataclass
class Scores:
    """Running totals for one system."""

    ks: tuple[int, ...]
    recall: dict[int, list[float]] = field(default_factory=lambda: defaultdict(list))
    recall_all: dict[int, list[float]] = field(default_factory=lambda: defaultdict(list))
    rr: list[float] = field(default_factory=list)
    latencies_ms: list[float] = field(default_factory=list)
    by_category: dict[int, Scores] = field(default_factory=dict)

    def add(
        self, question: Question, ranked: list[str], took_ms: float, nested: bool = True
    ) -> None:
        """Score one answer."""
        for k in self.ks:
            found = len(question.evidence & set(ranked[:k]))
            self.recall[k].append(found / len(question.evidence))
            self.recall_all[k].append(1.0 if found == len(question.evidence) else 0.0)
        first = next((i for i, d in enumerate(ranked, 1) if d in question.evidence), None)
        self.rr.append(1.0 / first if first else 0.0)
        self.latencies_ms.append(took_ms)
        if nested:
            self.by_category.setdefault(question.category, Scores(self.ks)).add(
                question, ranked, took_ms, nested=False
            )

    def summary(self) -> dict[str, Any]:
        """Return percentages (recall), MRR and latency figures."""
        out: dict[str, Any] = {}
        for k in self.ks:
            out[f"recall@{k}"] = (
                round(100 * statistics.fmean(self.recall[k]), 1) if self.recall[k] else 0.0
            )
        first = self.ks[0]
        out[f"recall_all@{first}"] = (
            round(100 * statistics.fmean(self.recall_all[first]), 1)
            if self.recall_all[first]
            else 0.0
        )
        out["mrr"] = round(statistics.fmean(self.rr), 3) if self.rr else 0.0
        lat = sorted(self.latencies_ms)
        out["p50_ms"] = round(statistics.median(lat), 3) if lat else 0.0
        out["p95_ms"] = round(lat[min(len(lat) - 1, int(0.95 * len(lat)))], 3) if lat else 0.0
        out["questions"] = len(self.rr)
        return out


def split(conversations: list[Conversation]) -> tuple[set[str], set[str]]:
    """Return the tune and held-out conversation ids.

    Tune: the first 4 of 7 or more, else the first half; held-out: the others (the tune split
    again for a file of one conversation).
    """
    ids = [c.sample_id for c in conversations]
    cut = 4 if len(ids) >= 7 else max(1, len(ids) // 2)
    return set(ids[:cut]), set(ids[cut:]) or set(ids[:cut])


def _summary(scores: Scores) -> dict[str, Any]:
    return {
        **scores.summary(),
        "per_category": {
            CATEGORIES.get(c, str(c)): s.summary() for c, s in sorted(scores.by_category.items())
        },
    }


def run(
    path: Path,
    *,
    ks: tuple[int, ...] = DEFAULT_KS,
    audit: Path | None = None,
    embed: Similarity | None = None,
    embed_weight: float = SEMANTIC_WEIGHT,
) -> dict[str, Any]:
    """Run the benchmark and return the ``--json`` document (recall figures in percent).

    ``embed``: an embedding model's similarity; adds the ``memdir_embed`` row (and per split),
    fused with ``embed_weight`` (the model's ``weight``).

    Raises:
        UsageError: bad data or ``ks``.
    """
    if not ks or min(ks) < 1:
        raise UsageError("--k needs positive integers, e.g. 5,10,25,50")
    ks = tuple(sorted(set(ks)))
    conversations = load(path, audit)
    tune, held = split(conversations)
    systems = ["memdir", "reference_fts5"] + (["memdir_embed"] if embed else [])
    totals = {name: Scores(ks) for name in systems}
    splits = {part: {name: Scores(ks) for name in systems} for part in ("tune", "held_out")}
    depth = max(ks)
    with tempfile.TemporaryDirectory(prefix="memdir-locomo-") as tmp:
        for conversation in conversations:
            searchers: dict[str, tuple[Searcher, Callable[[], None]]] = {
                "memdir": build_memdir(conversation, Path(tmp)),
                "reference_fts5": build_reference(conversation),
            }
            if embed:
                searchers["memdir_embed"] = build_memdir(
                    conversation, Path(tmp) / "e", embed, embed_weight
                )
            parts = [
                p
                for p, ids in (("tune", tune), ("held_out", held))
                if conversation.sample_id in ids
            ]
            try:
                for question in conversation.questions:
                    for name, (search, _) in searchers.items():
                        started = time.perf_counter()
                        ranked = search(question.text, depth)
                        took = (time.perf_counter() - started) * 1000
                        totals[name].add(question, ranked, took)
                        for part in parts:
                            splits[part][name].add(question, ranked, took)
            finally:
                for _, close in searchers.values():
                    close()
    out: dict[str, Any] = {
        "questions_scored": len(totals["memdir"].rr),
        "questions_unscored": sum(c.unscored for c in conversations),
        "conversations": len(conversations),
        "audit": str(audit) if audit else None,
        **{name: _summary(scores) for name, scores in totals.items()},
        "dragon": dict(DRAGON),
        "tune": sorted(tune),
        "held_out": sorted(held),
        "splits": {
            part: {name: _summary(scores) for name, scores in by_name.items()}
            for part, by_name in splits.items()
        },
    }
    return out
