"""Runnables with a USD budget → P360 for each model inside one that has no price.

Why: a budget in dollars over a model plait cannot price would count that
model's calls as free, which is the false safety a budget exists to prevent.
A model's price comes from `plait.lock` (`plait models lock`) or its own
`price = { input = ..., output = ... }`; a budget that knowingly includes an
unpriced model says `unpriced = allow` (its calls then count in tokens and
calls only). Budgets without `usd` are about tokens and calls, which every
model reports, so they are not checked.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from plait.core.codes import declare, make
from plait.core.diagnostics import Fix, Label, Severity
from plait.core.kinds import (
    AgentNode,
    ConsolidateNode,
    LoopNode,
    MapNode,
    ModelNode,
    Node,
    ParallelNode,
    RouteNode,
    Runnable,
    StepNode,
)
from plait.core.kinds import ChainNode

from ..context import CompileContext

# The codes this module raises; their documentation is explain/<code>.md beside it.
P360 = declare("P360", "budget-unpriced-model", Severity.ERROR, "a USD budget over a model that has no price")

__all__ = ["CODE", "budget_unpriced", "models_within"]

CODE = "P360"


def _inside(node: Node) -> Iterator[str]:
    """The names a runnable's execution may reach directly: its models, delegates and nested runnables."""
    if isinstance(node, AgentNode):
        yield node.model
        yield from node.fallback
        yield from node.tools  # delegated agents among them; tools and servers are not runnables and are skipped
    elif isinstance(node, StepNode):
        if node.run is None and node.model:
            yield node.model
    elif isinstance(node, ChainNode):
        yield from node.elements
    elif isinstance(node, ParallelNode):
        yield from node.branches
    elif isinstance(node, ConsolidateNode):
        yield from node.agents
        yield node.judge
    elif isinstance(node, RouteNode):
        yield from node.targets()
    elif isinstance(node, LoopNode | MapNode):
        yield from node.body


def models_within(get: Callable[[str], Node | None], name: str) -> dict[str, str]:
    """Model name → the runnable that calls it, for every model a run of runnable `name` may call."""
    found: dict[str, str] = {}
    seen: set[str] = set()
    todo = [name]
    while todo:
        current = todo.pop()
        if current in seen:
            continue
        seen.add(current)
        node = get(current)
        if node is None:
            continue
        for inner in _inside(node):
            target = get(inner)
            if isinstance(target, ModelNode):
                found.setdefault(inner, current)
            elif isinstance(target, Runnable):
                todo.append(inner)
    return found


def budget_unpriced(ctx: CompileContext) -> None:
    graph = ctx.graph
    if graph is None:
        return
    for node in graph.nodes():
        budget = getattr(node, "budget", None)
        if budget is None or budget.usd is None or budget.unpriced == "allow":
            continue
        where = ctx.spans.get(node.name, {}).get("budget") or node.span
        if where is None:
            continue  # a generated runnable (an inline parallel) has no block to write a budget in
        for model, caller in models_within(graph.get, node.name).items():
            record = graph.node(model)
            info = getattr(record, "catalogue", None)
            if info is not None and info.price is not None:
                continue
            labels = [Label(record.span, f"model `{model}`, called by `{caller}`")] if record.span else []
            ctx.diagnostics.append(
                make(
                    CODE,
                    f"the USD budget of `{node.name}` covers model `{model}`, which has no price",
                    where,
                    labels=labels,
                    fix=Fix(
                        f"run `plait models lock` to record its price, give `{model}` a "
                        "`price = { input = ..., output = ... }`, or add `unpriced = allow` to the budget"
                    ),
                )
            )
