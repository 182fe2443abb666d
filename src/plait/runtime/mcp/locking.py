"""A declared MCP server → its `plait.lock` entry: started once, every page of `tools/list` read, then stopped."""

from __future__ import annotations

from plait.core.kinds import McpNode
from plait.core.mcp_lock import LockedServer

from .drift import locked_tool
from .server import McpConnection

__all__ = ["lock_server"]


async def lock_server(config: McpNode, fingerprint: str) -> LockedServer:
    """What the server offers now, as a lock entry; McpStartError when it cannot be started or listed."""
    connection = McpConnection(config)
    await connection.start()
    try:
        tools = sorted((locked_tool(t) for t in await connection.list_tools()), key=lambda t: t.name)
    finally:
        await connection.aclose()
    info = connection.info
    return LockedServer(
        name=config.name,
        fingerprint=fingerprint,
        server_name=info.name if info else "",
        server_version=info.version if info else "",
        protocol_version=info.protocol_version if info else "",
        tools=tuple(tools),
    )
