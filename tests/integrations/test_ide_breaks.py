"""The editor and `break` in a route (plait 0.3): completion offers `break` after a case's arrow and the loops after
`break`, and the loop a case names is a reference of it (rename rewrites it)."""

from __future__ import annotations

from plait.compiler.pipeline import compile_spec
from plait.ide.complete import complete
from plait.ide.refs import references, rename, target_at
from plait.ide.workspace import Workspace

SPEC = """plait 0.3
model m = "openai/gpt-4o-mini"
step work { model = m, prompt = "w {{input}}", output { state: "more" | "next" | "stop" } }
step rest { model = m, prompt = "rest" }
route judge on input.state {
  "more" -> rest
  "next" -> break
  "stop" -> break outer
}
loop inner = work -> judge { max_iterations = 3 }
loop outer = inner { max_iterations = 3 }
"""


def _workspace(project) -> tuple[Workspace, object]:
    path = project("spec.plait", SPEC).resolve()
    ws = Workspace((path.parent,))
    ws.set(path, SPEC)
    return ws, path


def test_completion_offers_break_after_a_case_arrow_and_loops_after_break(project):
    ws, path = _workspace(project)
    ws.project().declared(path)

    def offered(typed: str) -> list[str]:
        text = SPEC + typed
        ws.set(path, text)
        p = ws.project()
        return [c.label for c in complete(text, len(text), p.declared(path), p.seen_modules(path))]

    assert "break" in offered('route r on input.state {\n  "more" -> ')
    assert offered('route r on input.state {\n  "more" -> break ') == ["inner", "outer"]


def test_the_loop_a_break_names_is_a_reference_and_rename_rewrites_it(project):
    ws, path = _workspace(project)
    project_ = ws.project()
    target = target_at(project_, path, SPEC.index("loop outer") + 5)
    places = [(occ.span.line, occ.span.column) for _, occ in references(project_, target)]
    assert (8, 19) in places  # `"stop" -> break outer`
    edits = rename(project_, path, SPEC.index("loop outer") + 5, "rounds")
    text = SPEC
    for occ, new in sorted(edits[path], key=lambda item: -item[0].span.offset):
        text = text[: occ.span.offset] + new + text[occ.span.end_offset :]
    assert '"stop" -> break rounds' in text and "loop rounds = inner" in text
    assert compile_spec(text).diagnostics == []


def test_hover_on_break_says_which_loop_it_leaves(project):
    from plait.ide.analysis import analyse

    path = project("spec.plait", SPEC).resolve()
    found = analyse(SPEC, str(path))
    bare = found.hover(SPEC.index("break\n") + 1)
    named = found.hover(SPEC.index("break outer") + 1)
    assert "the innermost loop around the route" in bare
    assert "loop `outer`" in named
