"""Context a host drops, kept for the next hook whose answer it reads (Cline CLI).

Cline CLI 3.x runs its TaskStart and UserPromptSubmit hook files detached: it never reads what
they print (``@cline/core`` 0.0.86, released in ``cline`` 3.0.65; proven in
``tests/hosts/conformance/test_cline.py``). Its PreToolUse and PostToolUse hooks are awaited and
their ``contextModification`` reaches the model. So for that host the digest and the prompt's
recall are kept here, one file per session (``state/deferred/<session key>.txt``), and handed
out with the next PreToolUse or PostToolUse answer of the same session, once.

Imports: standard library and the kernel only.
"""

from __future__ import annotations

import os
from pathlib import Path

from memdir.kernel.storage import paths
from memdir.kernel.storage.session import session_key

DEFERRED_DIRNAME = paths.StoreLayout.DEFERRED
"""The folder under the store's ``state/`` that holds the kept context."""
KEEPS_FOR = frozenset({"SessionStart", "UserPromptSubmit"})
"""The events whose answer the host drops."""
GIVES_ON = frozenset({"PreToolUse", "PostToolUse", "PostToolUseFailure"})
"""The events whose answer the host reads, in the session's order."""


def _path(store: Path, session: str) -> Path:
    return paths.StoreLayout(store).in_state(DEFERRED_DIRNAME, f"{session_key(session)}.txt")


def keep(store: Path, session: str, text: str) -> None:
    """Append ``text`` (fenced context) to what is kept for ``session``.

    Raises:
        OSError: the state folder cannot be written (the dispatcher logs it; the host goes on).
    """
    if not text:
        return
    target = _path(store, session)
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target, "a", encoding="utf-8") as handle:
        handle.write(text.rstrip("\n") + "\n\n")


def take(store: Path, session: str) -> str:
    """Return and forget what is kept for ``session`` ("" when nothing is).

    The file is renamed before it is read, so two hooks of the same session running at once
    never both hand out the same context.
    """
    target = _path(store, session)
    claimed = target.with_name(f"{target.name}.{os.getpid()}")
    try:
        os.replace(target, claimed)
    except OSError:
        return ""
    try:
        return claimed.read_text(encoding="utf-8").strip()
    finally:
        claimed.unlink(missing_ok=True)
