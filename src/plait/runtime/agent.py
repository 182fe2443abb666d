"""An agent and its input → the agent loop's outcome; and the stateful `Agent` object.

`run_agent` starts (or resumes) one agent's run at a graph path and drives
`run_turn` until a terminal outcome. Its first user message is its `prompt`
template filled from its input, or without one the input itself (a record as
its JSON). Before the first request of every run the
history is repaired (unanswered tool calls get a synthetic result). `Agent`
keeps its conversation across `complete(prompt)` / `stream(prompt)` turns, can
be snapshot to JSON and restored, and takes tools and system-prompt layers
added in code. An agent with a `thread` keeps the thread instead: each turn
starts from the thread's messages and leaves its turn there when it finishes,
cut to the thread's `keep_last`, as a run's turns do (docs/decisions.md).
"""

from __future__ import annotations

from typing import Any, AsyncIterator, Callable

from plait.core.kinds import AgentNode, ToolNode

from .context import AgentRun, RunContext
from .events import Event
from .function_tool import FunctionTool
from .history import ContextRegistry, from_json, repair, to_json
from .outcomes import CONTINUE, Decision, Done, Fail, Interrupt, Outcome, Pause
from .pipeline import run_turn
from .providers.base import Message
from .budget import Ledger, raise_budget
from .report import Report, RunResult
from .stepping import iterate
from .templates import as_text, render
from .threads import history_of, leave

__all__ = ["Agent", "drive", "run_agent"]

_STATUS = {Done: "done", Interrupt: "interrupted", Pause: "paused", Fail: "error"}


def new_run(ctx: RunContext, agent: AgentNode, path: tuple[str, ...], branch: str | None) -> AgentRun:
    key = "/".join(path)
    run = AgentRun(agent, path, key, ctx.toolset(agent), ctx.context_for(agent), branch=branch)
    ctx.runs[key] = run
    return run


def _repair(run: AgentRun, ctx: RunContext) -> None:
    repaired = repair(run.messages)
    if repaired:
        names = ", ".join(f"`{n}`" for n in repaired)
        ctx.warn(
            "unanswered_tool_calls_repaired",
            f"agent `{run.agent.name}`: answered {len(repaired)} unanswered tool call(s) ({names}) with a synthetic result",
            run.path,
            run.agent,
            tools=repaired,
        )


def begin(run: AgentRun, ctx: RunContext, prompt: str, input: Any = None) -> None:
    """A new run of this agent: repair what an earlier run left open, then the user's message.

    `input` is what the agent received (what `{{input}}` in its `system` reads); the message itself by default."""
    if run.messages:
        _repair(run, ctx)
    run.messages.append(Message.user(prompt))
    run.input = prompt if input is None else input
    run.steps = 0
    run.status = "running"
    run.resume_at = None
    run.response = None
    run.results = {}
    run.outcomes = []
    if ctx.bus.active:
        ctx.emit("agent_start", run.path, run.agent, input=prompt)


async def drive(run: AgentRun, ctx: RunContext) -> Outcome:
    start = run.resume_at if run.status in ("interrupted", "paused") else None
    run.status = "running"
    try:
        outcome = await run_turn(run, ctx, start)
        while outcome is CONTINUE:
            outcome = await run_turn(run, ctx)
    except Exception as exc:  # provider failures and internal errors end the run as data
        outcome = Fail(exc)
    run.status = _STATUS[type(outcome)]
    if run.hosted and isinstance(outcome, Done):
        outcome.hosted = dict(run.hosted)  # `{{TOOL.citations}}` reads them once the agent is done
    if isinstance(outcome, Pause) and ctx.bus.active:
        ctx.emit("pause", run.path, run.agent, reason=outcome.reason)
    if ctx.bus.active:
        if isinstance(outcome, Fail):  # telemetry marks the agent's span with the error kind
            from .errors import error_info

            ctx.emit("agent_end", run.path, run.agent, status=run.status, error=error_info(outcome.error))
        else:
            ctx.emit("agent_end", run.path, run.agent, status=run.status)
    return outcome


async def run_agent(
    ctx: RunContext, agent: AgentNode, input: Any, path: tuple[str, ...], branch: str | None = None
) -> Outcome:
    run = ctx.runs.get("/".join(path))
    if run is None or run.status == "done":
        run = new_run(ctx, agent, path, branch)
        _join_thread(run, ctx)
        if agent.prompt is None:  # its input is its first message: text as it is, a record as JSON
            begin(run, ctx, as_text(input))
        else:
            message = render(agent.prompt, input=input, state=ctx.state, scope=ctx.scope)
            begin(run, ctx, message, input)
    elif run.status in ("error", "running"):
        # A run that failed, or was cut off (Ctrl-C) mid-turn, resumes from the start of that turn;
        # calls it left unanswered get a synthetic result first, as before any request.
        run.response, run.results, run.outcomes = None, {}, []
        _repair(run, ctx)
    outcome = await drive(run, ctx)
    _leave_thread(run, ctx, outcome)
    return outcome


def _join_thread(run: AgentRun, ctx: RunContext) -> None:
    """A turn of an agent with a `thread` starts from the thread's conversation so far (threads.py), not from
    what its earlier turns left behind."""
    if run.agent.thread is not None:
        run.messages = history_of(ctx, run.agent.thread, run.toolset.tools)
        run.thread_from = len(run.messages)


def _leave_thread(run: AgentRun, ctx: RunContext, outcome: Outcome) -> None:
    """Only a finished turn is added to its thread: one that stops for a person or fails leaves it as it was."""
    if run.agent.thread is not None and isinstance(outcome, Done):
        leave(ctx, run.agent.thread, run.path, run.agent.name, run.messages[run.thread_from :])


class Agent:
    """A stateful agent: history persists across turns; `last_report` describes the latest turn.

    The agent's `budget` and the conversation's own (`budget={"usd": 1}`) cover the whole conversation, every
    turn's calls together: a call that would go over pauses the turn (`raise_budget`, then `resume({})` goes on)
    or fails it."""

    def __init__(self, ctx: RunContext, name: str, budget: dict[str, Any] | None = None) -> None:
        self.ctx = ctx
        self.config = ctx.program.agents[name]
        self._run = new_run(ctx, self.config, (name,), None)
        # Its own layers: what code adds to one conversation (a user profile) stays in it.
        self._run.system = ContextRegistry(self.config.system)
        self.last_report: Report | None = None
        self.last_result: RunResult | None = None
        #: What the conversation has spent against its budgets, kept across turns (each turn's report shows it).
        self.ledger: Ledger | None = None
        if self.config.budget is not None or budget:
            self.ledger = Ledger()
            if self.config.budget is not None:
                self.ledger.open((name,), name, self.config.budget)
            if budget:
                self.ledger.add_raise("", name, budget, new=False)

    @property
    def name(self) -> str:
        return self.config.name

    @property
    def model(self) -> str:
        """The configured primary; each step's history entry names the model that actually served."""
        return self.config.model

    @property
    def history(self) -> list[Message]:
        return self._run.messages

    @property
    def context(self):
        """The layered system prompt: `agent.context.set("facts", "...")` adds a layer."""
        return self._run.system

    def add_tool(
        self,
        fn: Callable[..., Any] | ToolNode,
        *,
        name: str | None = None,
        description: str = "",
        parameters: dict[str, Any] | None = None,
        policy: str = "warn",
    ) -> None:
        """Register a tool in code; a taken name warns (`tool_name_collision`, last wins) or, with policy="error", raises."""
        tool = (
            fn
            if isinstance(fn, ToolNode)
            else FunctionTool(
                name=name or fn.__name__,
                description=description or (fn.__doc__ or "").strip(),
                parameters=parameters or {"type": "object", "properties": {}},
                run={"type": "function"},
                fn=fn,
            )
        )
        self.ctx.register_tool(tool, policy)
        self._run.toolset = self.ctx.toolset(self.config)

    def observe(self, event: str, reactor: Callable[[Event], Any] | str) -> None:
        self.ctx.bus.observe(event, reactor)

    async def complete(self, prompt: str) -> RunResult:
        """One conversation turn, tool loop included. Provider failures raise, with `.report` attached."""
        self.ctx.report = Report()
        self.ctx.report.budget = self.ledger
        self.ctx.decisions = {}
        _join_thread(self._run, self.ctx)
        begin(self._run, self.ctx, prompt)
        return await self._finish(await drive(self._run, self.ctx))

    async def resume(self, decisions: dict[str, Decision | str | dict[str, Any]]) -> RunResult:
        """Continue a turn that stopped for a human (or a pause) with a decision per pending call."""
        self.ctx.decisions.update({k: Decision.of(v) for k, v in decisions.items()})
        return await self._finish(await drive(self._run, self.ctx))

    def raise_budget(self, items: dict[str, Any]) -> None:
        """New limits (`{"usd": 5}`) for the budget the last turn stopped on, else the conversation's own; the turn
        goes on with `resume({})`. ValueError when an item is bad."""
        raise_budget(self.ctx, items, self.name, None)
        self.ledger = self.ctx.report.budget
        if self.ledger is not None:
            self.ledger.pending.clear()  # no journal to write them to: the snapshot keeps the limits

    async def stream(self, prompt: str) -> AsyncIterator[Event]:
        """Events of one turn as they happen (text deltas, tool_call_delta, ...), ending with `run_end`."""
        self.ctx.stream = True
        holder: list[RunResult] = []

        async def turn() -> None:
            holder.append(await self.complete(prompt))

        try:
            async for event in iterate(self.ctx.bus, turn):
                yield event
        finally:
            self.ctx.stream = False
        if holder:
            yield Event("run_end", self._run.path, holder[0].to_dict(), self.name)

    def snapshot(self) -> dict[str, Any]:
        """The conversation as JSON; `Agent.restore(snapshot, ...)` continues it identically."""
        return {
            "version": 1,
            "agent": self.name,
            "run": self._run.to_json(),
            "state": self.ctx.state,
            "providers": self.ctx.provider_snapshots(),
            "budget": self.ledger.to_json() if self.ledger is not None else None,
            "threads": {name: to_json(messages) for name, messages in self.ctx.threads.items()},
        }

    @classmethod
    def restore(cls, snapshot: dict[str, Any], ctx: RunContext) -> "Agent":
        agent = cls(ctx, snapshot["agent"])
        run = ctx.agent_run_from_json(agent._run.key, snapshot["run"])
        run.system = agent._run.system
        ctx.runs[run.key] = agent._run = run
        ctx.state.update(snapshot.get("state", {}))
        ctx.restore_providers(snapshot.get("providers", {}))
        ctx.threads.update({name: from_json(m) for name, m in snapshot.get("threads", {}).items()})
        spent = Ledger.from_json(snapshot.get("budget"))
        if spent is not None:  # what the conversation spent, under the limits it had (raises included)
            agent.ledger = spent
        return agent

    async def _finish(self, outcome: Outcome) -> RunResult:
        _leave_thread(self._run, self.ctx, outcome)
        await self.ctx.bus.drain()
        await self.ctx.close_mcp()  # each turn starts the MCP servers it calls and stops them
        result = RunResult(outcome, self.ctx.report)
        self.last_report = self.ctx.report
        self.last_result = result
        if result.error is not None:
            result.error.report = result.to_dict()  # type: ignore[attr-defined]
            raise result.error
        return result
