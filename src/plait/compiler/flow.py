"""Checked declarations and output types → every place each runnable runs, and who dominates whom there.

A runnable used in two chains runs in two places, with two inputs and two
histories; each place is an `Instance`. Instances form a run graph (a start
and a done node each; edges for chain order, parallel branches, route cases,
loop and map bodies, delegation and debate), and `{{NAME}}` is safe at a
reader when some instance of NAME finishing dominates the reader's start:
NAME has finished on every path that reaches it. networkx computes the
dominators; intervals over the dominator tree answer each query at once.
"""

from __future__ import annotations

from dataclasses import field
from typing import Any, Iterator

from plait.core import types as t
from plait.core.record import Record, record
from plait.core.source import Span

from .bindings import is_builder, placed_record
from .context import CompileContext, Reference, unrepeated
from .entry import roots
from .passes.infer_types import members
from .draft import NOTHING

__all__ = ["Frame", "Instance", "RunGraph", "instance_budget", "tool_params", "walk"]

#: Instances walked at most: reuse nested many levels deep multiplies places; past this, dominance is not checked.
MAX_INSTANCES = 200_000
#: ...and at most this many per reference in the spec (plus a floor), so the walk's cost is linear in the spec's
#: size: thirty parallels that all contain each other once walked 200,000 instances (2.4 s) for 30 lines of text.
INSTANCES_PER_REFERENCE = 40
INSTANCES_FLOOR = 10_000


def instance_budget(ctx: CompileContext) -> int:
    """How many instances `walk` may make for this spec before it gives up on dominance."""
    return min(MAX_INSTANCES, INSTANCES_FLOOR + INSTANCES_PER_REFERENCE * len(ctx.references))


@record(kw_only=False)
class Frame(Record):
    """A loop or map a body element runs inside: what `{{loop...}}` / `{{map...}}` read there."""

    kind: str  # "loop" or "map"
    name: str
    #: loop: the body's output (`loop.last`); map: the item type (`map.item`).
    type: t.Type


@record(kw_only=False)
class Instance(Record):
    id: int
    name: str
    kind: str
    #: What arrives as `{{input}}`, and which runnable produced it (None: the run's input or unknown).
    input: t.Type
    producer: str | None
    frames: tuple[Frame, ...]
    #: Where it is placed to receive this input, and how (see `describe`); None for a root.
    span: Span | None = None
    note: tuple = ()
    parent: "Instance | None" = field(default=None, repr=False, compare=False)
    #: Paths a route around it narrowed (`on classify.kind`: `("classify",)` → the case's records), longest
    #: first; reads of them and below use the narrowed type (src/plait/compiler/paths.py).
    narrowed: tuple[tuple[tuple[str, ...], t.Type], ...] = field(default=(), repr=False, compare=False)


def source(ctx: CompileContext, name: str) -> str:
    """The runnable whose reply a runnable's output is: a chain's or loop's last element, followed through."""
    seen: set[str] = set()
    while name not in seen:
        seen.add(name)
        decl = ctx.decls.get(name)
        if decl is None or decl.kind not in ("chain", "loop"):
            return name
        parts = members(ctx, name)
        if not parts:
            return name
        name = parts[-1]
    return name


class RunGraph:
    """Run-graph edges between instance nodes (start = 2*id, done = 2*id + 1), kept as plain lists until asked."""

    def __init__(self) -> None:
        self.edges: list[tuple[int, int]] = []
        self.roots: list[int] = []
        self.of: dict[str, list[int]] = {}
        self.instances: list[Instance] = []
        self._interval: dict[int, tuple[int, int]] | None = None

    def _dominates(self, a: int, b: int) -> bool:
        interval = self._intervals()
        outer, inner = interval.get(a), interval.get(b)
        return outer is not None and inner is not None and outer[0] <= inner[0] and inner[1] <= outer[1]

    def dominated(self, name: str, reader: Instance) -> bool:
        """Whether some instance of `name` has finished on every path to `reader`'s start."""
        start = 2 * reader.id
        if start not in self._intervals():
            return True  # unreachable from any root: nothing runs it, so nothing can read too early
        for inst in (self.instances[i] for i in self.of.get(name, ())):
            # Branches of a parallel are alternatives in the graph, but its join waits for all of them:
            # a runnable that always finishes in a branch has finished once the parallel has.
            witness, here = 2 * inst.id + 1, inst
            while True:
                if self._dominates(witness, start):
                    return True
                parent = here.parent
                if parent is None:
                    break
                if parent.kind == "parallel" and self._dominates(witness, 2 * here.id + 1):
                    witness = 2 * parent.id + 1
                here = parent
        return False

    def _intervals(self) -> dict[int, tuple[int, int]]:
        if self._interval is None:
            import networkx as nx

            graph = nx.DiGraph()
            entry = -1
            graph.add_node(entry)
            graph.add_edges_from((entry, 2 * r) for r in self.roots)
            graph.add_edges_from(self.edges)
            idom = nx.immediate_dominators(graph, entry)
            children: dict[int, list[int]] = {}
            for node, dom in idom.items():
                if node != dom:
                    children.setdefault(dom, []).append(node)
            # Pre/post numbers of the dominator tree: a dominates b iff a's interval holds b's.
            interval: dict[int, tuple[int, int]] = {}
            clock = 0
            stack: list[tuple[int, bool]] = [(entry, False)]
            start: dict[int, int] = {}
            while stack:
                node, closing = stack.pop()
                if closing:
                    interval[node] = (start[node], clock)
                    clock += 1
                    continue
                start[node] = clock
                clock += 1
                stack.append((node, True))
                stack.extend((c, False) for c in children.get(node, ()))
            self._interval = interval
        return self._interval


_RUNNABLE = frozenset({"agent", "step", "consolidate", "ask", "chain", "parallel", "route", "loop", "map"})


def walk(ctx: CompileContext, run: RunGraph) -> Iterator[Instance]:
    """Every instance, parents before children, with the run graph's edges recorded in `run`."""
    types = ctx.types
    counter = 0
    budget = instance_budget(ctx)
    run_input: t.Type = ctx.input_type if ctx.input_type is not None else t.ANY

    def new(
        name: str,
        input: t.Type,
        producer: str | None,
        frames: tuple[Frame, ...],
        span: Span | None,
        note: tuple,
        parent: Instance | None,
        narrowed: tuple[tuple[tuple[str, ...], t.Type], ...] | None = None,
    ) -> Instance:
        nonlocal counter
        kind = ctx.kind(name) or "parallel"
        if narrowed is None:  # what a route around the parent narrowed holds everywhere inside it
            narrowed = parent.narrowed if parent is not None else ()
        inst = Instance(counter, name, kind, input, producer, frames, span, note, parent, narrowed)
        counter += 1
        run.of.setdefault(name, []).append(inst.id)
        run.instances.append(inst)
        return inst

    calls = _calls(ctx)
    params: dict[str, t.ObjectType] = {}  # a tool's params record, made once however often its agent runs
    builders = {n for n, d in ctx.decls.items() if d.kind == "step" and is_builder(ctx, n)}
    element_spans: dict[tuple[str, int], Span] = {}
    for ref in ctx.references:
        if ref.attr in ("elements", "body", "cases", "branches"):
            element_spans[ref.owner, ref.index] = ref.span

    stack: list[Instance | str] = []
    # Names on the path from the root to the instance being expanded: a runnable that contains or
    # delegates to itself (P303/P304, reported elsewhere) is not expanded a second time inside itself.
    on_path: dict[str, int] = {}
    placed: set[str] = set()
    delegated: set[str] = set()  # agents already expanded as somebody's delegate
    shallow: set[int] = set()  # instances whose delegates are not expanded again (see below)
    # Roots first; then, since chains that contain each other have no outer root, whatever is still unplaced.
    first = roots(ctx.graph) if ctx.graph is not None else []
    pending = first + [n for n, d in ctx.decls.items() if d.kind in _RUNNABLE]
    pending.reverse()
    while stack or pending:
        if not stack:
            name = pending.pop()
            if name in placed:
                continue
            root = new(name, run_input, None, (), None, (), None)
            run.roots.append(root.id)
            stack.append(root)
        item = stack.pop()
        if isinstance(item, str):
            on_path[item] -= 1
            continue
        inst = item
        if counter > budget:
            run.roots.clear()  # too many places to check dominance in: report nothing rather than guess
            return
        if on_path.get(inst.name):
            continue
        on_path[inst.name] = on_path.get(inst.name, 0) + 1
        placed.add(inst.name)
        stack.append(inst.name)
        yield inst
        name, start, done = inst.name, 2 * inst.id, 2 * inst.id + 1
        decl = ctx.decls.get(name)
        kind = decl.kind if decl is not None else "parallel"
        children: list[Instance] = []

        def sequence(
            owner: Instance,
            elements: tuple[str, ...],
            first_input: t.Type,
            first_producer: str | None,
            frames: tuple[Frame, ...],
        ) -> list[Instance]:
            made: list[Instance] = []
            for index, element in enumerate(elements):
                if counter > budget:
                    break  # one chain of a million elements would otherwise be made whole before the check below
                span = element_spans.get((owner.name, index))
                if index == 0:  # the first element receives what its owner receives, placed where it is
                    child = new(element, first_input, first_producer, frames, owner.span, owner.note, owner)
                else:
                    before = elements[index - 1]
                    note = ("follows", element, before, owner.name)
                    arrives = _built(ctx, made[-1]) if before in builders else types.get(before, t.ANY)
                    child = new(element, arrives, source(ctx, before), frames, span, note, owner)
                made.append(child)
            return made

        if kind in ("chain", "loop", "map"):
            elements = members(ctx, name)
            frames = inst.frames
            first_input, first_producer = inst.input, inst.producer
            if kind == "loop":
                frames = frames + (Frame("loop", name, types.get(name, t.ANY)),)
            elif kind == "map":
                item_type = _item_type(ctx, inst)
                frames = frames + (Frame("map", name, item_type),)
                first_input, first_producer = item_type, None
            made = sequence(inst, elements, first_input, first_producer, frames)
            if made:
                run.edges.append((start, 2 * made[0].id))
                run.edges.extend((2 * a.id + 1, 2 * b.id) for a, b in zip(made, made[1:]))
                run.edges.append((2 * made[-1].id + 1, done))
                if kind == "loop":
                    run.edges.append((2 * made[-1].id + 1, 2 * made[0].id))
            if kind == "map" or not made:
                run.edges.append((start, done))
            children = made
        elif kind in ("parallel", "route"):
            note: tuple
            narrowed = _narrowed(ctx, decl, inst) if kind == "route" else {}
            for index, branch in enumerate(members(ctx, name)):
                if kind == "parallel":
                    span, note = inst.span, (("branch", branch, inst.note) if inst.note else ())
                else:
                    span, note = element_spans.get((name, index)), ("case", branch, name)
                arrives, reads = inst.input, inst.narrowed
                if index in narrowed:
                    prefix, typed = narrowed[index]
                    if prefix == ("input",):
                        arrives = typed
                    else:
                        reads = _narrow_reads(inst.narrowed, prefix, typed)
                children.append(new(branch, arrives, inst.producer, inst.frames, span, note, inst, reads))
            run.edges.extend((start, 2 * c.id) for c in children)
            run.edges.extend((2 * c.id + 1, done) for c in children)
            if not children:
                run.edges.append((start, done))
        elif inst.id not in shallow:
            run.edges.append((start, done))
            for ref in calls.get(name, ()):
                # An agent behind a tool (`run = delegate(AGENT)`) receives the tool's params as its input record.
                arrives = t.TEXT
                if ref.attr == "run" and ref.member:
                    if ref.member not in params:
                        params[ref.member] = tool_params(ctx, ref.member)
                    arrives = params[ref.member]
                note = (_HOW[ref.attr], ref.target, name)
                child = new(ref.target, arrives, name, inst.frames, ref.span, note, inst)
                run.edges.append((start, 2 * child.id))
                run.edges.append((2 * child.id + 1, done))
                children.append(child)
                # A delegate always receives text, so its own delegates are expanded at its first place
                # only: re-expanding them under every caller is exponential in a densely delegating spec.
                if ref.target in delegated:
                    shallow.add(child.id)
                delegated.add(ref.target)
        else:
            run.edges.append((start, done))
        if kind == "agent" and inst.id not in shallow:
            # Its hand-off targets (plait 0.3) run with its own input, as a route's cases run with the route's.
            for target in ctx.draft(name).get("handoff") or ():
                span = ctx.spans.get(name, {}).get("handoff", inst.span)
                child = new(
                    target, inst.input, inst.producer, inst.frames, span, ("is handed control by", target, name), inst
                )
                run.edges.append((start, 2 * child.id))
                run.edges.append((2 * child.id + 1, done))
                children.append(child)
        stack.extend(reversed(children))


#: How a runnable called by another one is described, by the reference that calls it.
_HOW = {"tools": "delegated to by", "run": "delegated to by", "agents": "debates in", "judge": "judges"}


def _calls(ctx: CompileContext) -> dict[str, list]:
    """Agents each runnable runs inside itself: delegates (agent tools), a consolidate's agents and judge agent."""
    found: dict[str, list] = {}
    for ref in unrepeated(ctx.references):  # a delegate listed again in `tools` is one delegate
        if ref.attr in ("tools", "agents", "judge") and ctx.kind(ref.target) == "agent":
            found.setdefault(ref.owner, []).append(ref)
        elif ref.attr == "tools" and ctx.kind(ref.target) == "tool":  # a tool an agent answers (plait 0.3)
            run = ctx.draft(ref.target).get("run")
            if isinstance(run, dict) and run.get("type") == "agent" and ctx.kind(run.get("agent") or "") == "agent":
                found.setdefault(ref.owner, []).append(
                    Reference(ref.owner, "run", run["agent"], ref.span, 0, ref.target)
                )
    return found


def _narrowed(ctx: CompileContext, route: Any, inst: Instance) -> dict[int, tuple[tuple[str, ...], t.Type]]:
    """What each case (by its index among the cases that name a runnable) reads narrowed when the route switches
    on the discriminator of a union of records: the path of the union (`("input",)` for `on input.kind`,
    `("classify",)` for `on classify.kind`, `("state", "booking")` for `on state.booking.kind`) and the records
    whose literal the case names, for `else` the ones no case names. Empty when it switches on anything else."""
    parts: tuple[str, ...] = getattr(route.subject, "parts", ())  # an expression subject narrows nothing
    if len(parts) < 2:
        return {}
    prefix, key = parts[:-1], parts[-1]
    if prefix[0] in ("input", "loop", "map") and prefix != ("input",):
        return {}  # these words mean another value further in (the next element's input, an inner loop's)
    if prefix == ("input",):
        union: t.Type | None = inst.input
    else:
        from .paths import resolve  # the path resolver also reads flow's instances

        union = resolve(ctx, inst, prefix).type
    if union is None or t.discriminator(t.strip_optional(union)) != key:
        return {}
    named = [case.literal.value for case in route.cases if case.literal is not None]
    out: dict[int, tuple[tuple[str, ...], t.Type]] = {}
    index = 0
    for case in route.cases:
        if case.target.name not in ctx.decls:  # as `members` lists them
            continue
        if case.literal is not None:
            out[index] = prefix, t.narrow(union, key, (case.literal.value,))
        else:
            out[index] = prefix, _rest(union, key, named)
        index += 1
    return out


def _narrow_reads(
    outer: tuple[tuple[tuple[str, ...], t.Type], ...], prefix: tuple[str, ...], typed: t.Type
) -> tuple[tuple[tuple[str, ...], t.Type], ...]:
    """`outer` with `prefix` narrowed to `typed` (replacing what an outer route said of it), longest path first."""
    kept = [(p, ty) for p, ty in outer if p != prefix] + [(prefix, typed)]
    return tuple(sorted(kept, key=lambda entry: -len(entry[0])))


def _rest(input: t.Type, field: str, named: list[Any]) -> t.Type:
    """The records of a union whose discriminator holds none of `named` (what an `else` case receives)."""
    union = t.strip_optional(input)
    values = []
    for option in union.options if isinstance(union, t.UnionType) else ():
        f = option.get(field) if isinstance(option, t.ObjectType) else None
        if f is not None and isinstance(f.type, t.LiteralType):
            values += [v for v in f.type.values if not any(v == n and type(v) is type(n) for n in named)]
    return t.narrow(input, field, values) if values else input


def _built(ctx: CompileContext, inst: Instance) -> t.Type:
    """A record builder's output where it runs: its `input...`/`loop...`/`map...` bindings typed there."""
    from .paths import resolve

    built = placed_record(ctx, inst.name, lambda parts: resolve(ctx, inst, parts).type)
    return built if built is not None else t.ANY


def _item_type(ctx: CompileContext, inst: Instance) -> t.Type:
    """A map's item type at this instance: the item of the list its `over` names (any when unknown)."""
    from .paths import resolve  # the path resolver also reads flow's frames

    over = ctx.values.get(inst.name, NOTHING).get("over")
    if not over:
        return t.ANY
    found = resolve(ctx, inst, tuple(over))
    listed = t.strip_optional(found.type) if found.type is not None else t.ANY
    return listed.item if isinstance(listed, t.ListType) else t.ANY


def tool_params(ctx: CompileContext, tool: str) -> t.ObjectType:
    """A tool's `params` as a record: what its delegated agent receives, what its `approval` reads (its own
    problems are check_types')."""
    from .passes._blocks import body_of
    from .types import block_type

    decl = ctx.decls.get(tool)
    block = body_of(decl) if decl is not None else None
    for params in block.params if block else ():
        if getattr(params, "keyword", "params") == "params":
            return block_type(params, lambda _: None, ctx.named_types)
    return t.ObjectType(())
