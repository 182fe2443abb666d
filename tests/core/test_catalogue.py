"""The catalogue entry shared by the compiler, the cost bound and budgets: a call's cost, and its JSON round trip."""

from __future__ import annotations

import pytest

from plait.core.catalogue import ModelInfo, Price, PriceTier, cost_usd

MINI = Price(input=0.15, output=0.60, cached_input=0.075)


def test_a_call_costs_its_input_and_output_tokens_at_the_per_million_rates():
    assert cost_usd(MINI, 1_000_000, 0) == pytest.approx(0.15)
    assert cost_usd(MINI, 2_000, 500) == pytest.approx(2_000 * 0.15e-6 + 500 * 0.60e-6)


def test_cached_input_is_part_of_the_input_and_pays_the_cached_rate():
    # 1,000 prompt tokens of which 400 were read from the cache.
    assert cost_usd(MINI, 1_000, 0, cached_input_tokens=400) == pytest.approx(600 * 0.15e-6 + 400 * 0.075e-6)
    # Without a cached rate, cached input pays the input rate.
    assert cost_usd(Price(input=1, output=2), 1_000, 0, cached_input_tokens=400) == pytest.approx(1_000e-6)


def test_a_tier_applies_to_every_token_of_a_call_whose_input_crosses_it_and_per_request_is_added():
    price = Price(input=1.25, output=10, per_request=0.01, tiers=(PriceTier(above=200_000, input=2.5, output=15),))
    assert cost_usd(price, 200_000, 1_000) == pytest.approx(200_000 * 1.25e-6 + 1_000 * 10e-6 + 0.01)
    assert cost_usd(price, 200_001, 1_000) == pytest.approx(200_001 * 2.5e-6 + 1_000 * 15e-6 + 0.01)


def test_an_unpriced_model_costs_none_not_zero():
    info = ModelInfo(provider="openai-compatible", model_id="local")
    assert cost_usd(info, 1_000, 1_000) is None
    assert cost_usd(None, 1_000, 1_000) is None
    assert cost_usd(ModelInfo(provider="openai", model_id="m", price=MINI), 1_000_000, 0) == pytest.approx(0.15)


def test_an_entry_survives_its_json_and_unknown_capabilities_stay_unknown():
    info = ModelInfo(
        provider="openai",
        model_id="gpt-4o-mini",
        price=Price(input=0.15, output=0.6, tiers=(PriceTier(above=128_000, input=0.3),)),
        context_window=128_000,
        max_output=16_384,
        capabilities=frozenset({"tools", "structured_output"}),
        lacks=frozenset({"vision"}),
    )
    assert info.to_json()["capabilities"] == {"structured_output": True, "tools": True, "vision": False}
    assert ModelInfo.from_json(info.to_json()) == info
    assert info.can("tools") is True and info.can("vision") is False and info.can("streaming") is None
    bare = ModelInfo.from_json({"provider": "openai", "model_id": "x", "price": {"input": 1, "output": 2}})
    assert bare.can("tools") is None  # nothing known is not "cannot"


@pytest.mark.parametrize(
    "data, wrong",
    [
        ({"provider": "openai"}, "model_id"),
        ({"provider": "openai", "model_id": "x", "price": {"input": 1}}, "both `input` and `output`"),
        ({"provider": "openai", "model_id": "x", "price": {"input": -1, "output": 1}}, "`input`"),
        ({"provider": "openai", "model_id": "x", "context_window": 1.5}, "`context_window`"),
        ({"provider": "openai", "model_id": "x", "capabilities": ["tools"]}, "`capabilities`"),
    ],
)
def test_a_malformed_entry_is_a_value_error_naming_the_field(data, wrong):
    with pytest.raises(ValueError, match=wrong.replace("`", ".")):
        ModelInfo.from_json(data)
