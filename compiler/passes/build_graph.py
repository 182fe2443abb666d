"""Normalised declarations → AgentGraph nodes and edges (see docs/graph.md)."""

from __future__ import annotations

from plait.dsl import ast

from ..context import CompileContext
from ..graph import AgentGraph
from ..schema import RUNNABLE_KINDS

# Attributes each node kind carries, in the order docs/graph.md lists them.
_NODE_ATTRS = {
    "model": ("provider", "model_id", "temperature", "max_tokens", "timeout", "base_url", "api_key_env",
              "retries", "headers", "api", "script"),
    "tool": ("description", "parameters", "run", "approval", "timeout", "result"),
    "agent": ("description", "model", "fallback", "fallback_on", "system", "tools", "max_steps", "until",
              "until_succeeded", "retry_malformed", "validate_arguments", "keep_last", "approval",
              "tool_timeout", "temperature", "max_tokens", "label", "source", "attributes"),
    "step": ("model", "prompt", "system", "max_tokens", "temperature"),
    "chain": ("elements",),
    "parallel": ("branches", "on_error"),
    "consolidate": ("agents", "judge", "rounds", "task"),
}


def _attrs(ctx: CompileContext, name: str, kind: str) -> dict:
    values = ctx.values.get(name, {})
    if kind == "agent":
        values = {**values, "keep_last": values.get("history")}
    return {key: values.get(key) for key in _NODE_ATTRS[kind]}


def build_graph(ctx: CompileContext) -> None:
    graph = AgentGraph(ctx.load.root_dir)
    for name, decl in ctx.decls.items():
        graph.add_node(name, decl.kind, decl.name.span, **_attrs(ctx, name, decl.kind))
        if decl.kind == "parallel":
            graph.node(name)["join"] = f"{name}/join"
            graph.add_node(f"{name}/join", "join", decl.name.span, parallel=name)
        for pid, inline in ctx.inline_parallels.get(name, ()):
            branches = tuple(b.name for b in inline.branches if b.name in ctx.decls)
            graph.add_node(pid, "parallel", inline.span, branches=branches, on_error="fail", join=f"{pid}/join")
            graph.add_node(f"{pid}/join", "join", inline.span, parallel=pid)

    tools_of: dict[str, set[str]] = {}
    for ref in ctx.references:
        owner, target, span = ref.owner, ref.target, ref.span
        owner_kind = graph.node(owner)["kind"]
        if ref.attr == "model":
            graph.add_edge(owner, target, "calls", span)
        elif ref.attr == "fallback":
            graph.add_edge(owner, target, "fallback", span, order=ref.index + 1)
        elif ref.attr == "tools":
            if graph.node(target)["kind"] == "agent":
                graph.add_edge(owner, target, "delegates", span)
            else:
                approval = target in (ctx.values[owner].get("approval") or ())
                graph.add_edge(owner, target, "uses", span, approval=approval)
            tools_of.setdefault(owner, set()).add(target)
        elif ref.attr == "until":
            graph.add_edge(owner, target, "until", span, succeeded=bool(ctx.values[owner].get("until_succeeded")))
        elif ref.attr == "agents" and owner_kind == "consolidate":
            graph.add_edge(owner, target, "participant", span, index=ref.index)
        elif ref.attr == "judge":
            graph.add_edge(owner, target, "judge", span)
        elif ref.attr == "branches":
            join = graph.node(owner)["join"]
            graph.add_edge(owner, target, "branch", span, branch=target)
            graph.add_edge(target, join, "join", span, branch=target)
        # chain order is added below, from the elements list, so edges follow it exactly.

    for name, decl in ctx.decls.items():
        if isinstance(decl, ast.ChainDecl):
            elements = ctx.values[name]["elements"]
            previous = name
            for index, element in enumerate(elements):
                span = decl.elements[index].span if index < len(decl.elements) else decl.span
                source = graph.node(previous).get("join") if previous != name else None
                graph.add_edge(source or previous, element, "next", span, chain=name, index=index)
                previous = element

    runnables = graph.runnables()
    if "main" in graph and graph.node("main")["kind"] in RUNNABLE_KINDS:
        graph.entry = "main"
    elif len(runnables) == 1:
        graph.entry = runnables[0]
    if graph.entry is not None:
        graph.add_node("@entry", "entry", None)
        graph.add_node("@exit", "exit", None)
        graph.add_edge("@entry", graph.entry, "next", None, chain=None, index=0)
        graph.add_edge(graph.entry, "@exit", "next", None, chain=None, index=1)
    ctx.graph = graph
