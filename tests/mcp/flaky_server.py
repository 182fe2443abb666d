"""An MCP server that misbehaves on request, for the failure tests: the SDK's MCPServer (FastMCP in SDK 1.x).

    python flaky_server.py            # stdio
    python flaky_server.py http PORT  # streamable HTTP on 127.0.0.1:PORT, path /mcp

`FLAKY_DRIFT=1` in its environment renames one tool and adds another, so the
live tool list differs from a lock taken without it.
"""

from __future__ import annotations

import asyncio
import os
import sys

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations

server = MCPServer("flaky", version="1.0")


@server.tool(annotations=ToolAnnotations(idempotentHint=True, readOnlyHint=True))
def echo(text: str) -> str:
    """Say the text back."""
    return f"echo: {text}"


@server.tool()
def fail(reason: str) -> str:
    """Always fails, with the reason as its error."""
    raise ToolError(reason)


@server.tool()
def crash() -> str:
    """Exits the whole server process mid-call."""
    sys.stderr.write("flaky: crashing on purpose\n")
    sys.stderr.flush()
    os._exit(3)


@server.tool()
async def hang(seconds: float) -> str:
    """Answers only after `seconds`."""
    await asyncio.sleep(seconds)
    return "woke up"


@server.tool(annotations=ToolAnnotations(idempotentHint=True))
async def wait_while(path: str) -> str:
    """Touches PATH.started, then answers once PATH is gone (a call a test can cut off, then let finish)."""
    with open(path + ".started", "w"):
        pass
    while os.path.exists(path):
        await asyncio.sleep(0.05)
    return "the flag is gone"


@server.tool()
def header(name: str, ctx: Context) -> str:
    """The value of one request header as the server received it (streamable HTTP only)."""
    return (ctx.headers or {}).get(name.lower(), "(none)")


@server.tool()
def secret() -> str:
    """The value of FLAKY_TOKEN in the server's environment."""
    return os.environ.get("FLAKY_TOKEN", "(unset)")


if os.environ.get("FLAKY_DRIFT") == "1":

    @server.tool()
    def shout(text: str) -> str:
        """A tool that appears only after the drift."""
        return text.upper()

    server.remove_tool("secret")


if __name__ == "__main__":
    if sys.argv[1:2] == ["http"]:
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    elif sys.argv[1:2] == ["fail-start"]:
        sys.stderr.write("flaky: cannot open the database\n")
        sys.exit(1)
    else:
        server.run()
