"""The graph's threads and their users → thread diagnostics (plait 0.3).

A thread is one conversation that several runnables continue, one after the
other. What would make it something else is checked here:

- P351 (warning): its users call models of different providers. Allowed: the
  runtime keeps a thread as provider-neutral messages, as it does for an
  agent that falls back to another provider's model; but what a provider keeps
  for itself (a Responses API continuation, a model's reasoning signatures)
  does not cross, so the other provider gets the whole history resent, as
  plain messages.
- P352 (error): two of its users may run at once (branches of one parallel, the
  agents of a consolidate, the items of a map running more than one at a
  time): their turns would interleave in one transcript in whatever order the
  calls finish, and each would overwrite what the other added. So may an agent
  and an agent it delegates to (listed in its `tools`, or through a tool whose
  `run = delegate(AGENT)`, directly or further down): the delegate's turn would
  land in the thread in the middle of its caller's, which then adds its own on
  top of a conversation it did not start from.
- P353 (error): a step that makes no model call (a code step, a record
  builder) names a thread: there is no conversation for it to continue.

An unknown thread is P101 and a thread that is not one is P103, as for every
reference (resolve_names); `keep_last` out of its bounds is P204 (the schema's).
"""

from __future__ import annotations

from typing import Callable, Iterator

from plait.core.codes import declare, make
from plait.core.diagnostics import Label, Severity
from plait.core.graph import (
    AgentNode,
    ChainNode,
    ConsolidateNode,
    LoopNode,
    MapNode,
    Node,
    ParallelNode,
    RouteNode,
    StepNode,
)
from plait.core.source import Span

from ..context import CompileContext

__all__ = ["check_threads"]

# The codes this module raises; their documentation is explain/<code>.md beside it.
P351 = declare(
    "P351", "thread-mixed-providers", Severity.WARNING, "a thread shared by runnables that call different providers"
)
P352 = declare("P352", "thread-concurrent-users", Severity.ERROR, "a thread that two runnables may add to at once")
P353 = declare("P353", "thread-without-model", Severity.ERROR, "a thread on a step that makes no model call")


def check_threads(ctx: CompileContext) -> None:
    graph = ctx.graph
    if graph is None:
        return
    # Where each runnable wrote `thread = NAME`: what every diagnostic points at.
    written = {ref.owner: ref.span for ref in ctx.references if ref.attr == "thread"}
    if not written:
        return  # no spec without threads pays for the walk
    users: dict[str, list[str]] = {}
    for owner in written:
        record = graph.get(owner)
        thread = getattr(record, "thread", None)
        if thread is None:
            continue
        if isinstance(record, StepNode) and record.model is None:
            what = "a code step" if record.run is not None else "a record builder (`with` alone)"
            ctx.diagnostics.append(
                make(
                    "P353",
                    f"step `{owner}` is {what}: it makes no model call, so it has no conversation to add to "
                    f"thread `{thread}`",
                    written[owner],
                    notes=["a thread is continued by agents and steps that call a model"],
                )
            )
            continue
        users.setdefault(thread, []).append(owner)
    for thread, names in users.items():
        _providers(ctx, thread, names, written)
    _concurrent(ctx, written)


def _providers(ctx: CompileContext, thread: str, names: list[str], written: dict[str, Span]) -> None:
    graph = ctx.graph
    assert graph is not None
    seen: dict[str, str] = {}  # provider -> its first user
    for name in names:
        model = graph.get(getattr(graph.get(name), "model", None) or "")
        provider = getattr(model, "provider", None)
        if not provider or provider in seen:
            continue
        if seen:
            first = next(iter(seen.items()))
            ctx.diagnostics.append(
                make(
                    "P351",
                    f"thread `{thread}` is shared by `{first[1]}` ({first[0]}) and `{name}` ({provider}): each "
                    "provider gets the whole history resent as plain messages",
                    written[name],
                    labels=[Label(written[first[1]], f"`{first[1]}` calls a model of {first[0]}")],
                    notes=[
                        "what a provider keeps for itself (a Responses API continuation, a model's reasoning "
                        "signatures) does not cross to another provider",
                    ],
                )
            )
        seen[provider] = name


def _concurrent(ctx: CompileContext, written: dict[str, Span]) -> None:
    """P352: a parallel's branches, a consolidate's agents, or a map's items running together, sharing a thread."""
    graph = ctx.graph
    assert graph is not None
    memo: dict[str, dict[str, str]] = {}
    # Caller → the agents it delegates to, listed in `tools` or through a `run = delegate(AGENT)` tool.
    delegated: dict[str, list[str]] = {}
    for edge in graph.edges("delegates"):
        delegated.setdefault(edge.source, []).append(edge.target)

    def threads(name: str, walking: frozenset[str] = frozenset()) -> dict[str, str]:
        """Thread → the first runnable under `name` (itself included) that continues it."""
        found = memo.get(name)
        if found is not None:
            return found
        if name in walking:  # a cycle is validate_graph's to report
            return {}
        record = graph.get(name)
        out: dict[str, str] = {}
        thread = getattr(record, "thread", None)
        if thread is not None and name in written:
            out[thread] = name
        for child in (*_children(record), *delegated.get(name, ())):
            for t, user in threads(child, walking | {name}).items():
                out.setdefault(t, user)
        memo[name] = out
        return out

    reported: set[tuple[str, str]] = set()
    reported_delegates: set[tuple[str, str, str]] = set()
    for record in graph.nodes():
        together: list[str] = []
        if isinstance(record, ParallelNode):
            together = list(record.branches)
        elif isinstance(record, ConsolidateNode):
            together = list(record.agents)
        if together:
            owner: dict[str, str] = {}
            for branch in together:
                for t, user in threads(branch).items():
                    first = owner.setdefault(t, user)
                    if first != user and (t, user) not in reported:
                        reported.add((t, user))
                        ctx.diagnostics.append(
                            make(
                                "P352",
                                f"`{first}` and `{user}` both continue thread `{t}`, and `{record.name}` runs them "
                                "at once: their turns would interleave in one conversation",
                                written[user],
                                labels=[Label(written[first], f"`{first}` continues it too")],
                                notes=["give each its own thread, or run them one after the other in a chain"],
                            )
                        )
        elif isinstance(record, MapNode) and record.concurrency > 1:
            for t, user in _threads_of_body(record.body, threads).items():
                if (t, user) in reported:
                    continue
                reported.add((t, user))
                ctx.diagnostics.append(
                    make(
                        "P352",
                        f"`{user}` continues thread `{t}` inside map `{record.name}`, which runs "
                        f"{record.concurrency} items at once: their turns would interleave in one conversation",
                        written[user],
                        notes=["set `concurrency = 1` on the map so its items take turns, or drop the thread"],
                    )
                )

    for caller, delegates in delegated.items():
        thread = getattr(graph.get(caller), "thread", None)
        if thread is None or caller not in written:
            continue
        for delegate in dict.fromkeys(delegates):  # an agent both listed and behind a tool is one delegate
            found = threads(delegate).get(thread)
            if found is None or found == caller or (thread, caller, found) in reported_delegates:
                continue  # an agent delegating to itself is P303's
            user = found
            reported_delegates.add((thread, caller, user))
            via = "" if user == delegate else f" (through `{delegate}`)"
            ctx.diagnostics.append(
                make(
                    "P352",
                    f"`{caller}` delegates to `{user}`{via}, and both continue thread `{thread}`: `{user}`'s turn "
                    f"would land in the thread in the middle of `{caller}`'s",
                    written[user],
                    labels=[Label(written[caller], f"`{caller}` continues it too")],
                    notes=[
                        "give the delegated agent its own thread, or none: it gets its task from the caller's model"
                    ],
                )
            )


def _threads_of_body(body: tuple[str, ...], threads: Callable[[str], dict[str, str]]) -> dict[str, str]:
    out: dict[str, str] = {}
    for element in body:
        for t, user in threads(element).items():
            out.setdefault(t, user)
    return out


def _children(record: Node | None) -> Iterator[str]:
    """The runnables that run inside `record` (a delegated agent runs inside the agent that calls it)."""
    if isinstance(record, ChainNode):
        yield from record.elements
    elif isinstance(record, ParallelNode):
        yield from record.branches
    elif isinstance(record, ConsolidateNode):
        yield from record.agents
    elif isinstance(record, RouteNode):
        yield from (case.target for case in record.cases)
        if record.otherwise is not None:
            yield record.otherwise
    elif isinstance(record, LoopNode | MapNode):
        yield from record.body
    elif isinstance(record, AgentNode):
        yield from record.tools
