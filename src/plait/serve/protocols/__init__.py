"""A `RunService` → the protocol endpoints `plait serve` mounts: A2A, MCP (streamable HTTP) and AG-UI.

Each protocol speaks through its official SDK, an optional extra imported only
when its routes are built: A2A (`a2a-sdk`, the `a2a` extra) at `/a2a` with its
agent card at `/.well-known/agent-card.json`; MCP (`mcp`, the `mcp` extra) at
`/mcp` when `plait serve --mcp`; AG-UI (`ag-ui-protocol`, the `agui` extra) as
`GET /runs/{id}/events?format=ag-ui`, which the HTTP app hands to
`agui.response`. A protocol whose SDK is missing is left out (and `missing`
says why), so the core API serves without any of them.
"""

from __future__ import annotations

import importlib.util
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from starlette.routing import BaseRoute

    from plait.serve.service import RunService, SpecInfo

__all__ = ["missing", "routes", "running", "tool_names"]

#: The SDK module each protocol needs, and the extra that installs it.
_SDKS = {"a2a": ("a2a", "a2a"), "mcp": ("mcp.server", "mcp"), "agui": ("ag_ui", "agui")}


def missing(protocol: str) -> str | None:
    """Why `protocol` cannot be served here (its SDK is not installed), or None."""
    module, extra = _SDKS[protocol]
    try:
        found = importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:  # the parent package of a dotted name is missing
        found = False
    if found:
        return None
    return f"the {protocol} protocol needs the `{extra}` extra: pip install 'plait[{extra}]'"


def routes(service: RunService, *, mcp: bool = False, auth: bool = True) -> list[BaseRoute]:
    """The protocol routes to mount beside the HTTP API: A2A always (when its SDK is there), MCP when asked.

    `auth`: the server requires a bearer token, so the A2A card declares that scheme.
    Enter `running(the routes)` in the app's lifespan: the MCP transport has sessions to run.
    """
    out: list[BaseRoute] = []
    if missing("a2a") is None:
        from .a2a import a2a_routes

        out.extend(a2a_routes(service, auth=auth))
    if mcp:
        problem = missing("mcp")
        if problem:
            raise RuntimeError(problem)
        from .mcp_server import mcp_route

        out.append(mcp_route(service))
    return out


@asynccontextmanager
async def running(mounted: list[Any]) -> AsyncIterator[None]:
    """Run what the mounted protocol routes need while the app serves (the MCP session manager)."""
    async with AsyncExitStack() as stack:
        for route in mounted:
            manager = getattr(route, "session_manager", None)
            if manager is not None:
                await stack.enter_async_context(manager.run())
        yield


def tool_names(specs: list[SpecInfo]) -> dict[str, tuple[str, str]]:
    """Each entry's public name (an MCP tool, an A2A skill) → (spec, entry).

    The entry's own name when one spec is served; `spec.entry` when several are, so no
    two specs' entries collide and the name says where it comes from.
    """
    one = len(specs) == 1
    return {(e.name if one else f"{s.name}.{e.name}"): (s.name, e.name) for s in specs for e in s.entries}
