"""input (validated run input, {{run.input}}), state (typed declared keys), and {{NAME}} reads of earlier outputs."""

from __future__ import annotations

import dataclasses

import pytest
from plait.core.kinds import AgentNode
from plait.core.kinds import StepNode
from plait.core.kinds import ChainNode
from plait.runtime.errors import AgentError
from plait.runtime.tools import ToolResult
from runtime_helpers import call, fn_tool, go, make, program

TICKET = {
    "type": "object",
    "properties": {
        "ticket": {"type": "string"},
        "customer": {"type": "string"},
        "priority": {"type": "integer", "default": 3},
    },
    "required": ["ticket", "customer"],
}


def ticket_flow():
    p = program(
        chains=[ChainNode(name="main", elements=("first", "second"))],
        steps=[
            StepNode(
                name="first", model="m", prompt="From {{run.input.customer}}: {{input.ticket}} (p{{input.priority}})"
            ),
            StepNode(name="second", model="m", prompt="Again {{run.input.customer}}; first said {{first}}"),
        ],
    )
    p.input = TICKET
    return p


def engine_for(p):
    return make(models={"m": {"first": [{"text": "one"}], "second": [{"text": "two"}]}}, agents={}, program=p)


def test_the_input_is_checked_and_run_input_reads_it_anywhere():
    engine = engine_for(ticket_flow())
    result = go(engine.run('{"ticket": "broken", "customer": "Ann"}'))
    assert result.output == "two"
    first, second = (r["messages"][0].text for r in engine.providers["m"].requests)
    assert first == "From Ann: broken (p3)"  # the default filled in
    assert second == "Again Ann; first said one"  # {{first}}: an earlier runnable's output


@pytest.mark.parametrize(
    "given, named",
    [
        ('{"ticket": "broken"}', "field `customer` is missing"),
        ('{"ticket": 3, "customer": "Ann"}', "$.ticket: expected string, got number"),
        ('{"ticket": "x", "custmer": "Ann"}', "did you mean `customer`?"),
        ("just text", "`ticket`, `customer`, `priority`: pass a JSON object"),
    ],
)
def test_an_input_that_does_not_fit_is_refused_naming_the_field(given, named):
    with pytest.raises(AgentError) as refused:
        engine_for(ticket_flow()).start(given)
    assert refused.value.kind == "input_invalid" and named in refused.value.message


def test_plain_text_becomes_the_one_string_field():
    p = ticket_flow()
    p.input = {"type": "object", "properties": {"ticket": {"type": "string"}}, "required": ["ticket"]}
    p.steps["first"] = dataclasses.replace(p.steps["first"], prompt="{{input.ticket}}/{{run.input}}")
    engine = engine_for(p)
    go(engine.run("printer jam"))
    assert engine.providers["m"].requests[0]["messages"][0].text == 'printer jam/{"ticket": "printer jam"}'


STATE = {
    "type": "object",
    "properties": {"order_id": {"type": "string"}, "count": {"type": "integer"}},
    "required": ["count"],
}


def state_engine(update, state=STATE):
    tool = fn_tool("save", lambda: ToolResult("saved", state=update))
    p = program(
        chains=[ChainNode(name="main", elements=("agent", "after"))],
        steps=[StepNode(name="after", model="m", prompt="order=[{{state.order_id}}] count=[{{state.count}}]")],
    )
    p.agents["agent"] = AgentNode(name="agent", model="m", tools=("save",))
    p.state = state
    return make(
        models={"m": {"agent": [call("save"), {"text": "ok"}], "after": [{"text": "done"}]}},
        tools={"save": tool},
        agents={},
        program=p,
    )


def test_a_declared_write_lands_and_state_reads_render_it():
    engine = state_engine({"order_id": "A-1", "count": 2})
    result = go(engine.run("x"))
    assert result.output == "done" and engine.providers["m"].requests[-1]["messages"][0].text == "order=[A-1] count=[2]"


def test_an_unset_optional_key_renders_empty():
    engine = state_engine({"count": 1})
    go(engine.run("x"))
    assert engine.providers["m"].requests[-1]["messages"][0].text == "order=[] count=[1]"


@pytest.mark.parametrize(
    "update, says",
    [
        (
            {"order": "A-1"},
            "state key `order`, which the spec's `state` block does not declare (did you mean `order_id`?)",
        ),
        (
            {"count": "two"},
            'tried to write "two" to state key `count`, which does not fit its type (count: expected integer, got string)',
        ),
    ],
)
def test_an_undeclared_key_or_wrong_type_is_an_error_the_model_sees_and_nothing_is_written(update, says):
    engine = state_engine({"order_id": "A-1", **update})
    result = go(engine.run("x"))
    seen = [r for r in engine.providers["m"].requests if r["agent"] == "agent"][-1]["messages"][-1]
    assert seen.role == "tool" and seen.is_error and says in seen.text and "nothing was written" in seen.text
    assert engine.providers["m"].requests[-1]["messages"][0].text == "order=[] count=[]"
    assert [w["code"] for w in result.report.warnings] == ["state_write_refused"]


def test_without_a_state_block_any_key_may_be_written():
    engine = state_engine({"order_id": "A-1", "count": "anything"}, state=None)
    go(engine.run("x"))
    assert engine.providers["m"].requests[-1]["messages"][0].text == "order=[A-1] count=[anything]"


def test_an_agents_system_prompt_reads_the_run_input_and_the_map_item():
    from plait.core.kinds import MapNode

    p = program(maps=[MapNode(name="main", body=("helper",), over=("input", "names"), concurrency=1)])
    p.agents["helper"] = AgentNode(
        name="helper", model="m", system="Greet {{map.item}} (#{{map.index}}) for {{run.input.host}}."
    )
    engine = make(models={"m": {"helper": [{"text": "hi A"}, {"text": "hi B"}]}}, agents={}, program=p)
    result = go(engine.run({"names": ["A", "B"], "host": "Ann"}))
    assert result.output == ["hi A", "hi B"]
    assert [r["system"] for r in engine.providers["m"].requests] == ["Greet A (#0) for Ann.", "Greet B (#1) for Ann."]
