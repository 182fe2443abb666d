"""A run's events → OpenTelemetry spans (GenAI semantic conventions), each linked to its `.plait` declaration.

Only imported when tracing is on (`plait run --otel`, an OTLP endpoint in the
environment, or a `tracer_provider` given to `plait.run`): `opentelemetry` is
an optional extra and costs nothing when off.

The consumer listens on the run's event bus, so it sees what every other
observer sees and changes nothing. Spans follow the graph path each event
carries, not asyncio context, so parallel branches and map items land under
the right parent however their events interleave:

- the run: `invoke_workflow ENTRY`;
- chain, parallel, consolidate, route, loop and map elements: `KIND NAME`,
  opened at their first event and closed at the end of their last child
  (they do no work of their own between children);
- agents: `invoke_agent LABEL` (agent_start → agent_end);
- model calls: `chat MODEL_ID` (step_start → step_end; a one-shot step's call
  is its own span);
- tool calls: `execute_tool NAME`, from the end of the model call that asked
  for it to `tool_call_end`.

Every span carries `code.file.path` / `code.line.number` of its declaration
(the agent, step, tool, model or element). Message content (agent input, tool
arguments and results, the run's output) is recorded only when
OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true.

Usage is `gen_ai.usage.input_tokens` / `gen_ai.usage.output_tokens` on each
model call and on the run; what it cost in USD (the model's price, from
plait.lock or the spec) is `plait.cost_usd` on each priced model call, on
each agent (its calls, delegates' included) and on the run (the conventions
have no cost attribute yet).
"""

from __future__ import annotations

import json
import os
import re
import time
from dataclasses import dataclass, field
from typing import Any

from opentelemetry import trace
from opentelemetry.trace import Span, SpanKind, Status, StatusCode

from .program import RUNNABLE_TABLES, Program
from .events import Event
from .secret_values import mask

__all__ = ["CAPTURE_ENV", "Telemetry", "attach", "capture_content"]

CAPTURE_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
SCOPE = "plait"
#: USD a span's model calls cost (GenAI's conventions have no cost attribute).
COST = "plait.cost_usd"

#: plait provider names → the conventions' `gen_ai.provider.name` values; others pass through as they are.
PROVIDER_NAMES = {"google": "gcp.gemini"}

#: A delegated agent runs at the caller's path + `AGENT[CALL_ID]` (src/plait/runtime/steps/run_tools.py).
_DELEGATED = re.compile(r"(.+)\[(.+)\]")

#: The composition kinds (a span of their own, named by kind) and their Program tables.
_ELEMENT_KINDS = tuple((kind, table) for kind, table in RUNNABLE_TABLES if kind not in ("agent", "step", "ask"))


def capture_content(env: dict[str, str] | None = None) -> bool:
    value = (os.environ if env is None else env).get(CAPTURE_ENV, "")
    return value.strip().lower() == "true"


@dataclass(slots=True)
class _Open:
    span: Span
    #: When the last event under this span happened (ns): an element span ends there.
    last: int
    pending_tools: dict[str, tuple[str, int]] = field(default_factory=dict)


class Telemetry:
    """Event listener: opens and closes spans as the run's events arrive."""

    def __init__(self, tracer: trace.Tracer, program: Program, capture: bool = False) -> None:
        self.tracer = tracer
        self.program = program
        self.capture = capture
        #: Open spans by key: the graph path (elements, agents), ("chat", path) for model calls.
        self.open: dict[tuple[Any, ...], _Open] = {}
        self.root: _Open | None = None
        #: Where the last failure happened (an agent's or a map item's): a run error without a path came from there.
        self.failed: tuple[str, ...] | None = None
        self.kinds = {name: kind for kind, attr in _ELEMENT_KINDS for name in getattr(program, attr)}
        #: USD of the priced model calls made under each open agent span, by its path.
        self.costs: dict[tuple[str, ...], float] = {}

    # -- the listener -----------------------------------------------------------------------

    def __call__(self, event: Event) -> None:
        handler = getattr(self, f"_on_{event.type}", None)
        if handler is None:
            if self.root is not None:
                self._touch(event.path)
            return
        handler(event)

    def close(self, error: dict[str, Any] | None = None) -> None:
        """End every span still open (the run ended, or was cancelled before it could say so)."""
        where = (error.get("path") or self.failed) if error is not None else None
        if error is not None and where is None:  # a one-shot model call that never answered is where it failed
            where = next((key[1] for key in self.open if key[0] == "chat" and isinstance(key[1], tuple)), None)
        for key in sorted(self.open, key=lambda k: -len(_path(k))):
            entry = self.open.pop(key)
            path = _path(key)
            if error is not None and _within(path, where):
                _fail(entry.span, error.get("kind") or "internal", error.get("message"))
            end = entry.last if key is path and _is_element(key, self.kinds) else None
            entry.span.end(end_time=end)
        if self.root is not None:
            if error is not None:
                _fail(self.root.span, error.get("kind") or "internal", error.get("message"))
            self.root.span.end()
            self.root = None

    # -- run ------------------------------------------------------------------------------

    def _on_run_start(self, event: Event) -> None:
        entry = event.data.get("entry") or (event.path[0] if event.path else "")
        attrs: dict[str, Any] = {
            "gen_ai.operation.name": "invoke_workflow",
            "gen_ai.workflow.name": entry,
            "plait.run.id": event.data.get("run_id") or "",
        }
        attrs.update(self._where(entry))
        span = self.tracer.start_span(f"invoke_workflow {entry}", kind=SpanKind.INTERNAL, attributes=attrs)
        self.root = _Open(span, time.time_ns())

    def _on_run_end(self, event: Event) -> None:
        if self.root is None:
            return
        data = event.data
        span = self.root.span
        span.set_attribute("plait.stop_reason", str(data.get("stop_reason")))
        usage = data.get("usage") or {}
        for key, attr in (
            ("input_tokens", "gen_ai.usage.input_tokens"),
            ("output_tokens", "gen_ai.usage.output_tokens"),
        ):
            value = data.get(key, usage.get(key))
            if isinstance(value, int):
                span.set_attribute(attr, value)
        if data.get("model_calls", 0) > usage.get("unpriced_calls", 0) and usage.get("cost_usd") is not None:
            span.set_attribute(COST, float(usage["cost_usd"]))
        if self.capture and data.get("output") is not None:
            span.set_attribute("gen_ai.output.messages", _messages("assistant", data["output"]))
        self.close(data.get("error"))

    # -- agents ---------------------------------------------------------------------------

    def _on_agent_start(self, event: Event) -> None:
        agent = self.program.agents.get(event.agent or "")
        name = event.label or event.agent or "agent"
        attrs: dict[str, Any] = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": name}
        if agent is not None:
            if agent.description:
                attrs["gen_ai.agent.description"] = agent.description
            attrs.update(self._model_attrs(agent.model))
        if event.agent and event.agent != name:
            attrs["plait.agent"] = event.agent
        if event.source:
            attrs["plait.agent.source"] = event.source
        for key, value in (event.attributes or {}).items():
            attrs[str(key)] = _attr_value(value)
        attrs.update(self._where(event.agent))
        if self.capture and event.data.get("input") is not None:
            attrs["gen_ai.input.messages"] = _messages("user", event.data["input"])
        self._start(event.path, f"invoke_agent {name}", attrs, parent=self._delegation(event.path))
        self.costs[event.path] = 0.0

    def _on_agent_end(self, event: Event) -> None:
        chats = [k for k in self.open if k[0] == "chat" and k[1] == event.path]
        error = event.data.get("error")
        for key in chats:  # a model call the agent never got an answer to: it failed with the agent
            chat = self.open.pop(key)
            if error:
                _fail(chat.span, error.get("kind") or "internal", error.get("message"))
            chat.span.end()
        if error:
            self.failed = event.path
        entry = self.open.pop(event.path, None)
        if entry is None:
            return
        status = event.data.get("status")
        entry.span.set_attribute("plait.agent.status", str(status))
        cost = self.costs.pop(event.path, 0.0)
        if cost:
            entry.span.set_attribute(COST, cost)
        if error:
            _fail(entry.span, error.get("kind") or "internal", error.get("message"))
        entry.span.end()
        self._touch(event.path[:-1])

    # -- model calls ----------------------------------------------------------------------

    def _on_step_start(self, event: Event) -> None:
        model = self._agent_model(event.agent)
        config = self.program.models.get(model or "")
        model_id = config.model_id if config is not None else (model or "")
        attrs: dict[str, Any] = {"gen_ai.operation.name": "chat"}
        attrs.update(self._model_attrs(model))
        attrs.update(self._where(model if event.agent in self.program.agents else event.agent))
        if isinstance(event.data.get("step"), int):
            attrs["plait.step"] = event.data["step"]
        self._start(("chat", event.path), f"chat {model_id}", attrs, SpanKind.CLIENT)

    def _on_step_end(self, event: Event) -> None:
        key = ("chat", event.path)
        entry = self.open.pop(key, None)
        if entry is None:  # a path with no step_start (an observer's own call): nothing to close
            return
        data = event.data
        span = entry.span
        served = data.get("model")
        if served and served != self._agent_model(event.agent):  # a fallback answered: name what served
            span.set_attributes(self._model_attrs(served))
            if event.agent in self.program.agents:
                span.set_attributes(self._where(served))
        request_model = data.get("request_model") or span_attr(self.program, served)
        if request_model:
            span.update_name(f"chat {request_model}")
            span.set_attribute("gen_ai.request.model", request_model)
        if data.get("response_model"):
            span.set_attribute("gen_ai.response.model", data["response_model"])
        if isinstance(data.get("input_tokens"), int):
            span.set_attribute("gen_ai.usage.input_tokens", data["input_tokens"])
        if isinstance(data.get("output_tokens"), int):
            span.set_attribute("gen_ai.usage.output_tokens", data["output_tokens"])
        cost = data.get("cost_usd")
        if isinstance(cost, int | float):
            span.set_attribute(COST, float(cost))
            # Every agent span open above this call (a delegate's caller too) counts it.
            for path in self.costs:
                if event.path[: len(path)] == path:
                    self.costs[path] += cost
        if data.get("finish_reason"):
            span.set_attribute("gen_ai.response.finish_reasons", [str(data["finish_reason"])])
        span.end()
        now = time.time_ns()
        # A tool call asked for in this reply starts running now.
        agent = self.open.get(event.path)
        if agent is not None:
            agent.pending_tools = {cid: (name, now) for cid, (name, _) in agent.pending_tools.items()}
        self._touch(event.path)

    # -- tool calls -----------------------------------------------------------------------

    def _on_tool_call_start(self, event: Event) -> None:
        agent = self.open.get(event.path)
        call_id = event.data.get("call_id")
        if agent is not None and call_id is not None:
            agent.pending_tools[str(call_id)] = (str(event.data.get("name")), time.time_ns())
            if self.capture and event.data.get("arguments") is not None:
                agent.pending_tools[f"{call_id}#arguments"] = (_json(event.data["arguments"]), 0)

    def _on_tool_call_end(self, event: Event) -> None:
        data = event.data
        call_id = str(data.get("call_id"))
        name = str(data.get("name"))
        agent = self.open.get(event.path)
        started = time.time_ns()
        arguments = None
        if agent is not None:
            started = agent.pending_tools.pop(call_id, (name, started))[1]
            arguments = agent.pending_tools.pop(f"{call_id}#arguments", (None, 0))[0]
        attrs = self._tool_attrs(name, call_id)
        if self.capture:
            if arguments is not None:
                attrs["gen_ai.tool.call.arguments"] = arguments
            if data.get("content") is not None:
                attrs["gen_ai.tool.call.result"] = str(data["content"])
        delegated = self.open.pop(("tool", event.path, call_id), None)  # opened when the delegated agent started
        if delegated is not None:
            span = delegated.span
            span.set_attributes(attrs)
        else:
            parent = agent.span if agent is not None else self._parent(event.path)
            span = self.tracer.start_span(
                f"execute_tool {name}",
                context=trace.set_span_in_context(parent),
                kind=SpanKind.INTERNAL,
                attributes=attrs,
                start_time=started,
            )
        if data.get("is_error"):
            _fail(span, "tool_error", None)
        span.end()
        self._touch(event.path)

    def _tool_attrs(self, name: str, call_id: str) -> dict[str, Any]:
        tool = self.program.tools.get(name)
        declared = name
        if tool is None and self.program.mcp:
            # An MCP tool is keyed "SERVER.TOOL" and called by its own name; it links to its server's declaration.
            tool = next((t for t in self.program.tools.values() if t.name == name and t.run.get("type") == "mcp"), None)
            declared = tool.run["server"] if tool is not None else name
        attrs: dict[str, Any] = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": name,
            "gen_ai.tool.call.id": call_id,
            "gen_ai.tool.type": "function",
        }
        if tool is not None and tool.description:
            attrs["gen_ai.tool.description"] = tool.description
        elif name in self.program.agents and self.program.agents[name].description:
            attrs["gen_ai.tool.description"] = self.program.agents[name].description
        attrs.update(self._where(declared))
        return attrs

    def _delegation(self, path: tuple[str, ...]) -> Span | None:
        """For an agent called as a tool: the `execute_tool` span of that call, opened now, its parent."""
        found = _DELEGATED.fullmatch(path[-1]) if path else None
        caller = self.open.get(path[:-1]) if found else None
        if found is None or caller is None:
            return None
        name, call_id = found.group(1), found.group(2)
        started = caller.pending_tools.get(call_id, (name, time.time_ns()))[1]
        span = self.tracer.start_span(
            f"execute_tool {name}",
            context=trace.set_span_in_context(caller.span),
            kind=SpanKind.INTERNAL,
            attributes=self._tool_attrs(name, call_id),
            start_time=started,
        )
        self.open[("tool", path[:-1], call_id)] = _Open(span, started)
        return span

    # -- control flow ---------------------------------------------------------------------

    def _on_route(self, event: Event) -> None:
        entry = self._element(event.path)
        if entry is not None:
            entry.span.set_attribute("plait.route.case", str(event.data.get("case")))
            if event.data.get("leaves"):  # a case that goes to `break` (plait 0.3): the loop it leaves
                entry.span.set_attribute("plait.route.leaves", str(event.data["leaves"]))
            else:
                entry.span.set_attribute("plait.route.target", str(event.data.get("target")))
        self._touch(event.path)

    def _on_loop_iteration(self, event: Event) -> None:
        entry = self._element(event.path)
        if entry is not None and isinstance(event.data.get("iteration"), int):
            entry.span.set_attribute("plait.loop.iterations", event.data["iteration"])
            if event.data.get("exit") == "break":  # left by a route case, not by its condition or its bound
                entry.span.set_attribute("plait.loop.exit", "break")
        self._touch(event.path)

    def _on_map_item(self, event: Event) -> None:
        entry = self._element(event.path)
        if entry is not None and event.data.get("status") == "error":
            # Not an error of the map's yet: with `on_error = collect` it goes on. The run's error marks it if it fails.
            self.failed = event.path
        self._touch(event.path)

    # -- helpers --------------------------------------------------------------------------

    def _start(
        self,
        key: tuple[Any, ...],
        name: str,
        attrs: dict[str, Any],
        kind: SpanKind = SpanKind.INTERNAL,
        parent: Span | None = None,
    ) -> None:
        path = _path(key)
        if parent is None:
            parent = self._parent(path if key is not path else path[:-1])
        span = self.tracer.start_span(name, context=trace.set_span_in_context(parent), kind=kind, attributes=attrs)
        self.open[key] = _Open(span, time.time_ns())
        self._touch(path)

    def _parent(self, path: tuple[str, ...]) -> Span:
        """The innermost open span at `path` or above it, opening element spans on the way down."""
        parent = self.root.span if self.root is not None else trace.INVALID_SPAN
        for i in range(1, len(path) + 1):
            key = path[:i]
            entry = self.open.get(key)
            if entry is None and self.kinds.get(key[-1]) is not None:
                entry = self._open_element(key, parent)
            if entry is not None:
                parent = entry.span
        return parent

    def _open_element(self, key: tuple[str, ...], parent: Span) -> _Open:
        name = key[-1]
        kind = self.kinds[name]
        attrs: dict[str, Any] = {"plait.element.kind": kind, "plait.element.name": name}
        attrs.update(self._where(name))
        span = self.tracer.start_span(
            f"{kind} {name}", context=trace.set_span_in_context(parent), kind=SpanKind.INTERNAL, attributes=attrs
        )
        entry = self.open[key] = _Open(span, time.time_ns())
        return entry

    def _element(self, path: tuple[str, ...]) -> _Open | None:
        self._parent(path)
        return self.open.get(path)

    def _touch(self, path: tuple[str, ...]) -> None:
        now = time.time_ns()
        for i in range(1, len(path) + 1):
            entry = self.open.get(path[:i])
            if entry is not None:
                entry.last = now

    def _agent_model(self, name: str | None) -> str | None:
        if name in self.program.agents:
            return self.program.agents[name].model
        if name in self.program.steps:
            return self.program.steps[name].model
        return None

    def _model_attrs(self, model: str | None) -> dict[str, Any]:
        config = self.program.models.get(model or "")
        if config is None:
            return {}
        return {
            "gen_ai.provider.name": PROVIDER_NAMES.get(config.provider, config.provider),
            "gen_ai.request.model": config.model_id,
            "plait.model": config.name,
        }

    def _where(self, name: str | None) -> dict[str, Any]:
        where = self.program.locations.get(name or "")
        if where is None:
            return {}
        file, line = where
        # The conventions prefer an absolute path; "<string>" (spec text given in code) stays as it is.
        return {"code.file.path": file if file.startswith("<") else os.path.abspath(file), "code.line.number": line}


def span_attr(program: Program, model: str | None) -> str | None:
    config = program.models.get(model or "")
    return config.model_id if config is not None else None


def attach(run: Any, tracer_provider: Any | None = None, capture: bool | None = None) -> Telemetry:
    """Trace `run` (an engine's started or restored Run): its spans go to `tracer_provider` (default: the global one)."""
    from plait import __version__

    tracer = trace.get_tracer(SCOPE, __version__, tracer_provider=tracer_provider)
    telemetry = Telemetry(tracer, run.ctx.program, capture_content() if capture is None else capture)
    run.ctx.bus.listen(telemetry)
    return telemetry


def _path(key: tuple[Any, ...]) -> tuple[str, ...]:
    """The graph path of an open span's key: the key itself, or its second item for ("chat"|"tool", path, ...)."""
    return key[1] if len(key) > 1 and isinstance(key[1], tuple) else key


def _is_element(key: tuple[Any, ...], kinds: dict[str, str]) -> bool:
    return bool(key) and isinstance(key[-1], str) and key[-1] in kinds


def _within(path: tuple[str, ...], error_path: Any) -> bool:
    if not error_path:
        return False
    return tuple(error_path[: len(path)]) == tuple(path)


def _fail(span: Span, kind: str, message: str | None) -> None:
    span.set_status(Status(StatusCode.ERROR, None if message is None else mask(message)))
    span.set_attribute("error.type", kind)


def _attr_value(value: Any) -> Any:
    if isinstance(value, (str, bool, int, float)):
        return value
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return list(value)
    return _json(value)


def _json(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, default=str, ensure_ascii=False)


def _messages(role: str, content: Any) -> str:
    """The conventions' message list (JSON text on a span): one message with one text part."""
    text = content if isinstance(content, str) else json.dumps(content, default=str, ensure_ascii=False)
    return json.dumps([{"role": role, "parts": [{"type": "text", "content": text}]}], ensure_ascii=False)
