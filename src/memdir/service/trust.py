"""Trust surfaces: read the audit log, lift a tombstone (DESIGN §1, §4; docs/trust.md).

The write paths themselves log and check in the kernel (:mod:`memdir.kernel.storage.audit`, called
from :func:`memdir.kernel.storage.txn.apply` and the bulk import path); this module is what the CLI
adds on top: ``memdir audit [ID]`` and ``memdir tombstone lift``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memdir.kernel.base.caller import Caller
from memdir.kernel.base.errors import NotFoundError, UsageError
from memdir.kernel.base.ids import check_id
from memdir.kernel.storage import audit, authority, gitio
from memdir.kernel.storage.lifecycle import clean_text
from memdir.kernel.storage.lock import store_lock
from memdir.service.channel import cli_caller


def events(store: Path, record_id: str | None = None) -> list[dict[str, Any]]:
    """Return the store's audit events, oldest first; only those naming ``record_id`` if given.

    Args:
        store: The store folder.
        record_id: A record id, or ``None`` for every event.

    Returns:
        The events as :mod:`memdir.kernel.storage.audit` writes them (hashes, never text).

    Raises:
        UsageError: ``record_id`` is not a record id.
    """
    if record_id is not None:
        record_id = check_id(record_id)
    return audit.read(store, record_id)


@dataclass(frozen=True, slots=True)
class Lifted:
    """The outcome of ``memdir tombstone lift``."""

    key: str
    record: str | None

    def to_json(self) -> dict[str, Any]:
        """Return ``{"lifted": key, "record": id}``."""
        return {"lifted": self.key, "record": self.record}


def lift(
    store: Path,
    *,
    record_id: str | None = None,
    text: str | None = None,
    caller: Caller | None = None,
) -> Lifted:
    """Lift the tombstone of a rejected record or of a value, so it may be written again.

    Only the owner lifts a tombstone; the lift is appended to the ledger and the audit log and
    committed, in one commit.

    Args:
        store: The store folder.
        record_id: The rejected record whose value was tombstoned.
        text: The value itself (exactly one of ``record_id`` and ``text``).
        caller: Who asks (default: from this process's environment).

    Returns:
        :class:`Lifted`.

    Raises:
        AuthorityError: the caller is not the owner (exit 3; the attempt is recorded).
        UsageError: neither or both of ``record_id`` and ``text`` were given.
        NotFoundError: no tombstone holds that record or value (exit 4).
    """
    caller = caller or cli_caller()
    if (record_id is None) == (text is None):
        raise UsageError("name the rejected record (ID) or the value (--text), exactly one")
    target = record_id or "--text"
    authority.refuse_unless_owner(
        store, "tombstone lift", target, caller, "lets a rejected value be learned again"
    )
    with store_lock(store, "tombstone"):
        live = audit.tombstones(store)
        if record_id is not None:
            record_id = check_id(record_id)
            key = next((k for k, e in live.items() if e.get("record") == record_id), None)
        else:
            key = audit.value_key(clean_text(text or "", "--text"))
            key = key if key in live else None
        if key is None:
            raise NotFoundError(
                f"no tombstone for {record_id or 'that value'}; nothing to lift",
                record_id=record_id,
            )
        held = live[key].get("record")
        who = caller.to_json()
        audit.add_tombstones(store, [audit.tombstone_line(key, "lift", who, held)])
        ids = [{"id": held, "before": None, "after": None}] if held else []
        rel = audit.record(store, audit.event("tombstone-lift", ids, who, key=key))
        gitio.commit(
            store,
            [audit.TOMBSTONES, rel],
            f"lift tombstone {key[:19]}" + (f" ({held})" if held else ""),
            trailers=caller.trailers(),
        )
    return Lifted(key, held)
