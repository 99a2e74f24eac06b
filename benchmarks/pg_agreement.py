"""Top-10 agreement between the SQLite and the PostgreSQL index on LoCoMo (issue 14).

Usage::

    MEMDIR_PG_DSN='postgresql:///postgres?host=/tmp/…&port=54329&user=postgres' \\
        python benchmarks/pg_agreement.py [--conversations 7] [--json]

For each LoCoMo conversation (``../shared/data/locomo/locomo7-dev.json``) it writes every turn
to a fresh store's journal and indexes it in both backends (SQLite: ``index.sqlite``;
PostgreSQL: a schema of its own, dropped afterwards), and also indexes every turn as a record
(kind ``fact``, dated like the turn). Then it asks every question both ways:

- journal search (``memdir search``): the top 10 turns;
- record recall (``memdir recall``): the top 10 records.

It prints, per surface, the share of questions whose top 10 are identical (same ids, same
order), the mean overlap of the two top-10 sets (|A ∩ B| / 10, or over the longer list when
shorter), the largest score difference, the evidence recall@10 of each backend, build times
and query latency p50/p95. Every question whose lists differ is listed with the first place
they part and both scores there, so the reason can be read off (a tie broken differently, a
score that differs in the last bits).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = next(
    (p / "shared" for p in ROOT.parents if (p / "shared" / "data" / "locomo").is_dir()),
    Path("/work/shared"),
)
LOCOMO = SHARED / "data" / "locomo" / "locomo7-dev.json"
sys.path.insert(0, str(ROOT / "src"))

from memdir.bench.locomo import load  # noqa: E402
from memdir.kernel.base.model import Record  # noqa: E402
from memdir.kernel.index import FileStat, Index  # noqa: E402
from memdir.kernel.index.recall import TURN_WEIGHTS, recall, search_turns  # noqa: E402
from memdir.kernel.storage import journal  # noqa: E402
from memdir.pgindex import PostgresIndex, split_dsn  # noqa: E402
from memdir.store.setup import init_store  # noqa: E402

K = 10


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else 0.0


class Tally:
    """Agreement figures for one surface."""

    def __init__(self) -> None:
        self.questions = 0
        self.identical = 0
        self.overlap: list[float] = []
        self.max_score_diff = 0.0
        self.recall: dict[str, list[float]] = {"sqlite": [], "postgres": []}
        self.ms: dict[str, list[float]] = {"sqlite": [], "postgres": []}
        self.differences: list[dict[str, object]] = []

    def add(
        self,
        question: str,
        a: list[tuple[str, float]],
        b: list[tuple[str, float]],
        evidence: frozenset[str] | None,
    ) -> None:
        self.questions += 1
        ids_a, ids_b = [i for i, _ in a], [i for i, _ in b]
        if ids_a == ids_b:
            self.identical += 1
        longest = max(len(ids_a), len(ids_b))
        self.overlap.append(len(set(ids_a) & set(ids_b)) / longest if longest else 1.0)
        scores_b = dict(b)
        for rid, score in a:
            if rid in scores_b:
                self.max_score_diff = max(self.max_score_diff, abs(score - scores_b[rid]))
        if evidence:
            for name, ids in (("sqlite", ids_a), ("postgres", ids_b)):
                self.recall[name].append(len(evidence & set(ids)) / len(evidence))
        if ids_a != ids_b:
            at = next(
                (n for n, (x, y) in enumerate(zip(ids_a, ids_b, strict=False)) if x != y),
                min(len(ids_a), len(ids_b)),
            )
            self.differences.append(
                {
                    "question": question,
                    "rank": at + 1,
                    "sqlite": a[at] if at < len(a) else None,
                    "postgres": b[at] if at < len(b) else None,
                    "lengths": (len(a), len(b)),
                }
            )

    def to_json(self) -> dict[str, object]:
        return {
            "questions": self.questions,
            "identical_top10": round(self.identical / max(self.questions, 1), 4),
            "mean_overlap_top10": round(statistics.fmean(self.overlap or [1.0]), 4),
            "max_score_difference": self.max_score_diff,
            "evidence_recall@10": {
                k: round(statistics.fmean(v), 4) if v else None for k, v in self.recall.items()
            },
            "latency_ms": {
                k: {"p50": round(_pct(v, 0.5), 2), "p95": round(_pct(v, 0.95), 2)}
                for k, v in self.ms.items()
            },
            "differences": self.differences[:20],
        }


def _timed(tally: Tally, name: str, call):  # type: ignore[no-untyped-def]
    started = time.perf_counter()
    out = call()
    tally.ms[name].append((time.perf_counter() - started) * 1000)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--conversations", type=int, default=7)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    dsn = os.environ.get("MEMDIR_PG_DSN", "")
    if not dsn:
        print("set MEMDIR_PG_DSN (.ci/postgres start prints one)", file=sys.stderr)
        return 2
    libpq, _ = split_dsn(dsn)
    conversations = load(LOCOMO)[: args.conversations]
    turns_tally, records_tally = Tally(), Tally()
    build_ms: dict[str, float] = {"sqlite": 0.0, "postgres": 0.0}
    with tempfile.TemporaryDirectory() as tmp:
        for conversation in conversations:
            store = Path(tmp) / conversation.sample_id / ".memdir"
            init_store(store, scope="project")
            where: dict[tuple[str, int], str] = {}
            records = []
            for n, turn in enumerate(conversation.turns):
                ref = journal.append_turn(
                    store, turn["speaker"], turn["text"], session=turn["session"], at=turn["at"]
                )
                where[(ref.file.split("/")[-1], ref.offset)] = turn["dia_id"]
                at = ref.at
                records.append(
                    Record(
                        id=f"f-{n:05d}",
                        kind="fact",
                        text=f"{turn['speaker']}: {turn['text']}",
                        created_at=at,
                        updated_at=at,
                    )
                )
            schema = f"bench_{uuid.uuid4().hex[:10]}"
            sqlite = Index(store)
            pg = PostgresIndex(store, libpq, schema=schema)
            try:
                for name, index in (("sqlite", sqlite), ("postgres", pg)):
                    started = time.perf_counter()
                    with index.write():
                        for record in records:
                            path = f"records/fact/{record.id}.md"
                            index.upsert_record(record, path, FileStat(0, 0, 0), [])
                        journal.sync_journal(index, store)
                    build_ms[name] += (time.perf_counter() - started) * 1000
                for question in conversation.questions:
                    got = {}
                    for name, index in (("sqlite", sqlite), ("postgres", pg)):
                        _, hits = _timed(
                            turns_tally,
                            name,
                            lambda index=index, question=question: search_turns(
                                index, question.text, limit=K, weights=TURN_WEIGHTS
                            ),
                        )
                        got[name] = [(where[(h.file, h.offset)], h.score) for h in hits]
                    turns_tally.add(
                        question.text, got["sqlite"], got["postgres"], question.evidence
                    )
                    found = {}
                    for name, index in (("sqlite", sqlite), ("postgres", pg)):
                        result = _timed(
                            records_tally,
                            name,
                            lambda index=index, question=question: recall(
                                index, question.text, limit=K
                            ),
                        )
                        found[name] = [(h.doc["id"], h.score) for h in result.hits]
                    records_tally.add(question.text, found["sqlite"], found["postgres"], None)
            finally:
                sqlite.close()
                pg._conn.execute(f"DROP SCHEMA {schema} CASCADE")
                pg.close()
    report = {
        "conversations": len(conversations),
        "turns": sum(len(c.turns) for c in conversations),
        "build_ms": {k: round(v, 1) for k, v in build_ms.items()},
        "journal_search": turns_tally.to_json(),
        "record_recall": records_tally.to_json(),
    }
    if args.json:
        print(json.dumps(report, indent=2, ensure_ascii=False))
        return 0
    print(
        f"LoCoMo: {report['conversations']} conversations, {report['turns']} turns"
        " (and as many records)"
    )
    print(
        f"build (records + journal): sqlite {build_ms['sqlite']:.0f} ms,"
        f" postgres {build_ms['postgres']:.0f} ms"
    )
    for label, tally in (("journal search", turns_tally), ("record recall", records_tally)):
        out = tally.to_json()
        print(
            f"{label}: {out['questions']} questions; identical top 10 {out['identical_top10']:.1%};"
            f" mean overlap {out['mean_overlap_top10']:.1%}; max score difference"
            f" {out['max_score_difference']:.2e}"
        )
        print(f"  evidence recall@10 {out['evidence_recall@10']}; latency ms {out['latency_ms']}")
        for diff in out["differences"][:10]:  # type: ignore[index]
            print(
                f"  differs at rank {diff['rank']}: {diff['question'][:70]!r}"
                f" sqlite={diff['sqlite']} postgres={diff['postgres']}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
