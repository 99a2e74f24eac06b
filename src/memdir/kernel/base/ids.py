"""Record ids: a kind prefix, a dash, 10 characters of sortable time and 4 random ones.

``p-01jc9x2k7q4fz2``: the time part is the Unix time in milliseconds in Crockford base32
(lowercase, 10 characters = 50 bits, sortable as text until the year 10889); the random part
is 20 random bits. Ids are stable forever and never derived from a record's text, so titles
in any script cannot collide (case B03). Imports: standard library only.
"""

from __future__ import annotations

import os
import re

from memdir.kernel.base.clock import utc_now
from memdir.kernel.base.errors import UsageError

CROCKFORD = "0123456789abcdefghjkmnpqrstvwxyz"

KIND_PREFIX: dict[str, str] = {
    "fact": "f",
    "preference": "p",
    "rule": "r",
    "decision": "d",
    "procedure": "pr",
    "entity": "e",
    "episode": "ep",
    "bug": "b",
}
PREFIX_KIND: dict[str, str] = {prefix: kind for kind, prefix in KIND_PREFIX.items()}

ID_PATTERN = re.compile(r"^(f|p|r|d|pr|e|ep|b)-[0-9a-hjkmnp-tv-z]{14}$")
"""A memdir-minted id. Hand-made records may use any :data:`SAFE_ID` instead."""

SAFE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
"""What any record id must look like: usable as a file name on every platform, no path parts."""


def _encode(value: int, width: int) -> str:
    chars = []
    for _ in range(width):
        chars.append(CROCKFORD[value & 31])
        value >>= 5
    return "".join(reversed(chars))


def mint_id(kind: str) -> str:
    """Return a new id for a record of ``kind``.

    Raises:
        UsageError: ``kind`` is not one of DESIGN §1's kinds.
    """
    try:
        prefix = KIND_PREFIX[kind]
    except KeyError:
        raise UsageError(
            f"unknown kind {kind!r}; expected one of {', '.join(KIND_PREFIX)}"
        ) from None
    millis = int(utc_now().timestamp() * 1000)
    return f"{prefix}-{_encode(millis, 10)}{_encode(int.from_bytes(os.urandom(3), 'big') >> 4, 4)}"


def check_id(record_id: str) -> str:
    """Return ``record_id`` stripped, or raise if it could not name a record file.

    Raises:
        UsageError: the id is empty, has path separators, dots in front, or other characters
            that cannot be a record file name.
    """
    value = record_id.strip()
    if not SAFE_ID.match(value):
        raise UsageError(f"not a record id: {record_id!r}")
    return value
