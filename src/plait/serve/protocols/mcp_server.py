"""A `RunService` → an MCP server: each entry of the served specs is a tool; a call runs it and returns its output.

The tool's input schema is the entry's `input` type (an object type as is; a
text entry takes `{"input": string}`; any other type is wrapped the same way).
A typed output comes back as structured content (an object as is, anything
else as `{"output": ...}`) beside its JSON text; a text output as text. A run
that stops waiting for a person (an ask, an approval) is a tool error naming
the run id and how to answer it (`plait resume`, or the HTTP API), so the
caller's model sees what happened and nothing is lost: the run waits in the
journal. Served over streamable HTTP at `/mcp` (`plait serve --mcp`) and over
stdio (`plait mcp serve SPEC`).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from starlette.routing import Route

from plait import __version__
from plait.serve.protocols import tool_names
from plait.serve.service import ServiceError

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext

    from plait.serve.service import EntryInfo, RunService, RunView

__all__ = ["McpRoute", "build_server", "mcp_route", "tool_input_schema", "tool_output_schema"]

#: How long one tool call waits for its run: a workflow can take minutes; a person's answer is not waited for.
WAIT_SECONDS = 3600.0


def _is_object(schema: dict[str, Any] | None) -> bool:
    return schema is not None and schema.get("type") == "object"


def tool_input_schema(entry: EntryInfo) -> dict[str, Any]:
    if _is_object(entry.input_schema):
        return dict(entry.input_schema or {})
    inner = entry.input_schema or {"type": "string"}
    return {"type": "object", "properties": {"input": inner}, "required": ["input"], "additionalProperties": False}


def tool_output_schema(entry: EntryInfo) -> dict[str, Any] | None:
    """None for a text output: MCP's output schema describes structured content, which text has none of."""
    if entry.output_schema is None:
        return None
    if _is_object(entry.output_schema):
        return dict(entry.output_schema)
    return {"type": "object", "properties": {"output": entry.output_schema}, "required": ["output"]}


def build_server(service: RunService) -> Server[Any]:
    """The low-level server (tools are known only at start, from the specs, so no decorators)."""
    specs = service.specs()
    names = tool_names(specs)
    entries = {(s.name, e.name): e for s in specs for e in s.entries}

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        tools = []
        for name, key in names.items():
            entry = entries[key]
            tools.append(
                types.Tool(
                    name=name,
                    description=entry.description or f"Run the `{key[1]}` entry of {key[0]}.plait.",
                    input_schema=tool_input_schema(entry),
                    output_schema=tool_output_schema(entry),
                )
            )
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx: ServerRequestContext[Any], params: types.CallToolRequestParams) -> types.CallToolResult:
        key = names.get(params.name)
        if key is None:
            return _error(f"no tool named `{params.name}`; this server offers: {', '.join(sorted(names))}")
        entry = entries[key]
        arguments = dict(params.arguments or {})
        value = arguments if _is_object(entry.input_schema) else arguments.get("input")
        try:
            run_id = await service.start(key[0], key[1], value)
        except ServiceError as exc:
            return _error(str(exc))
        view = await service.wait(run_id, WAIT_SECONDS)
        return result(view, entry)

    return Server(
        "plait",
        version=__version__,
        instructions="Each tool runs one entry of a plait spec and returns its output.",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


def result(view: RunView, entry: EntryInfo) -> types.CallToolResult:
    """A finished (or stopped) run → the tool's answer."""
    if view.status == "done":
        if entry.output_schema is None:
            text = view.output if isinstance(view.output, str) else json.dumps(view.output)
            return types.CallToolResult(content=[types.TextContent(type="text", text=text)])
        structured = view.output if _is_object(entry.output_schema) else {"output": view.output}
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=json.dumps(view.output))], structured_content=structured
        )
    if view.status == "waiting":
        what = "; ".join(_pending_line(p) for p in view.pending) or "a decision"
        return _error(
            f"run {view.id} is waiting for a person: {what}. Answer it with `plait resume {view.id}` "
            f"(or POST /runs/{view.id}/decisions on `plait serve`); the run continues from its journal."
        )
    if view.status == "running":
        return _error(f"run {view.id} is still running after {WAIT_SECONDS:.0f}s; follow it with GET /runs/{view.id}")
    reason = view.error or view.stop_reason or view.status
    return _error(f"run {view.id} ended {view.status}: {reason}")


def _pending_line(item: dict[str, Any]) -> str:
    if item.get("kind") == "ask":
        return f"ask `{item.get('name')}`: {item.get('question')}"
    if item.get("kind") == "approval":
        return f"approval of `{item.get('name')}` (call {item.get('id')})"
    if item.get("kind") == "budget":
        return f"the budget of `{item.get('name')}` is spent ({item.get('limit')}; id {item.get('id')})"
    return f"{item.get('kind')} `{item.get('name')}` (id {item.get('id')})"


def _error(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)


class McpRoute(Route):
    """`/mcp`, carrying the session manager the app's lifespan must run (`protocols.running`)."""

    def __init__(self, path: str, session_manager: StreamableHTTPSessionManager) -> None:
        super().__init__(path, endpoint=StreamableHTTPASGIApp(session_manager))
        self.session_manager = session_manager


def mcp_route(service: RunService) -> McpRoute:
    """Streamable HTTP at `/mcp`. The HTTP app's own bearer auth and body cap guard it, as every other route."""
    # Not the SDK's own app (`streamable_http_app`): a mounted app's lifespan never runs, and its host check
    # is for a server it binds itself; here the manager travels on the route and the app's lifespan runs it.
    return McpRoute("/mcp", StreamableHTTPSessionManager(app=build_server(service)))


async def serve_stdio(service: RunService) -> None:
    """`plait mcp serve SPEC`: one client on this process's stdin and stdout, until it hangs up."""
    from mcp.server.stdio import stdio_server

    server = build_server(service)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())
