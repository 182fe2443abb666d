"""Editors see `run = delegate(AGENT)` as a use of the agent (references, rename) and a hand-off's targets as
uses of them, so renaming either keeps the spec compiling."""

from __future__ import annotations

from plait.compiler.pipeline import compile_spec
from plait.ide.refs import references, rename, target_at
from plait.ide.workspace import Workspace

SPEC = """plait 0.3
model fast = "openai/gpt-4o-mini"
agent finder "Find flights." { model = fast, output { flights: list[string] } }
tool find_flights "Find flights." {
  params { origin: string }
  run = delegate(finder) { returns = output.flights }
}
step visas { model = fast, prompt = "{{input}}" }
agent planner { model = fast, tools = [find_flights], handoff = [visas] }
"""


def _renamed(project, name: str, new: str) -> str:
    path = project("spec.plait", SPEC).resolve()
    found = Workspace((path.parent,)).project()
    at = SPEC.index(name)
    target = target_at(found, path, at)
    assert target is not None
    uses = [(occ.span.line, occ.span.column) for _, occ in references(found, target)]
    assert len(uses) == 2, uses  # its declaration and the one use
    text = SPEC
    for occ, replacement in sorted(next(iter(rename(found, path, at, new).values())), key=lambda e: -e[0].span.offset):
        text = text[: occ.span.offset] + replacement + text[occ.span.end_offset :]
    path.write_text(text)
    assert compile_spec(path).ok, [str(d) for d in compile_spec(path).diagnostics]
    return text


def test_renaming_an_agent_behind_a_tool_renames_its_delegate(project):
    assert "run = delegate(flight_agent)" in _renamed(project, 'finder "', "flight_agent")


def test_renaming_a_hand_off_target_renames_it_in_handoff(project):
    assert "handoff = [visa_desk]" in _renamed(project, "visas {", "visa_desk")
