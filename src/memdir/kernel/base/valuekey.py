"""The key of a belief's *value*: what a rejected-value tombstone is keyed on (issue 10, mark 1).

:func:`value_key` is the text NFKC-normalised, invisible characters removed, the common
Cyrillic and Greek look-alikes of Latin letters folded (after Unicode TS #39's confusables),
case folded, and everything that is not a letter, mark or digit (whitespace, punctuation,
symbols) dropped, then SHA-256 hashed. So "Use npm." and "ＵＳＥ  n\u200bpm" and "Usе npm" (a
Cyrillic е) share one key. The tombstone ledger (:mod:`memdir.kernel.storage.audit`) and the
index (which keeps each record's key, so a read can leave tombstoned values out in its query)
both use it.

Imports: standard library only.
"""

from __future__ import annotations

import hashlib
import unicodedata

_INVISIBLE = {
    0x00AD,  # soft hyphen
    0x034F,  # combining grapheme joiner
    0x115F,
    0x1160,  # Hangul fillers
    0x180E,  # Mongolian vowel separator
    0x200B,
    0x200C,
    0x200D,
    0x200E,
    0x200F,  # zero-width space, non-joiner, joiner, direction marks
    0x2060,
    0x2061,
    0x2062,
    0x2063,
    0x2064,  # word joiner, invisible operators
    0x3164,  # Hangul filler
    0xFEFF,  # zero-width no-break space (BOM)
    0xFFA0,  # half-width Hangul filler
}
_CONFUSABLES = str.maketrans(
    {
        # Cyrillic capitals and small letters that look like Latin ones
        "А": "a", "В": "b", "Е": "e", "К": "k", "М": "m", "Н": "h", "О": "o", "Р": "p",
        "С": "c", "Т": "t", "Х": "x", "У": "y", "І": "i", "Ј": "j", "Ѕ": "s", "Ү": "y",
        "а": "a", "е": "e", "о": "o", "р": "p", "с": "c", "у": "y", "х": "x", "і": "i",
        "ј": "j", "ѕ": "s", "ԁ": "d", "һ": "h", "ԛ": "q", "ԝ": "w", "ү": "y", "ӏ": "l",
        # Greek capitals and small letters that look like Latin ones
        "Α": "a", "Β": "b", "Ε": "e", "Ζ": "z", "Η": "h", "Ι": "i", "Κ": "k", "Μ": "m",
        "Ν": "n", "Ο": "o", "Ρ": "p", "Τ": "t", "Υ": "y", "Χ": "x",
        "α": "a", "ι": "i", "κ": "k", "ν": "v", "ο": "o", "ρ": "p", "υ": "u", "χ": "x",
        "ɑ": "a", "ɡ": "g", "ı": "i",
    }
)  # fmt: skip


_ASCII_NOT_ALNUM = str.maketrans(
    "", "", "".join(chr(c) for c in range(128) if not chr(c).isalnum())
)
"""Deletes every ASCII character that is not a letter or digit (Unicode categories L and N)."""


def fold(text: str) -> str:
    """Return ``text`` folded to the form tombstones compare (see the module docstring).

    ASCII text takes a shortcut with the same result: NFKC leaves it as it is, it has no
    invisible, format or look-alike character, case folding is lowering, and its letters and
    digits are exactly its characters of categories L, M and N (a bulk import folds every
    record twice; the general path costs about 0.2 ms a record).
    """
    if text.isascii():
        return text.lower().translate(_ASCII_NOT_ALNUM)
    text = unicodedata.normalize("NFKC", text)
    text = "".join(
        ch
        for ch in text
        if ord(ch) not in _INVISIBLE
        and not 0xFE00 <= ord(ch) <= 0xFE0F  # variation selectors
        and unicodedata.category(ch) != "Cf"
    )
    text = unicodedata.normalize("NFKC", text.translate(_CONFUSABLES).casefold())
    text = text.translate(_CONFUSABLES)
    return "".join(ch for ch in text if unicodedata.category(ch)[0] in "LMN")


def value_key(text: str) -> str:
    """Return the tombstone key of a belief text: ``sha256:`` and the hex digest of its fold.

    A text with no letter or digit at all (emoji, symbols) is keyed on its NFKC form instead,
    so two different symbol-only texts do not share the empty key.
    """
    folded = fold(text) or unicodedata.normalize("NFKC", text).strip()
    return "sha256:" + hashlib.sha256(folded.encode("utf-8")).hexdigest()
