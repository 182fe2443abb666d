"""Threads (plait 0.3) at check time: the declaration's syntax and layout, its graph node and edges, its drawing,
`plait diff`'s contract changes, editor completion, and how `plait trace` prints a write."""

from __future__ import annotations

import json

import pytest

from plait.cli import main
from plait.cli.trace import decision_line
from plait.compiler.diff import diff_graphs
from plait.compiler.pipeline import compile_spec
from plait.compiler.render.api import render
from plait.dsl.formatter import format_text
from plait.ide.complete import complete
from plait.ide.workspace import Workspace

SPEC = """plait 0.3

model fast = "openai/gpt-4o-mini"

thread session "The drafts and the notes." { keep_last = 12 }

agent writer { model = fast, thread = session }

step coach { model = fast, prompt = "Grade your last draft.", thread = session }

chain main = writer -> coach
"""


def graph_of(text: str):
    result = compile_spec(text, path="spec.plait")
    assert result.graph is not None, [d.message for d in result.diagnostics]
    return result.graph


def test_the_declaration_parses_with_or_without_a_description_or_block_and_formats_in_place():
    text = 'plait 0.3\nthread   a\nthread b "notes"\nthread c { keep_last = 2 }\n'
    formatted, problems = format_text(text)
    assert problems == []
    assert formatted == 'plait 0.3\n\nthread a\nthread b "notes"\nthread c { keep_last = 2 }\n'
    assert format_text(SPEC)[0] == SPEC


def test_a_name_called_thread_still_works_where_0_2_allowed_it():
    text = 'model fast = "openai/gpt-4o-mini"\nagent thread { model = fast }\nchain main = thread\n'
    assert compile_spec(text, path="spec.plait").ok


def test_the_graph_holds_the_thread_and_an_edge_from_each_runnable_that_continues_it():
    data = graph_of(SPEC).to_json()
    node = next(n for n in data["nodes"] if n["id"] == "session")
    assert node["kind"] == "thread"
    assert node["attrs"] == {"description": "The drafts and the notes.", "keep_last": 12}
    edges = [(e["source"], e["target"]) for e in data["edges"] if e["kind"] == "thread"]
    assert edges == [("writer", "session"), ("coach", "session")]
    writer = next(n for n in data["nodes"] if n["id"] == "writer")
    assert writer["attrs"]["thread"] == "session"


def test_plait_graph_prints_the_thread(tmp_path, capsys):
    (tmp_path / "spec.plait").write_text(SPEC)
    assert main(["graph", str(tmp_path / "spec.plait")]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [n["id"] for n in data["nodes"] if n["kind"] == "thread"] == ["session"]


@pytest.mark.parametrize("fmt", ["mermaid", "dot"])
def test_the_picture_draws_the_thread_and_who_continues_it(fmt):
    text = render(graph_of(SPEC), fmt)
    assert "thread session" in text and "keep_last 12" in text
    assert text.count("continues") == 2


def test_a_changed_thread_is_a_contract_change():
    old = graph_of(SPEC)
    lowered = diff_graphs(old, graph_of(SPEC.replace("keep_last = 12", "keep_last = 6")))
    assert [(c.what, c.subject, c.field, c.old, c.new) for c in lowered] == [
        ("contract", "session", "keep_last", 12, 6)
    ]
    unset = diff_graphs(old, graph_of(SPEC.replace(", thread = session }\n\nstep", " }\n\nstep")))
    assert ("contract", "writer", "thread", "session", None) in [
        (c.what, c.subject, c.field, c.old, c.new) for c in unset
    ]


def test_completion_offers_threads_for_thread_and_keep_last_inside_a_thread(tmp_path):
    path = tmp_path / "spec.plait"
    ws = Workspace()

    def at(text: str) -> list[str]:
        ws.set(path, text)
        project = ws.project()
        return [c.label for c in complete(text, len(text), project.declared(path), project.seen_modules(path))]

    path.write_text(SPEC)
    ws.set(path, SPEC)
    ws.project().declared(path)
    assert "session" in at(SPEC + "agent critic { model = fast, thread = ")
    assert "writer" not in at(SPEC + "agent critic { model = fast, thread = ")
    assert "keep_last" in at(SPEC + "thread notes { ")


def test_trace_says_who_added_to_a_thread_and_what_it_kept():
    data = {
        "name": "session",
        "by": "coach",
        "added": 2,
        "dropped": 1,
        "messages": [{"role": "user", "content": [{"text": "Grade it."}]}, {"role": "assistant", "content": []}],
    }
    data["messages"][-1]["content"] = [{"text": "revise"}]
    assert decision_line("thread", "main/coach#thread", data) == (
        "thread session: coach added 2 message(s), 2 kept, 1 dropped by keep_last → 'revise'"
    )


def test_the_cost_bound_of_a_runnable_that_continues_a_thread_is_its_models_context_window():
    spec = """plait 0.3

model fast = "openai/gpt-4o-mini" {
  max_tokens     = 100
  context_window = 1000
  price          = { input = 1.0, output = 1.0 }
}

thread talk

step first { model = fast, prompt = "Hello." }

step second { model = fast, prompt = "Go on.", thread = talk }

chain main = first -> second
"""
    from plait.compiler.bounds import bound_entry

    rows = {r.name: r.to_json() for r in bound_entry(graph_of(spec), "main", input_tokens=10).rows}
    # What the thread holds is not followed, so the step is sent at most what its model's window takes.
    assert rows["second"]["input_tokens"] == {"value": 1000}
    assert rows["first"]["input_tokens"]["value"] < 100
    unthreaded = {r.name: r.to_json() for r in bound_entry(graph_of(spec.replace(", thread = talk", "")), "main").rows}
    assert unthreaded["second"]["input_tokens"]["value"] < 100


def test_an_agent_delegating_through_another_to_one_on_its_thread_is_p352_but_one_on_another_thread_is_not():
    text = """plait 0.3
model fast = "openai/gpt-4o-mini"
thread notes
thread scratch
agent checker { model = fast, thread = notes }
agent drafter { model = fast, thread = scratch }
agent helper { model = fast, tools = [checker, drafter] }
agent writer { model = fast, thread = notes, tools = [helper] }
"""
    found = [(d.code, d.message) for d in compile_spec(text, path="spec.plait").diagnostics]
    assert [code for code, _ in found] == ["P352"]
    assert "`writer` delegates to `checker` (through `helper`)" in found[0][1]
