"""The compiled graph's records (`plait.core.graph`) → a `Program`: every declaration's kind record, by name.

A `Program` is what an engine runs. Each table holds the graph's own records
(src/plait/core/kinds/), the same objects the compiler built, so a field
added to a kind is there with no copy to update. The exceptions are derived,
not copied: a tool registered in code is a `FunctionTool` (a runtime-only
`ToolNode` holding the callable), an agent that uses an MCP server gets a new
record naming the server's locked tools (src/plait/runtime/mcp/toolset.py),
and `input` and `state` are JSON Schemas. Tests and Python callers build
records with keywords, as the compiler does. The loop never reads AST nodes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from plait.core import graph as g
from plait.core.kinds import (
    AgentNode,
    AskNode,
    ChainNode,
    ConsolidateNode,
    LoopNode,
    MapNode,
    McpNode,
    ModelNode,
    ParallelNode,
    RouteNode,
    StepNode,
    ThreadNode,
    ToolNode,
)
from plait.core.redact import reveal_record
from plait.core.types import to_json_schema

__all__ = ["Program", "RUNNABLE_TABLES", "program_from_graph"]


@dataclass(slots=True)
class Program:
    """Everything one spec declares, by name: what an engine runs."""

    models: dict[str, ModelNode] = field(default_factory=dict)
    tools: dict[str, ToolNode] = field(default_factory=dict)
    agents: dict[str, AgentNode] = field(default_factory=dict)
    steps: dict[str, StepNode] = field(default_factory=dict)
    chains: dict[str, ChainNode] = field(default_factory=dict)
    parallels: dict[str, ParallelNode] = field(default_factory=dict)
    consolidates: dict[str, ConsolidateNode] = field(default_factory=dict)
    routes: dict[str, RouteNode] = field(default_factory=dict)
    loops: dict[str, LoopNode] = field(default_factory=dict)
    maps: dict[str, MapNode] = field(default_factory=dict)
    asks: dict[str, AskNode] = field(default_factory=dict)
    #: MCP servers by declaration name; their tools are in `tools` as "SERVER.TOOL" (run = {"type": "mcp", ...}).
    mcp: dict[str, McpNode] = field(default_factory=dict)
    #: Threads by declaration name (plait 0.3): the conversations agents and model steps continue.
    threads: dict[str, ThreadNode] = field(default_factory=dict)
    entry: str | None = None
    #: Runnables nothing else uses: the possible entries when there is no `main` (src/plait/compiler/entry.py).
    roots: tuple[str, ...] = ()
    base_dir: str | None = None
    #: JSON Schema of the `input` block (non-strict, defaults given); None = undeclared (any text).
    input: dict[str, Any] | None = None
    #: JSON Schema of the `state` block (an object; non-strict); None = undeclared (tools write any key).
    state: dict[str, Any] | None = None
    #: Where each declaration is written: name → (file, line); telemetry links spans to it.
    locations: dict[str, tuple[str, int]] = field(default_factory=dict)
    #: A model step's one call as the call machinery sees it (an agent with no tools), made on its first run.
    step_calls: dict[str, tuple[StepNode, AgentNode]] = field(default_factory=dict, repr=False, compare=False)

    def runnables(self) -> list[str]:
        """Names a run can start at, in declaration order within each kind; inline parallels excluded."""
        return [n for _, table in RUNNABLE_TABLES for n in getattr(self, table) if "/" not in n]

    def runnable(self, name: str) -> tuple[str, Any] | None:
        """The runnable declared as `name`: its kind and its record (None when no runnable has that name)."""
        for kind, table in RUNNABLE_TABLES:
            record = getattr(self, table).get(name)
            if record is not None:
                return kind, record
        return None

    def kind_of(self, name: str) -> str | None:
        for kind, table in _NAMED_TABLES:
            if name in getattr(self, table):
                return kind
        return None


#: Runnable kind → the `Program` table of its records, in the order a name is looked up.
RUNNABLE_TABLES: tuple[tuple[str, str], ...] = (
    ("agent", "agents"),
    ("step", "steps"),
    ("chain", "chains"),
    ("parallel", "parallels"),
    ("consolidate", "consolidates"),
    ("route", "routes"),
    ("loop", "loops"),
    ("map", "maps"),
    ("ask", "asks"),
)
_NAMED_TABLES = RUNNABLE_TABLES + (("tool", "tools"), ("model", "models"))


#: Kind → the `Program` table of its records, for every kind a program keeps by name.
_TABLES = dict(_NAMED_TABLES + (("mcp", "mcp"), ("thread", "threads")))


def program_from_graph(graph: g.GraphView) -> Program:
    """Each record in its kind's table (a loop without a bound, P312, is never run); input and state as schemas."""
    from plait.compiler.entry import roots

    program = Program(
        entry=graph.entry,
        roots=tuple(roots(graph)),  # type: ignore[arg-type]
        base_dir=str(graph.base_dir) if graph.base_dir else None,
    )
    # Secrets are hidden in the records (every output shows "<redacted>"); a run sends the real values.
    for n in map(reveal_record, graph.nodes()):
        if n.span is not None and not n.name.startswith("@"):
            program.locations[n.name] = (n.file or n.span.file, n.span.line)
        table = _TABLES.get(n.kind)
        if table is not None:
            if not isinstance(n, LoopNode) or n.max_iterations is not None:
                getattr(program, table)[n.name] = n
        elif isinstance(n, g.InputNode):
            program.input = to_json_schema(n.type, strict=False)
        elif isinstance(n, g.StateNode):
            program.state = to_json_schema(n.type, strict=False)
    if program.mcp:
        _mcp_tools(graph, program)
    return program


def _mcp_tools(graph: g.GraphView, program: Program) -> None:
    """The locked MCP tools into `program.tools`; each agent's MCP references into the tools it sees."""
    from .mcp.toolset import expand_agent, mcp_tools

    for server in program.mcp.values():
        program.tools.update(mcp_tools(server, server.approval))
    uses: dict[str, dict[str, list[str | None]]] = {}
    for e in graph.edges("uses"):
        if e.target in program.mcp:
            uses.setdefault(e.source, {}).setdefault(e.target, []).append(e.tool)
    for name, agent in program.agents.items():
        program.agents[name] = expand_agent(agent, program, uses.get(name, {}))
