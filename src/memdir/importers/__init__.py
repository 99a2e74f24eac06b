"""Importers: other tools' memories → memdir records (they read; ``store.bulk`` writes).

One module per source, each with ``read(path, scope=...) -> Iterator[Item]`` (see
:mod:`memdir.importers.pipeline`). :data:`FORMATS` is the registry ``memdir import --from``
chooses from; :func:`read` looks a format up and fails fast on an unknown one.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from pathlib import Path

from memdir.importers.pipeline import Item
from memdir.kernel.base.errors import UsageError

FORMATS: dict[str, str] = {
    "openwolf": "openwolf",
    "amp": "amp",
    "wolfmem": "wolfmem",
    "claude-memory": "claude_code",
    "claude-md": "claude_code",
    "basic-memory": "basic_memory",
    "claude-mem": "claude_mem",
}
"""``--from`` name → module in this package."""


def read(fmt: str, path: Path, *, scope: str = "project") -> Iterator[Item]:
    """Return the stream of :class:`Item` values format ``fmt`` reads from ``path``.

    Raises:
        UsageError: unknown format, or ``path`` is not what the format reads.
    """
    if fmt not in FORMATS:
        raise UsageError(f"unknown import format {fmt!r}; expected one of {', '.join(FORMATS)}")
    module = importlib.import_module(f"memdir.importers.{FORMATS[fmt]}")
    reader = getattr(module, "read_" + fmt.replace("-", "_"), None) or module.read
    items: Iterator[Item] = reader(path, scope=scope)
    return items
