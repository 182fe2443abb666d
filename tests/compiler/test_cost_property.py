"""The static call bound against what scripted runs actually do: never below, and exact when every path is taken.

Specs are generated (steps with output retries, agents using tools, chains,
parallels, loops, maps with `max_items`, consolidates, routes), each with a
script that makes every runnable spend what it may: an agent calls a tool
until its last permitted step, a step with `output` is rejected
`retry_malformed` times, a loop runs every iteration, a map gets `max_items`
items, a consolidate's judge never sees agreement. Without routes that is
every path, so the bound must be exact; with a route, or with scripts that
stop early, it must not be below.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import plait
from plait.compiler.bounds import bound_entry
from plait.runtime.engine import Engine

TOOLS = "def noop():\n    return 'ok'\n"
#: Priced, with limits, so tokens and USD are bounded too (a python tool's result is capped by the window).
PRICE = "max_tokens = 64, context_window = 20000, price = { input = 1.0, output = 2.0 }"
BACKUP_PRICE = "max_tokens = 64, context_window = 30000, price = { input = 3.0, output = 5.0 }"


# --- a spec as a tree: ("step", retries, used), ("agent", max_steps, used), ("chain", kids), ("parallel", kids),
# ("loop", n, kid), ("map", k, kid), ("consolidate", rounds, a_steps, b_steps), ("route", taken, untaken) -----------


def _trees(maximal: bool, routes: bool):
    def step():
        return st.integers(0, 2).flatmap(
            lambda r: st.tuples(st.just("step"), st.just(r), st.just(r) if maximal else st.integers(0, r))
        )

    def agent():
        return st.integers(1, 3).flatmap(
            lambda k: st.tuples(
                st.just("agent"), st.just(k), st.just(k) if maximal else st.integers(1, k), st.booleans()
            )
        )

    consolidate = st.tuples(st.just("consolidate"), st.integers(1, 2), st.integers(1, 2), st.integers(1, 2))
    leaves = st.one_of(step(), agent(), consolidate)

    def grow(kids):
        options = [
            st.tuples(st.just("chain"), st.lists(kids, min_size=1, max_size=3).map(tuple)),
            st.tuples(st.just("parallel"), st.lists(kids, min_size=2, max_size=3).map(tuple)),
            st.tuples(st.just("loop"), st.integers(1, 3), kids),
            st.tuples(st.just("map"), st.integers(1, 3), kids),
        ]
        if routes:
            options.append(st.tuples(st.just("route"), kids, kids))
        return st.one_of(*options)

    return st.recursive(leaves, grow, max_leaves=6)


class _Spec:
    """A tree → spec text and a script whose replies make each runnable spend what the tree says it uses."""

    def __init__(self) -> None:
        self.decls: list[str] = []
        self.script: dict[str, list[dict]] = {"m": []}
        self.backup: dict[str, list[dict]] = {}
        self.count = 0
        self.items = 0

    def name(self, kind: str) -> str:
        self.count += 1
        return f"{kind}{self.count}"

    def add(self, tree, times: int) -> str:
        """Declare `tree`, run `times` times in the whole run; its name."""
        kind = tree[0]
        if kind == "step":
            _, retries, used = tree
            name = self.name("s")
            self.decls.append(
                f'step {name} {{ model = m, prompt = "{{{{input}}}}", retry_malformed = {retries}, output {{ v: string }} }}'
            )
            self.script[name] = ([{"text": "not json"}] * used + [{"output": {"v": "x"}}]) * times
            return name
        if kind == "agent":
            return self.agent(tree[1], tree[2], times, fallback=tree[3])
        if kind == "consolidate":
            _, rounds, a, b = tree
            name = self.name("c")
            first, second = self.agent(a, a, times * rounds), self.agent(b, b, times * rounds)
            self.decls.append(f"consolidate {name} {{ agents = [{first}, {second}], judge = m, rounds = {rounds} }}")
            self.script["m"] += [{"text": '{"agreed": false, "summary": "no"}'}] * (times * rounds)
            return name
        if kind == "chain":
            kids = [self.add(k, times) for k in tree[1]]
            name = self.name("ch")
            self.decls.append(f"chain {name} = {' -> '.join(kids)}")
            return name
        if kind == "parallel":
            kids = [self.add(k, times) for k in tree[1]]
            name = self.name("p")
            self.decls.append(f"parallel {name} = [{', '.join(kids)}]")
            return name
        if kind == "loop":
            _, n, kid = tree
            body = self.add(kid, times * n)
            name = self.name("l")
            self.decls.append(f"loop {name} = {body} {{ max_iterations = {n} }}")
            return name
        if kind == "map":
            _, k, kid = tree
            body = self.add(kid, times * self.width(k))
            name = self.name("mp")
            # One at a time: an agent's replies are one list, so items must not interleave their turns.
            self.decls.append(f"map {name} = {body} {{ over = run.input.items, max_items = {k}, concurrency = 1 }}")
            return name
        if kind == "route":
            _, taken, untaken = tree
            yes, no = self.add(taken, times), self.add(untaken, 0)
            name = self.name("r")
            self.decls.append(f'route {name} on run.input.pick {{\n  "a" -> {yes}\n  "b" -> {no}\n}}')
            return name
        raise AssertionError(kind)

    def width(self, k: int) -> int:
        # Every map reads the one input list: the run gets as many items as the widest map allows, and each map
        # the same list, so a map may get more than its max_items only if one is narrower: keep them all equal.
        self.items = self.items or k
        return self.items

    def agent(self, steps: int, used: int, times: int, fallback: bool = False) -> str:
        name = self.name("a")
        turn = [{"tool_calls": [{"name": "noop", "arguments": {}}]}] * (used - 1) + [{"text": "done"}]
        if fallback:
            # Every call fails on `m` and is answered by the fallback: still one answered call each.
            self.decls.append(f"agent {name} {{ model = m, fallback = [backup], tools = [noop], max_steps = {steps} }}")
            self.script[name] = [{"error": {"kind": "rate_limit"}}] * (used * times)
            self.backup[name] = turn * times
        else:
            self.decls.append(f"agent {name} {{ model = m, tools = [noop], max_steps = {steps} }}")
            self.script[name] = turn * times
        return name

    def write(self, root: str, folder: Path) -> Path:
        text = "\n".join(
            [
                f'model m = "scripted/m" {{ script = "m.replies.json", {PRICE} }}',
                f'model backup = "scripted/backup" {{ script = "backup.replies.json", {BACKUP_PRICE} }}',
                'tool noop "Do nothing." { run = python("tools:noop") }',
                'input { items: list[string], pick: "a" | "b" }',
                *self.decls,
                f"chain main = {root}",
            ]
        )
        (folder / "spec.plait").write_text(text + "\n")
        (folder / "m.replies.json").write_text(json.dumps(self.script))
        (folder / "backup.replies.json").write_text(json.dumps(self.backup))
        (folder / "tools.py").write_text(TOOLS)
        return folder / "spec.plait"


def _same_width(tree, k: list[int]):
    """Every map of the tree with one max_items (the first's): they all read the run's one list."""
    kind = tree[0]
    if kind == "map":
        if not k:
            k.append(tree[1])
        return ("map", k[0], _same_width(tree[2], k))
    if kind == "loop":
        return ("loop", tree[1], _same_width(tree[2], k))
    if kind in ("chain", "parallel"):
        return (kind, tuple(_same_width(t, k) for t in tree[1]))
    if kind == "route":
        return ("route", _same_width(tree[1], k), _same_width(tree[2], k))
    return tree


def _compare(tmp_path_factory, tree) -> tuple[int, float | None]:
    """(the model calls a scripted run made, the bound); its tokens and USD checked against theirs on the way."""
    folder = tmp_path_factory.mktemp("spec")
    spec = _Spec()
    tree = _same_width(tree, [])
    root = spec.add(tree, 1)
    path = spec.write(root, folder)
    compiled = plait.compile(path)
    assert not [d for d in compiled.diagnostics if d.is_error], [d.message for d in compiled.diagnostics]
    total = bound_entry(compiled.graph, "main", input_tokens=64).total
    result = plait.run(Engine.from_spec(path), {"items": ["x"] * max(spec.items, 1), "pick": "a"})
    assert result.stop_reason == "done", result
    report = result.report
    assert total.input_tokens.value >= report.input_tokens and total.output_tokens.value >= report.output_tokens
    rates = {"m": (1.0, 2.0), "backup": (3.0, 5.0)}
    spent = sum(
        (s["input_tokens"] * rates[s["model"]][0] + s["output_tokens"] * rates[s["model"]][1]) / 1e6
        for s in result.to_dict()["steps"]
    )
    assert total.usd.value >= spent
    return report.model_calls, total.calls.value


SETTINGS = settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)


@SETTINGS
@given(tree=_trees(maximal=True, routes=False))
def test_the_bound_is_exact_when_every_path_is_taken_and_every_runnable_spends_all_it_may(tmp_path_factory, tree):
    actual, bound = _compare(tmp_path_factory, tree)
    assert bound == actual


@SETTINGS
@given(tree=_trees(maximal=False, routes=True))
def test_the_bound_is_never_below_what_a_run_does(tmp_path_factory, tree):
    actual, bound = _compare(tmp_path_factory, tree)
    assert bound is not None and bound >= actual


@pytest.mark.parametrize(
    "tree, calls",
    [
        (("step", 2, 2), 3),
        (("agent", 3, 3, False), 3),
        (("agent", 3, 3, True), 3),
        (("loop", 3, ("chain", (("step", 0, 0), ("agent", 2, 2, False)))), 9),
        (("map", 3, ("parallel", (("step", 1, 1), ("step", 0, 0)))), 9),
        (("consolidate", 2, 2, 1), 8),
    ],
)
def test_examples_of_each_formula_run_to_their_bound(tmp_path_factory, tree, calls):
    assert _compare(tmp_path_factory, tree) == (calls, calls)
