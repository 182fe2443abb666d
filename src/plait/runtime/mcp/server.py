"""An MCP server declaration → one connected session (stdio or streamable HTTP), until it is closed.

Built on the official SDK's `mcp.Client`, which speaks both protocol
revisions: it asks `server/discover` first and, when the server answers,
talks the stateless revision (2026-07-28: no `initialize`, no
`Mcp-Session-Id`); otherwise it falls back to the `initialize` handshake
(2025-11-25 and before). The revision spoken is recorded in `plait.lock`.

A stdio server is a child process in its own process group, which the SDK
stops on close (stdin closed, then SIGTERM, then SIGKILL, each wait bounded
and shielded from cancellation), so a failed or cancelled run leaves no
process behind. The session lives in a task of its own because the SDK's task
groups must be entered and left in one task, while a run's agents and
parallel branches call tools from many.

The server's stderr goes to a temporary file: a server that fails to start is
reported with the last lines it wrote. Environment variables and header values
named by `env("NAME")` are read here, when the server starts, and nowhere else.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import IO, Any

from plait.core.kinds import McpNode

from ..errors import AgentError
from ..secret_values import mask, remember

__all__ = ["CLOSE_TIMEOUT", "START_TIMEOUT", "McpConnection", "McpStartError", "ServerInfo", "resolve"]

#: How long a server has to start and answer the handshake (an `npx` download may be in it).
START_TIMEOUT = 60.0
#: The SDK's own shutdown is bounded at ~6 s (grace, SIGTERM, SIGKILL); past this the task is cancelled.
CLOSE_TIMEOUT = 15.0
#: Most pages of `tools/list` read: a server whose cursor never ends cannot hang a run.
MAX_PAGES = 100
STDERR_TAIL_LINES = 12


class McpStartError(AgentError):
    """A server that could not be started or connected to: the run fails, and the message names it and says why."""

    def __init__(self, message: str) -> None:
        # The boundary where a server's words (its stderr) enter plait: an env() or header value it echoes goes no
        # further, not even to a Python caller of plait.run, who may log the exception.
        super().__init__("mcp_start_failed", mask(message))


@dataclass(frozen=True, slots=True)
class ServerInfo:
    name: str
    version: str
    protocol_version: str


def resolve(server: str, what: str, values: dict[str, Any]) -> dict[str, str]:
    """`{KEY: "literal" | {"env": NAME}}` → the strings to send; an unset variable is a start error naming it."""
    out: dict[str, str] = {}
    for key, value in values.items():
        if isinstance(value, dict):
            name = str(value.get("env", ""))
            found = os.environ.get(name)
            if found is None:
                raise McpStartError(
                    f"MCP server `{server}`: environment variable `{name}` (for {what} `{key}`) is not set"
                )
            remember(found)  # a server may echo it in an error: masked in every output
            out[key] = found
        else:
            out[key] = str(value)
    return out


class McpConnection:
    """One server's session: `await start()`, then `list_tools()` / `call(...)` from any task, `await aclose()`."""

    def __init__(self, config: McpNode) -> None:
        self.config = config
        self.info: ServerInfo | None = None
        self._client: Any = None
        self._stderr: IO[str] | None = None
        self._task: asyncio.Task[None] | None = None
        self._ready: asyncio.Future[None] | None = None
        self._stop = asyncio.Event()
        self._env: dict[str, str] = {}
        self._headers: dict[str, str] = {}

    @property
    def where(self) -> str:
        """What the server is, for messages: its command or its URL (a credential in either shown as <redacted>)."""
        from plait.core.redact import redact_text, redact_url

        if self.config.command:
            return redact_text(" ".join(self.config.command))
        return redact_url(str(self.config.url))

    async def start(self) -> None:
        """Connected and handshaken, or McpStartError (the process, if any, is gone by then)."""
        config = self.config
        self._env = resolve(config.name, "variable", config.env)
        self._headers = resolve(config.name, "header", config.headers)
        self._ready = asyncio.get_running_loop().create_future()
        self._task = asyncio.create_task(self._serve(), name=f"mcp {self.config.name}")
        try:
            async with asyncio.timeout(START_TIMEOUT):
                await asyncio.shield(self._ready)
        except TimeoutError:
            failure = McpStartError(self._failure(f"did not answer within {START_TIMEOUT:g}s"))  # before stderr closes
            await self.aclose()
            raise failure from None
        except BaseException:
            await self.aclose()
            raise

    async def list_tools(self) -> list[Any]:
        """Every tool the server offers, across all pages of `tools/list`."""
        tools: list[Any] = []
        cursor: str | None = None
        for _ in range(MAX_PAGES):
            page = await self._session().list_tools(cursor=cursor, cache_mode="bypass")
            tools.extend(page.tools)
            cursor = page.next_cursor
            if not cursor:
                break
        return tools

    async def call(self, tool: str, arguments: dict[str, Any], timeout: float | None) -> Any:
        """The server's `CallToolResult`; `MCPError` for a JSON-RPC error (a timeout is `REQUEST_TIMEOUT`)."""
        return await self._session().call_tool(tool, arguments, read_timeout_seconds=timeout or None)

    def stderr_tail(self) -> str:
        """The last lines the server wrote to stderr ("" for an HTTP server or a quiet one)."""
        if self._stderr is None:
            return ""
        try:
            self._stderr.flush()
            self._stderr.seek(0)
            lines = self._stderr.read().splitlines()
        except (OSError, ValueError):
            return ""
        from plait.core.redact import redact_text

        # A server may print its own token while it fails; the tail goes into run reports and the journal.
        return redact_text("\n".join(lines[-STDERR_TAIL_LINES:]))

    async def aclose(self) -> None:
        """Stop the session and the process; safe to call twice, and while the caller is being cancelled."""
        self._stop.set()
        task = self._task
        if task is not None and not task.done():
            if self._ready is not None and not self._ready.done():
                task.cancel()  # still starting: nothing to finish, and a hung handshake would hold Ctrl-C up
            try:
                # asyncio.wait never cancels the task: if this caller is cancelled (a second Ctrl-C), the
                # SDK's shielded shutdown still runs to the end in the task.
                done, _ = await asyncio.wait({task}, timeout=CLOSE_TIMEOUT)
                if not done:
                    task.cancel()
                    await asyncio.wait({task}, timeout=CLOSE_TIMEOUT)
            finally:
                self._close_stderr()
        self._close_stderr()

    def _close_stderr(self) -> None:
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None

    # -- the session's own task --------------------------------------------------------

    def _session(self) -> Any:
        if self._client is None:
            raise ConnectionError(self._failure("is not running"))
        return self._client

    def _failure(self, what: str) -> str:
        tail = self.stderr_tail()
        message = f"MCP server `{self.config.name}` ({self.where}) {what}"
        return message + (f"; its stderr ends with:\n{tail}" if tail else "")

    async def _serve(self) -> None:
        ready = self._ready
        assert ready is not None
        try:
            async with self._connect() as client:
                self._client = client
                info = client.server_info
                self.info = ServerInfo(
                    getattr(info, "name", "") or "", getattr(info, "version", "") or "", client.protocol_version or ""
                )
                if not ready.done():
                    ready.set_result(None)
                await self._stop.wait()
        except BaseException as exc:
            if not ready.done():
                ready.set_exception(McpStartError(self._failure(f"failed to start: {_reason(exc)}")))
            if isinstance(exc, KeyboardInterrupt | SystemExit):
                raise
        finally:
            self._client = None

    @asynccontextmanager
    async def _connect(self) -> AsyncIterator[Any]:
        from mcp import Client, Implementation

        from plait import __version__

        config = self.config
        identity = Implementation(name="plait", version=__version__)
        # Named, not left to the SDK's default: the stateless revision where the server has it, the handshake if not.
        mode = "auto"
        if config.command:
            from mcp import StdioServerParameters
            from mcp.client.stdio import stdio_client

            params = StdioServerParameters(
                command=config.command[0], args=list(config.command[1:]), env=self._env or None, cwd=config.cwd
            )
            self._stderr = tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")
            async with Client(stdio_client(params, errlog=self._stderr), client_info=identity, mode=mode) as client:
                yield client
            return
        import httpx2
        from mcp.client.streamable_http import streamable_http_client

        # The SDK's own defaults: a long read for the server's event stream; plait bounds each call itself.
        async with httpx2.AsyncClient(headers=self._headers, timeout=httpx2.Timeout(30.0, read=300.0)) as http:
            transport = streamable_http_client(str(config.url), http_client=http)
            async with Client(transport, client_info=identity, mode=mode) as client:
                yield client


def _reason(exc: BaseException) -> str:
    """One line for why a start failed; an exception group (the SDK's task groups) by its first leaf."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, FileNotFoundError):
        return f"command not found: {exc.filename or exc}"
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__
