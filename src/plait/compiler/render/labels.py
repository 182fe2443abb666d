"""One graph node → the lines of its label: name first, then the contracts it carries.

Which fields a label shows is its kind record's to say (`attr(drawn=True)`,
src/plait/core/kinds/); this module says only how each one is written and in
what order.

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
from plait.core.kinds import default_of, drawn_fields, metas
from plait.core.types import ObjectType, TextType, Type, describe

from ..graph import AgentGraph

__all__ = [
    "budget_text",
    "edge_label",
    "entries",
    "is_gated",
    "label_lines",
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


#: A label line's maker: the node's graph, the node, and which neighbours are folded into it ("models", "tools").
Make = Callable[[Graph, Any, frozenset[str]], list[str]]
#: One entry of a kind's label: the fields its lines say, and how. The entry is written when every one of its
#: fields is drawn (`attr(drawn=True)` on the kind's record, core/kinds), so the record decides what is shown.
Entry = tuple[tuple[str, ...], Make]


def _when(test: Callable[[Any], Any], line: Callable[[Any], str]) -> Make:
    """A maker of one line, written when `test(node)` holds."""
    return lambda graph, a, hidden: [line(a)] if test(a) else []


def _always(line: Callable[[Any], str]) -> Make:
    return lambda graph, a, hidden: [line(a)]


_MODEL: tuple[Entry, ...] = (
    (("provider", "model_id"), _always(lambda a: f"{a.provider}/{a.model_id}")),
    (("temperature",), _when(lambda a: a.temperature is not None, lambda a: f"temperature {a.temperature:g}")),
    (("max_tokens",), _when(lambda a: a.max_tokens is not None, lambda a: f"max_tokens {a.max_tokens}")),
    (("timeout",), _when(lambda a: a.timeout is not None, lambda a: f"timeout {seconds(a.timeout)}")),
    (("retries",), _when(lambda a: a.retries != 2, lambda a: f"retries {a.retries}")),
    (("api",), _when(lambda a: a.api, lambda a: f"api {a.api}")),
    (("api_key_env",), _when(lambda a: a.api_key_env, lambda a: f"key from env {a.api_key_env}")),
    (("headers",), _when(lambda a: a.headers, lambda a: "headers " + ", ".join(a.headers))),
)


def _tool_run(run: dict) -> str:
    if run["type"] == "python":
        return f"python {run['target']}"
    if run["type"] == "agent":  # an agent offered as a tool
        return f"agent {run['agent']}"
    if run["type"] == "hosted":  # run by the provider (web search): nothing of ours to show but its name
        return f"hosted {run['hosted']}"
    # The query string can carry parameters and tokens; host and path say enough.
    parts = urlsplit(run["url"])
    host = parts.netloc.rpartition("@")[2]  # never the user:password part
    line = f"{run['method']} {host}{parts.path}"
    if run.get("headers"):
        line += " [headers " + ", ".join(run["headers"]) + "]"
    return line


def _tool_approval(graph: Graph, a: g.ToolNode, hidden: frozenset[str]) -> list[str]:
    if a.approval is True:
        return ["APPROVAL REQUIRED"]
    if a.approval is not False:  # a condition over the call's arguments
        return ["APPROVAL WHEN " + _short(condition_text(a.approval), 48)]
    return []


_TOOL: tuple[Entry, ...] = (
    (("run",), _always(lambda a: _tool_run(a.run))),
    (("timeout",), _when(lambda a: a.timeout != 60.0, lambda a: f"timeout {seconds(a.timeout)}")),
    (("result",), _when(lambda a: a.result == "messages", lambda a: "result as messages")),
    (("approval",), _tool_approval),
)

#: How many of a server's tool names its node lists before "(+N more)".
_MCP_TOOLS = 8


def _mcp_where(a: g.McpNode) -> str:
    # Only the program's name or the URL's host and path: arguments and queries can carry tokens.
    if a.command:
        return f"mcp stdio {a.command[0]}"
    parts = urlsplit(a.url or "")
    return f"mcp http {parts.netloc.rpartition('@')[2]}{parts.path}"


def _mcp_tools(graph: Graph, a: g.McpNode, hidden: frozenset[str]) -> list[str]:
    # The tools agents will see: the locked ones the allow-list keeps, else the allow-list as written.
    names = [t["name"] for t in a.offered] if a.lock_state == "fresh" else list(a.tools or ())
    if not names:
        return []
    more = f" (+{len(names) - _MCP_TOOLS} more)" if len(names) > _MCP_TOOLS else ""
    return ["tools " + ", ".join(names[:_MCP_TOOLS]) + more]


_MCP: tuple[Entry, ...] = (
    (("command", "url"), _always(_mcp_where)),
    (("offered", "lock_state", "tools"), _mcp_tools),
    (("lock_state",), _when(lambda a: a.lock_state != "fresh", lambda a: f"lock {a.lock_state}")),
    (("approval", "approval_when"), _when(lambda a: a.approval, lambda a: _mcp_approval(a))),
)


def _mcp_approval(a: g.McpNode) -> str:
    """Each gated tool, with the condition over its arguments when only some calls wait (plait 0.3)."""
    gated = [
        f"{tool} when {_short(condition_text(a.approval_when[tool]), 40)}" if tool in a.approval_when else tool
        for tool in a.approval
    ]
    return "approval " + ", ".join(gated)


def until_text(a: g.AgentNode) -> str:
    return "until " + ", ".join(a.until) + (" succeeded" if a.until_succeeded else " called")


def _agent_models(graph: Graph, a: g.AgentNode, hidden: frozenset[str]) -> list[str]:
    if "models" not in hidden:
        return []
    lines = [f"model {_model_name(graph, a.model)}"]
    if a.fallback:
        lines.append("fallback " + " → ".join(f"{i}. {m}" for i, m in enumerate(a.fallback, 1)))
    return lines


def _agent_tools(graph: Graph, a: g.AgentNode, hidden: frozenset[str]) -> list[str]:
    if "tools" not in hidden:
        return []
    tools = [t for t in a.tools if graph.node(t).kind == "tool"]
    return ["tools " + ", ".join(_gated(graph, a, t) for t in tools)] if tools else []


def _output(prefix: str = "→ ") -> Make:
    return lambda graph, a, hidden: output_lines(a.output, prefix)


_RETRY_MALFORMED: Entry = (
    ("retry_malformed",),
    _when(lambda a: a.retry_malformed, lambda a: f"retry_malformed {a.retry_malformed}"),
)
_VALIDATE: Entry = (
    ("validate",),
    _when(lambda a: a.validate is not None, lambda a: f"validate {a.validate.get('target', '')}"),
)
_AGENT: tuple[Entry, ...] = (
    (("max_steps",), _always(lambda a: f"max_steps {a.max_steps}")),
    (("until", "until_succeeded"), _when(lambda a: a.until, until_text)),
    _RETRY_MALFORMED,
    _VALIDATE,
    (("keep_last",), _when(lambda a: a.keep_last is not None, lambda a: f"history keep_last({a.keep_last})")),
    (("approval",), _when(lambda a: a.approval, lambda a: "approval " + ", ".join(a.approval))),
    (
        ("tool_timeout",),
        _when(lambda a: a.tool_timeout is not None, lambda a: f"tool_timeout {seconds(a.tool_timeout)}"),
    ),
    (("tool_choice",), _when(lambda a: a.tool_choice is not None, lambda a: f"tool_choice {a.tool_choice}")),
    (("model", "fallback"), _agent_models),
    (
        ("fallback", "fallback_on"),
        _when(lambda a: a.fallback and a.fallback_on, lambda a: "fallback_on " + ", ".join(a.fallback_on)),
    ),
    (("tools", "approval"), _agent_tools),  # a folded tool is marked with the approval it waits for
    (("output",), _output()),
)


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


def _step_is(a: g.StepNode) -> str:
    return f"step: code {a.run.get('target', '')}" if a.run is not None else "step: one model call"


def _step_model(graph: Graph, a: g.StepNode, hidden: frozenset[str]) -> list[str]:
    return [f"model {_model_name(graph, a.model)}"] if "models" in hidden and a.model is not None else []


_STEP: tuple[Entry, ...] = (
    (("run",), _always(_step_is)),
    (("messages",), _when(lambda a: a.messages, lambda a: "messages " + ", ".join(m["role"] for m in a.messages))),
    (("max_tokens",), _when(lambda a: a.max_tokens is not None, lambda a: f"max_tokens {a.max_tokens}")),
    (("temperature",), _when(lambda a: a.temperature is not None, lambda a: f"temperature {a.temperature:g}")),
    _RETRY_MALFORMED,
    _VALIDATE,
    (("model",), _step_model),
    (("output",), _output()),
)


def _judge(graph: Graph, a: g.ConsolidateNode, hidden: frozenset[str]) -> list[str]:
    if "models" in hidden and isinstance(graph.get(a.judge), g.ModelNode):
        return [f"judge {_model_name(graph, a.judge)}"]
    return []


_CONSOLIDATE: tuple[Entry, ...] = (
    (("rounds",), _always(lambda a: f"consolidate: rounds {a.rounds}")),
    (("judge",), _judge),
    (("task",), _when(lambda a: a.task != "{{input}}", lambda a: "task " + _short(a.task))),
)


def _subject(a: g.RouteNode) -> str:
    subject = a.subject
    return "on " + (condition_text(subject) if isinstance(subject, Expr) else ".".join(subject))


_LOOP: tuple[Entry, ...] = (
    (("until",), _when(lambda a: a.until is not None, lambda a: "until " + _short(condition_text(a.until), 60))),
    (
        ("max_iterations",),
        _when(lambda a: a.max_iterations is not None, lambda a: f"≤ {a.max_iterations} iterations"),
    ),
    (("on_exhausted",), _always(lambda a: f"on_exhausted {a.on_exhausted}")),
)
_MAP: tuple[Entry, ...] = (
    (("over", "concurrency"), _always(lambda a: f"for each {'.'.join(a.over)} (≤ {a.concurrency} at once)")),
    (("filter",), _when(lambda a: a.filter is not None, lambda a: "where " + _short(condition_text(a.filter), 60))),
    (("max_items",), _when(lambda a: a.max_items is not None, lambda a: f"≤ {a.max_items} items")),
    (("on_error",), _always(lambda a: f"on_error {a.on_error}")),
)


def run_input(graph: Graph) -> str:
    """The `start` edge's words: `input { ticket, customer? }` when the spec declares its input."""
    declared = graph.get("@input")
    if isinstance(declared, g.InputNode) and isinstance(declared.type, ObjectType):
        return "input { " + ", ".join(f.name + ("?" if f.optional else "") for f in declared.type.fields) + " }"
    return "input"


_THREAD: tuple[Entry, ...] = (
    (("description",), _when(lambda a: a.description, lambda a: _short(a.description, 48))),
    (
        ("keep_last",),
        _always(lambda a: f"keep_last {a.keep_last}" if a.keep_last is not None else "keeps every message"),
    ),
)
_TYPE: tuple[Entry, ...] = ((("type",), lambda graph, a, hidden: output_lines(a.type, "")),)

#: Each kind's label: its first line (the node's name and what it is), then its entries in the order written.
_LABELS: dict[str, tuple[Callable[[Any], str], tuple[Entry, ...]]] = {
    "thread": (lambda a: f"thread {a.name}", _THREAD),
    "model": (lambda a: a.name, _MODEL),
    "tool": (lambda a: a.name, _TOOL),
    "mcp": (lambda a: a.name, _MCP),
    "agent": (lambda a: a.name, _AGENT),
    "step": (lambda a: a.name, _STEP),
    "consolidate": (lambda a: a.name, _CONSOLIDATE),
    "parallel": (
        lambda a: "parallel" if "/" in a.name else f"parallel {a.name}",
        ((("on_error",), _always(lambda a: f"on_error {a.on_error}")),),
    ),
    "route": (lambda a: f"route {a.name}", ((("subject",), _always(_subject)),)),
    "loop": (lambda a: f"loop {a.name}", _LOOP),
    "map": (lambda a: f"map {a.name}", _MAP),
    "ask": (
        lambda a: f"ask {a.name}",
        ((("question",), _always(lambda a: _short(a.question, 48))), (("output",), _output("answer "))),
    ),
    "chain": (lambda a: f"chain {a.name}", ((("output",), _output()),)),
    "join": (lambda a: "join", ()),
    "entry": (lambda a: "start", ()),
    "exit": (lambda a: "end", ()),
    "input": (lambda a: "input", _TYPE),
    "state": (lambda a: "state", _TYPE),
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


#: Every runnable's last line: its budget, a contract like the rest (the most it may spend), drawn with it.
_BUDGET: Entry = (("budget",), _when(lambda a: a.budget is not None, lambda a: budget_text(a.budget)))


#: Kind record → the fields it draws, read once per class.
_DRAWN: dict[type, frozenset[str]] = {}
#: Kind record → its label's entries after the first line (made once per class).
_ENTRIES: dict[type, tuple[Entry, ...]] = {}


def _drawn(cls: type[g.Node]) -> frozenset[str]:
    drawn = _DRAWN.get(cls)
    if drawn is None:
        drawn = _DRAWN[cls] = frozenset(drawn_fields(cls))
    return drawn


def _plain(name: str) -> Make:
    """A drawn field its kind's table does not write: `name value` when it is not its default (a flag: its name)."""

    def make(graph: Graph, a: Any, hidden: frozenset[str]) -> list[str]:
        value = getattr(a, name)
        if value == default_of(type(a), name):
            return []
        meta = metas(type(a))[name]
        said = meta.spelled or name
        if value is True:
            return [said]
        if isinstance(value, dict | tuple | list):  # a map by its keys only: its values can be credentials
            text = ", ".join(map(str, value))
        elif meta.spec is not None and meta.spec.type == "duration":
            text = seconds(value)
        else:
            text = str(value)
        return [f"{said} {_short(text, 48)}"]

    return make


def entries(cls: type[g.Node]) -> tuple[Entry, ...]:
    """The lines a node of this kind may have after its first, in order, each with the fields it says: its kind's
    table, then a plain line for each drawn field the table does not write, then the budget."""
    made = _ENTRIES.get(cls)
    if made is None:
        own = _LABELS[cls.kind][1]
        said = {f for fields, _ in own for f in fields} | {"budget"}
        plain = tuple(((name,), _plain(name)) for name in drawn_fields(cls) if name not in said)
        made = _ENTRIES[cls] = (*own, *plain, _BUDGET)
    return made


def label_lines(graph: Graph, node: Any, hidden: frozenset[str] = frozenset()) -> list[str]:
    """A node's label: its first line, then each entry whose fields its record draws."""
    title, _ = _LABELS[node.kind]
    drawn = _drawn(type(node))
    lines = [title(node)]
    for fields, make in entries(type(node)):
        if all(f in drawn for f in fields):
            lines += make(graph, node, hidden)
    return lines


def node_lines(graph: Graph, id: str, hidden: frozenset[str] = frozenset()) -> list[str]:
    return label_lines(graph, graph.node(id), hidden)


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
