"""Builders for runtime tests: programs on the scripted provider, recorded requests."""

from __future__ import annotations

import asyncio
from typing import Any

from plait.core.kinds import ModelNode
from plait.core.kinds import ToolNode
from plait.runtime.function_tool import FunctionTool
from plait.core.kinds import AgentNode
from plait.runtime.program import Program
from plait.runtime.engine import Engine
from plait.runtime.providers.scripted import ScriptedProvider


class Recorder:
    """A provider wrapper that remembers every request (messages copied as sent)."""

    def __init__(self, inner: ScriptedProvider) -> None:
        self.inner = inner
        self.name = inner.name
        self.requests: list[Any] = []

    def _keep(self, request: Any) -> None:
        self.requests.append(
            {
                "messages": list(request.messages),
                "system": request.system,
                "tools": [t.name for t in request.tools],
                "agent": request.agent,
                "timeout": request.timeout,
                "step": request.step,
                "previous_response_id": request.previous_response_id,
            }
        )

    async def complete(self, request):
        self._keep(request)
        return await self.inner.complete(request)

    def stream(self, request):
        self._keep(request)
        return self.inner.stream(request)

    def snapshot(self):
        return self.inner.snapshot()

    def restore(self, snap):
        self.inner.restore(snap)

    async def aclose(self):
        pass


def schema(**props: str) -> dict[str, Any]:
    return {"type": "object", "properties": {k: {"type": t} for k, t in props.items()}, "required": list(props)}


def fn_tool(name: str, fn: Any, params: dict[str, Any] | None = None, **kw: Any) -> ToolNode:
    return FunctionTool(
        name=name,
        description=f"the {name} tool",
        parameters=params if params is not None else {"type": "object", "properties": {}},
        run={"type": "function"},
        fn=fn,
        **kw,
    )


def make(
    replies: Any = None,
    *,
    models: dict[str, Any] | None = None,
    tools: dict[str, ToolNode] | None = None,
    agents: dict[str, AgentNode] | None = None,
    entry: str | None = "main",
    model_options: dict[str, dict] | None = None,
    program: Program | None = None,
    **agent_kw: Any,
) -> Engine:
    models = models if models is not None else {"m": replies}
    program = program or Program()
    program.entry = entry
    providers = {}
    for name, script in models.items():
        config = ModelNode(name=name, provider="scripted", model_id=name, **(model_options or {}).get(name, {}))
        program.models[name] = config
        providers[name] = Recorder(ScriptedProvider(config, replies=script))
    program.tools.update(tools or {})
    if agents is None:
        agents = {"main": AgentNode(name="main", model="m", tools=tuple(tools or ()), **agent_kw)}
    program.agents.update(agents)
    return Engine(program, providers=providers)


def go(awaitable: Any) -> Any:
    async def main():
        return await awaitable

    return asyncio.run(main())


async def drain(stream: Any) -> list[Any]:
    """Every item of an async iterable: a run's events, or an agent's or provider's stream."""
    return [item async for item in stream]


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


def texts(request: dict[str, Any]) -> list[tuple[str, str]]:
    return [(m.role, m.text) for m in request["messages"]]


def program(**parts: Any) -> Program:
    """A program from config objects by kind: program(steps=[...], routes=[...])."""
    p = Program()
    for kind, items in parts.items():
        getattr(p, kind).update({i.name: i for i in items})
    return p


def code(name: str, target: str, base_dir: Any, **kw: Any) -> Any:
    """A code step calling `target` ("mod:fn") from `base_dir`."""
    from plait.core.kinds import StepNode

    return StepNode(name=name, run={"type": "python", "target": target, "base_dir": str(base_dir)}, **kw)


def record(**fields: Any) -> Any:
    """A step's output record type: record(verdict=["accept", "revise"], feedback="string") (a list: its values)."""
    from plait.core.types import TEXT, FieldType, LiteralType, ObjectType

    return ObjectType(
        tuple(FieldType(k, LiteralType(tuple(v)) if isinstance(v, list) else TEXT) for k, v in fields.items())
    )
