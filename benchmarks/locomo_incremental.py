"""Reference sketch of the proposed journal-search recipe, indexed one turn at a time.

Run from the repository root (a few seconds)::

    python benchmarks/locomo_incremental.py [path/to/locomo7-dev.json]

``benchmarks/locomo_ablation.py`` builds each conversation's index in one go. This script
indexes the same turns the way ``memdir.kernel.storage.journal`` must: appended one at a time, each
new turn updating only the rows of the two turns before it in its session and its session's
row, then searches the way ``memdir.kernel.index.recall.search_turns`` should. It prints its figures
beside the batch-built *proposed* recipe's, which they must equal (a check that the recipe is
incremental), and is meant as a template for the change to journal.py and recall.py.

The recipe (chosen on conversations 0-3 by ``locomo_ablation.py``):

- ``turns_fts(text, date, context, bigrams, near_bigrams)``, tokenizer
  ``unicode61 remove_diacritics 0 tokenchars _``: ``text`` is the terms of the speaker and the
  turn (as now); ``date`` the terms of the turn's UTC day as words ("8 May 2023"); ``context``
  the terms of the turns 1 and 2 before and after it in its session; ``bigrams`` its term
  bigrams ``a_b`` (stop terms skipped); ``near_bigrams`` the bigrams of those neighbours.
- ``sessions_fts(body)``: one row per session, the terms of all its turns.
- Query: the question's terms, STOP_WORDS and QUESTION_WORDS dropped, OR its term bigrams;
  ``bm25(turns_fts, 1.0, 2.0, 0.5, 0.25, 0.125)``, best POOL rows; each rescored as
  ``(-bm25 + 0.2 × -bm25(sessions_fts of its session)) × 1.3 if its speaker is the one named
  × len(text) ^ 0.2 × 0.9 if text ends with "?"``, best first, ties by rowid.
"""

from __future__ import annotations

import itertools
import sqlite3
import sys
import time
from pathlib import Path

from memdir.bench.locomo import Scores, load
from memdir.kernel.lang.text import STOP_WORDS, fts_match, index_text, terms, words

sys.path.insert(0, str(Path(__file__).resolve().parent))
import locomo_ablation as batch

QUESTION_WORDS = frozenset(batch.QUESTION_WORDS)
STOP_TERMS = frozenset(terms(" ".join(STOP_WORDS)))
MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)
WEIGHTS = (1.0, 2.0, 0.5, 0.25, 0.125)  # text, date, context, bigrams, near_bigrams
SESSION_WEIGHT = 0.2
SPEAKER_BOOST = 0.3
LENGTH_PRIOR = 0.2
QUESTION_PENALTY = 0.9
POOL = 200
WINDOW = 2
SCHEMA = """
CREATE TABLE turns (rowid INTEGER PRIMARY KEY, session TEXT, at TEXT, who TEXT, text TEXT);
CREATE INDEX turns_by_session ON turns (session, rowid);
CREATE VIRTUAL TABLE turns_fts USING fts5(
    text, date, context, bigrams, near_bigrams,
    tokenize = 'unicode61 remove_diacritics 0 tokenchars _'
);
CREATE TABLE turn_sessions (id INTEGER PRIMARY KEY, session TEXT UNIQUE NOT NULL);
CREATE VIRTUAL TABLE sessions_fts USING fts5(body, tokenize = 'unicode61 remove_diacritics 0');
"""


def day_words(at: str) -> str:
    """Return the day of an ISO instant as words: "2023-05-08T…" → "8 May 2023"."""
    return f"{int(at[8:10])} {MONTHS[int(at[5:7]) - 1]} {at[:4]}"


def bigram_text(*texts: str) -> str:
    """Return the ``a_b`` bigrams of each text's terms, stop terms skipped, space-joined."""
    out: list[str] = []
    for text in texts:
        content = [t for t in terms(text) if t not in STOP_TERMS]
        out += [f"{a}_{b}" for a, b in itertools.pairwise(content)]
    return " ".join(out)


def _neighbour_columns(conn: sqlite3.Connection, rowid: int, session: str) -> tuple[str, str]:
    """Return (context, near_bigrams) of a turn: its session's turns within WINDOW of it."""
    before = conn.execute(
        "SELECT text FROM turns WHERE session = ? AND rowid < ? ORDER BY rowid DESC LIMIT ?",
        (session, rowid, WINDOW),
    ).fetchall()
    after = conn.execute(
        "SELECT text FROM turns WHERE session = ? AND rowid > ? ORDER BY rowid LIMIT ?",
        (session, rowid, WINDOW),
    ).fetchall()
    texts = [r[0] for r in before + after]
    return index_text(*texts), bigram_text(*texts)


def append_turn(conn: sqlite3.Connection, who: str, text: str, session: str, at: str) -> None:
    """Index one new turn: insert its rows, refresh its two predecessors' and its session's."""
    rowid = conn.execute(
        "INSERT INTO turns (session, at, who, text) VALUES (?,?,?,?)", (session, at, who, text)
    ).lastrowid
    assert rowid is not None
    context, near = _neighbour_columns(conn, rowid, session)
    conn.execute(
        "INSERT INTO turns_fts (rowid, text, date, context, bigrams, near_bigrams)"
        " VALUES (?,?,?,?,?,?)",
        (rowid, index_text(who, text), index_text(day_words(at)), context, bigram_text(text), near),
    )
    previous = conn.execute(
        "SELECT rowid FROM turns WHERE session = ? AND rowid < ? ORDER BY rowid DESC LIMIT ?",
        (session, rowid, WINDOW),
    ).fetchall()
    for (before,) in previous:  # their context now includes the new turn
        context, near = _neighbour_columns(conn, before, session)
        conn.execute(
            "UPDATE turns_fts SET context = ?, near_bigrams = ? WHERE rowid = ?",
            (context, near, before),
        )
    conn.execute("INSERT OR IGNORE INTO turn_sessions (session) VALUES (?)", (session,))
    (sid,) = conn.execute("SELECT id FROM turn_sessions WHERE session = ?", (session,)).fetchone()
    row = conn.execute("SELECT body FROM sessions_fts WHERE rowid = ?", (sid,)).fetchone()
    body = f"{row[0]} {index_text(text)}" if row else index_text(text)
    if row:  # journal.py would batch this: one rewrite per session per sync
        conn.execute("UPDATE sessions_fts SET body = ? WHERE rowid = ?", (body, sid))
    else:
        conn.execute("INSERT INTO sessions_fts (rowid, body) VALUES (?, ?)", (sid, body))


def query_terms(query: str) -> list[str]:
    """Return the distinct query terms, STOP_WORDS and QUESTION_WORDS dropped (all if none).

    memdir.kernel.lang.text.query_terms with QUESTION_WORDS as extra stop words, for Latin text.
    """
    every: dict[str, None] = {}
    kept: dict[str, None] = {}
    for word in words(query):
        for term in terms(word)[:1]:
            every.setdefault(term, None)
            if word not in STOP_WORDS and word not in QUESTION_WORDS:
                kept.setdefault(term, None)
    return list(kept or every)


def search_turns(conn: sqlite3.Connection, query: str, limit: int) -> list[int]:
    """Return the rowids of the ``limit`` best turns for ``query``."""
    found = query_terms(query)
    pairs = [p for p in dict.fromkeys(bigram_text(query).split()) if p]
    match = fts_match([*found, *pairs])
    if not match:
        return []
    rows = conn.execute(
        "SELECT t.rowid, t.session, t.who, t.text, bm25(turns_fts, ?, ?, ?, ?, ?) AS rank"
        " FROM turns_fts JOIN turns t ON t.rowid = turns_fts.rowid WHERE turns_fts MATCH ?"
        " ORDER BY rank LIMIT ?",
        (*WEIGHTS, match, max(POOL, 4 * limit)),
    ).fetchall()
    sessions = dict(
        conn.execute(
            "SELECT s.session, -bm25(sessions_fts) FROM sessions_fts"
            " JOIN turn_sessions s ON s.id = sessions_fts.rowid WHERE sessions_fts MATCH ?",
            (fts_match(found),),
        ).fetchall()
    )
    wanted = set(found)
    named = {who for who in {row[2] for row in rows} if wanted & set(terms(who))}
    scored = []
    for rowid, session, who, text, rank in rows:
        score = -rank + SESSION_WEIGHT * sessions.get(session, 0.0)
        if len(named) == 1 and who in named:
            score *= 1.0 + SPEAKER_BOOST
        score *= max(len(text), 1) ** LENGTH_PRIOR
        if text.rstrip().endswith("?"):
            score *= QUESTION_PENALTY
        scored.append((-score, rowid))
    return [rowid for _, rowid in sorted(scored)[:limit]]


def main(argv: list[str]) -> None:
    """Index every conversation turn by turn, search every question, compare with the batch."""
    conversations = load(Path(argv[0]) if argv else batch.DATA)
    ours = Scores(batch.KS)
    for conversation in conversations:
        conn = sqlite3.connect(":memory:")
        conn.executescript(SCHEMA)
        for turn in conversation.turns:
            at = turn["at"].strftime("%Y-%m-%dT%H:%M:%S.000Z")
            append_turn(conn, turn["speaker"], turn["text"], turn["session"], at)
        ids = {i + 1: t["dia_id"] for i, t in enumerate(conversation.turns)}
        for question in conversation.questions:
            started = time.perf_counter()
            ranked = [ids[r] for r in search_turns(conn, question.text, max(batch.KS))]
            ours.add(question, ranked, (time.perf_counter() - started) * 1000)
        conn.close()
    bench = batch.Bench(conversations)
    tuned = batch.Recipe(
        name="proposed",
        question_words=True,
        window=2,
        context=0.5,
        date=2.0,
        session=0.2,
        speaker_boost=0.3,
        length_prior=0.2,
        question_penalty=0.9,
        bigrams=0.25,
        pool=200,
    )
    print(batch.HEADER.split("|")[0])
    print(batch.line("proposed, batch-built", bench.run(tuned)).split("|")[0])
    s = ours.summary()
    print(
        f"{'proposed, turn by turn (this sketch)':44s} {s['recall@5']:5.1f} {s['recall@10']:5.1f}"
        f" {s['recall@25']:5.1f} {s['recall@50']:5.1f} {s['recall_all@5']:5.1f}"
        f" {s['mrr']:5.3f} {s['p50_ms']:5.2f} {s['p95_ms']:5.2f}"
    )


if __name__ == "__main__":
    main(sys.argv[1:])
