"""``memdir.toml``: the store manifest (format version, scope, policy, budgets).

Read with :mod:`tomllib`. A store whose ``format`` is newer than :data:`FORMAT_VERSION` is
refused, read and write alike, rather than half-understood (case B40). Missing keys take the
defaults below; a wrong type is an error naming the key, never a silent default.

Imports: standard library only.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memdir.kernel.errors import IndexFormatError, ManifestError
from memdir.kernel.paths import MANIFEST_NAME

FORMAT_VERSION = 1
"""The store layout this build reads and writes (DESIGN §2, §3)."""

TEMPLATE = """\
# memdir store manifest. Edit by hand; `memdir health` checks it.
format = {format}          # store layout version; a newer memdir migrates it
scope = "{scope}"     # "project" or "user"

[recall]
limit = 10            # results per recall
decay = false         # forgetting curve (half-life by importance); off by default
min_score = 0.0       # results below this score are left out

[budgets]
digest_tokens = 400   # session digest, estimated as ceil(UTF-8 bytes / 4)
prompt_tokens = 300   # per-prompt recall

[policy]
near_duplicate = 0.7  # shingle similarity at or above which a remember updates instead of adding
"""


@dataclass(frozen=True, slots=True)
class Manifest:
    """The settings of one store, defaults filled in."""

    format: int = FORMAT_VERSION
    scope: str = "project"
    recall_limit: int = 10
    decay: bool = False
    min_score: float = 0.0
    digest_tokens: int = 400
    prompt_tokens: int = 300
    near_duplicate: float = 0.7
    raw: dict[str, Any] | None = None  # the whole parsed TOML, for later sections


def render(scope: str) -> str:
    """Return the text of a new manifest for a store of ``scope``."""
    return TEMPLATE.format(format=FORMAT_VERSION, scope=scope)


def _get(
    table: dict[str, Any], key: str, kind: type | tuple[type, ...], default: Any, where: str
) -> Any:
    if key not in table:
        return default
    value = table[key]
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if (isinstance(value, bool) and bool not in kinds) or not isinstance(value, kinds):
        raise ManifestError(f"{where}: {key} has the wrong type ({value!r})")
    return value


def load(store: Path) -> Manifest:
    """Read ``store/memdir.toml``.

    Raises:
        ManifestError: the file is missing, is not valid TOML (the message has the line), or a
            key has the wrong type.
        IndexFormatError: the store was written by a newer memdir format.
    """
    path = store / MANIFEST_NAME
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise ManifestError(f"{path} is missing; run `memdir init`") from exc
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ManifestError(f"{path}: {exc}") from exc
    where = str(path)
    fmt = _get(data, "format", int, FORMAT_VERSION, where)
    if fmt > FORMAT_VERSION:
        raise IndexFormatError(
            f"{path}: store format {fmt} is newer than this memdir reads ({FORMAT_VERSION}); "
            "upgrade memdir (nothing was changed)"
        )
    recall = _get(data, "recall", dict, {}, where)
    budgets = _get(data, "budgets", dict, {}, where)
    policy = _get(data, "policy", dict, {}, where)
    scope = _get(data, "scope", str, "project", where)
    if scope not in ("project", "user"):
        raise ManifestError(f'{where}: scope must be "project" or "user", not {scope!r}')
    return Manifest(
        format=fmt,
        scope=scope,
        recall_limit=_get(recall, "limit", int, 10, where + " [recall]"),
        decay=_get(recall, "decay", bool, False, where + " [recall]"),
        min_score=float(_get(recall, "min_score", (int, float), 0.0, where + " [recall]")),
        digest_tokens=_get(budgets, "digest_tokens", int, 400, where + " [budgets]"),
        prompt_tokens=_get(budgets, "prompt_tokens", int, 300, where + " [budgets]"),
        near_duplicate=float(
            _get(policy, "near_duplicate", (int, float), 0.7, where + " [policy]")
        ),
        raw=data,
    )
