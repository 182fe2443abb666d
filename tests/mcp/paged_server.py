"""An MCP server on the SDK's low-level `Server`, for what MCPServer will not send: `tools/list` in pages
(one tool per page), a tool whose input schema is not valid JSON Schema, and a JSON-RPC error for `refuse`. `python paged_server.py`, stdio."""

from __future__ import annotations

from typing import Any

import anyio
import mcp.types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError

TOOLS = [
    types.Tool(name="first", description="Page one.", input_schema={"type": "object", "properties": {}}),
    types.Tool(
        name="broken",
        description="Its schema uses a type JSON Schema does not have.",
        input_schema={"type": "object", "properties": {"value": {"type": "nonsense"}}},
    ),
    types.Tool(
        name="last",
        description="Page three: says back what it was given.",
        input_schema={"type": "object", "properties": {"value": {"type": "string"}}},
    ),
]


async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
    page = int(params.cursor) if params is not None and params.cursor else 0
    following = str(page + 1) if page + 1 < len(TOOLS) else None
    return types.ListToolsResult(tools=[TOOLS[page]], next_cursor=following)


async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
    if params.name == "refuse":  # a JSON-RPC error response, not a result
        raise MCPError(code=types.INVALID_PARAMS, message="refused on purpose")
    return types.CallToolResult(content=[types.TextContent(type="text", text=f"{params.name}: {params.arguments}")])


server = Server("paged", version="1.0", on_list_tools=list_tools, on_call_tool=call_tool)


async def main() -> None:
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
