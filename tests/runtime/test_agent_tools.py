"""Agents as tools (plait 0.3): a tool whose `run = delegate(AGENT)` hands its declared params to the agent as its
input record and returns the chosen part of the agent's output as JSON; an agent listed in `tools` with a typed
output returns JSON too, never a Python repr."""

from __future__ import annotations

import json
from typing import Any

import plait
from plait.runtime.engine import Engine
from spec_helpers import write_spec

SPEC = """
plait 0.3
agent flight_finder "Find flights." {
  model  = m
  prompt = "Flights from {{input.origin}} to {{input.destination}}"
  output { flights: list[object { code: string, price: int }], note: string? }
}

tool find_flights "Find flights between two cities." {
  params {
    origin: string "Where from"
    destination: string
  }
  run = delegate(flight_finder) { returns = output.flights }
}

agent main {
  model = m
  tools = [find_flights]
}
"""

FOUND = {"flights": [{"code": "AF1", "price": 120}, {"code": "AZ2", "price": 90}], "note": "né"}


def run_recording(spec: Any, input: Any) -> tuple[Any, list[Any]]:
    """The run's result and every model request with its messages as sent, in order."""
    engine = Engine.from_spec(spec)
    requests: list[Any] = []
    provider = engine._make_provider("m")
    for_run = provider.for_run

    def spied(**options: Any) -> Any:
        view = for_run(**options)
        original = view.complete

        async def spy(request: Any) -> Any:
            # The messages as sent: the run goes on appending to its own list.
            requests.append((request, [(m.role, m.text) for m in request.messages]))
            return await original(request)

        view.complete = spy
        return view

    provider.for_run = spied
    return plait.run(engine, input, raise_on_error=False), requests


def test_an_agent_tool_takes_its_params_as_the_agents_input_and_returns_the_chosen_part_as_json(tmp_path):
    replies = {
        "main": [
            {"tool_calls": [{"name": "find_flights", "arguments": {"origin": "Paris", "destination": "Roma"}}]},
            {"text": "Take AZ2."},
        ],
        "flight_finder": [{"output": FOUND}],
    }
    result, requests = run_recording(write_spec(tmp_path, SPEC, replies), "a cheap flight")
    assert result.error is None, result.error
    (first, _), (delegated, sent), (_, last) = requests
    # The model sees the tool under its own name with the declared parameters.
    (offered,) = first.tools
    assert offered.name == "find_flights" and offered.description == "Find flights between two cities."
    assert offered.parameters["properties"]["origin"] == {"type": "string", "description": "Where from"}
    assert offered.parameters["required"] == ["origin", "destination"]
    # The agent's input is the arguments record, which its prompt template reads.
    assert delegated.agent == "flight_finder" and sent[-1] == ("user", "Flights from Paris to Roma")
    # Only `output.flights` comes back, as JSON.
    role, content = last[-1]
    assert role == "tool" and json.loads(content) == FOUND["flights"]
    assert result.output == "Take AZ2."


def test_a_listed_agent_with_a_typed_output_returns_json_not_a_python_repr(tmp_path):
    spec = """
    agent finder "Find flights." {
      model  = m
      output { flights: list[string], note: string? }
    }
    agent main { model = m, tools = [finder] }
    """
    replies = {
        "main": [{"tool_calls": [{"name": "finder", "arguments": {"task": "Paris to Rome"}}]}, {"text": "done"}],
        "finder": [{"output": {"flights": ["AF1"], "note": "été"}}],
    }
    result, requests = run_recording(write_spec(tmp_path, spec, replies), "go")
    assert result.error is None, result.error
    role, content = requests[-1][1][-1]
    assert role == "tool"
    assert json.loads(content) == {"flights": ["AF1"], "note": "été"} and "'" not in content


def test_an_agent_tool_whose_agent_waits_for_a_person_resumes_from_the_journal(tmp_path):
    import asyncio

    spec = SPEC.replace(
        "  output { flights: list[object { code: string, price: int }], note: string? }\n}",
        "  output { flights: list[object { code: string, price: int }], note: string? }\n  tools = [hold]\n}\n\n"
        'tool hold "Hold a seat." {\n  params { code: string }\n  run      = python("seats:hold")\n  approval = required\n}',
    )
    replies = {
        "main": [
            {"tool_calls": [{"name": "find_flights", "arguments": {"origin": "Paris", "destination": "Roma"}}]},
            {"text": "Held AZ2."},
        ],
        "flight_finder": [{"tool_calls": [{"name": "hold", "arguments": {"code": "AZ2"}}]}, {"output": FOUND}],
    }
    path = write_spec(tmp_path, spec, replies, **{"seats.py": "def hold(code):\n    return 'held ' + code\n"})
    engine = Engine.from_spec(path)

    async def main():
        run = engine.start("a cheap flight")
        stopped = await run
        (pending,) = stopped.pending
        assert pending.agent == "flight_finder" and pending.tool == "hold"
        return await engine.restore(run.id).resume({pending.id: "approve"})

    result = asyncio.run(main())
    assert result.error is None, result.error
    assert result.output == "Held AZ2."
    finder = [c for c in result.report.tool_calls if c["name"] == "find_flights"]
    assert len(finder) == 1 and not finder[0]["is_error"]
