"""Cost on spans: each priced model call's USD (`plait.cost_usd`) beside its gen_ai usage, summed on its agent
(delegates' calls included) and on the run; an unpriced call carries no cost attribute."""

from __future__ import annotations

import pytest
from telemetry_helpers import memory_provider, named, write_spec

import plait
from plait.runtime.telemetry import COST

SPEC = """\
model m = "scripted/m" { script = "replies.json", price = { input = 1.0, output = 2.0 } }
model free = "scripted/free" { script = "replies.json" }
agent helper "Helps." { model = m }
agent main { model = m, tools = [helper] }
step note { model = free, prompt = "Note {{input}}" }
"""
REPLIES = {
    "main": [
        {
            "tool_calls": [{"name": "helper", "arguments": {"task": "t"}}],
            "usage": {"input_tokens": 10000, "output_tokens": 5000},
        },
        {"text": "done", "usage": {"input_tokens": 1000, "output_tokens": 100}},
    ],
    "helper": [{"text": "helped", "usage": {"input_tokens": 2000, "output_tokens": 1000}}],
    "note": [{"text": "noted", "usage": {"input_tokens": 5, "output_tokens": 5}}],
}


def test_model_calls_agents_and_the_run_carry_their_cost(tmp_path):
    spec = write_spec(tmp_path, SPEC, REPLIES)
    provider, exporter = memory_provider()
    result = plait.run(spec, "go", entry="main", tracer_provider=provider)
    assert result.output == "done"
    spans = exporter.get_finished_spans()
    chats = [s for s in spans if s.name.startswith("chat ")]
    costs = sorted(s.attributes[COST] for s in chats)
    assert costs == pytest.approx([0.0012, 0.004, 0.02])
    assert all("gen_ai.usage.input_tokens" in s.attributes for s in chats)
    [main] = named(spans, "invoke_agent main")
    [helper] = named(spans, "invoke_agent helper")
    assert helper.attributes[COST] == pytest.approx(0.004)
    assert main.attributes[COST] == pytest.approx(0.0252)  # its own two calls and its delegate's
    [root] = [s for s in spans if s.parent is None]
    assert root.attributes[COST] == pytest.approx(0.0252)
    assert root.attributes["gen_ai.usage.input_tokens"] == 13000


def test_an_unpriced_call_has_no_cost(tmp_path):
    spec = write_spec(tmp_path, SPEC, REPLIES)
    provider, exporter = memory_provider()
    plait.run(spec, "go", entry="note", tracer_provider=provider)
    spans = exporter.get_finished_spans()
    assert not any(COST in s.attributes for s in spans)
    [root] = [s for s in spans if s.parent is None]
    assert root.attributes["gen_ai.usage.output_tokens"] == 5
