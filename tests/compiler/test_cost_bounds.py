"""The static bound, formula by formula, and what it names when nothing bounds a quantity (`plait cost`)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import plait
from plait.cli import main
from plait.compiler.bounds import bound_entry, bounds

ROOT = Path(__file__).resolve().parents[2]
PRICED = 'model gpt = "openai/gpt-4o-mini" { max_tokens = 100, price = { input = 1.0, output = 2.0 } }\n'


def _bound(text: str, entry: str = "main", input_tokens: int | None = 10, tmp_path: Path | None = None):
    compiled = plait.compile(text)
    errors = [d.message for d in compiled.diagnostics if d.is_error]
    assert not errors, errors
    return bound_entry(compiled.graph, entry, input_tokens)


def _calls(text: str, entry: str = "main"):
    return _bound(text, entry).total.calls


def test_a_step_is_one_call_and_its_tokens_are_its_template_and_max_tokens():
    found = _bound(PRICED + 'step main { model = gpt, prompt = "Hi {{input}}" }')
    total = found.total
    assert total.calls.value == 1 and total.output_tokens.value == 100
    # 16 for the call, 8 for each of two messages, "Hi " (3 bytes) and its 8, and the 10 tokens of input.
    assert total.input_tokens.value == 16 + 16 + 3 + 8 + 10
    assert total.usd.value == pytest.approx((53 * 1.0 + 100 * 2.0) / 1e6)


def test_a_step_with_output_adds_retry_malformed_calls_and_one_without_output_never_retries():
    typed = PRICED + 'step main { model = gpt, prompt = "x", retry_malformed = 2, output { v: string } }'
    plain = PRICED + 'step main { model = gpt, prompt = "x", retry_malformed = 2 }'
    assert _calls(typed).value == 3 and _bound(typed).rows[0].formula == "1 + retry_malformed 2"
    assert _calls(plain).value == 1


def test_an_agent_is_max_steps_calls():
    assert _calls(PRICED + "agent main { model = gpt, max_steps = 7 }").value == 7
    assert _calls(PRICED + "agent main { model = gpt }").value == 16


def test_loop_map_parallel_route_and_consolidate_formulas():
    spec = (
        PRICED
        + """
step a { model = gpt, prompt = "a" }
step b { model = gpt, prompt = "b", retry_malformed = 1, output { ok: bool } }
agent x { model = gpt, max_steps = 2 }
agent y { model = gpt, max_steps = 3 }
input { items: list[string], pick: "p" | "q" }
loop lp = a -> b { max_iterations = 3 }
map mp = a { over = run.input.items, max_items = 5 }
parallel pr = [a, x]
route rt on run.input.pick {
  "p" -> x
  "q" -> y
}
consolidate cs { agents = [x, y], judge = gpt, rounds = 2 }
chain main = lp -> mp -> pr -> rt -> cs
"""
    )
    found = _bound(spec)
    rows = {r.name: r for r in found.rows}
    assert rows["lp"].cost.calls.value == 3 * (1 + 2) and rows["lp"].formula == "max_iterations 3 × (a 1 + b 2)"
    assert rows["mp"].cost.calls.value == 5 and rows["mp"].formula == "max_items 5 × (a 1)"
    assert rows["pr"].cost.calls.value == 1 + 2
    assert rows["rt"].cost.calls.value == 3 and rows["rt"].formula == "max(x 2, y 3)"
    assert rows["cs"].cost.calls.value == 2 * (2 + 3 + 1)
    assert found.total.calls.value == 9 + 5 + 3 + 3 + 12
    assert found.total.usd.bounded


def test_a_fallback_prices_each_call_at_the_dearest_model_that_may_answer_it():
    spec = (
        PRICED
        + 'model big = "openai/gpt-4o" { max_tokens = 100, price = { input = 10.0, output = 20.0 } }\n'
        + "agent main { model = gpt, fallback = [big], max_steps = 1 }"
    )
    total = _bound(spec).total
    assert total.calls.value == 1
    assert total.usd.value == pytest.approx((total.input_tokens.value * 10.0 + 100 * 20.0) / 1e6)


def test_a_map_without_max_items_is_unbounded_and_says_why():
    spec = (
        PRICED
        + """
input { items: list[string] }
step a { model = gpt, prompt = "a" }
map main = a { over = run.input.items }
"""
    )
    calls = _calls(spec)
    assert calls.value is None
    assert calls.why == ("map `main`: the list `run.input.items` has no declared bound (max_items)",)


def test_a_map_of_code_steps_makes_no_calls_however_long_its_list():
    spec = """
input { items: list[string] }
step a { run = python("mod:fn") }
map main = a { over = run.input.items }
"""
    assert _calls(spec).value == 0


def test_a_model_without_max_tokens_leaves_output_tokens_unbounded_but_not_the_calls():
    spec = 'model gpt = "openai/gpt-4o-mini"\nstep main { model = gpt, prompt = "x" }'
    total = _bound(spec).total
    assert total.calls.value == 1 and total.output_tokens.value is None
    assert total.output_tokens.why == ("model `gpt` sets no max_tokens and its catalogue entry no output limit",)


def test_anthropic_without_max_tokens_is_bounded_by_the_4096_it_is_sent():
    spec = 'model c = "anthropic/claude-sonnet-4-5"\nstep main { model = c, prompt = "x" }'
    assert _bound(spec).total.output_tokens.value == 4096


def test_an_unpriced_model_leaves_usd_unbounded_and_names_the_model():
    spec = 'model gpt = "openai/gpt-4o-mini" { max_tokens = 5 }\nstep main { model = gpt, prompt = "x" }'
    usd = _bound(spec).total.usd
    assert usd.value is None and "model `gpt` has no price" in usd.why[0]


def test_delegation_is_unbounded_because_one_reply_may_delegate_any_number_of_times():
    spec = (
        PRICED
        + """
agent helper "Helps." { model = gpt, max_steps = 2 }
agent main { model = gpt, tools = [helper], max_steps = 3 }
"""
    )
    calls = _calls(spec)
    assert calls.value is None and calls.why == ("how many times one reply of `main` delegates to `helper`",)
    assert {r.name: r.cost.calls.value for r in _bound(spec).rows}["helper"] == 2


def test_a_context_window_caps_what_a_tool_result_leaves_unbounded():
    spec = """
model gpt = "openai/gpt-4o-mini" { max_tokens = 10, price = { input = 1.0, output = 1.0 }, context_window = 1000 }
tool t "T." { run = python("mod:fn") }
agent main { model = gpt, tools = [t], max_steps = 4 }
"""
    total = _bound(spec).total
    assert total.input_tokens.value <= 4 * 1000 and total.usd.bounded


def test_the_run_input_defaults_to_the_input_cap_and_input_tokens_tightens_it():
    spec = PRICED + 'step main { model = gpt, prompt = "{{input}}" }'
    compiled = plait.compile(spec)
    [default] = bounds(compiled.graph)
    [tight] = bounds(compiled.graph, input_tokens=10)
    assert default.input_assumed and default.input_tokens == 16 * 1024 * 1024
    assert tight.total.input_tokens.value < default.total.input_tokens.value


def test_a_template_reading_another_runnable_counts_that_runnables_output():
    spec = (
        PRICED
        + """
step a { model = gpt, prompt = "a", max_tokens = 40 }
step b { model = gpt, prompt = "{{a}}" }
chain main = a -> b
"""
    )
    rows = {r.name: r for r in _bound(spec).rows}
    assert rows["b"].cost.input_tokens.value == 16 + 16 + 8 + 40


# --- the command ----------------------------------------------------------------------------------------------------


def test_plait_cost_prints_a_table_with_formulas_and_what_is_unbounded(tmp_path, capsys):
    (tmp_path / "s.plait").write_text(
        PRICED + 'input { items: list[string] }\nstep a { model = gpt, prompt = "a" }\n'
        "map main = a { over = run.input.items }\n"
    )
    assert main(["cost", str(tmp_path / "s.plait"), "--input-tokens", "5"]) == 0
    out = capsys.readouterr().out
    assert "unbounded items of `run.input.items` × (a 1)" in out
    assert "the list `run.input.items` has no declared bound (max_items)" in out


def test_plait_cost_json(tmp_path, capsys):
    (tmp_path / "s.plait").write_text(PRICED + 'step main { model = gpt, prompt = "x" }\n')
    assert main(["cost", str(tmp_path / "s.plait"), "--format", "json", "--input-tokens", "0"]) == 0
    [entry] = json.loads(capsys.readouterr().out)["entries"]
    assert entry["entry"] == "main" and entry["model_calls"] == {"value": 1}
    assert entry["runnables"][0]["formula"] == "1"


def test_plait_cost_usage_and_spec_errors(tmp_path, capsys):
    (tmp_path / "s.plait").write_text(PRICED + 'step main { model = gpt, prompt = "x" }\n')
    (tmp_path / "bad.plait").write_text("step main { model = nope }\n")
    assert main(["cost", str(tmp_path / "s.plait"), "--entry", "other"]) == 2
    assert "no runnable `other`" in capsys.readouterr().err
    assert main(["cost", str(tmp_path / "bad.plait")]) == 1
    with pytest.raises(SystemExit) as bad:
        main(["cost", str(tmp_path / "s.plait"), "--input-tokens", "-3"])
    assert bad.value.code == 2


def test_plait_cost_shows_names_escaped(tmp_path, capsys):
    (tmp_path / "s.plait").write_text(
        PRICED + 'input { items: list[string] }\nstep a { model = gpt, prompt = "a" }\n'
        "map main = a { over = run.input.items }\n"
    )
    main(["cost", str(tmp_path / "s.plait")])
    out = capsys.readouterr().out
    assert "\x1b" not in out


# --- every example and every spec of the test corpus ------------------------------------------------------------------


def _corpus() -> list[Path]:
    specs = sorted((ROOT / "examples").rglob("*.plait")) + sorted((ROOT / "tests" / "fixtures").rglob("*.plait"))
    return [p for p in specs if ".test." not in p.name]


def test_every_example_and_corpus_spec_that_compiles_gets_a_bound_for_every_entry():
    seen = 0
    for path in _corpus():
        compiled = plait.compile(path)
        if compiled.graph is None or any(d.is_error for d in compiled.diagnostics):
            continue
        for found in bounds(compiled.graph, input_tokens=100):
            seen += 1
            total = found.total
            for quantity in (total.calls, total.input_tokens, total.output_tokens, total.usd):
                assert quantity.value is None or quantity.value >= 0, (path, found.entry)
                assert quantity.value is not None or quantity.why, (path, found.entry, "unbounded without a reason")
    assert seen > 20


@pytest.mark.parametrize(
    "name, spec, argv",
    [
        ("polish", "polish.plait", ["--input", "My order arrived broken."]),
        ("triage", "triage.plait", ["--input-file", "ticket.json"]),
        ("report", "report.plait", ["--input", "heat pumps"]),
        ("briefing", "briefing.plait", ["--input", "the Lisbon office move"]),
    ],
)
def test_the_examples_scripted_runs_stay_within_their_bound(tmp_path, capsys, name, spec, argv):
    folder = tmp_path / name
    shutil.copytree(ROOT / "examples" / name, folder)
    argv = [a if not a.endswith(".json") else str(folder / a) for a in argv]
    code = main(["run", str(folder / spec), *argv, "--json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 0, report
    compiled = plait.compile(folder / spec)
    bound = bound_entry(compiled.graph, "main").total.calls
    assert bound.value is None or bound.value >= report["model_calls"]
    if bound.value is None:
        assert bound.why  # named: report's map has no max_items, briefing's writer delegates


# --- plait diff --max-cost-increase ---------------------------------------------------------------------------------


def LOOP(n: int) -> str:
    return PRICED + f'step a {{ model = gpt, prompt = "a" }}\nloop main = a {{ max_iterations = {n} }}\n'


def _sides(tmp_path, old: str, new: str) -> tuple[str, str]:
    (tmp_path / "old.plait").write_text(old)
    (tmp_path / "new.plait").write_text(new)
    return str(tmp_path / "old.plait"), str(tmp_path / "new.plait")


def test_diff_fails_when_the_bound_rises_past_the_limit_and_passes_within_it(tmp_path, capsys):
    old, new = _sides(tmp_path, LOOP(5), LOOP(7))
    assert main(["diff", old, new, "--max-cost-increase", "20%"]) == 1
    out = capsys.readouterr().out
    assert "cost: entry main: model calls 5 → 7 (+40.0%): over the limit" in out
    assert main(["diff", old, new, "--max-cost-increase", "50"]) == 0  # the specs differ, the cost is within
    assert main(["diff", new, old, "--max-cost-increase", "0%"]) == 0  # a fall never fails


def test_diff_fails_when_a_bound_becomes_unbounded(tmp_path, capsys):
    bounded = PRICED + 'input { items: list[string] }\nstep a { model = gpt, prompt = "a" }\n'
    old, new = _sides(
        tmp_path,
        bounded + "map main = a { over = run.input.items, max_items = 3 }\n",
        bounded + "map main = a { over = run.input.items }\n",
    )
    assert main(["diff", old, new, "--max-cost-increase", "1000%", "-f", "json"]) == 1
    cost = json.loads(capsys.readouterr().out)["cost"]
    assert cost["over"] and cost["rises"][0]["percent"] is None and cost["rises"][0]["new"]["value"] is None


def test_diff_cost_limit_must_be_a_percentage(tmp_path, capsys):
    old, new = _sides(tmp_path, LOOP(1), LOOP(1))
    assert main(["diff", old, new, "--max-cost-increase", "lots"]) == 2
    assert "takes a percentage" in capsys.readouterr().err


# --- plait render --cost --------------------------------------------------------------------------------------------


def test_render_cost_writes_each_runnables_worst_case_in_its_label(tmp_path, capsys):
    (tmp_path / "s.plait").write_text(LOOP(3))
    assert main(["render", str(tmp_path / "s.plait"), "-f", "mermaid", "--cost"]) == 0
    drawn = capsys.readouterr().out
    assert "≤ 3 calls, ≤ $" in drawn and "≤ 1 calls, ≤ $" in drawn and "cost: the most model calls" in drawn
    assert main(["render", str(tmp_path / "s.plait"), "-f", "mermaid"]) == 0
    assert "calls, ≤ $" not in capsys.readouterr().out  # only on demand


def test_the_docs_example_prints_what_docs_cost_md_shows(tmp_path, capsys):
    import re

    text = (ROOT / "docs" / "cost.md").read_text(encoding="utf-8")
    spec = re.search(r"```plait\n(.*?)```", text, re.S).group(1)
    shown = re.search(r"\$ plait cost report.plait --input-tokens 2000\n(.*?)```", text, re.S).group(1)
    (tmp_path / "report.plait").write_text(spec)
    assert main(["check", "--strict", str(tmp_path / "report.plait")]) == 0
    capsys.readouterr()
    assert main(["cost", str(tmp_path / "report.plait"), "--input-tokens", "2000"]) == 0
    printed = [line.rstrip() for line in capsys.readouterr().out.splitlines()]
    assert printed == [line.rstrip() for line in shown.splitlines()]


def test_a_huge_max_steps_is_bounded_without_walking_every_call():
    spec = """
model gpt = "openai/gpt-4o-mini" { max_tokens = 10, price = { input = 1.0, output = 1.0 }, context_window = 1000 }
agent main { model = gpt, max_steps = 1000000000 }
"""
    total = _bound(spec).total
    assert total.calls.value == 10**9
    assert total.input_tokens.value <= 10**9 * 1000 and total.output_tokens.value == 10**10
    small = _bound(spec.replace("1000000000", "2000")).total
    walked = _bound(spec.replace("1000000000", "1024")).total
    # The calls past the walked ones are each bounded by the last: no less than walking them, never below it.
    assert small.input_tokens.value >= walked.input_tokens.value + 976 * 16


def test_check_json_carries_the_bound_of_each_spec_without_errors(tmp_path, capsys):
    (tmp_path / "ok.plait").write_text(LOOP(4))
    (tmp_path / "bad.plait").write_text("step main { model = nope }\n")
    main(["check", "--format", "json", str(tmp_path / "ok.plait"), str(tmp_path / "bad.plait")])
    document = json.loads(capsys.readouterr().out)
    [cost] = document["cost"]
    assert cost["file"].endswith("ok.plait")
    [entry] = cost["entries"]
    assert entry["model_calls"] == {"value": 4} and entry["runnables"][0]["formula"] == "max_iterations 4 × (a 1)"
    main(["check", "--format", "json", str(tmp_path / "bad.plait")])
    assert "cost" not in json.loads(capsys.readouterr().out)


def test_a_runnable_placed_again_is_walked_once_so_doubling_chains_stay_fast():
    lines = [PRICED, 'step c0 { model = gpt, prompt = "x" }']
    lines += [f"chain c{i} = c{i - 1} -> c{i - 1}" for i in range(1, 41)]
    lines.append("chain main = c40")
    found = _bound("\n".join(lines))
    assert found.total.calls.value == 2**40
    assert len(found.rows) < 200 and any(r.again for r in found.rows)


def test_nesting_deeper_than_the_walk_follows_is_named_not_a_crash(tmp_path, capsys):
    lines = [PRICED, 'step c0 { model = gpt, prompt = "x" }']
    lines += [f"chain c{i} = c{i - 1}" for i in range(1, 3001)]
    lines.append("chain main = c3000")
    (tmp_path / "deep.plait").write_text("\n".join(lines))
    assert main(["cost", str(tmp_path / "deep.plait"), "--format", "json"]) == 0
    [entry] = json.loads(capsys.readouterr().out)["entries"]
    assert entry["model_calls"]["unbounded_by"] == ["`main` nests runnables deeper than the cost bound follows"]


@pytest.mark.slow
def test_cost_and_check_json_never_load_the_runtime_or_httpx(tmp_path):
    import subprocess
    import sys

    (tmp_path / "s.plait").write_text(LOOP(2))
    for argv in (["cost", "s.plait"], ["check", "--format", "json", "s.plait"], ["render", "--cost", "s.plait"]):
        probe = (
            "import sys\nfrom plait.cli import main\n"
            f"status = main({argv!r})\n"
            "loaded = sorted(m for m in sys.modules if m.startswith(('plait.runtime', 'httpx', 'httpcore')))\n"
            "print('LOADED', loaded, file=sys.stderr)\nsys.exit(status)\n"
        )
        done = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True, check=False)
        assert done.returncode == 0, done.stderr
        assert "LOADED []" in done.stderr, argv


def test_every_test_block_of_the_examples_and_corpus_runs_within_its_entrys_bound(tmp_path):
    """The `test` blocks are the project's corpus of scripted runs: each run's calls against its entry's bound."""
    import asyncio

    from plait.spectest.runner import Session, has_tests, load_tests

    specs = [p for p in _all_specs() if has_tests(p)]
    loaded = load_tests(specs)
    session = Session(jobs=2, store=None)
    try:
        outcomes = asyncio.run(session.run(loaded))
    finally:
        session.close()
    checked = 0
    for outcome in outcomes:
        if outcome.result is None:
            continue
        bound = bound_entry(outcome.spec.graph, outcome.test.entry).total.calls
        made = outcome.result.report.model_calls
        assert bound.value is None or bound.value >= made, (outcome.id, bound, made)
        assert bound.value is not None or bound.why, outcome.id
        checked += 1
    assert checked >= 8


def _all_specs() -> list[Path]:
    return sorted((ROOT / "examples").rglob("*.plait")) + sorted((ROOT / "tests" / "fixtures").rglob("*.plait"))


def test_plait_cost_of_a_spec_without_runnables_says_so(tmp_path, capsys):
    (tmp_path / "s.plait").write_text(PRICED)
    assert main(["cost", str(tmp_path / "s.plait")]) == 0
    assert "declares no runnable" in capsys.readouterr().out
    assert main(["cost", str(tmp_path / "missing.plait")]) == 1
    assert "P005" in capsys.readouterr().err


def test_a_maps_max_items_is_drawn_on_its_label(tmp_path, capsys):
    spec = PRICED + 'input { items: list[string] }\nstep a { model = gpt, prompt = "a" }\n'
    (tmp_path / "s.plait").write_text(spec + "map main = a { over = run.input.items, max_items = 5 }\n")
    assert main(["render", str(tmp_path / "s.plait"), "-f", "mermaid"]) == 0
    assert "≤ 5 items" in capsys.readouterr().out


def test_a_failing_model_calls_budget_caps_the_calls_and_a_pausing_one_does_not():
    spec = (
        PRICED
        + 'agent helper "Helps." { model = gpt, max_steps = 2 }\n'
        + "agent main { model = gpt, tools = [helper], max_steps = 3, budget = { model_calls = 5, on_exceeded = ON } }\n"
    )
    failing = _bound(spec.replace("ON", "fail"))
    assert failing.total.calls.value == 5
    assert failing.rows[0].formula == "min(max_steps 3 + unbounded × helper 2, budget model_calls 5)"
    assert _bound(spec.replace("ON", "pause")).total.calls.value is None  # a person may raise it on resume
    roomy = _bound(spec.replace("ON", "fail").replace("tools = [helper], ", "").replace("= 5", "= 50"))
    assert roomy.total.calls.value == 3 and roomy.rows[0].formula == "max_steps 3"


def test_a_calls_budget_bounds_tokens_and_usd_by_its_largest_call():
    spec = """
model gpt = "openai/gpt-4o-mini" { max_tokens = 100, price = { input = 1.0, output = 2.0 }, context_window = 5000 }
agent helper "Helps." { model = gpt, max_steps = 2 }
agent main { model = gpt, tools = [helper], max_steps = 3, budget = { model_calls = 5, on_exceeded = fail } }
"""
    total = _bound(spec).total
    assert total.calls.value == 5
    assert total.input_tokens.value == 5 * 5000 and total.output_tokens.value == 5 * 100
    assert total.usd.value == pytest.approx(5 * (5000 * 1.0 + 100 * 2.0) / 1e6)


def test_max_tool_calls_bounds_delegation_at_max_steps_times_it_times_the_dearest_delegate():
    spec = (
        PRICED
        + """
agent helper "Helps." { model = gpt, max_steps = 2 }
agent other "Other." { model = gpt, max_steps = 5 }
agent main { model = gpt, tools = [helper, other], max_steps = 3, max_tool_calls = 2 }
"""
    )
    found = _bound(spec)
    total = found.total
    assert total.calls.value == 3 + 3 * 2 * 5
    assert total.input_tokens.bounded and total.output_tokens.bounded and total.usd.bounded
    row = {r.name: r for r in found.rows}["main"]
    assert row.formula == "max_steps 3 + max_steps 3 × max_tool_calls 2 × max(helper 2, other 5)"


DELEGATING = """
model m = "scripted/m" { script = "m.replies.json", max_tokens = 64, price = { input = 1.0, output = 2.0 } }
agent helper "Helps." { model = m, max_steps = 1 }
agent main { model = m, tools = [helper], max_steps = 3, max_tool_calls = 2 }
"""


def test_the_delegation_bound_is_exact_when_every_reply_delegates_all_it_may(tmp_path):
    from plait.runtime.engine import Engine

    delegate = {"name": "helper", "arguments": {"task": "look"}}
    # Three replies asking for three delegations each: two run, one is refused; the fourth call is never made.
    script = {"main": [{"tool_calls": [delegate] * 3}] * 3, "helper": [{"text": "found"}] * 6}
    (tmp_path / "spec.plait").write_text(DELEGATING)
    (tmp_path / "m.replies.json").write_text(json.dumps(script))
    compiled = plait.compile(tmp_path / "spec.plait")
    assert not [d for d in compiled.diagnostics if d.is_error]
    total = bound_entry(compiled.graph, "main", 10).total
    result = plait.run(Engine.from_spec(tmp_path / "spec.plait"), "go")
    report = result.report
    assert report.model_calls == total.calls.value == 3 + 3 * 2 * 1
    assert report.input_tokens <= total.input_tokens.value and report.output_tokens <= total.output_tokens.value
