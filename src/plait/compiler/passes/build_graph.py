"""Normalised declarations → AgentGraph node records and edges (see docs/graph.md).

Attribute values come from each declaration's checked, normalised `Draft` (`ctx.values`); the shapes
only the AST holds (a route's cases, a condition) are read from the
declaration. Output types are infer_types' (`ctx.types`), the run input and
state types check_types' (`ctx.input_type`, `ctx.state_type`).
"""

from __future__ import annotations

from itertools import chain
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

from plait.core import conditions as c
from plait.core import graph as g
from plait.core.graph import Edge
from plait.core.source import Span

from ..context import CompileContext, unrepeated
from ..draft import Draft
from ..entry import entry_point
from ..graph import AgentGraph

__all__ = ["build_graph", "condition_of"]

#: Template heads that are not runnable names.
_SCOPES = frozenset({"input", "state", "run", "loop", "map"})


class _Files:
    """Declaring file → its absolute path; every node of one file resolves the same path (a syscall each)."""

    def __init__(self) -> None:
        self._resolved: dict[str, str] = {}

    def __call__(self, span: Span | None) -> str | None:
        if span is None or span.file == "<string>":
            return None
        file = self._resolved.get(span.file)
        if file is None:
            file = self._resolved[span.file] = str(Path(span.file).resolve())
        return file


#: What a loop or map gives by name inside its own body (src/plait/compiler/paths.py).
_FRAME_WORDS = {"loop": ("iteration", "last", "history"), "map": ("index", "item")}


def _attr(block: Any, key: str) -> Any:
    entry = block.get(key) if block is not None else None
    return entry.value if entry is not None else None


def _literal(value: Any) -> Any:
    """A literal AST value's Python value (a symbol such as `last` as its name), else None."""
    if value is None:
        return None
    if getattr(value, "kind", None) == "ref":
        return value.name
    return getattr(value, "value", None)


def _path(value: Any) -> tuple[str, ...] | None:
    if value is None:
        return None
    parts = getattr(value, "parts", None)
    if parts is not None:
        return tuple(parts)
    name = getattr(value, "name", None)
    return (name,) if isinstance(name, str) else None


def _subject(subject: Any) -> tuple[str, ...] | c.Expr:
    """A route's subject: its path, or an expression (`on "{{ len(docs) > 0 }}"`; a path in braces is the path)."""
    if getattr(subject, "kind", None) == "string":
        from ..expressions import sole_read

        found = sole_read(subject.value)
        return c.Expr("") if found is None else found
    return _path(subject) or ("input",)


def condition_of(expr: Any) -> c.Condition | None:
    """A checked condition's AST → its core record (None for a shape the checks reject)."""
    kind = getattr(expr, "kind", None)
    if kind == "compare":
        path = _path(expr.left)
        return None if path is None else c.Compare(path, expr.op, _literal(expr.right))
    if kind == "not":
        inner = condition_of(expr.operand)
        return None if inner is None else c.Not(inner)
    if kind == "boolop":
        operands = [condition_of(o) for o in expr.operands]
        return None if any(o is None for o in operands) else c.BoolOp(expr.op, tuple(operands))  # type: ignore[arg-type]
    if kind == "string":  # `until = "{{ 'APPROVED' in review.reply }}"`: an expression (check_flow typed it)
        from ..expressions import sole

        text = sole(expr.value)
        return c.Expr(text) if text is not None else None
    path = _path(expr)
    return c.Field(path) if path else None


class _Builder:
    def __init__(self, ctx: CompileContext) -> None:
        self.ctx = ctx
        self.graph = AgentGraph(ctx.load.root_dir)
        self.file = _Files()

    def base(self, name: str, span: Span | None) -> dict[str, Any]:
        return {"name": name, "span": span, "file": self.file(span)}

    def values(self, name: str) -> Draft:
        return self.ctx.draft(name)

    def output(self, name: str) -> dict[str, Any]:
        """The runnable's inferred output type as a record field (text, the record's default, when unknown)."""
        # An agent that may hand over asks its model for its own answer; what follows it reads the union (types).
        found = self.ctx.answers.get(name) or self.ctx.types.get(name)
        return {"output": found} if found is not None else {}

    def edge(self, kind: str, source: str, target: str, span: Span | None, **fields: Any) -> None:
        self.graph.connect(Edge(kind=kind, source=source, target=target, span=span, **fields))

    # --- nodes ----------------------------------------------------------------------

    def declared(self, name: str, decl: Any) -> None:
        kind, span = decl.kind, decl.name.span
        values = self.values(name)
        cls = g.NODE_TYPES[kind]
        attrs = values.fields()
        if issubclass(cls, g.Runnable):
            attrs.update(self.output(name))
        if kind == "parallel":
            attrs["join"] = f"{name}/join"
        self.graph.add(cls(**self.base(name, span), **attrs))
        if kind == "parallel":
            self.graph.add(g.JoinNode(**self.base(f"{name}/join", span), parallel=name))

    def inline(self, pid: str, inline: Any) -> None:
        branches = tuple(b.name for b in inline.branches if b.name in self.ctx.decls)
        self.graph.add(
            g.ParallelNode(**self.base(pid, inline.span), branches=branches, join=f"{pid}/join", **self.output(pid))
        )
        self.graph.add(g.JoinNode(**self.base(f"{pid}/join", inline.span), parallel=pid))

    def elements(self, owner: str, body: tuple[Any, ...]) -> tuple[str, ...]:
        """A loop's or map's body elements as node ids, adding its inline parallels (unless the checks listed them)."""
        checked = self.values(owner).get("body")
        if checked is not None:
            return tuple(checked)
        known = dict(self.ctx.inline_parallels.get(owner, ()))
        ids, count = [], 0
        for element in body:
            if getattr(element, "kind", None) == "parallel":
                count += 1
                pid = f"{owner}/parallel#{count}"
                if pid not in known:
                    self.inline(pid, element)
                ids.append(pid)
            elif element.name in self.ctx.decls:
                ids.append(element.name)
        return tuple(ids)

    def route(self, name: str, decl: Any) -> None:
        cases, otherwise = [], None
        for case in decl.cases:
            if case.target.name not in self.ctx.decls:
                continue
            if case.literal is None:
                otherwise = case.target.name
            else:
                cases.append(g.RouteCase(case.literal.value, case.target.name, case.target.span))
        self.graph.add(
            g.RouteNode(
                **self.base(name, decl.name.span),
                description=_literal(decl.description),
                subject=_subject(decl.subject),
                cases=tuple(cases),
                otherwise=otherwise,
                breaks=self.values(name).get("breaks", ()),
                budget=self.values(name).get("budget"),
                **self.output(name),
            )
        )

    def loop(self, name: str, decl: Any) -> None:
        values, block = self.values(name), decl.block
        until = condition_of(_attr(block, "until"))
        bound = values.get("max_iterations", _literal(_attr(block, "max_iterations")))
        attrs = {
            "on_exhausted": values.get("on_exhausted") or _literal(_attr(block, "on_exhausted")),
            "budget": values.get("budget"),
        }
        self.graph.add(
            g.LoopNode(
                **self.base(name, decl.name.span),
                description=_literal(decl.description),
                body=self.elements(name, decl.body),
                until=until,
                max_iterations=bound if isinstance(bound, int) else None,
                **{k: v for k, v in attrs.items() if v is not None},
                **self.output(name),
            )
        )

    def map(self, name: str, decl: Any) -> None:
        values, block = self.values(name), decl.block
        attrs = {
            "over": values.get("over") or _path(_attr(block, "over")),
            "concurrency": values.get("concurrency") or _literal(_attr(block, "concurrency")),
            "on_error": values.get("on_error") or _literal(_attr(block, "on_error")),
            "filter": condition_of(_attr(block, "filter")),
            "max_items": values.get("max_items"),
            "budget": values.get("budget"),
        }
        self.graph.add(
            g.MapNode(
                **self.base(name, decl.name.span),
                description=_literal(decl.description),
                body=self.elements(name, decl.body),
                **{k: v for k, v in attrs.items() if v is not None},
                **self.output(name),
            )
        )

    def ask(self, name: str, decl: Any) -> None:
        attrs = {**self.values(name).fields(), "question": decl.question.value, **self.output(name)}
        self.graph.add(g.AskNode(**self.base(name, decl.name.span), **attrs))

    def mcp(self, name: str, decl: Any) -> None:
        self.graph.add(g.McpNode(**self.base(name, decl.name.span), **self.values(name).fields()))

    def blocks(self) -> None:
        """`input { ... }` and `state { ... }` → `@input` / `@state` (the first of each; duplicates are the checks')."""
        for kind, declared in (("input", self.ctx.input_type), ("state", self.ctx.state_type)):
            decl = self.ctx.blocks.get(kind)
            if declared is not None:
                cls = g.InputNode if kind == "input" else g.StateNode
                self.graph.add(cls(**self.base(f"@{kind}", getattr(decl, "span", None)), type=declared))

    # --- edges ----------------------------------------------------------------------

    def references(self) -> None:
        graph, ctx = self.graph, self.ctx
        for ref in unrepeated(ctx.references):
            owner, target, span = ref.owner, ref.target, ref.span
            if owner not in graph or target not in graph:
                continue
            owner_kind, target_kind = graph.node(owner).kind, graph.node(target).kind
            if ref.attr == "model":
                self.edge("calls", owner, target, span)
            elif ref.attr == "fallback":
                self.edge("fallback", owner, target, span, order=ref.index + 1)
            elif ref.attr == "tools":
                if target_kind == "agent":
                    self.edge("delegates", owner, target, span)
                elif target_kind == "mcp":
                    # Gated for this agent (the server, or this tool), or for every agent by the server itself.
                    approval = ctx.values[owner].get("approval") or ()
                    server = ctx.values[target].get("approval") or ()
                    gated = target in approval or (
                        ref.member is not None and (f"{target}.{ref.member}" in approval or ref.member in server)
                    )
                    self.edge("uses", owner, target, span, approval=gated, tool=ref.member)
                else:
                    approval = target in (ctx.values[owner].get("approval") or ())
                    self.edge("uses", owner, target, span, approval=approval)
                    run = ctx.values[target].get("run") or {}
                    if run.get("type") == "agent" and run.get("agent") in graph:
                        # An agent tool: the agent behind it runs inside this one (drawn, and in P303's cycles).
                        self.edge("delegates", owner, run["agent"], span, tool=target)
            elif ref.attr == "until":
                succeeded = bool(ctx.values[owner].get("until_succeeded"))
                self.edge("until", owner, target, span, succeeded=succeeded, tool=ref.member)
            elif ref.attr == "agents" and owner_kind == "consolidate":
                self.edge("participant", owner, target, span, index=ref.index)
            elif ref.attr == "judge":
                self.edge("judge", owner, target, span)
            elif ref.attr == "handoff":  # an agent that may hand control over (plait 0.3), drawn like a route case
                self.edge("handoff", owner, target, span, index=ref.index)
            elif ref.attr == "thread":  # the conversation it continues (plait 0.3)
                self.edge("thread", owner, target, span)
            elif ref.attr == "branches":
                join = graph.node(owner).join  # type: ignore[attr-defined]
                self.edge("branch", owner, target, span, branch=target)
                self.edge("join", target, join, span, branch=target)
            # chain order is added below, from the elements list, so edges follow it exactly.

    def exit_of(self, node: str) -> str:
        """Where a placed runnable's output leaves it: a parallel's join, else the node itself."""
        record = self.graph.node(node)
        return record.join if isinstance(record, g.ParallelNode) else node

    def sequence(self, kind: str, owner: str, elements: tuple[str, ...], spans: list[Span | None]) -> None:
        """`kind` edge owner → first element, then `next` edges through the rest (chain = owner)."""
        previous = owner
        for index, element in enumerate(elements):
            span = spans[index] if index < len(spans) else None
            first = index == 0
            self.edge(
                kind if first else "next",
                previous if first else self.exit_of(previous),
                element,
                span,
                chain=owner,
                index=index,
            )
            previous = element

    def flow(self) -> None:
        graph = self.graph
        for name, decl in self.ctx.decls.items():
            record = graph.get(name)
            if isinstance(record, g.ChainNode):
                spans = [e.span for e in decl.elements] + [decl.span] * len(record.elements)
                self.sequence("next", name, record.elements, spans)
            elif isinstance(record, g.RouteNode):
                for case in record.cases:
                    self.edge("case", name, case.target, case.span, label=case.label, value=case.value)
                if record.otherwise is not None:
                    span = next((k.target.span for k in decl.cases if k.literal is None), None)
                    self.edge("case", name, record.otherwise, span, label="else")
                for leave in record.breaks:  # `-> break`: to the loop it ends, drawn to the loop's exit
                    self.edge("break", name, leave.leaves, leave.span, label=leave.label)
            elif isinstance(record, g.LoopNode | g.MapNode):
                spans = [e.span for e in decl.body]
                self.sequence("body" if isinstance(record, g.LoopNode) else "each", name, record.body, spans)
                if isinstance(record, g.LoopNode) and record.body:
                    self.edge(
                        "back",
                        self.exit_of(record.body[-1]),
                        name,
                        decl.name.span,
                        label=loop_label(record),
                        bound=record.max_iterations,
                    )

    def reads(self) -> None:
        """`reads` edges: a template, a `with` binding, route subject, map `over` or loop `until` naming another
        runnable's output."""
        graph, decls = self.graph, self.ctx.decls
        for name, decl in decls.items():
            if name not in graph or graph.node(name).kind not in g.RUNNABLE_KINDS:
                continue
            seen: set[tuple[str, ...]] = set()
            for path, span in _read_paths(decl):
                head = path[0]
                if head in _SCOPES or head == name or head not in graph or path in seen:
                    continue
                kind = graph.node(head).kind
                if kind in ("loop", "map") and path[1:2] and path[1] in _FRAME_WORDS[kind]:
                    continue  # `outer.iteration` inside `outer`'s body reads where it stands, not its output
                if kind in g.RUNNABLE_KINDS:
                    seen.add(path)
                    self.edge("reads", name, head, span, path=path)

    def entry(self) -> None:
        graph = self.graph
        graph.entry = entry_point(graph)  # main, else the only root (src/plait/compiler/entry.py; issue 9.11)
        if graph.entry is not None:
            graph.add(g.EntryNode(name="@entry"))
            graph.add(g.ExitNode(name="@exit"))
            self.edge("next", "@entry", graph.entry, None, chain=None, index=0)
            self.edge("next", graph.entry, "@exit", None, chain=None, index=1)


def loop_label(loop: g.LoopNode) -> str:
    """A back edge's words: `until verdict == "accept" · ≤ 3`."""
    parts = [f"until {c.condition_text(loop.until)}"] if loop.until is not None else []
    if loop.max_iterations is not None:
        parts.append(f"≤ {loop.max_iterations}")
    return " · ".join(parts)


def _strings(node: Any) -> Iterator[Any]:
    """Every String value in a block, maps and lists included (templates live in them)."""
    if node is None:
        return
    kind = getattr(node, "kind", None)
    if kind == "string":
        yield node
    elif kind == "block":
        for _, value in node.entries():
            yield from _strings(value)
    elif kind == "list":
        for item in node.items:
            yield from _strings(item)


def _read_paths(decl: Any) -> Iterator[tuple[tuple[str, ...], Span]]:
    from ..rules._placeholders import scan

    # One string at a time: a long list's strings are rebuilt on access (ast.PackedItems), never all held.
    strings: Iterable[Any] = _strings(getattr(decl, "body", None) if decl.kind != "chain" else None)
    if decl.kind == "ask":
        strings = chain(strings, (decl.question,), _strings(decl.block))
    for string in strings:
        if "{{" in string.value:
            for _, _, path, problem in scan(string.value):
                if problem is None:
                    yield tuple(path.split(".")), string.span
                elif problem == "expression":
                    from ..expressions import reads

                    yield from ((parts, string.span) for parts in reads(path))
    block = getattr(decl, "block", None)
    owner = block if decl.kind == "ask" else getattr(decl, "body", None) if decl.kind in ("agent", "step") else None
    bindings = _attr(owner, "with")
    if bindings is not None and getattr(bindings, "kind", None) == "block":
        for binding in bindings.attributes:
            bound = _path(binding.value)
            if bound:
                yield bound, binding.value.span
    if decl.kind == "route":
        subject = _subject(decl.subject)
        if isinstance(subject, c.Expr):
            from ..expressions import reads

            yield from ((parts, decl.subject.span) for parts in reads(subject.text))
        elif subject:
            yield subject, decl.subject.span
    elif decl.kind == "map":
        over = _attr(block, "over")
        over_path = _path(over)
        if over_path:
            yield over_path, over.span
    elif decl.kind == "loop":
        yield from _condition_paths(_attr(block, "until"))


def _condition_paths(expr: Any) -> Iterator[tuple[tuple[str, ...], Span]]:
    kind = getattr(expr, "kind", None)
    if kind == "compare":
        yield from _condition_paths(expr.left)
    elif kind == "not":
        yield from _condition_paths(expr.operand)
    elif kind == "boolop":
        for operand in expr.operands:
            yield from _condition_paths(operand)
    elif kind == "string":
        from ..expressions import reads, sole

        text = sole(expr.value)
        for parts in reads(text) if text is not None else ():
            if len(parts) > 1:
                yield parts, expr.span
    elif (path := _path(expr)) and len(path) > 1:
        # A bare field (`verdict`) is the body's output; `review.verdict` names a runnable.
        yield path, expr.span


_KIND_BUILDERS: dict[str, Callable[[_Builder, str, Any], None]] = {
    "route": _Builder.route,
    "loop": _Builder.loop,
    "map": _Builder.map,
    "ask": _Builder.ask,
    "mcp": _Builder.mcp,
}


def build_graph(ctx: CompileContext) -> None:
    builder = _Builder(ctx)
    builder.blocks()
    for name, decl in ctx.decls.items():
        special = _KIND_BUILDERS.get(decl.kind)
        if special is not None:
            special(builder, name, decl)
        elif decl.kind in g.NODE_TYPES:
            builder.declared(name, decl)
        else:
            continue
        for pid, inline in ctx.inline_parallels.get(name, ()):
            builder.inline(pid, inline)
    builder.references()
    builder.flow()
    builder.reads()
    builder.entry()
    # Secrets are hidden where the graph is printed (AgentGraph.protected), not here: `plait check` prints none.
    ctx.graph = builder.graph
