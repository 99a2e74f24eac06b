"""The Porter stemmer against SQLite's own FTS5 porter tokenizer, word for word."""

import json
import random
import re
import sqlite3
import string

from memdir.kernel.lang.stem import stem
from tests.conftest import SHARED


def _sqlite_stems(words: list[str]) -> dict[str, str]:
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(w, tokenize='porter ascii')")
    conn.executemany("INSERT INTO t (rowid, w) VALUES (?, ?)", list(enumerate(words, 1)))
    conn.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, instance)")
    by_row = {doc: term for term, doc in conn.execute("SELECT term, doc FROM v")}
    return {word: by_row[i] for i, word in enumerate(words, 1)}


def _corpus_words() -> list[str]:
    words: set[str] = set()
    data = json.loads((SHARED / "data/locomo/locomo7-dev.json").read_text())
    words.update(re.findall(r"[a-z]+", json.dumps(data).lower()))
    rng = random.Random(7)
    suffixes = [
        "ational",
        "tional",
        "izer",
        "ization",
        "fulness",
        "iveness",
        "ement",
        "ing",
        "ed",
        "sses",
        "ies",
        "eed",
        "bli",
        "logi",
        "alli",
        "ousli",
        "iciti",
        "ness",
        "al",
        "e",
    ]
    for _ in range(5000):
        stem_part = "".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(1, 8)))
        words.add(stem_part + rng.choice(suffixes))
    return sorted(words)


def test_stem_matches_sqlite_porter_on_every_word_of_the_corpus() -> None:
    words = _corpus_words()
    expected = _sqlite_stems(words)
    mismatches = [(w, expected[w], stem(w)) for w in words if expected[w] != stem(w)]
    assert len(words) > 10_000
    assert mismatches == []


def test_stem_leaves_short_long_and_non_ascii_words_alone() -> None:
    assert stem("is") == "is"
    assert stem("x" * 65) == "x" * 65
    assert stem("naïve") == "naïve"
    assert stem("running") == "run"
