"""What a model request carries from its runnable and model is what their records journal (`attr(journaled=True)`).

The request code reads the flag: a model's journaled fields are the settings
`_prepare` combines (the runnable's own value winning) and the settings in a
cassette's canonical request and key; nothing else of a request's reaches the key.
"""

from __future__ import annotations

import dataclasses

import pytest

from plait.core.kinds import KINDS, AgentNode, ModelNode, journaled_fields
from plait.runtime.cassettes.request import SETTINGS, canonical, request_key
from plait.runtime.model_call import _prepare
from plait.runtime.providers.base import Message, ModelRequest, ToolSpec

#: A value each journaled setting may take that no default has, and a second one.
VALUES = {"temperature": (0.3, 0.9), "max_tokens": (100, 200), "tool_choice": ("required", "none")}


def _request(**settings) -> ModelRequest:
    return ModelRequest("m", [Message.user("hi")], [ToolSpec("t", "T.", {"type": "object"})], system="s", **settings)


def test_every_journaled_field_is_a_request_setting_a_model_also_has():
    request_fields = {f.name for f in dataclasses.fields(ModelRequest)}
    model = set(journaled_fields(ModelNode))
    assert model and model <= request_fields
    for kind, cls in KINDS.items():
        assert set(journaled_fields(cls)) <= model, kind
    assert SETTINGS == journaled_fields(ModelNode)


def test_the_canonical_request_holds_exactly_the_journaled_settings():
    assert set(canonical(_request())) == {"model", "system", "tools", "output_schema", "messages", *SETTINGS}


@pytest.mark.parametrize("name", journaled_fields(ModelNode))
def test_a_journaled_setting_changes_the_cassette_key(name):
    first, second = VALUES[name]
    assert request_key(_request(**{name: first})) != request_key(_request(**{name: second}))


def test_what_is_not_journaled_leaves_the_key_alone():
    plain = request_key(_request())
    assert request_key(dataclasses.replace(_request(), timeout=5.0, agent="other", step=7)) == plain


@pytest.mark.parametrize("name", journaled_fields(AgentNode))
def test_the_runnables_journaled_setting_wins_over_its_models(name):
    mine, models = VALUES[name]
    model = ModelNode(name="m", provider="openai", model_id="gpt-x", **{name: models})
    request = _request()
    _prepare(request, AgentNode(name="a", model="m", **{name: mine}), model)
    assert getattr(request, name) == mine
    request = _request()
    _prepare(request, AgentNode(name="a", model="m"), model)
    assert getattr(request, name) == models


def test_a_tool_choice_goes_only_with_tools():
    model = ModelNode(name="m", provider="openai", model_id="gpt-x", tool_choice="required")
    request = ModelRequest("m", [Message.user("hi")])
    _prepare(request, AgentNode(name="a", model="m", tool_choice="auto"), model)
    assert request.tool_choice is None


def test_a_model_steps_journaled_settings_reach_its_call():
    from types import SimpleNamespace

    from plait.core.kinds import StepNode
    from plait.runtime.compose import _call_of

    settings = {name: VALUES[name][0] for name in journaled_fields(StepNode)}
    step = StepNode(name="s", model="m", **settings)
    call = _call_of(SimpleNamespace(program=SimpleNamespace(step_calls={})), step)  # type: ignore[arg-type]
    assert {name: getattr(call, name) for name in settings} == settings
