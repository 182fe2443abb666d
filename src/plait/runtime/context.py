"""One run's shared state → what every step reads: configs, providers, tools, events, records.

`RunContext` is per run (shared by nested agents and branches); `AgentRun` is
one agent's conversation at one graph path. Both snapshot to JSON so a run can
be stored, restored and resumed; completed runnables are memoised by path so a
resume replays nothing that already finished.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial
from typing import Any, Awaitable, Callable

from plait.core.kinds import AgentNode, ToolNode

from .program import Program
from .errors import AgentError, ToolNameCollision
from .events import Event, EventBus
from .history import ContextRegistry, from_json, to_json
from .outcomes import Decision, Done
from .providers.base import Message, ModelResponse, Provider, ToolCall, ToolSpec
from .report import Report
from .scope import lookup
from .tools import ToolOutcome, ToolRunner

__all__ = ["AgentRun", "RunContext", "Toolset"]


@dataclass(slots=True)
class Toolset:
    """What one agent can call, resolved once per agent and shared by its runs."""

    tools: dict[str, ToolNode]
    specs: list[ToolSpec]
    #: Tool names this agent must get approval for (the tool's own flag or the agent's list).
    approval: frozenset[str]
    #: Its hosted tools (`run = hosted(...)`), by name: the provider runs them, so they are no function tools.
    hosted: dict[str, dict[str, Any]] = field(default_factory=dict)


@dataclass(slots=True)
class AgentRun:
    agent: AgentNode
    path: tuple[str, ...]
    key: str
    toolset: Toolset
    system: ContextRegistry
    messages: list[Message] = field(default_factory=list)
    branch: str | None = None
    #: Model calls made in this run (what max_steps bounds).
    steps: int = 0
    #: Consecutive malformed turns (reflect and retry).
    streak: int = 0
    #: Messages a tool asked to deliver on the next model call.
    expand: list[Message] = field(default_factory=list)
    #: This turn: the model's response, and tool outcomes by call id (kept across a resume).
    response: ModelResponse | None = None
    results: dict[str, ToolOutcome] = field(default_factory=dict)
    outcomes: list[tuple[ToolCall, ToolOutcome]] = field(default_factory=list)
    #: "running", "interrupted", "paused", "done", "error".
    status: str = "running"
    #: The name of the turn step a stopped run picks up at (None: the start of a turn).
    resume_at: str | None = None
    #: The text this run was started with: what `{{input}}` in the agent's `system` reads.
    input: str = ""
    #: What its hosted tools reported in this run, by tool name (kept across a resume).
    hosted: dict[str, Any] = field(default_factory=dict)
    #: How many of `messages` came from its thread (plait 0.3) before this run's turn.
    thread_from: int = 0

    def to_json(self) -> dict[str, Any]:
        response = self.response
        return {
            "agent": self.agent.name,
            "path": list(self.path),
            "branch": self.branch,
            "messages": to_json(self.messages),
            "steps": self.steps,
            "streak": self.streak,
            "expand": to_json(self.expand),
            "finish_reason": response.finish_reason if response else None,
            "results": {
                cid: {
                    "content": o.content,
                    "is_error": o.is_error,
                    "state": o.state,
                    "expand": to_json(o.expand) if o.expand else None,
                }
                for cid, o in self.results.items()
            },
            "status": self.status,
            "resume_at": self.resume_at,
            "input": self.input,
            **({"hosted": self.hosted} if self.hosted else {}),
            "thread_from": self.thread_from,
        }


class RunContext:
    """Everything shared by one run."""

    def __init__(
        self,
        program: Program,
        *,
        providers: dict[str, Provider] | None = None,
        bus: EventBus | None = None,
        should_pause: Callable[[], Any] | None = None,
        tools: ToolRunner | None = None,
        extra_tools: dict[str, ToolNode] | None = None,
        contexts: dict[str, ContextRegistry] | None = None,
        make_provider: Callable[[str], Provider] | None = None,
        toolsets: dict[str, Toolset] | None = None,
        run: Callable[..., Awaitable[Any]] | None = None,
    ) -> None:
        self.program = program
        #: How this run runs a runnable by name, (ctx, name, input, path, branch) → outcome: compose.run_runnable,
        #: handed in by whoever starts the run, so a step below compose (a delegated agent's tool call) reaches it
        #: without importing compose, which imports the steps.
        self.run_runnable = run
        self.providers: dict[str, Provider] = providers if providers is not None else {}
        self.bus = bus or EventBus()
        self.should_pause = should_pause
        self.tools = tools or ToolRunner()
        self.extra_tools = extra_tools or {}
        self.contexts = contexts if contexts is not None else {}
        self.report = Report()
        #: Declared keys start out null, so `{{state.key}}` before any write renders empty.
        self.state: dict[str, Any] = dict.fromkeys((program.state or {}).get("properties", ()))
        self.runs: dict[str, AgentRun] = {}
        self.results: dict[str, Done] = {}
        self.decisions: dict[str, Decision] = {}
        #: The run's (validated) input: what `{{run.input}}` reads.
        self.run_input: Any = None
        #: Finished runnables' outputs by name outside any map item: what `{{NAME}}` reads (rebuilt on resume).
        self.outputs: dict[str, Any] = {}
        #: Where each unfinished route, loop and map stands, by graph path: what a resume picks up from.
        self.progress: dict[str, dict[str, Any]] = {}
        #: Answers to `ask`s, by pending id (the ask's graph path).
        self.answers: dict[str, Any] = {}
        #: Each thread's messages by name (plait 0.3, src/plait/runtime/threads.py).
        self.threads: dict[str, list[Message]] = {}
        #: Template lookups of `run`, `loop`, `map` and earlier outputs, bound once per run.
        self.scope: Callable[[str], Any] = partial(lookup, self)
        self.stream = False
        #: The run's journal (src/plait/runtime/store/), or None: where model and tool calls are recorded and replayed.
        self.journal: Any = None
        #: Shared by an engine's runs; a context that registers its own tools gets a private one.
        self._toolsets: dict[str, Toolset] = toolsets if toolsets is not None else {}
        self._make_provider = make_provider
        #: This run's views of providers that keep state per run (`for_run`), by model name.
        self._own_providers: dict[str, Provider] = {}
        #: The run's MCP servers (src/plait/runtime/mcp/McpPool), made at the first MCP call; `close_mcp` stops them.
        self.mcp: Any = None

    # -- lookups ---------------------------------------------------------------------

    def provider(self, model: str) -> Provider:
        provider = self.providers.get(model)
        if provider is None:
            config = self.program.models.get(model)
            if config is None:
                raise AgentError("unknown_model", f"model `{model}` is not declared")
            if self._make_provider is not None:
                provider = self._make_provider(model)
            else:
                from .providers import make_provider

                provider = make_provider(config)
            self.providers[model] = provider
        for_run = getattr(provider, "for_run", None)
        if for_run is None:
            return provider
        # A provider with per-run state (the scripted one's reply cursors) gives each run its own view of itself.
        own = self._own_providers.get(model)
        if own is None:
            own = self._own_providers[model] = for_run(journaled=self.journal is not None)
        return own

    def mcp_pool(self) -> Any:
        if self.mcp is None:
            from .mcp import McpPool

            self.mcp = McpPool(self.program.mcp, self.warn)
        return self.mcp

    async def close_mcp(self) -> None:
        """Stop the MCP servers this run started (a resumed run starts them again on first use)."""
        pool, self.mcp = self.mcp, None
        if pool is not None:
            await pool.aclose()

    def context_for(self, agent: AgentNode) -> ContextRegistry:
        registry = self.contexts.get(agent.name)
        if registry is None:
            registry = self.contexts[agent.name] = ContextRegistry(agent.system)
        return registry

    def toolset(self, agent: AgentNode) -> Toolset:
        toolset = self._toolsets.get(agent.name)
        if toolset is None:
            toolset = self._toolsets[agent.name] = self._resolve_tools(agent)
        return toolset

    def _resolve_tools(self, agent: AgentNode) -> Toolset:
        program = self.program
        tools: dict[str, ToolNode] = {}
        hosted: dict[str, dict[str, Any]] = {}
        for name in agent.tools:
            if name in program.tools and program.tools[name].run.get("type") == "hosted":
                hosted[name] = program.tools[name].run  # sent as the provider's own tool (providers/hosted.py)
            elif name in program.tools:
                tool = program.tools[name]
                tools[tool.name] = tool  # an MCP tool is keyed "SERVER.TOOL" and called by its own name
            elif name in program.agents:
                child = program.agents[name]
                tools[name] = ToolNode(
                    name=name,
                    description=child.description or f"Delegate a task to agent `{name}`.",
                    parameters={
                        "type": "object",
                        "properties": {"task": {"type": "string", "description": "The task for the agent."}},
                        "required": ["task"],
                    },
                    run={"type": "agent", "agent": name},
                )
            elif name in program.mcp:
                # program_from_graph leaves a server here only when plait.lock has no current entry for it.
                from .mcp.toolset import lock_command

                server = program.mcp[name]
                raise AgentError(
                    "mcp_lock_missing",
                    f"agent `{agent.name}` uses MCP server `{name}`, whose tools are not in a current plait.lock "
                    f"({server.lock_state}): run `{lock_command(server)}` first",
                )
            else:
                raise AgentError(
                    "unknown_tool", f"agent `{agent.name}` uses `{name}`, which is neither a tool nor an agent"
                )
        if agent.handoff:  # `transfer_to_NAME` per hand-off target (plait 0.3)
            from .handoff_tools import handoff_tools

            tools.update(handoff_tools(self, agent))
        for name, tool in self.extra_tools.items():
            tools[name] = tool
        approval = frozenset(n for n, t in tools.items() if t.approval) | frozenset(agent.approval)
        specs = [ToolSpec(t.name, t.description, t.parameters) for t in tools.values()]
        return Toolset(tools, specs, approval, hosted)

    def register_tool(self, tool: ToolNode, policy: str = "warn") -> None:
        """A tool added in code; a name that is already taken follows `policy` (warn: last wins)."""
        taken = tool.name in self.extra_tools or tool.name in self.program.tools or tool.name in self.program.agents
        if taken:
            message = f"tool `{tool.name}` is registered twice; the earlier one is replaced and the model never sees it"
            if policy == "error":
                raise ToolNameCollision(message)
            self.warn("tool_name_collision", message, (), tool=tool.name)
        self.extra_tools[tool.name] = tool
        self._toolsets = {}

    # -- records and events ----------------------------------------------------------

    def warn(
        self, code: str, message: str, path: tuple[str, ...], agent: AgentNode | None = None, /, **details: Any
    ) -> None:
        self.report.warn(code, message, path, **details)
        if self.bus.active:
            self.emit("warning", path, agent, code=code, message=message, details=details)

    def decide(self, kind: str, name: str, path: tuple[str, ...] | list[str], key: str, /, **details: Any) -> None:
        """Record what control flow decided (route case, loop iteration, map item, ask answer): report and journal.

        A resume walks again through what an earlier attempt decided (an ask answered before the run stopped at
        the next one): the same decision at the same place is already in the journal, so it gets no second row.
        """
        journal = self.journal
        if journal is not None:
            recorded = journal.decision(kind, key)
            if recorded is not None and recorded == {"kind": kind, "name": name, "path": list(path), **details}:
                self.report.decisions.append(recorded)
                return
        decision = self.report.decide(kind, name, path, **details)
        if journal is not None:
            journal.record_decision(kind, decision, key)

    def emit(self, type: str, path: tuple[str, ...], agent: AgentNode | None = None, /, **data: Any) -> None:
        if agent is None:
            self.bus.emit(Event(type, path, data))
        else:
            self.bus.emit(Event(type, path, data, agent.name, agent.label, agent.source, agent.attributes or None))

    # -- snapshot --------------------------------------------------------------------

    def provider_snapshots(self) -> dict[str, Any]:
        """Providers with replayable state (the scripted provider's cursors), so a restored run reads the same replies."""
        snapshots = {}
        for name, provider in self.providers.items():
            own = self._own_providers.get(name)
            if own is None and hasattr(provider, "for_run"):
                continue  # kept per run and not called by this one: the shared state is other runs'
            snapshot = getattr(own or provider, "snapshot", None)
            if snapshot is not None:
                snapshots[name] = snapshot()
        return snapshots

    def restore_providers(self, snapshots: dict[str, Any]) -> None:
        for name, snap in snapshots.items():
            restore = getattr(self.provider(name), "restore", None)
            if restore is not None:
                restore(snap)

    def to_json(self) -> dict[str, Any]:
        return {
            "state": self.state,
            "runs": {key: run.to_json() for key, run in self.runs.items()},
            "results": {key: done_to_json(d) for key, d in self.results.items()},
            "progress": self.progress,
            "answers": self.answers,
            "threads": {name: to_json(messages) for name, messages in self.threads.items()},
            "providers": self.provider_snapshots(),
            "report": self.report.to_dict(),
        }

    def load_json(self, data: dict[str, Any]) -> None:
        self.state = dict(data.get("state", {}))
        self.results = {key: done_from_json(d) for key, d in data.get("results", {}).items()}
        self.progress = {key: dict(p) for key, p in data.get("progress", {}).items()}
        self.answers = dict(data.get("answers", {}))
        self.threads = {name: from_json(m) for name, m in data.get("threads", {}).items()}
        self.report = Report.from_dict(data.get("report", {}))
        self.restore_providers(data.get("providers", {}))
        for key, d in data.get("runs", {}).items():
            self.runs[key] = self.agent_run_from_json(key, d)

    def agent_run_from_json(self, key: str, d: dict[str, Any]) -> AgentRun:
        agent = self.program.agents[d["agent"]]
        run = AgentRun(
            agent,
            tuple(d["path"]),
            key,
            self.toolset(agent),
            self.context_for(agent),
            from_json(d["messages"]),
            d.get("branch"),
        )
        run.steps, run.streak, run.status, run.resume_at = d["steps"], d["streak"], d["status"], d.get("resume_at")
        run.expand = from_json(d.get("expand", []))
        run.input = d.get("input", "")
        run.hosted = d.get("hosted") or {}
        run.thread_from = d.get("thread_from", 0)
        if d.get("finish_reason") and run.messages and run.messages[-1].role == "assistant":
            run.response = ModelResponse(run.messages[-1], d["finish_reason"], model=run.messages[-1].model)
        for cid, o in d.get("results", {}).items():
            run.results[cid] = ToolOutcome(
                o["content"],
                o["is_error"],
                o.get("state"),
                from_json(o["expand"]) if o.get("expand") else None,
                o["content"],
            )
        return run


def done_to_json(done: Done) -> dict[str, Any]:
    return {
        "output": done.output,
        "reason": done.reason,
        "until_result": done.until_result,
        "finish_reason": done.finish_reason,
        **({"hosted": done.hosted} if done.hosted else {}),
    }


def done_from_json(d: dict[str, Any]) -> Done:
    return Done(d["output"], d["reason"], d.get("until_result"), d.get("finish_reason"), d.get("hosted"))
