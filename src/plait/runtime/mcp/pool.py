"""A run's MCP servers → one session each, started on first use, shared by every agent and branch, closed with the run.

When a server starts, its live tool list is compared with the lock the spec
was checked against: drift is a `mcp_tool_drift` warning naming what was
added, removed or changed, and a locked tool the server no longer offers is
an error result when called. Every failure of a call (an `isError` result, a
JSON-RPC error, a crash, a hang past the timeout) is an error result the model
reads, with a `mcp_tool_error` warning; only a server that cannot start fails
the run (`McpStartError`).
"""

from __future__ import annotations

import asyncio
from typing import Any, Callable

from plait.core.kinds import McpNode

from ..tools import ToolResult
from .drift import compare, locked_tool, offered_tool
from .results import result_text
from .server import McpConnection, McpStartError

__all__ = ["McpPool"]

#: Past the per-call timeout the SDK enforces, how long before plait stops waiting on its own.
GRACE = 5.0


class McpPool:
    def __init__(self, servers: dict[str, McpNode], warn: Callable[..., None]) -> None:
        self._servers = servers
        self._warn = warn
        self._open: dict[str, McpConnection] = {}
        self._starting: dict[str, asyncio.Task[McpConnection]] = {}
        #: Per server: the locked tools it no longer offers.
        self._gone: dict[str, frozenset[str]] = {}
        self._closed = False

    async def start(self, server: str) -> McpConnection:
        """The server's session, started (and checked against the lock) by whichever caller asks first."""
        found = self._open.get(server)
        if found is not None:
            return found
        if self._closed:
            raise McpStartError(f"MCP server `{server}`: the run has ended")
        task = self._starting.get(server)
        if task is None:
            config = self._servers.get(server)
            if config is None:
                raise McpStartError(f"no MCP server `{server}` is declared")
            from . import missing_sdk

            missing = missing_sdk()
            if missing:
                raise McpStartError(f"MCP server `{server}`: {missing}")
            task = self._starting[server] = asyncio.create_task(self._start(config))
        # Parallel branches wait for the one start; a cancelled waiter does not cancel it for the others.
        return await asyncio.shield(task)

    async def _start(self, config: McpNode) -> McpConnection:
        connection = McpConnection(config)
        await connection.start()  # a failed or cancelled start has stopped its process already
        try:
            live = [locked_tool(t) for t in await connection.list_tools()]
        except BaseException as exc:  # cancelled (the run ended) or refused: the started server must not outlive it
            await connection.aclose()
            if isinstance(exc, Exception):
                raise McpStartError(f"MCP server `{config.name}` failed to list its tools: {exc}") from None
            raise
        self._open[config.name] = connection
        self._starting.pop(config.name, None)
        self._check(config, [offered_tool(t) for t in live])
        return connection

    def _check(self, config: McpNode, live: list[dict[str, Any]]) -> None:
        if config.lock_state != "fresh":
            return  # no lock to compare with (a run refuses such a server's tools before it is ever called)
        allowed = [t for t in live if config.tools is None or t["name"] in config.tools]
        drift = compare(config.offered, allowed)
        self._gone[config.name] = frozenset(drift.removed)
        if drift:
            self._warn(
                "mcp_tool_drift",
                f"MCP server `{config.name}` offers other tools than plait.lock records ({drift.describe()}); "
                "run `plait mcp lock` and check the spec again",
                (),
                server=config.name,
                added=list(drift.added),
                removed=list(drift.removed),
                changed=list(drift.changed),
            )

    async def call(self, server: str, tool: str, arguments: dict[str, Any], timeout: float | None) -> ToolResult:
        """The tool's result as the model should read it; an MCP failure is an error result and a warning."""
        from mcp import MCPError
        from mcp_types import CONNECTION_CLOSED, REQUEST_TIMEOUT
        from pydantic import ValidationError

        try:
            connection = await self.start(server)
        except McpStartError as exc:  # a run starts its servers before the journal's intent; this is a direct call
            return self._error(server, tool, "start", exc.message)
        if tool in self._gone.get(server, ()):
            return self._error(
                server,
                tool,
                "gone",
                f"MCP server `{server}` no longer offers `{tool}` (plait.lock lists it; run `plait mcp lock`)",
            )
        try:
            async with asyncio.timeout(timeout + GRACE if timeout else None):
                result = await connection.call(tool, arguments, timeout)
        except TimeoutError:
            return self._timed_out(server, tool, timeout)
        except MCPError as exc:
            if exc.code == REQUEST_TIMEOUT:
                return self._timed_out(server, tool, timeout)
            if exc.code == CONNECTION_CLOSED:
                tail = connection.stderr_tail()
                return self._error(
                    server,
                    tool,
                    "closed",
                    f"MCP server `{server}` closed the connection during `{tool}` (it may have crashed)"
                    + (f"; its stderr ends with:\n{tail}" if tail else ""),
                )
            return self._error(
                server, tool, "rpc", f"MCP server `{server}` refused `{tool}`: {exc.message} ({exc.code})"
            )
        except ValidationError as exc:
            return self._error(
                server, tool, "invalid", f"MCP server `{server}` sent an invalid result for `{tool}`: {exc}"
            )
        except ConnectionError as exc:
            return self._error(server, tool, "closed", str(exc))
        text, is_error = result_text(result)
        if is_error:
            self._warn(
                "mcp_tool_error",
                f"MCP tool `{tool}` (server `{server}`) reported an error",
                (),
                server=server,
                tool=tool,
                reason="is_error",
            )
        return ToolResult(text, is_error=is_error)

    def _timed_out(self, server: str, tool: str, timeout: float | None) -> ToolResult:
        after = f" after {timeout:g}s" if timeout else ""
        return self._error(server, tool, "timeout", f"tool `{tool}` (MCP server `{server}`) timed out{after}")

    def _error(self, server: str, tool: str, reason: str, message: str) -> ToolResult:
        self._warn("mcp_tool_error", message, (), server=server, tool=tool, reason=reason)
        return ToolResult(message, is_error=True)

    async def aclose(self) -> None:
        """Stop every server this run started (and any still starting); runs to the end even when cancelled."""
        self._closed = True
        for task in self._starting.values():
            task.cancel()
        starting, self._starting = list(self._starting.values()), {}
        if starting:
            await asyncio.gather(*starting, return_exceptions=True)
        connections, self._open = list(self._open.values()), {}
        if connections:
            await asyncio.gather(*(c.aclose() for c in connections), return_exceptions=True)
