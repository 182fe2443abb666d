"""Journaled runs (their history rows) + the compiled graph → graph coverage: what each run exercised, per entry.

A run's rows say everything coverage needs (src/plait/compiler/coverage.py
names the items): the graph path of every model call, tool call and decision
(each runnable named on a path was reached), route cases, loop iterations
(the last one's condition: `met`, the bound reached: `exhausted`, or a route
case that left it: `break`), map
items (`done`/`error`), asks (answered, or waiting in the stop row), approval
decisions (their tool from the stop row that listed the call) and the model
each reply came from (a fallback edge when it is the agent's fallback).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable

from plait.compiler.coverage import EntryCoverage, Report, coverable, item_id
from plait.core.conditions import literal_text
from plait.core.kinds import RUNNABLE_KINDS

if TYPE_CHECKING:
    from plait.core.graph import GraphView

__all__ = ["exercised", "measure"]


def measure(graph: GraphView, runs: Iterable[tuple[str, Iterable[dict[str, Any]]]], spec: str | None = None) -> Report:
    """Coverage of `runs`, each (its entry, its history rows), grouped by entry in the order entries first appear."""
    entries: dict[str, EntryCoverage] = {}
    for entry, rows in runs:
        if entry not in entries:
            if _node(graph, entry) is None:  # a run of a runnable since renamed or removed
                continue
            entries[entry] = EntryCoverage(entry, coverable(graph, entry))
        entries[entry].count([exercised(graph, rows)])
    return Report(list(entries.values()), spec)


def exercised(graph: GraphView, rows: Iterable[dict[str, Any]]) -> set[str]:
    """The item ids one run's rows show it reached."""
    runnables = set(graph.nodes_of(*RUNNABLE_KINDS))
    # A generated runnable's name holds the path it stands at (`main/parallel#1`): found whole in a row's key.
    generated = [name for name in runnables if "/" in name or "#" in name]
    hits: set[str] = set()

    def on_path(path: Iterable[str]) -> None:
        for part in path:
            part = part.partition("[")[0]  # a delegated agent's run: `researcher[CALL_ID]`
            if part in runnables:
                hits.add(item_id("runnable", part))

    def on_key(key: str) -> None:
        where = key.rpartition("#")[0] or key  # `PATH#STEP` or `PATH#STEP:CALL_ID`
        on_path(where.split("/"))
        framed = f"/{where}/"
        for name in generated:
            if f"/{name}/" in framed:
                hits.add(item_id("runnable", name))

    agents: dict[str, str] = {}
    pending: dict[str, tuple[str, str]] = {}
    approvals: list[tuple[str, str]] = []
    for row in rows:
        kind, key, data = row.get("kind"), row.get("key") or "", row.get("data")
        if not isinstance(data, dict):
            continue
        if kind in ("model_request", "tool_intent", "tool_completed"):
            on_key(key)
            if kind == "model_request" and isinstance(data.get("agent"), str):
                agents[key] = data["agent"]
                hits.add(item_id("runnable", data["agent"]))
        elif kind == "model_reply":
            agent = agents.get(key)
            if agent is not None and isinstance(data.get("model"), str):
                hits.add(item_id("fallback", agent, data["model"]))  # the primary model is no fallback item
        elif kind == "stop":
            for item in data.get("pending") or ():
                if isinstance(item, dict) and item.get("tool") and item.get("agent"):
                    pending[str(item.get("id"))] = (str(item["agent"]), str(item["tool"]))
                elif isinstance(item, dict) and item.get("ask"):
                    hits.add(item_id("ask", str(item["ask"])))
        elif kind == "decision":
            _decision(graph, key, data, hits, approvals)
            on_path(data.get("path") or ())
    for pid, action in approvals:
        if pid in pending:
            agent, tool = pending[pid]
            hits.add(item_id("approval", agent, f"{_gated(graph, agent, tool)}:{action}"))
    return hits


def _gated(graph: GraphView, agent: str, tool: str) -> str:
    """How coverage names an approval-gated tool: its name, or SERVER.TOOL for a tool an MCP server gates."""
    if _node(graph, tool) is not None:
        return tool
    for edge in graph.edges("uses"):
        server = _node(graph, edge.target) if edge.source == agent else None
        if getattr(server, "kind", None) == "mcp" and tool in getattr(server, "approval", ()):
            return f"{edge.target}.{tool}"
    return tool


def _decision(graph: GraphView, key: str, d: dict[str, Any], hits: set[str], approvals: list[tuple[str, str]]) -> None:
    kind, name = d.get("kind"), d.get("name")
    if kind == "approval" and isinstance(d.get("action"), str):
        approvals.append((key, d["action"]))
        return
    if not isinstance(name, str):
        return
    node = _node(graph, name)
    if node is None:
        return
    if kind == "route" and node.kind == "route":
        case = d.get("case")
        literals = [c.value for c in node.cases]
        label = "else" if case == "else" and "else" not in literals else literal_text(case)
        hits.add(item_id("case", name, label))
        if isinstance(d.get("target"), str):
            hits.add(item_id("runnable", d["target"]))
    elif kind == "loop" and node.kind == "loop":
        if d.get("exit") == "break":  # a route case left it (plait 0.3), whichever iteration it was
            hits.add(item_id("loop", name, "break"))
        elif d.get("holds"):
            hits.add(item_id("loop", name, "met"))
        elif isinstance(d.get("iteration"), int) and d["iteration"] >= (node.max_iterations or 0):
            hits.add(item_id("loop", name, "exhausted"))
    elif kind == "map" and node.kind == "map":
        status = d.get("status")
        hits.add(item_id("map", name, status if status in ("error", "skipped") else "done"))
    elif kind == "ask":
        hits.add(item_id("ask", name))


def _node(graph: GraphView, name: str) -> Any:
    try:
        return graph.node(name)
    except KeyError:
        return None
