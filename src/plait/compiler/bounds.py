"""AgentGraph + an entry → its worst case before it runs: model calls, tokens and USD, with the formula of each.

Every source of model calls the runtime has is counted here, as the runtime
makes them (src/plait/runtime/compose.py, agent.py, loop.py, mapping.py,
model_call.py): an agent makes at most `max_steps` calls a run (its malformed
and `output` retries are turns, inside that bound); a model step one call,
plus `retry_malformed` when it declares `output`; a consolidate `rounds` ×
(its agents + its judge); a loop `max_iterations` × its body; a map
`max_items` × its body; a parallel and a chain the sum of their elements; a
route the largest case. A call that fails over to a fallback model is still
one answered call (the failed attempt returns no tokens), priced at the
dearest of the models that may answer it. What plait cannot bound is named,
never guessed: a map without `max_items`, a reply's number of tool calls
unless its agent sets `max_tool_calls` (so delegations and tool results,
unless a context window caps the call), a python or MCP tool's result, a
person's answer. With `max_tool_calls`, each of `max_steps` replies delegates
at most that many times.

Tokens are bounded from text, without a tokenizer: no tokenizer spends more
than one token on a byte of UTF-8, so a template's bytes bound its tokens;
each message and call adds a framing allowance. A call's output is its
`max_tokens` (the runnable's, else its model's, else the catalogue's output
limit; Anthropic's implicit 4096). A call's input is also at most its model's
context window when the catalogue knows it (a longer request is refused, not
billed). Docs: docs/cost.md.
"""

from __future__ import annotations

import json
import math
import re
from typing import TYPE_CHECKING, Any

from plait.core.catalogue import cost_usd
from plait.core.defaults import MAX_INPUT_BYTES
from plait.core.kinds import ToolNode
from plait.core.record import Record, record
from plait.core.types import TextType, to_json_schema

from .entry import entry_point, roots

if TYPE_CHECKING:
    from plait.core.kinds import ModelNode

    from .graph import AgentGraph

__all__ = [
    "Cost",
    "EntryBound",
    "Quantity",
    "Rise",
    "Row",
    "bound_entry",
    "bounds",
    "compare",
    "entries_of",
    "parse_percent",
]

#: Tokens of framing per call (roles, the request's envelope) and per message, beyond their text's bytes.
CALL_OVERHEAD = 16
MESSAGE_OVERHEAD = 8
#: The runtime's own text around a retry (structured_output.guidance) and a judge's verdict prompt, in bytes.
GUIDANCE = 1024
VERDICT = 512
PEERS = 256
#: What Anthropic gets when neither the runnable nor its model sets max_tokens (providers/anthropic.py).
ANTHROPIC_MAX_TOKENS = 4096
#: Small values a template may read: `loop.iteration`, `map.index`.
SMALL = 8
#: Calls of one conversation summed one by one; past this many, each further call is bounded by the last one
#: (a `max_steps = 1000000` must not make `plait cost` loop a million times).
EXACT_CALLS = 1024
#: The text a runnable that stopped at max_steps answers with, bounded.
STOPPED = 64
#: A refusal of a call past `max_tool_calls` (src/plait/runtime/steps/run_tools.py), in bytes.
REFUSAL = 192

_PLACEHOLDER = re.compile(r"\\\{\{|\{\{\s*([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+)*)\s*\}\}")


@record(kw_only=False)
class Quantity(Record):
    """A bound: `value` (None when unbounded) and, when unbounded, what makes it so, named."""

    value: float | None = 0
    why: tuple[str, ...] = ()

    @property
    def bounded(self) -> bool:
        return self.value is not None

    def __add__(self, other: Quantity) -> Quantity:
        if self.value is None or other.value is None:
            return Quantity(None, _union(self.why, other.why))
        return Quantity(self.value + other.value, _union(self.why, other.why))

    def times(self, n: Quantity) -> Quantity:
        """This many times over; nothing times anything is nothing, so a zero side wins over an unbounded one."""
        if self.value == 0 or n.value == 0:
            return Quantity(0)
        if self.value is None or n.value is None:
            return Quantity(None, _union(n.why, self.why))
        return Quantity(self.value * n.value, _union(n.why, self.why))

    def most(self, other: Quantity) -> Quantity:
        if self.value is None or other.value is None:
            return Quantity(None, _union(self.why, other.why))
        return Quantity(max(self.value, other.value), _union(self.why, other.why))

    def least(self, other: Quantity) -> Quantity:
        """The smaller of two bounds: either one holds, so a bounded one wins over an unbounded one."""
        if self.value is None:
            return other
        if other.value is None:
            return self
        return self if self.value <= other.value else other

    def capped(self, cap: int | None) -> Quantity:
        """At most `cap` (a context window), which bounds even an unbounded quantity."""
        if cap is None:
            return self
        if self.value is None:
            return Quantity(cap)
        return Quantity(min(self.value, cap), self.why)

    def text(self, usd: bool = False) -> str:
        if self.value is None:
            return "unbounded"
        if usd:  # rounded up: a bound shown must not read below itself
            return f"${math.ceil(self.value * 1e6) / 1e6:,.6f}" if self.value else "$0"
        return f"{math.ceil(self.value):,}"

    def to_json(self) -> dict[str, Any]:
        value = self.value if self.value is None or not float(self.value).is_integer() else int(self.value)
        out: dict[str, Any] = {"value": value}
        if self.value is None:
            out["unbounded_by"] = list(self.why)
        return out


def _union(a: tuple[str, ...], b: tuple[str, ...]) -> tuple[str, ...]:
    return a + tuple(x for x in b if x not in a) if b else a


def unbounded(why: str) -> Quantity:
    return Quantity(None, (why,))


ZERO = Quantity(0)
ONE = Quantity(1)


@record(kw_only=False)
class Cost(Record):
    """The four bounds of a piece of a run: answered model calls, input and output tokens, USD; and the most any
    one of its calls may take of each (what a cap on its calls multiplies: `_budgeted`)."""

    calls: Quantity = ZERO
    input_tokens: Quantity = ZERO
    output_tokens: Quantity = ZERO
    usd: Quantity = ZERO
    call_input: Quantity = ZERO
    call_output: Quantity = ZERO
    call_usd: Quantity = ZERO

    @classmethod
    def one(cls, input: Quantity, output: Quantity, usd: Quantity) -> Cost:
        """One model call."""
        return cls(ONE, input, output, usd, input, output, usd)

    @classmethod
    def unknown(cls, why: str) -> Cost:
        """Nothing bounded, for one reason."""
        return cls(*(unbounded(why),) * 7)

    def __add__(self, other: Cost) -> Cost:
        return Cost(
            self.calls + other.calls,
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.usd + other.usd,
            *self._calls_most(other),
        )

    def times(self, n: Quantity) -> Cost:
        if n.value == 0:
            return Cost()
        return Cost(
            self.calls.times(n),
            self.input_tokens.times(n),
            self.output_tokens.times(n),
            self.usd.times(n),
            self.call_input,
            self.call_output,
            self.call_usd,
        )

    def most(self, other: Cost) -> Cost:
        return Cost(
            self.calls.most(other.calls),
            self.input_tokens.most(other.input_tokens),
            self.output_tokens.most(other.output_tokens),
            self.usd.most(other.usd),
            *self._calls_most(other),
        )

    def at_most(self, calls: int) -> Cost:
        """This, with no more than `calls` calls: each of the rest at most `calls` × its largest single call."""
        n = Quantity(calls)
        return Cost(
            self.calls.least(n),
            self.input_tokens.least(self.call_input.times(n)),
            self.output_tokens.least(self.call_output.times(n)),
            self.usd.least(self.call_usd.times(n)),
            self.call_input,
            self.call_output,
            self.call_usd,
        )

    def _calls_most(self, other: Cost) -> tuple[Quantity, Quantity, Quantity]:
        return (
            self.call_input.most(other.call_input),
            self.call_output.most(other.call_output),
            self.call_usd.most(other.call_usd),
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "model_calls": self.calls.to_json(),
            "input_tokens": self.input_tokens.to_json(),
            "output_tokens": self.output_tokens.to_json(),
            "usd": self.usd.to_json(),
        }


@record
class Row(Record):
    """One runnable where it runs under the entry: its bound and the formula that gives its calls."""

    name: str
    kind: str
    depth: int
    cost: Cost
    formula: str
    #: How each of its own model calls is bounded (input and output tokens), when it makes any.
    per_call: str = ""
    #: Placed again with the same input as a row above: what it runs is listed there, not repeated.
    again: bool = False

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "kind": self.kind, "depth": self.depth, "formula": self.formula}
        if self.per_call:
            out["per_call"] = self.per_call
        if self.again:
            out["again"] = True
        return {**out, **self.cost.to_json()}


@record
class EntryBound(Record):
    entry: str
    #: The run's input, in tokens: `--input-tokens`, else the run's input cap.
    input_tokens: int
    input_assumed: bool
    rows: tuple[Row, ...]

    @property
    def total(self) -> Cost:
        return self.rows[0].cost

    def to_json(self) -> dict[str, Any]:
        return {
            "entry": self.entry,
            "run_input_tokens": self.input_tokens,
            "input_from": "the run's input cap" if self.input_assumed else "--input-tokens",
            **self.total.to_json(),
            "runnables": [r.to_json() for r in self.rows],
        }


def entries_of(graph: AgentGraph) -> list[str]:
    """What a run may start at: `main`, else every root (a library of entries)."""
    main = entry_point(graph)
    return [main] if main == "main" else roots(graph)


def bounds(graph: AgentGraph, entries: list[str] | None = None, input_tokens: int | None = None) -> list[EntryBound]:
    return [bound_entry(graph, e, input_tokens) for e in (entries if entries is not None else entries_of(graph))]


def bound_entry(graph: AgentGraph, entry: str, input_tokens: int | None = None) -> EntryBound:
    """The worst case of a run of `entry` whose input is at most `input_tokens` (default: the run's input cap)."""
    size = input_tokens if input_tokens is not None else MAX_INPUT_BYTES
    walker = _Walker(graph, Quantity(size))
    try:
        walker.visit(entry, Quantity(size), 0, _Frame())
        rows = tuple(walker.rows)
    except RecursionError:  # thousands of levels of runnables inside runnables: said, not a crash of the check
        node = graph.get(entry)
        deep = Cost.unknown(f"`{entry}` nests runnables deeper than the cost bound follows")
        rows = (Row(name=entry, kind=node.kind if node else "?", depth=0, cost=deep, formula="?"),)
    return EntryBound(entry=entry, input_tokens=size, input_assumed=input_tokens is None, rows=rows)


def parse_percent(text: str) -> float:
    """`20%` or `20` → 20.0; ValueError for anything else."""
    raw = text.strip().removesuffix("%").strip()
    value = float(raw)
    if value != value or value < 0:
        raise ValueError(text)
    return value


@record
class _Frame(Record):
    """What a template inside a loop or map body may read besides its input: `loop.*`, `map.*`."""

    loop_last: Quantity | None = None
    loop_iterations: int = 0
    map_item: Quantity | None = None


class _Walker:
    """One entry's walk: each runnable visited where it runs, with the size of the input it gets there."""

    def __init__(self, graph: AgentGraph, run_input: Quantity) -> None:
        self.graph = graph
        self.run_input = run_input
        self.rows: list[Row] = []
        self.results: dict[str, Quantity] = {}
        self.active: set[str] = set()
        #: (name, input, frame) → (cost, formula) of a place already walked.
        self.seen: dict[tuple[str, Quantity, _Frame], tuple[Cost, str]] = {}

    # --- a runnable where it runs --------------------------------------------------------------------------------

    def visit(self, name: str, input: Quantity, depth: int, frame: _Frame) -> Cost:
        node = self.graph.get(name)
        if node is None:  # the compiler reports it
            return Cost.unknown(f"`{name}` is not declared")
        if name in self.active:  # the compiler reports the cycle; here it only must not recurse forever
            return Cost.unknown(f"`{name}` runs inside itself")
        key = (name, input, frame)
        known = self.seen.get(key)
        if known is not None:
            # Placed again with the same input: its rows are above. Walking it again could double per level
            # (`chain c2 = c1 -> c1`, `chain c3 = c2 -> c2`, ...).
            cost, formula = known
            self.rows.append(Row(name=name, kind=node.kind, depth=depth, cost=cost, formula=formula, again=True))
            return cost
        index = len(self.rows)
        self.rows.append(Row(name=name, kind=node.kind, depth=depth, cost=Cost(), formula=""))
        self.active.add(name)
        try:
            measure = getattr(self, f"_{node.kind}", None)
            if measure is None:  # a kind this walk does not know runs nothing it can bound
                cost, formula, per_call = Cost.unknown(f"`{name}`, a {node.kind}"), "?", ""
            else:
                cost, formula, per_call = measure(node, input, depth + 1, frame)
                cost, formula = _budgeted(node, cost, formula)
        finally:
            self.active.discard(name)
        self.rows[index] = Row(name=name, kind=node.kind, depth=depth, cost=cost, formula=formula, per_call=per_call)
        self.seen[key] = (cost, formula)
        return cost

    def _sequence(self, elements: tuple[str, ...], input: Quantity, depth: int, frame: _Frame) -> tuple[Cost, str]:
        total, parts = Cost(), []
        for element in elements:
            cost = self.visit(element, input, depth, frame)
            total = total + cost
            parts.append(f"{element} {cost.calls.text()}")
            input = self.result(element)
        return total, " + ".join(parts) or "0"

    def _chain(self, node: Any, input: Quantity, depth: int, frame: _Frame) -> tuple[Cost, str, str]:
        cost, formula = self._sequence(node.elements, input, depth, frame)
        return cost, formula, ""

    def _parallel(self, node: Any, input: Quantity, depth: int, frame: _Frame) -> tuple[Cost, str, str]:
        total, parts = Cost(), []
        for branch in node.branches:
            cost = self.visit(branch, input, depth, frame)
            total = total + cost
            parts.append(f"{branch} {cost.calls.text()}")
        return total, " + ".join(parts), ""

    def _route(self, node: Any, input: Quantity, depth: int, frame: _Frame) -> tuple[Cost, str, str]:
        most: Cost | None = None
        parts = []
        for target in node.targets():
            cost = self.visit(target, input, depth, frame)
            most = cost if most is None else most.most(cost)
            parts.append(f"{target} {cost.calls.text()}")
        return most or Cost(), f"max({', '.join(parts)})", ""

    def _loop(self, node: Any, input: Quantity, depth: int, frame: _Frame) -> tuple[Cost, str, str]:
        n = node.max_iterations
        times = Quantity(n) if n is not None else unbounded(f"loop `{node.name}` has no max_iterations")
        inner = _Frame(loop_last=self.result(node.body[-1]), loop_iterations=n or 0, map_item=frame.map_item)
        body, formula = self._sequence(node.body, input, depth, inner)
        return body.times(times), f"max_iterations {times.text()} × ({formula})", ""

    def _map(self, node: Any, input: Quantity, depth: int, frame: _Frame) -> tuple[Cost, str, str]:
        where = ".".join(node.over)
        if node.max_items is not None:
            times, label = Quantity(node.max_items), f"max_items {node.max_items}"
        else:
            times = unbounded(f"map `{node.name}`: the list `{where}` has no declared bound (max_items)")
            label = f"unbounded items of `{where}`"
        item = self.path_size(node.over, input, frame)
        inner = _Frame(loop_last=frame.loop_last, loop_iterations=frame.loop_iterations, map_item=item)
        body, formula = self._sequence(node.body, item, depth, inner)
        return body.times(times), f"{label} × ({formula})", ""

    def _consolidate(self, node: Any, input: Quantity, depth: int, frame: _Frame) -> tuple[Cost, str, str]:
        task = self.template(node.task, input, frame)
        answers = Quantity(0)
        for agent in node.agents:
            answers = answers + self.result(agent) + Quantity(len(agent) + MESSAGE_OVERHEAD)
        # Every round after the first adds the peers' answers; the bound uses that larger prompt for all rounds.
        prompt = task + answers + Quantity(PEERS)
        round_cost, parts = Cost(), []
        for agent in node.agents:
            cost = self.visit(agent, prompt, depth, frame)
            round_cost = round_cost + cost
            parts.append(f"{agent} {cost.calls.text()}")
        verdict = task + answers + Quantity(VERDICT)
        judge = self.graph.get(node.judge)
        if judge is not None and judge.kind == "agent":
            judged = self.visit(node.judge, verdict, depth, frame)
        else:
            judged, _ = self.calls(
                (node.judge,),
                None,
                Quantity(CALL_OVERHEAD + MESSAGE_OVERHEAD) + verdict,
                ZERO,
                1,
            )
            self.rows.append(
                Row(name=node.judge, kind="model", depth=depth, cost=judged, formula="1 (the judge's call)")
            )
        parts.append(f"judge {judged.calls.text()}")
        return (round_cost + judged).times(Quantity(node.rounds)), f"rounds {node.rounds} × ({' + '.join(parts)})", ""

    def _ask(self, node: Any, input: Quantity, depth: int, frame: _Frame) -> tuple[Cost, str, str]:
        return Cost(), "0 (a person answers)", ""

    def _step(self, node: Any, input: Quantity, depth: int, frame: _Frame) -> tuple[Cost, str, str]:
        if node.run is not None:
            return Cost(), "0 (a code step)", ""
        schema = self.schema(node.output)
        base = (
            Quantity(CALL_OVERHEAD + 2 * MESSAGE_OVERHEAD)
            + self.template(node.prompt, input, frame)
            + (self.template(node.system, input, frame) if node.system else ZERO)
            + schema
            + _thread(node)
        )
        retries = node.retry_malformed if not isinstance(node.output, TextType) else 0
        out = self.output_limit((node.model,), node.max_tokens)
        # A retry resends the conversation with the rejected answer and the runtime's guidance.
        growth = out + schema + Quantity(GUIDANCE + 2 * MESSAGE_OVERHEAD)
        cost, per_call = self.calls((node.model,), node.max_tokens, base, growth, 1 + retries)
        formula = f"1 + retry_malformed {retries}" if retries else "1"
        return cost, formula, per_call

    def _agent(self, node: Any, input: Quantity, depth: int, frame: _Frame) -> tuple[Cost, str, str]:
        models = (node.model, *node.fallback)
        out = self.output_limit(models, node.max_tokens)
        specs, results, delegated = ZERO, ZERO, []
        for tool in node.tools:
            spec, result = self.tool_sizes(tool)
            specs, results = specs + spec, results.most(result)
            target = self.graph.get(tool)
            if target is not None and target.kind == "agent":
                delegated.append(tool)
            elif isinstance(target, ToolNode) and (target.run or {}).get("type") == "agent":
                delegated.append(target.run["agent"])  # an agent tool (plait 0.3): its agent runs per call
        base = (
            Quantity(CALL_OVERHEAD + 2 * MESSAGE_OVERHEAD)
            + input
            + specs
            + (self.template(node.system, input, frame) if node.system else ZERO)
            + self.schema(node.output)
            + _thread(node)
        )
        growth = out + Quantity(MESSAGE_OVERHEAD)
        limit = node.max_tool_calls
        if node.tools and limit is None:
            # Each turn's results: as many calls as one reply makes, which nothing bounds.
            growth = growth + results.times(unbounded(f"the number of tool calls in one reply of `{node.name}`"))
        elif node.tools:
            # `limit` results run; each call past them gets a refusal (src/plait/runtime/steps/run_tools.py), and
            # a reply spends at least one output token (a name) on each call it makes.
            refusal = Quantity(REFUSAL + MESSAGE_OVERHEAD)
            growth = growth + (results + Quantity(MESSAGE_OVERHEAD)).times(Quantity(limit)) + out.times(refusal)
        if node.retry_malformed:
            growth = growth + self.schema(node.output) + Quantity(GUIDANCE)
        steps = node.max_steps
        cost, per_call = self.calls(models, node.max_tokens, base, growth, steps)
        parts = [f"max_steps {steps}"]
        if limit is None:
            for name in delegated:
                per = self.visit(name, out, depth, frame)  # its `task` is part of one reply
                many = unbounded(f"how many times one reply of `{node.name}` delegates to `{name}`")
                cost = cost + per.times(many)
                parts.append(f"unbounded × {name} {per.calls.text()}")
        elif delegated:
            # Every reply (the last one's calls run too) delegates at most `limit` times, each to the dearest.
            dearest: Cost | None = None
            each = []
            for name in delegated:
                per = self.visit(name, out, depth, frame)  # its `task` is part of one reply
                dearest = per if dearest is None else dearest.most(per)
                each.append(f"{name} {per.calls.text()}")
            assert dearest is not None
            cost = cost + dearest.times(Quantity(steps * limit))
            which = each[0] if len(each) == 1 else f"max({', '.join(each)})"
            parts.append(f"max_steps {steps} × max_tool_calls {limit} × {which}")
        # A hand-off (plait 0.3) runs one of its targets after the agent, with the agent's input: the costliest.
        handed: Cost | None = None
        for target in getattr(node, "handoff", ()):
            one = self.visit(target, input, depth, frame)
            handed = one if handed is None else handed.most(one)
        if handed is not None:
            cost = cost + handed
            parts.append(f"max({', '.join(node.handoff)}) {handed.calls.text()}")
        return cost, " + ".join(parts), per_call

    # --- model calls -------------------------------------------------------------------------------------------

    def calls(
        self, models: tuple[Any, ...], max_tokens: int | None, base: Quantity, growth: Quantity, count: int
    ) -> tuple[Cost, str]:
        """`count` calls of a conversation whose k-th call's input is base + (k-1) × growth, on any of `models`."""
        records = [self.model(m) for m in models]

        def call(k: int) -> Cost:
            input = base + growth.times(Quantity(k))
            one = Cost()
            for name, node in zip(models, records):
                sent = input.capped(_info(node, "context_window"))
                out = unbounded(f"model `{name}` is not declared") if node is None else self.output_of(node, max_tokens)
                cost = Cost.one(sent, out, self.price(name, node, sent, out))
                one = cost if not one.calls.value else one.most(cost)
            return one

        total = Cost()
        for k in range(min(count, EXACT_CALLS)):
            total = total + call(k)
        if count > EXACT_CALLS:
            # Inputs only grow and a price only rises with them: each later call costs at most the last one.
            total = total + call(count - 1).times(Quantity(count - EXACT_CALLS))
        per_call = ""
        if count:
            first = base.capped(_widest_window(records))
            out = self.output_limit(models, max_tokens)
            per_call = f"input ≤ {first.text()} tokens on the first call" + (
                f", growing by {growth.text()} per call" if count > 1 else ""
            )
            per_call += f"; output ≤ {out.text()} tokens per call"
        return total, per_call

    def model(self, name: str) -> ModelNode | None:
        node = self.graph.get(name)
        return node if node is not None and node.kind == "model" else None  # type: ignore[return-value]

    def output_of(self, model: ModelNode, max_tokens: int | None) -> Quantity:
        if max_tokens is not None:
            return Quantity(max_tokens)
        if model.max_tokens is not None:
            return Quantity(model.max_tokens)
        limit = _info(model, "max_output")
        if limit is not None:
            return Quantity(limit)
        if model.provider == "anthropic":
            return Quantity(ANTHROPIC_MAX_TOKENS)
        return unbounded(f"model `{model.name}` sets no max_tokens and its catalogue entry no output limit")

    def output_limit(self, models: tuple[Any, ...], max_tokens: int | None) -> Quantity:
        most = ZERO
        for name in models:
            record = self.model(name)
            most = most.most(
                self.output_of(record, max_tokens) if record is not None else unbounded(f"`{name}` is not a model")
            )
        return most

    def price(self, name: str, model: ModelNode | None, input: Quantity, output: Quantity) -> Quantity:
        info = getattr(model, "catalogue", None)
        if (info is None or info.price is None) and model is not None and model.provider == "scripted":
            return ZERO  # offline replies cost nothing, unless the spec prices them (to test a budget)
        if info is None or info.price is None:
            return unbounded(f"model `{name}` has no price (`plait models lock`, or `price` on the model)")
        if input.value is None or output.value is None:
            return Quantity(None, _union(input.why, output.why))
        usd = cost_usd(info, int(input.value), int(output.value))
        return Quantity(usd) if usd is not None else unbounded(f"model `{name}` has no price")

    # --- sizes of what flows -----------------------------------------------------------------------------------

    def result(self, name: str) -> Quantity:
        """The most tokens `name`'s output may hold as text: what the next element reads as `{{input}}`."""
        found = self.results.get(name)
        if found is None:
            self.results[name] = unbounded(f"`{name}` reads its own output")  # a cycle (the compiler reports it)
            found = self.results[name] = self._result(name)
        return found

    def _result(self, name: str) -> Quantity:
        node: Any = self.graph.get(name)
        if node is None:
            return unbounded(f"`{name}` is not declared")
        kind = node.kind
        if kind == "step":
            if node.run is not None:
                return unbounded(f"what code step `{name}` returns")
            return self.output_limit((node.model,), node.max_tokens)
        if kind == "agent":
            if node.until:
                return Quantity(STOPPED).most(self._tools_result(node.until))
            return Quantity(STOPPED).most(self.output_limit((node.model, *node.fallback), node.max_tokens))
        if kind == "chain":
            return self.result(node.elements[-1]) if node.elements else ZERO
        if kind == "parallel":
            total = Quantity(2)
            for branch in node.branches:
                total = total + self.result(branch) + Quantity(len(branch) + SMALL)
            return total
        if kind == "route":
            most = ZERO
            for target in node.targets():
                most = most.most(self.result(target))
            return most
        if kind == "loop":
            return self.result(node.body[-1]) if node.body else ZERO
        if kind == "map":
            times = (
                Quantity(node.max_items)
                if node.max_items is not None
                else unbounded(f"map `{name}`: the list `{'.'.join(node.over)}` has no declared bound (max_items)")
            )
            each = self.result(node.body[-1]) if node.body else ZERO
            return Quantity(2) + (each + Quantity(2)).times(times)
        if kind == "consolidate":
            judge = self.graph.get(node.judge)
            if judge is not None and judge.kind == "agent":
                return self.result(node.judge)
            return self.output_limit((node.judge,), None)
        if kind == "ask":
            return unbounded(f"what a person answers to `{name}`")
        return unbounded(f"the output of `{name}`")

    def _tools_result(self, tools: tuple[str, ...]) -> Quantity:
        most = ZERO
        for tool in tools:
            most = most.most(self.tool_sizes(tool)[1])
        return most

    def tool_sizes(self, ref: str) -> tuple[Quantity, Quantity]:
        """(the tokens of a tool's definition as the model is sent it, the most its one result may hold)."""
        node: Any = self.graph.get(ref)
        if node is None:
            server = ref.split(".", 1)[0]
            return unbounded(f"MCP tool `{ref}`'s schema"), unbounded(f"what MCP server `{server}` returns")
        if node.kind == "mcp":
            return unbounded(f"MCP server `{ref}`'s tool schemas"), unbounded(f"what MCP server `{ref}` returns")
        if node.kind == "agent":
            spec = Quantity(_bytes(node.name) + _bytes(node.description or "") + 64 + MESSAGE_OVERHEAD)
            return spec, self.result(ref)
        spec_text = json.dumps({"name": node.name, "description": node.description, "parameters": node.parameters})
        spec = Quantity(_bytes(spec_text) + MESSAGE_OVERHEAD)
        run = node.run or {}
        if run.get("type") == "agent":  # an agent tool (plait 0.3): what its agent answers
            return spec, self.result(run["agent"])
        if run.get("type") == "http":
            limit = run.get("max_response")
            return spec, Quantity(limit) if isinstance(limit, int) else unbounded(f"what http tool `{ref}` returns")
        return spec, unbounded(f"what tool `{ref}` returns")

    def schema(self, output: Any) -> Quantity:
        if output is None or isinstance(output, TextType):
            return ZERO
        return Quantity(_bytes(json.dumps(to_json_schema(output))))

    def template(self, text: str | None, input: Quantity, frame: _Frame) -> Quantity:
        """A template's bytes, with each `{{path}}` replaced by the most its value may hold."""
        if not text:
            return ZERO
        total = Quantity(_bytes(_PLACEHOLDER.sub("", text)) + MESSAGE_OVERHEAD)
        for match in _PLACEHOLDER.finditer(text):
            if match.group(1) is not None:
                total = total + self.path_size(tuple(match.group(1).split(".")), input, frame)
        return total

    def path_size(self, path: tuple[str, ...], input: Quantity, frame: _Frame) -> Quantity:
        head = path[0]
        if head == "input":
            return input
        if head == "run":
            return self.run_input
        if head == "state":
            return unbounded(f"`state.{'.'.join(path[1:])}` (written by tools)")
        if head == "loop":
            last = frame.loop_last if frame.loop_last is not None else ZERO
            field = path[1] if len(path) > 1 else ""
            if field == "iteration":
                return Quantity(SMALL)
            if field == "history":
                return Quantity(2) + (last + Quantity(2)).times(Quantity(max(frame.loop_iterations, 1)))
            return last
        if head == "map":
            if len(path) > 1 and path[1] == "index":
                return Quantity(SMALL)
            return frame.map_item if frame.map_item is not None else input
        node = self.graph.get(head)
        if node is not None and node.kind != "model":
            return self.result(head)
        return unbounded(f"`{'.'.join(path)}`")


def _budgeted(node: Any, cost: Cost, formula: str) -> tuple[Cost, str]:
    """A `budget` whose `model_calls` fails the run caps the calls: the runtime starts no call past it
    (src/plait/runtime/budget.py). Its `usd` and `tokens` do not cap the bound: the runtime prices a call before
    sending from an estimate of its input, so the last call may go past them; and `pause` lets a person raise it."""
    budget = getattr(node, "budget", None)
    limit = getattr(budget, "model_calls", None)
    if limit is None or getattr(budget, "on_exceeded", None) != "fail":
        return cost, formula
    if cost.calls.value is not None and cost.calls.value <= limit:
        return cost, formula
    return cost.at_most(limit), (f"min({formula}, budget model_calls {limit})")


def _thread(node: Any) -> Quantity:
    """What a runnable that continues a thread (plait 0.3) is sent before its own turn: the messages other turns
    left there, which this walk does not follow (each call is still capped by its model's context window)."""
    thread = getattr(node, "thread", None)
    return ZERO if thread is None else unbounded(f"the messages thread `{thread}` holds when `{node.name}` runs")


def _bytes(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def _info(model: ModelNode | None, field: str) -> int | None:
    info = getattr(model, "catalogue", None)
    value = getattr(info, field, None) if info is not None else None
    return value if isinstance(value, int) else None


def _widest_window(records: list[Any]) -> int | None:
    windows = [_info(r, "context_window") for r in records]
    return None if not windows or any(w is None for w in windows) else max(w for w in windows if w is not None)


@record
class Rise(Record):
    """One entry's bound, old → new, for one quantity; `percent` None when it became unbounded or rose from 0."""

    entry: str
    quantity: str
    old: Quantity
    new: Quantity
    percent: float | None
    over: bool

    def text(self) -> str:
        usd = self.quantity == "usd"
        change = "unbounded now" if self.percent is None else f"{self.percent:+.1f}%"
        line = f"entry {self.entry}: {self.quantity.replace('_', ' ')} {self.old.text(usd)} → {self.new.text(usd)} ({change})"
        if self.new.why and not self.new.bounded:
            line += f"; unbounded by {self.new.why[0]}"
        return line

    def to_json(self) -> dict[str, Any]:
        return {
            "entry": self.entry,
            "quantity": self.quantity,
            "old": self.old.to_json(),
            "new": self.new.to_json(),
            "percent": self.percent,
            "over_limit": self.over,
        }


#: What `plait diff --max-cost-increase` compares: what a run may cost, in calls and in money.
COMPARED = ("calls", "usd")
_NAMES = {"calls": "model_calls", "usd": "usd"}


def compare(old: AgentGraph, new: AgentGraph, limit: float, input_tokens: int | None = None) -> list[Rise]:
    """Every bound of an entry both sides have that rose (percent above the old one); `over` past `limit` percent.

    A bound that was finite and is now unbounded, or rose from nothing, is over any limit; one unbounded on both
    sides cannot be compared and is left out (what is unbounded is named by `plait cost`)."""
    before = {b.entry: b.total for b in bounds(old, input_tokens=input_tokens)}
    rises = []
    for after in bounds(new, input_tokens=input_tokens):
        was = before.get(after.entry)
        if was is None:
            continue
        for field in COMPARED:
            a, b = getattr(was, field), getattr(after.total, field)
            if a.value is None or (b.value is not None and b.value <= a.value):
                continue
            percent = None if b.value is None or a.value == 0 else (b.value - a.value) / a.value * 100
            over = percent is None or percent > limit
            rises.append(Rise(entry=after.entry, quantity=_NAMES[field], old=a, new=b, percent=percent, over=over))
    return rises
