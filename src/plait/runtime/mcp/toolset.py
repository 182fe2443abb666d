"""An MCP declaration's locked tools → plait `ToolNode`s, and agents' MCP references → the names the model sees.

Nothing here starts a server: the tools a run offers are the ones `plait.lock`
records (what `plait check` verified), so every agent's tool list is known
before the first model call. Each tool is keyed "SERVER.TOOL" in
`Program.tools` (two servers may offer one name) and carries its own name,
which is what the model sees and calls; approval, argument validation,
timeouts and the journal then treat it as any tool.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from plait.core.kinds import AgentNode, McpNode, ToolNode

if TYPE_CHECKING:
    from ..program import Program

__all__ = ["expand_agent", "is_idempotent", "lock_command", "mcp_tools", "qualified"]


def lock_command(server: McpNode) -> str:
    """The command that writes the server's lock entry, naming its spec as `plait check`'s fix does."""
    if server.file is None:
        return "plait mcp lock"
    from plait.compiler.report.paths import relative_path

    return f"plait mcp lock {relative_path(str(Path(server.file).resolve()))}"


def qualified(server: str, tool: str) -> str:
    return f"{server}.{tool}"


def is_idempotent(entry: dict[str, Any]) -> bool:
    """Safe to re-run after a crash only when the server says so (`idempotentHint`); MCP's default is not."""
    annotations = entry.get("annotations") or {}
    return isinstance(annotations, dict) and annotations.get("idempotentHint") is True


def mcp_tools(server: McpNode, approval: Iterable[str] = ()) -> dict[str, ToolNode]:
    """The locked, allowed tools of one server, keyed "SERVER.TOOL"; `approval` names tools every agent must approve."""
    needs_approval = set(approval)
    out: dict[str, ToolNode] = {}
    for entry in server.offered:
        name = entry["name"]
        out[qualified(server.name, name)] = ToolNode(
            name=name,
            description=entry.get("description") or "",
            parameters=_parameters(entry.get("input_schema")),
            run={"type": "mcp", "server": server.name, "tool": name},
            # A conditional approval (`{ write_file = path != "notes.md" }`) asks only for a call it holds for.
            approval=server.approval_when.get(name, True) if name in needs_approval else False,
            timeout=server.timeout,
            idempotent=is_idempotent(entry),
        )
    return out


def _parameters(schema: Any) -> dict[str, Any]:
    """The schema the model is given and arguments are checked against; a schema that is not one checks nothing.

    A server may send a schema the validator cannot use (`"type": "nonsense"`); the server still checks
    its own arguments, so plait passes them through rather than failing the agent on every call.
    """
    if not isinstance(schema, dict):
        return {"type": "object"}
    from jsonschema import SchemaError, validators

    try:
        validators.validator_for(schema).check_schema(schema)
    except SchemaError:
        return {"type": "object"}
    return schema


def expand_agent(agent: AgentNode, program: Program, uses: dict[str, list[str | None]]) -> AgentNode:
    """An agent with its MCP references resolved: tools → "SERVER.TOOL" keys; until, approval → the names called.

    `uses` maps each server the agent uses to the tools named, in spec order (None: all of them, in the
    lock's order). A server with no usable lock stays in `tools` under its own name: the run stops there
    with a message naming the fix. The record is a new one: the graph's own stays as declared.
    """
    tools: dict[str, None] = {}  # ordered, without repeats
    for name in agent.tools:
        server_name, dot, member = name.partition(".")
        server = program.mcp.get(server_name)
        if server is None:
            tools[name] = None
        elif not server.offered:
            tools[server.name] = None
        else:
            offered = [entry["name"] for entry in server.offered]
            for wanted in [member] if dot else (uses.get(server.name) or [None]):
                for tool in offered if wanted is None else [wanted] if wanted in offered else []:
                    tools[qualified(server.name, tool)] = None
    return replace(
        agent,
        tools=tuple(tools),
        until=tuple(n for name in agent.until for n in _called(name, program)),
        approval=tuple(n for name in agent.approval for n in _called(name, program)),
    )


def _called(name: str, program: Program) -> tuple[str, ...]:
    """`files.write_file` → ("write_file",), what the model calls; `files` (a whole server) → each of its tools."""
    server_name, dot, tool = name.partition(".")
    server = program.mcp.get(server_name)
    if server is None:
        return (name,)
    return (tool,) if dot else tuple(entry["name"] for entry in server.offered)
