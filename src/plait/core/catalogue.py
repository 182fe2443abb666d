"""A model's catalogue entry (price, limits, capabilities) ⇄ its JSON, and a call's tokens → its cost in USD.

The entry a `model` declaration resolves to sits on its graph record
(`ModelNode.catalogue`): the spec's own `price`, `context_window`,
`max_output` and `capabilities` first, else the `models` section of the
`plait.lock` beside the spec, which `plait models lock` writes from the
maintained catalogue packages (src/plait/cli/models.py, the only importer of
those). This module is what the compiler, the cost bound and the run-time
budget share: it imports nothing beyond `core.record`, so `plait check` pays
nothing for it.

Prices are USD per million tokens, as floats (docs/decisions.md: a bound and
a budget compare sums of a few thousand products; Decimal would buy
exactness no price list has, at a cost in every JSON and arithmetic site).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dataclasses import field

from .record import Record, record

__all__ = [
    "CAPABILITIES",
    "ModelInfo",
    "Price",
    "PriceTier",
    "cost_usd",
]

#: What a model can do, as the catalogue says it. `tools`: function calling; `structured_output`: a reply held
#: to a JSON Schema by the API; `streaming`: replies streamed; `vision`: images in; `files`: documents (PDF) in;
#: `hosted_tools`: tools the provider runs itself (web search, code execution).
CAPABILITIES = ("tools", "structured_output", "streaming", "vision", "files", "hosted_tools")

_PER_TOKEN = 1e-6  # prices are per million tokens


@record
class PriceTier(Record):
    """Rates for a call whose input exceeds `above` tokens: every token of that call pays them (the cliff model
    providers use), each rate None where the tier leaves the base rate."""

    above: int
    input: float | None = None
    output: float | None = None
    cached_input: float | None = None


@record
class Price(Record):
    """USD per million tokens. `cached_input` None: cached input pays `input`. `per_request`: USD per call."""

    input: float
    output: float
    cached_input: float | None = None
    per_request: float | None = None
    #: Ascending by `above`; the last one a call's input exceeds applies.
    tiers: tuple[PriceTier, ...] = ()

    def rates(self, input_tokens: int) -> tuple[float, float, float]:
        """The (input, output, cached input) rates a call with `input_tokens` of input pays."""
        rate_in, rate_out = self.input, self.output
        rate_cached = self.cached_input if self.cached_input is not None else self.input
        for tier in self.tiers:
            if input_tokens > tier.above:
                rate_in = tier.input if tier.input is not None else rate_in
                rate_out = tier.output if tier.output is not None else rate_out
                rate_cached = tier.cached_input if tier.cached_input is not None else rate_cached
        return rate_in, rate_out, rate_cached

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"input": self.input, "output": self.output}
        if self.cached_input is not None:
            out["cached_input"] = self.cached_input
        if self.per_request is not None:
            out["per_request"] = self.per_request
        if self.tiers:
            out["tiers"] = [
                {k: v for k, v in (("above", t.above), ("input", t.input), ("output", t.output),
                                   ("cached_input", t.cached_input)) if v is not None}
                for t in self.tiers
            ]  # fmt: skip
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Price:
        """The JSON `to_json` writes → a Price; ValueError naming the first field that is wrong."""
        tiers = data.get("tiers", ())
        if not isinstance(tiers, list | tuple):
            raise ValueError("`tiers` is not a list")
        made = []
        for i, t in enumerate(tiers):
            if not isinstance(t, Mapping) or not _whole(t.get("above")):
                raise ValueError(f"`tiers[{i}]` needs a whole number `above`")
            made.append(
                PriceTier(
                    above=t["above"],
                    input=_rate(t, "input", f"tiers[{i}].input"),
                    output=_rate(t, "output", f"tiers[{i}].output"),
                    cached_input=_rate(t, "cached_input", f"tiers[{i}].cached_input"),
                )
            )
        rate_in, rate_out = _rate(data, "input", "input"), _rate(data, "output", "output")
        if rate_in is None or rate_out is None:
            raise ValueError("a price needs both `input` and `output`")
        return cls(
            input=rate_in,
            output=rate_out,
            cached_input=_rate(data, "cached_input", "cached_input"),
            per_request=_rate(data, "per_request", "per_request"),
            tiers=tuple(sorted(made, key=lambda t: t.above)),
        )


@record
class ModelInfo(Record):
    """What the catalogue (or the spec) says of one model; None where it says nothing."""

    provider: str
    model_id: str
    price: Price | None = None
    #: Most tokens of input and output together one call may hold.
    context_window: int | None = None
    #: Most tokens one reply may have.
    max_output: int | None = None
    #: Words of CAPABILITIES the source says the model has, and those it says the model lacks; a word in neither
    #: is unknown (the source does not say), and no check may read an unknown as "cannot".
    capabilities: frozenset[str] = field(default_factory=frozenset)
    lacks: frozenset[str] = field(default_factory=frozenset)
    #: Where the entry came from: `spec`, `lock`, or `spec+lock` when an override sits on a locked entry.
    source: str = "lock"

    def can(self, capability: str) -> bool | None:
        """Whether the model has `capability`; None when its source does not say."""
        if capability in self.capabilities:
            return True
        return False if capability in self.lacks else None

    def to_json(self) -> dict[str, Any]:
        return {
            "provider": self.provider,
            "model_id": self.model_id,
            "price": self.price.to_json() if self.price is not None else None,
            "context_window": self.context_window,
            "max_output": self.max_output,
            "capabilities": {c: c in self.capabilities for c in sorted(self.capabilities | self.lacks)},
            "source": self.source,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ModelInfo:
        """The JSON `to_json` writes → a ModelInfo; ValueError naming the first field that is wrong."""
        provider, model_id = data.get("provider"), data.get("model_id")
        if not isinstance(provider, str) or not isinstance(model_id, str):
            raise ValueError("needs string `provider` and `model_id`")
        price = data.get("price")
        if price is not None and not isinstance(price, Mapping):
            raise ValueError("`price` is not an object")
        capabilities = data.get("capabilities") or {}
        if not isinstance(capabilities, Mapping) or not all(isinstance(v, bool) for v in capabilities.values()):
            raise ValueError("`capabilities` is not an object of true/false")
        for key in ("context_window", "max_output"):
            if data.get(key) is not None and not _whole(data[key]):
                raise ValueError(f"`{key}` is not a whole number")
        return cls(
            provider=provider,
            model_id=model_id,
            price=Price.from_json(price) if price is not None else None,
            context_window=data.get("context_window"),
            max_output=data.get("max_output"),
            # Words this plait does not know (a newer lock) are left out: no check reads them.
            capabilities=frozenset(c for c, has in capabilities.items() if has and c in CAPABILITIES),
            lacks=frozenset(c for c, has in capabilities.items() if not has and c in CAPABILITIES),
            source=str(data.get("source", "lock")),
        )


def cost_usd(
    info_or_price: ModelInfo | Price | None, input_tokens: int, output_tokens: int, cached_input_tokens: int = 0
) -> float | None:
    """USD for one call: `input_tokens` counts every prompt token, `cached_input_tokens` the part of them read
    from the provider's cache (paid at the cached rate). None when the model is unpriced."""
    price = info_or_price.price if isinstance(info_or_price, ModelInfo) else info_or_price
    if price is None:
        return None
    rate_in, rate_out, rate_cached = price.rates(input_tokens)
    cached = min(max(cached_input_tokens, 0), input_tokens)
    usd = ((input_tokens - cached) * rate_in + cached * rate_cached + output_tokens * rate_out) * _PER_TOKEN
    return usd + (price.per_request or 0.0)


def _whole(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _rate(data: Mapping[str, Any], key: str, where: str) -> float | None:
    value = data.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0 or value != value:
        raise ValueError(f"`{where}` is not a non-negative number")
    return float(value)
