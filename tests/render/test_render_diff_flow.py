"""`plait diff` on plait 0.2 constructs: route cases, loop bounds and conditions, map concurrency, output fields."""

from __future__ import annotations

from render_helpers import FIXTURES

from plait.compiler.diff import Change, changes_to_text, diff_graphs
from plait.compiler.pipeline import compile_spec

BASE = (FIXTURES / "flow.plait").read_text()


def _diff(new: str, old: str = BASE) -> list[Change]:
    a, b = compile_spec(old, path="old.plait"), compile_spec(new, path="new.plait")
    assert a.graph is not None and b.graph is not None, [d.message for d in a.diagnostics + b.diagnostics]
    return diff_graphs(a.graph, b.graph)


def _edit(old: str, new: str) -> list[Change]:
    assert BASE.count(old) == 1, old
    return _diff(BASE.replace(old, new))


def _only(changes: list[Change]) -> Change:
    assert len(changes) == 1, [c.describe() for c in changes]
    return changes[0]


def test_the_same_spec_has_no_changes():
    assert _diff(BASE) == []


MORE = BASE.replace('  "tech"    -> tech\n', '  "tech"    -> tech\n  "sales"   -> sales\n')


def test_an_added_route_case_is_one_contract_change():
    change = _only(_diff(MORE))
    assert change == Change("contract", "added", "triage", "route", 'case "sales"', None, "sales")
    assert change.describe() == '+ route triage: case "sales" sales  [contract]'


def test_a_removed_route_case_is_one_contract_change():
    change = _only(_diff(BASE, old=MORE))
    assert change == Change("contract", "removed", "triage", "route", 'case "sales"', "sales", None)
    assert change.describe() == '- route triage: case "sales" (was sales)  [contract]'


def test_retargeted_cases_and_a_changed_else():
    swapped = BASE.replace('"billing" -> billing', '"billing" -> tech').replace(
        '"tech"    -> tech', '"tech"    -> billing'
    )
    changes = _diff(swapped)
    assert [(c.what, c.op, c.field, c.old, c.new) for c in changes] == [
        ("contract", "changed", 'case "billing"', "billing", "tech"),
        ("contract", "changed", 'case "tech"', "tech", "billing"),
    ]
    change = _only(_diff(MORE.replace("  else      -> sales\n", "  else      -> tech\n"), old=MORE))
    assert (change.what, change.field, change.old, change.new) == ("contract", "otherwise", "sales", "tech")


def test_a_changed_loop_bound_and_condition():
    change = _only(_edit("max_iterations = 3", "max_iterations = 5"))
    assert (change.what, change.kind, change.subject, change.field, change.old, change.new) == (
        "contract",
        "loop",
        "polish",
        "max_iterations",
        3,
        5,
    )
    assert "raised 3 → 5" in change.describe()
    changes = _edit(
        'until          = verdict == "accept" or review.feedback == ""', 'until          = verdict == "accept"'
    )
    assert [(c.what, c.field, c.new) for c in changes if c.what == "contract"] == [
        ("contract", "until", 'verdict == "accept"')
    ]
    # The condition no longer names `review`: that read goes too.
    assert [(c.what, c.op, c.subject) for c in changes if c.what == "edge"] == [("edge", "removed", "polish -> review")]


def test_a_changed_map_concurrency():
    change = _only(_edit("concurrency = 4", "concurrency = 8"))
    assert (change.what, change.kind, change.subject, change.field, change.old, change.new) == (
        "contract",
        "map",
        "write_all",
        "concurrency",
        4,
        8,
    )


def test_output_fields_added_removed_and_retyped_are_contract_changes():
    changes = _edit('    urgency:  int "1 (low) to 5 (high)"\n', "")
    removed = [c for c in changes if c.subject == "classify"]
    assert removed == [Change("contract", "removed", "classify", "step", "output.urgency", "int", None)]
    changes = _edit('category: "billing" | "tech" | "sales"', 'category: "billing" | "tech"')
    mine = [c for c in changes if c.subject == "classify"]
    assert mine == [
        Change(
            "contract",
            "changed",
            "classify",
            "step",
            "output.category",
            '"billing" | "tech" | "sales"',
            '"billing" | "tech"',
        )
    ]
    text = changes_to_text(mine)
    assert 'output.category changed "billing" | "tech" | "sales" → "billing" | "tech"  [contract]' in text


def test_an_answer_field_turned_required():
    change = _only(
        _edit(
            'answer { decision: "send" | "hold", note: string? }', 'answer { decision: "send" | "hold", note: string }'
        )
    )
    assert (change.what, change.subject, change.field, change.old, change.new) == (
        "contract",
        "approve",
        "output.note",
        "optional",
        "required",
    )


def test_a_changed_with_binding_is_a_contract_change_named_by_binding():
    spec = 'plait 0.3\nmodel m = "openai/gpt-4o-mini"\ninput {{ a: string, b: string }}\n'
    spec += 'step s {{ with {{ x: {x}{more} }}, model = m, prompt = "{{{{input}}}}" }}\n'
    old = compile_spec(spec.format(x="run.input.a", more=""), path="old.plait")
    new = compile_spec(spec.format(x="run.input.b", more=", y: run.input.a"), path="new.plait")
    found = [c.describe() for c in diff_graphs(old.graph, new.graph)]
    assert found == [
        "~ step s: with.x changed run.input.a → run.input.b  [contract]",
        "+ step s: with.y run.input.a  [contract]",
    ]
