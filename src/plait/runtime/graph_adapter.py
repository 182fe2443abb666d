"""The compiled graph's records (`plait.core.graph`) → a `Program`: the records themselves, or config objects.

Models, tools, MCP servers, steps, chains, parallels, consolidates, routes, loops, maps and asks run as their kind records
(src/plait/core/kinds/), as the graph holds them; the other kinds are still
copied into `config.py` objects here (issue 20: until the runtime runs every
kind record). The records carry every default already.
"""

from __future__ import annotations

from typing import Any

from plait.core import graph as g
from plait.core.types import TextType, Type, to_json_schema
from plait.core.redact import reveal_record

from .config import AgentConfig, Program
from .providers.base import FALLBACK_KINDS

__all__ = ["program_from_graph"]


def _schema(output: Type, strict: bool = True) -> dict[str, Any] | None:
    """A declared type's JSON Schema; None for text (nothing to ask a provider for)."""
    return None if isinstance(output, TextType) else to_json_schema(output, strict=strict)


def _agent(n: g.AgentNode) -> AgentConfig:
    return AgentConfig(
        n.name,
        n.model,
        description=n.description,
        fallback=n.fallback,
        fallback_on=frozenset(n.fallback_on) if n.fallback_on is not None else FALLBACK_KINDS,
        system=n.system,
        tools=n.tools,
        max_steps=n.max_steps,
        until=n.until,
        until_succeeded=n.until_succeeded,
        retry_malformed=n.retry_malformed,
        validate_arguments=n.validate_arguments,
        keep_last=n.keep_last,
        approval=n.approval,
        tool_timeout=n.tool_timeout,
        temperature=n.temperature,
        max_tokens=n.max_tokens,
        tool_choice=n.tool_choice,
        label=n.label,
        source=n.source,
        attributes=dict(n.attributes),
        output=_schema(n.output),
    )


def _mcp_tools(graph: g.GraphView, program: Program) -> None:
    """The locked MCP tools into `program.tools`; each agent's MCP references into the tools it sees."""
    from .mcp.toolset import expand_agent, mcp_tools

    for server in program.mcp.values():
        program.tools.update(mcp_tools(server, server.approval))
    uses: dict[str, dict[str, list[str | None]]] = {}
    for e in graph.edges("uses"):
        if e.target in program.mcp:
            uses.setdefault(e.source, {}).setdefault(e.target, []).append(e.tool)
    for agent in program.agents.values():
        expand_agent(agent, program, uses.get(agent.name, {}))


def program_from_graph(graph: g.GraphView) -> Program:
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
        if isinstance(n, g.ModelNode):
            program.models[n.name] = n
        elif isinstance(n, g.ToolNode):
            program.tools[n.name] = n
        elif isinstance(n, g.AgentNode):
            program.agents[n.name] = _agent(n)
        elif isinstance(n, g.StepNode):
            program.steps[n.name] = n
        elif isinstance(n, g.ChainNode):
            program.chains[n.name] = n
        elif isinstance(n, g.ParallelNode):
            program.parallels[n.name] = n
        elif isinstance(n, g.ConsolidateNode):
            program.consolidates[n.name] = n
        elif isinstance(n, g.RouteNode):
            program.routes[n.name] = n
        elif isinstance(n, g.LoopNode) and n.max_iterations is not None:
            program.loops[n.name] = n
        elif isinstance(n, g.MapNode):
            program.maps[n.name] = n
        elif isinstance(n, g.AskNode):
            program.asks[n.name] = n
        elif isinstance(n, g.InputNode):
            program.input = to_json_schema(n.type, strict=False)
        elif isinstance(n, g.StateNode):
            program.state = to_json_schema(n.type, strict=False)
        elif isinstance(n, g.McpNode):
            program.mcp[n.name] = n
    if program.mcp:
        _mcp_tools(graph, program)
    return program
