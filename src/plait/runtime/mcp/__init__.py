"""MCP server declarations → the tools a run calls over the official `mcp` SDK (the `plait[mcp]` extra).

`toolset` turns the locked tools into plait tools (no server started);
`pool` starts a run's servers on first use and closes them with the run;
`server` is one session; `drift` compares tool lists; `results` turns a
tool result into text. Only `pool` and `server` import the SDK, when a
server is first started.
"""

from __future__ import annotations

from .pool import McpPool
from .server import McpStartError

__all__ = ["McpPool", "McpStartError", "missing_sdk"]


def missing_sdk() -> str | None:
    """None when the SDK is installed, else the one line that says how to get it."""
    import importlib.util

    if importlib.util.find_spec("mcp") is None:
        return (
            "this spec declares an MCP server, which needs the `mcp` package: pip install -e '.[mcp]' in plait's clone"
        )
    return None
