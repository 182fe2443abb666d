"""An agent with `handoff = [...]` → the `transfer_to_NAME` tools its model may call, one per hand-off target.

Apart from src/plait/runtime/handoff.py (which runs the agent and then the target it chose) because the run
context builds an agent's toolset from these, and the runner imports the agent loop, which imports the context.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from plait.core.kinds import AgentNode, ToolNode

if TYPE_CHECKING:
    from .context import RunContext

__all__ = ["PREFIX", "handoff_tools"]

#: The tool name a hand-off target is offered under (the convention of the agent SDKs that have hand-offs).
PREFIX = "transfer_to_"


def handoff_tools(ctx: RunContext, agent: AgentNode) -> dict[str, ToolNode]:
    """The `transfer_to_NAME` tools of an agent's hand-off targets, by tool name."""
    tools = {}
    for target in agent.handoff:
        found = ctx.program.runnable(target)
        about = getattr(found[1], "description", None) if found is not None else None
        tools[PREFIX + target] = ToolNode(
            name=PREFIX + target,
            description=f"Hand the conversation over to `{target}`" + (f": {about}" if about else "."),
            parameters={"type": "object", "properties": {}},
            run={"type": "handoff", "target": target},
        )
    return tools
