"""One graph node → the lines of its label: name first, then the contracts it carries.

Contracts are always written out (a default `max_steps` too): the picture is
where a reader checks them. Header values and URL queries never appear; only
header names do, so no secret reaches a picture. A declared output type is
written as its fields (`category: "billing" | "tech"`), one per line.
"""

from __future__ import annotations

from typing import Any, Callable
from urllib.parse import urlsplit

from plait.core import graph as g
from plait.core.budget import Budget
from plait.core.conditions import Expr, condition_text, literal_text
from plait.core.graph import Edge
from plait.core.types import ObjectType, TextType, Type, describe

from ..graph import AgentGraph

__all__ = [
    "budget_text",
    "edge_label",
    "is_gated",
    "node_lines",
    "output_lines",
    "run_input",
    "seconds",
    "until_text",
]

Graph = AgentGraph
#: Output fields written on a node before the rest are counted ("+ 3 more").
MAX_FIELDS = 6


def seconds(value: float) -> str:
    """30.0 → "30s", 0.5 → "500ms", 120.0 → "2m": durations as the spec writes them."""
    if value < 1:
        return f"{round(value * 1000)}ms"
    if value >= 60 and value % 60 == 0:
        return f"{int(value // 60)}m"
    return f"{value:g}s"


def _short(text: str, limit: int = 40) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def output_lines(output: Type, prefix: str = "→ ") -> list[str]:
    """A declared type as label lines: one per record field (name, `?`, type, enums spelled out)."""
    if isinstance(output, TextType):
        return []
    if not isinstance(output, ObjectType):
        return [prefix + _short(describe(output, fields=True), 60)]
    lines = [
        f"{prefix}{f.name}{'?' if f.optional else ''}: {_short(describe(f.type, fields=True), 48)}"
        for f in output.fields[:MAX_FIELDS]
    ]
    if len(output.fields) > MAX_FIELDS:
        lines.append(f"{prefix}+ {len(output.fields) - MAX_FIELDS} more")
    return lines


def _model(graph: Graph, a: g.ModelNode) -> list[str]:
    lines = [a.name, f"{a.provider}/{a.model_id}"]
    if a.temperature is not None:
        lines.append(f"temperature {a.temperature:g}")
    if a.max_tokens is not None:
        lines.append(f"max_tokens {a.max_tokens}")
    if a.timeout is not None:
        lines.append(f"timeout {seconds(a.timeout)}")
    if a.retries != 2:
        lines.append(f"retries {a.retries}")
    if a.api:
        lines.append(f"api {a.api}")
    if a.api_key_env:
        lines.append(f"key from env {a.api_key_env}")
    if a.headers:
        lines.append("headers " + ", ".join(a.headers))
    return lines


def _tool_run(run: dict) -> str:
    if run["type"] == "python":
        return f"python {run['target']}"
    # The query string can carry parameters and tokens; host and path say enough.
    parts = urlsplit(run["url"])
    host = parts.netloc.rpartition("@")[2]  # never the user:password part
    line = f"{run['method']} {host}{parts.path}"
    if run.get("headers"):
        line += " [headers " + ", ".join(run["headers"]) + "]"
    return line


def _tool(graph: Graph, a: g.ToolNode) -> list[str]:
    lines = [a.name, _tool_run(a.run)]
    if a.timeout != 60.0:
        lines.append(f"timeout {seconds(a.timeout)}")
    if a.result == "messages":
        lines.append("result as messages")
    if a.approval is True:
        lines.append("APPROVAL REQUIRED")
    elif a.approval is not False:  # a condition over the call's arguments
        lines.append("APPROVAL WHEN " + _short(condition_text(a.approval), 48))
    return lines


#: How many of a server's tool names its node lists before "(+N more)".
_MCP_TOOLS = 8


def _mcp(graph: Graph, a: g.McpNode) -> list[str]:
    # Only the program's name or the URL's host and path: arguments and queries can carry tokens.
    if a.command:
        where = f"stdio {a.command[0]}"
    else:
        parts = urlsplit(a.url or "")
        where = f"http {parts.netloc.rpartition('@')[2]}{parts.path}"
    lines = [a.name, f"mcp {where}"]
    # The tools agents will see: the locked ones the allow-list keeps, else the allow-list as written.
    names = [t["name"] for t in a.offered] if a.lock_state == "fresh" else list(a.tools or ())
    if names:
        more = f" (+{len(names) - _MCP_TOOLS} more)" if len(names) > _MCP_TOOLS else ""
        lines.append("tools " + ", ".join(names[:_MCP_TOOLS]) + more)
    if a.lock_state != "fresh":
        lines.append(f"lock {a.lock_state}")
    if a.approval:
        lines.append("approval " + ", ".join(a.approval))
    return lines


def until_text(a: g.AgentNode) -> str:
    return "until " + ", ".join(a.until) + (" succeeded" if a.until_succeeded else " called")


def _agent(graph: Graph, a: g.AgentNode, hidden: frozenset[str]) -> list[str]:
    lines = [a.name, f"max_steps {a.max_steps}"]
    if a.until:
        lines.append(until_text(a))
    if a.retry_malformed:
        lines.append(f"retry_malformed {a.retry_malformed}")
    if a.validate is not None:
        lines.append(f"validate {a.validate.get('target', '')}")
    if a.keep_last is not None:
        lines.append(f"history keep_last({a.keep_last})")
    if a.approval:
        lines.append("approval " + ", ".join(a.approval))
    if a.tool_timeout is not None:
        lines.append(f"tool_timeout {seconds(a.tool_timeout)}")
    if a.tool_choice is not None:
        lines.append(f"tool_choice {a.tool_choice}")
    if "models" in hidden:
        lines.append(f"model {_model_name(graph, a.model)}")
        if a.fallback:
            lines.append("fallback " + " → ".join(f"{i}. {m}" for i, m in enumerate(a.fallback, 1)))
    if a.fallback and a.fallback_on:
        lines.append("fallback_on " + ", ".join(a.fallback_on))
    if "tools" in hidden:
        tools = [t for t in a.tools if graph.node(t).kind == "tool"]
        if tools:
            lines.append("tools " + ", ".join(_gated(graph, a, t) for t in tools))
    return lines + output_lines(a.output)


def is_gated(graph: Graph, agent: g.AgentNode, tool: str) -> bool:
    """Whether `agent`'s calls of `tool` wait for a human: the tool requires it, or the agent does."""
    return bool(getattr(graph.node(tool), "approval", False) is True) or tool in agent.approval


def _gated(graph: Graph, agent: g.AgentNode, tool: str) -> str:
    if is_gated(graph, agent, tool):
        return f"{tool} [approval]"
    node = graph.node(tool)
    when = node.approval if isinstance(node, g.ToolNode) else False
    return tool if isinstance(when, bool) else f"{tool} [approval when {_short(condition_text(when), 40)}]"


def _model_name(graph: Graph, id: str | None) -> str:
    node = graph.get(id)
    if not isinstance(node, g.ModelNode):
        return str(id)
    return f"{id} ({node.provider}/{node.model_id})"


def _step(graph: Graph, a: g.StepNode, hidden: frozenset[str]) -> list[str]:
    if a.run is not None:
        lines = [a.name, f"step: code {a.run.get('target', '')}"]
    else:
        lines = [a.name, "step: one model call"]
    if a.messages:
        lines.append("messages " + ", ".join(m["role"] for m in a.messages))
    if a.max_tokens is not None:
        lines.append(f"max_tokens {a.max_tokens}")
    if a.temperature is not None:
        lines.append(f"temperature {a.temperature:g}")
    if a.retry_malformed:
        lines.append(f"retry_malformed {a.retry_malformed}")
    if a.validate is not None:
        lines.append(f"validate {a.validate.get('target', '')}")
    if "models" in hidden and a.model is not None:
        lines.append(f"model {_model_name(graph, a.model)}")
    return lines + output_lines(a.output)


def _consolidate(graph: Graph, a: g.ConsolidateNode, hidden: frozenset[str]) -> list[str]:
    lines = [a.name, f"consolidate: rounds {a.rounds}"]
    if "models" in hidden and isinstance(graph.get(a.judge), g.ModelNode):
        lines.append(f"judge {_model_name(graph, a.judge)}")
    if a.task != "{{input}}":
        lines.append("task " + _short(a.task))
    return lines


def _parallel(graph: Graph, a: g.ParallelNode) -> list[str]:
    title = "parallel" if "/" in a.name else f"parallel {a.name}"
    return [title, f"on_error {a.on_error}"]


def _route(graph: Graph, a: g.RouteNode) -> list[str]:
    subject = a.subject
    return [f"route {a.name}", "on " + (condition_text(subject) if isinstance(subject, Expr) else ".".join(subject))]


def _loop(graph: Graph, a: g.LoopNode) -> list[str]:
    lines = [f"loop {a.name}"]
    if a.until is not None:
        lines.append("until " + _short(condition_text(a.until), 60))
    if a.max_iterations is not None:
        lines.append(f"≤ {a.max_iterations} iterations")
    lines.append(f"on_exhausted {a.on_exhausted}")
    return lines


def _map(graph: Graph, a: g.MapNode) -> list[str]:
    bound = [f"≤ {a.max_items} items"] if a.max_items is not None else []
    kept = ["where " + _short(condition_text(a.filter), 60)] if a.filter is not None else []
    return [
        f"map {a.name}",
        f"for each {'.'.join(a.over)} (≤ {a.concurrency} at once)",
        *kept,
        *bound,
        f"on_error {a.on_error}",
    ]


def _ask(graph: Graph, a: g.AskNode) -> list[str]:
    return [f"ask {a.name}", _short(a.question, 48), *output_lines(a.output, "answer ")]


def run_input(graph: Graph) -> str:
    """The `start` edge's words: `input { ticket, customer? }` when the spec declares its input."""
    declared = graph.get("@input")
    if isinstance(declared, g.InputNode) and isinstance(declared.type, ObjectType):
        return "input { " + ", ".join(f.name + ("?" if f.optional else "") for f in declared.type.fields) + " }"
    return "input"


def _thread(graph: Graph, a: g.ThreadNode) -> list[str]:
    lines = [f"thread {a.name}"]
    if a.description:
        lines.append(_short(a.description, 48))
    lines.append(f"keep_last {a.keep_last}" if a.keep_last is not None else "keeps every message")
    return lines


_PLAIN: dict[str, Callable[[Graph, Any], list[str]]] = {
    "thread": _thread,
    "model": _model,
    "tool": _tool,
    "mcp": _mcp,
    "parallel": _parallel,
    "route": _route,
    "loop": _loop,
    "map": _map,
    "ask": _ask,
    "chain": lambda graph, a: [f"chain {a.name}", *output_lines(a.output)],
    "join": lambda graph, a: ["join"],
    "entry": lambda graph, a: ["start"],
    "exit": lambda graph, a: ["end"],
    "input": lambda graph, a: ["input", *output_lines(a.type, "")],
    "state": lambda graph, a: ["state", *output_lines(a.type, "")],
}
_FOLDING: dict[str, Callable[[Graph, Any, frozenset[str]], list[str]]] = {
    "agent": _agent,
    "step": _step,
    "consolidate": _consolidate,
}


def budget_text(budget: Budget) -> str:
    """A budget's limits as one label line: `budget $2.00 · 200000 tokens · 40 calls, then pause`."""
    limits = []
    if budget.usd is not None:
        limits.append(f"${budget.usd:.2f}")
    if budget.tokens is not None:
        limits.append(f"{budget.tokens} tokens")
    if budget.model_calls is not None:
        limits.append(f"{budget.model_calls} calls")
    then = "fail" if budget.on_exceeded == "fail" else "pause"
    unpriced = " (unpriced allowed)" if budget.unpriced == "allow" else ""
    return "budget " + " · ".join(limits) + f", then {then}{unpriced}"


def node_lines(graph: Graph, id: str, hidden: frozenset[str] = frozenset()) -> list[str]:
    node = graph.node(id)
    kind = node.kind
    lines = _FOLDING[kind](graph, node, hidden) if kind in _FOLDING else _PLAIN[kind](graph, node)
    budget = getattr(node, "budget", None)
    if budget is not None:  # a contract like the rest: the most its runnable may spend, drawn with it
        lines.append(budget_text(budget))
    return lines


def edge_label(graph: Graph, edge: Edge) -> str:
    """What flows along an edge, or the contract it stands for."""
    kind = edge.kind
    if kind == "next":
        if graph.node(edge.target).kind == "exit":
            return "output"
        return run_input(graph) if edge.source == "@entry" else "input"
    if kind in ("branch", "body"):
        return "input"
    if kind == "join":
        return f"input.{edge.branch}"
    if kind == "uses":
        target = graph.node(edge.target)
        required = target.approval if isinstance(target, g.ToolNode) else False  # a server's is a list of names
        gated = edge.approval or required is True
        if edge.tool:  # one tool of an MCP server
            return f"{edge.tool} [approval]" if gated else edge.tool
        if not gated and not isinstance(required, bool):
            return "approval when " + _short(condition_text(required), 40)
        return "approval" if gated else ""
    if kind == "delegates":
        return f"as {edge.tool}" if edge.tool else "task"  # through an agent tool: the name the model calls
    if kind == "handoff":
        return "hand-off"
    if kind == "fallback":
        return f"fallback {edge.order}"
    if kind == "participant":
        return f"agent {(edge.index or 0) + 1}"
    if kind == "judge":
        return "judge"
    if kind == "thread":
        return "continues"
    if kind == "until":
        which = f"until {edge.tool}" if edge.tool else "until"  # one tool of an MCP server
        return f"{which} succeeded" if edge.succeeded else which
    if kind == "case":
        return edge.label or (literal_text(edge.value) if edge.value is not None else "else")
    if kind == "back":
        return edge.label or "again"
    if kind == "break":
        return f"{edge.label}: break {edge.target}"
    if kind == "each":
        return "each item"
    if kind == "reads":
        return "reads " + ".".join(edge.path or ())
    return ""
