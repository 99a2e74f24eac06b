"""Model prices for the token ledger: what memdir's injections cost and its savings are worth.

Every figure is US dollars per million **input** tokens: what memdir adds to a prompt, and what a
refused re-read would have added, is input the model reads (cache discounts are left out, so a
saving is never overstated by a price the session may not have paid, nor a cost understated by
one it may have had).

The defaults are the public list prices for standard (non-batch, non-cached) input on the
providers' pricing pages as read on :data:`PRICES_AS_OF` (anthropic.com/pricing,
openai.com/api/pricing, ai.google.dev/gemini-api/docs/pricing); a model is priced by the
longest key its name starts with, so ``claude-opus-5-5`` takes the ``claude-opus`` price. They
go stale: override or extend them in the store's manifest::

    [prices]
    as_of = "2026-12-01"          # when you read them
    "claude-opus" = 5.0           # model name prefix = USD per million input tokens
    "my-local-model" = 0.0

A model no key matches is counted in tokens and shown without a cost.
"""

from __future__ import annotations

from typing import Any

PRICES_AS_OF = "2025-11-24"
"""When the default prices were read from the providers' public pricing pages."""

DEFAULT_PRICES: dict[str, float] = {
    "claude-opus": 5.0,  # Claude Opus 4.5 (4.0/4.1 were 15.0)
    "claude-sonnet": 3.0,
    "claude-haiku": 1.0,  # Claude Haiku 4.5
    "claude-3-opus": 15.0,
    "claude-3-5-haiku": 0.8,
    "claude-3-haiku": 0.25,
    "gpt-5": 1.25,
    "gpt-5-mini": 0.25,
    "gpt-5-nano": 0.05,
    "gpt-4.1": 2.0,
    "gpt-4o": 2.5,
    "o3": 2.0,
    "o4-mini": 1.1,
    "gemini-2.5-pro": 1.25,  # prompts up to 200k tokens
    "gemini-2.5-flash": 0.3,
    "gemini-3-pro": 2.0,  # prompts up to 200k tokens
}
"""Model name prefix → USD per million input tokens (list prices on :data:`PRICES_AS_OF`)."""


def table(overrides: dict[str, Any] | None = None) -> tuple[dict[str, float], str]:
    """Return the price table with the manifest's ``[prices]`` over the defaults, and its date.

    Args:
        overrides: The manifest's ``[prices]`` table (validated by the manifest reader).

    Returns:
        ``(prices, as_of)``: prefix → USD per million input tokens, and the date they are from
        (the manifest's ``as_of`` when it gives prices, else :data:`PRICES_AS_OF`).
    """
    prices = dict(DEFAULT_PRICES)
    as_of = PRICES_AS_OF
    for key, value in (overrides or {}).items():
        if key == "as_of":
            as_of = str(value)
        else:
            prices[str(key)] = float(value)
    return prices, as_of


def price_for(model: str, prices: dict[str, float]) -> float | None:
    """Return the USD per million input tokens of ``model`` (longest prefix), or ``None``."""
    name = model.strip().lower()
    best = max((key for key in prices if name.startswith(key.lower())), key=len, default=None)
    return None if best is None else prices[best]


def cost(tokens: int, price: float | None) -> float | None:
    """Return what ``tokens`` input tokens cost at ``price`` (USD per million), or ``None``."""
    return None if price is None else round(tokens * price / 1_000_000, 6)
