"""A compiled spec (its graph) and an input → a `Run`: awaitable, steppable, resumable, stored.

`Engine.from_graph(graph)` adapts the compiled `AgentGraph` once; each `start`
makes a fresh run context (providers are shared, so a scripted model's replies
are consumed in order across the engine's runs). A run is saved to the store at
every stop, so an interrupted or failed run can be inspected and resumed.

With a journal (`store`, the project's `.plait/journal.db`, on for every spec
loaded from a file; or a store URL, `store="postgresql://..."`) a run is
admitted before its first step and every model call, tool call, decision and
stop is a row (src/plait/runtime/store/); `restore(run_id)`
replays it, so a run killed at any point resumes without redoing what finished.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any, AsyncIterator, Callable

from plait.core.budget import Budget

from .agent import Agent
from .ask import accept_answers
from .budget import raise_budget, settle, start_budget
from .compose import run_runnable
from .program import Program, program_from_graph
from .context import RunContext
from .errors import AgentError
from .gc_scope import relaxed_gc
from .events import Event, EventBus
from .history import ContextRegistry
from .inputs import check_input
from .outcomes import Decision, Fail
from .providers.base import Provider
from .report import RunResult
from .stepping import iterate
from .store import SNAPSHOT_VERSION, Journal, lifecycle, open_store
from .store.base import input_too_large
from plait.core.defaults import MAX_INPUT_BYTES
from plait.core.kinds import RUNNABLE_KINDS
from .tools import ToolRunner

if TYPE_CHECKING:
    from plait.core.graph import GraphView

__all__ = ["Engine", "Run", "SpecError"]


class SpecError(Exception):
    """The spec did not compile; `diagnostics` holds every problem found."""

    def __init__(self, diagnostics: list[Any]) -> None:
        self.diagnostics = diagnostics
        first = next((d for d in diagnostics if d.is_error), None)
        super().__init__(f"the spec has errors: {first}" if first is not None else "the spec has errors")


class Engine:
    """One compiled spec, ready to run: its program, providers (shared by its runs), observers and run store.

    `Engine.from_spec(path)` compiles and builds one; `start(input)` begins a
    run, `agent(name)` a stateful conversation, `restore(run_id)` a stored run
    to `resume`. `await engine.aclose()` releases its HTTP connections.
    """

    def __init__(
        self,
        program: Program,
        *,
        providers: dict[str, Provider] | None = None,
        should_pause: Callable[[], Any] | None = None,
        store: Journal | None = None,
    ) -> None:
        self.program = program
        self.providers: dict[str, Provider] = dict(providers or {})
        self.should_pause = should_pause
        self.store = store
        #: The spec file the engine was built from, recorded with each run so `plait resume ID` can find it.
        self.spec: str | None = None
        #: (digest, sources) of the spec it was compiled from (compiler/pin.py): each run is pinned to it.
        self.pinned: tuple[str, str] | None = None
        self.observers: list[tuple[str, Callable[[Event], Any] | str]] = []
        #: Layered system prompts per agent, shared by every run of this engine.
        self.contexts: dict[str, ContextRegistry] = {}
        #: Import, validator and HTTP-client caches, and resolved tool lists, shared by every run.
        self.tools = ToolRunner()
        self._toolsets: dict[str, Any] = {}
        self._http: Any = None
        #: Wraps each provider the engine makes (a cassette recorder: src/plait/runtime/cassettes/record.py).
        self.wrap_provider: Callable[[str, Provider], Provider] | None = None

    # -- construction ------------------------------------------------------------------

    @classmethod
    def from_graph(cls, graph: GraphView, **options: Any) -> "Engine":
        program = program_from_graph(graph)
        store = options.get("store")
        if isinstance(store, str):  # a store URL (`--store postgresql://...`): every run of the engine goes there
            options["store"] = open_store(store, program.base_dir)
        elif "store" not in options and program.base_dir:
            options["store"] = open_store(None, program.base_dir)
        return cls(program, **options)

    @classmethod
    def from_spec(cls, source: str | os.PathLike[str], **options: Any) -> "Engine":
        # The compiler stage, below the runtime: never the public API above it (plait/__init__.py builds on this).
        from plait.compiler.pipeline import compile_spec

        result = compile_spec(Path(source) if isinstance(source, os.PathLike) else source)
        if not result.ok or result.graph is None:
            raise SpecError(list(result.diagnostics))
        engine = cls.from_graph(result.graph, **options)
        if isinstance(source, os.PathLike):
            from plait.compiler.pin import pin_of

            engine.spec = str(Path(source).resolve())
            engine.pinned = pin_of(result.sources, engine.spec)
        return engine

    # -- running -------------------------------------------------------------------------

    def observe(self, event: str, reactor: Callable[[Event], Any] | str) -> None:
        """Call `reactor` (a function, or an agent's name run on the event's JSON) on every `event` ("*" = all)."""
        self.observers.append((event, reactor))

    def context(self, agent: str) -> ContextRegistry:
        registry = self.contexts.get(agent)
        if registry is None:
            registry = self.contexts[agent] = ContextRegistry(self.program.agents[agent].system)
        return registry

    def new_context(self) -> RunContext:
        bus = EventBus()
        for event, reactor in self.observers:
            bus.observe(event, reactor)
        ctx = RunContext(
            self.program,
            providers=self.providers,
            bus=bus,
            should_pause=self.should_pause,
            tools=self.tools,
            contexts=self.contexts,
            make_provider=self._make_provider,
            toolsets=self._toolsets,
            run=run_runnable,
        )
        bus.record_warning = ctx.report.warn  # a failing observer leaves its warning in this run's report
        if any(isinstance(reactor, str) for _, reactor in self.observers):
            counter = itertools.count(1)
            bus.agent_reactor = lambda name, event: run_runnable(
                ctx, name, json.dumps(event.to_dict(), default=str), ("@observer", f"{name}#{next(counter)}")
            )
        return ctx

    def _make_provider(self, model: str) -> Provider:
        from .providers import make_provider

        provider = self.providers.get(model)
        if provider is None:
            config = self.program.models[model]
            client = None if config.provider == "scripted" else self._http_client()
            provider = make_provider(config, client=client, root=self.program.base_dir)
            if self.wrap_provider is not None:
                provider = self.wrap_provider(model, provider)
            self.providers[model] = provider
        return provider

    def _http_client(self) -> Any:
        """One connection pool for every HTTP provider of this engine, made when the first one is."""
        if self._http is None:
            from .providers.transport import make_client

            self._http = make_client()
        return self._http

    def start(
        self,
        input: Any = None,
        *,
        entry: str | None = None,
        run_id: str | None = None,
        budget: Budget | dict[str, Any] | None = None,
    ) -> "Run":
        """A new run of `entry` (default: the spec's) on `input`; `run_id` names it (default: a fresh one).
        `budget` (`{"usd": 2}` or a Budget) is the run's own, around everything it runs (ValueError when bad)."""
        name = self.entry_of(entry)
        if budget is not None and not isinstance(budget, Budget):
            budget = Budget().with_items(budget)
        if self.program.input is not None:
            input = check_input("" if input is None else input, self.program.input)
        if input_too_large(input):
            raise AgentError(
                "input_too_large",
                f"the run's input is over {MAX_INPUT_BYTES // 2**20} MiB ({MAX_INPUT_BYTES:,} bytes of JSON), the "
                "most a run takes, as it is stored with the run: put the data in a file and pass its path, for a "
                "tool to read",
            )
        ctx = self.new_context()
        if budget is not None:
            start_budget(ctx, budget, name)
        return lifecycle.attach(Run(self, ctx, name, "" if input is None else input, run_id))

    def entry_of(self, entry: str | None = None) -> str:
        """The runnable a run of `entry` starts at; AgentError `no_entry` or `unknown_runnable` when there is none."""
        name = entry or self.program.entry
        if name is None:
            listed = ", ".join(self.program.roots) or "none"
            raise AgentError(
                "no_entry",
                "the spec has no `main` and more than one runnable nothing else uses: "
                f"pass --entry NAME, one of: {listed}",
            )
        if self.program.kind_of(name) not in RUNNABLE_KINDS:
            names = ", ".join(self.program.runnables())
            raise AgentError(
                "unknown_runnable", f"`{name}` is not a runnable declared in the spec; expected one of: {names}"
            )
        return name

    async def run(self, input: Any = None, *, entry: str | None = None) -> RunResult:
        return await self.start(input, entry=entry)

    def agent(self, name: str, *, budget: Budget | dict[str, Any] | None = None) -> Agent:
        """A stateful agent (history kept across `complete` calls); `budget` (`{"usd": 1}`) is the conversation's
        own, around every turn's calls as the agent's `budget` is (ValueError when bad)."""
        if name not in self.program.agents:
            names = ", ".join(self.program.agents)
            raise AgentError("unknown_runnable", f"`{name}` is not an agent; expected one of: {names}")
        if isinstance(budget, Budget):
            budget = budget.to_json()
        return Agent(self.new_context(), name, Budget().with_items(budget).to_json() if budget else None)

    def restore(self, snapshot: dict[str, Any] | str) -> "Run":
        """A stored run (its id), a snapshot (`Run.snapshot()`) or an export (`plait runs export`), ready to `resume`."""
        return lifecycle.restore(self, snapshot)

    async def aclose(self) -> None:
        if self.store is not None:
            self.store.close()
        await self.tools.aclose()
        for provider in self.providers.values():
            await provider.aclose()
        if self._http is not None:
            await self._http.aclose()
            self._http = None


def _stopped(exc: BaseException) -> BaseException:
    """What a run cut off from outside stores: a `cancelled` stop naming the signal (the CLI cancels with "SIGTERM"),
    not an internal CancelledError; anything else that escaped the pipeline is stored as it is."""
    if not isinstance(exc, (asyncio.CancelledError, KeyboardInterrupt)):
        return exc
    by = exc.args[0] if exc.args and isinstance(exc.args[0], str) else ""
    return AgentError("cancelled", f"the run was stopped by {by}" if by else "the run was cancelled")


def new_run_id() -> str:
    """The start time and 48 random bits: 10,000 runs started in one second (a batch, `asyncio.gather`) collide with
    odds of about 1 in 5 million (24 bits made a duplicate id, refused by the journal, likely at a few thousand)."""
    return time.strftime("%Y%m%d-%H%M%S-") + uuid.uuid4().hex[:12]


class Run:
    """One execution: `await run` for the result, `async for event in run` to step through it."""

    def __init__(self, engine: Engine, ctx: RunContext, entry: str, input: Any, run_id: str | None = None) -> None:
        self.engine = engine
        self.ctx = ctx
        self.entry = entry
        self.input = input
        ctx.run_input = input
        self.id = run_id or new_run_id()
        self.result: RunResult | None = None
        #: The stored result dict of a restored run (what it stopped with).
        self.last: dict[str, Any] | None = None
        self._task: asyncio.Future[RunResult] | None = None
        #: Whether this Run has read its budgets' raises from the journal (once: later attempts hold them).
        self._settled = False

    def __await__(self):
        return self._wait().__await__()

    async def _wait(self) -> RunResult:
        if self._task is not None:  # already started (by iteration or another awaiter): join it
            return await self._task
        # Run in the caller's task: no extra task or loop iteration per run.
        joined = self._task = asyncio.get_running_loop().create_future()
        try:
            with relaxed_gc():
                result = await self._execute()
        except BaseException:
            joined.cancel()
            self._task = None
            raise
        joined.set_result(result)
        return result

    def __aiter__(self) -> AsyncIterator[Event]:
        self.ctx.stream = True
        return iterate(self.ctx.bus, self._wait)

    def events(self) -> AsyncIterator[Event]:
        return self.__aiter__()

    async def resume(
        self,
        decisions: dict[str, Decision | str | dict[str, Any]] | None = None,
        *,
        answers: dict[str, Any] | None = None,
        budget: dict[str, Any] | None = None,
    ) -> RunResult:
        """Continue after an interrupt (a decision per pending call id: approve, edit or reject; an answer per
        pending ask, by its id or its name) or a pause. A bad answer raises `answer_invalid` and changes nothing.
        `budget` (`{"usd": 5}`) gives the budget the run stopped on new limits (the run's own when it stopped on
        none); a key or value a budget cannot have raises `resume_invalid`."""
        if budget:
            try:
                Budget().with_items(budget)
            except ValueError as exc:
                raise AgentError("resume_invalid", str(exc)) from None
        listed = (
            [p.to_dict() for p in self.result.pending] if self.result else list((self.last or {}).get("pending", []))
        )
        pending = {p["id"] for p in listed}
        given = {k: Decision.of(v) for k, v in (decisions or {}).items()}
        calls = {p["id"]: p for p in listed if p.get("kind", "approval") == "approval" and "tool" in p}
        for k, d in given.items():
            if d.action == "approve_same" and k in calls:  # remembered as the call it answered
                d.tool, d.arguments = calls[k]["tool"], calls[k].get("arguments")
        journal = self.ctx.journal
        unknown = sorted(set(given) - pending - set(self.ctx.decisions) - set(journal.unknown if journal else ()))
        if unknown:
            raise AgentError("resume_invalid", f"no pending call with id {', '.join(unknown)}")
        accepted = accept_answers(self.engine.program, [p for p in listed if p.get("kind") == "ask"], answers or {})
        # retry/skip go to the journal's effects ledger; approvals to the run's decisions
        self.ctx.decisions.update(lifecycle.take_decisions(self, given, accepted))
        self.ctx.answers.update(accepted)
        if budget:
            raise_budget(self.ctx, budget, self.entry, (self.last or {}).get("budget") if self.result is None else None)
        self._task = None
        self.result = None
        return await self

    async def _execute(self) -> RunResult:
        ctx = self.ctx
        bus = ctx.bus
        await lifecycle.admit(self)
        settle(ctx, load=not self._settled)  # the budgets' raises: the journal's back in, this attempt's written
        self._settled = True
        if bus.active:
            ctx.emit("run_start", (self.entry,), None, run_id=self.id, entry=self.entry)
        outcome = None
        try:
            outcome = await run_runnable(ctx, self.entry, self.input, (self.entry,))
            await bus.drain()
        except BaseException as exc:  # cancellation: store what we have, then let it go
            outcome = Fail(_stopped(exc))
            raise
        finally:
            result = RunResult(
                outcome if outcome is not None else Fail(_stopped(asyncio.CancelledError())),
                ctx.report,
                self.id,
            )
            self.result = result
            self._save(result)
            await ctx.close_mcp()  # after the save: even a second Ctrl-C here loses nothing
        if result.error is not None:
            try:
                result.error.report = result.to_dict()  # type: ignore[attr-defined]
            except AttributeError:
                pass
        if bus.active:
            warned = len(ctx.report.warnings)
            ctx.emit("run_end", (self.entry,), None, **result.to_dict())
            await bus.drain()  # observers of run_end finish before the run is handed back
            if len(ctx.report.warnings) != warned:
                self._save(result)  # an observer of run_end failed: the stored report keeps its warning too
        return result

    def snapshot(self) -> dict[str, Any]:
        return {
            "version": SNAPSHOT_VERSION,
            "run_id": self.id,
            "entry": self.entry,
            "input": self.input,
            "result": self.result.to_dict() if self.result else self.last,
            "decisions": {k: d.to_json() for k, d in self.ctx.decisions.items()},
            "context": self.ctx.to_json(),
        }

    def _save(self, result: RunResult) -> None:
        lifecycle.record_stop(self, result)
