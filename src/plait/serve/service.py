"""Specs and a run store → `RunService`: start, watch, decide and cancel runs in this process, journaled.

One `RunService` per `plait serve` process. Each run is an asyncio task through
the runtime's public entry (`Engine.start`, `Engine.restore` + `Run.resume`);
every run is journaled (SQLite beside the spec by default, PostgreSQL with a
store URL), so an ask or an approval leaves it `waiting` and a decision resumes
it by the same path `plait resume` takes. `events` reads the journal, so a
run's event sequence is stable across reconnections and server restarts.

A run is pinned to the spec it started with (src/plait/runtime/pinning.py):
recovery leaves a run whose spec was since edited in ways that can affect
what is left to run where it is (it reads as waiting, stop reason
`spec_changed`, the changes listed), and a decision that would take a run up
under such an edit is refused (`SpecChanged`, HTTP 409) unless it accepts
the changes.

The HTTP layer (src/plait/serve/app.py) and the protocols (A2A, MCP, AG-UI)
only call this class: it is the one contract between them and the runtime.
"""

from __future__ import annotations

import asyncio
import builtins
import contextlib
import datetime as dt
import logging
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, AsyncIterator

if TYPE_CHECKING:
    from plait.runtime.engine import Engine, Run
    from plait.runtime.pinning import SpecCheck
    from plait.runtime.store import Journal

log = logging.getLogger("plait.serve")

__all__ = ["EntryInfo", "RunEvent", "RunService", "RunView", "ServiceError", "SpecChanged", "SpecInfo", "UnknownRun"]

#: The statuses a run can be in, as RunView.status says them.
STATUSES = ("running", "waiting", "done", "error", "cancelled", "max_steps")
#: Statuses a run does not leave without a decision or a restart.
FINAL = frozenset({"done", "error", "cancelled", "max_steps"})
#: How often a watcher looks at the journal for a run another process drives (its own runs wake it at once).
POLL_SECONDS = 0.5
#: How many ended runs' views `get` keeps in memory.
FINISHED_KEPT = 10_000
#: Who stops a server's runs when it shuts down: their stored error says so, and `recover` looks for it.
SHUTDOWN = "plait serve's shutdown"
#: How a client takes up a run whose spec changed in ways that can affect what is left to run.
ACCEPT = "post its decisions with accept_changes: true (an empty list for a run not taken up) to go on under the spec served now"
#: Decision actions → the pending kind they answer.
ACTIONS = {
    "approve": "approval",
    "approve_same": "approval",
    "reject": "approval",
    "edit": "approval",
    "answer": "ask",
    "retry": "unknown_outcome",
    "skip": "unknown_outcome",
    "raise_budget": "budget",
}
#: What a `raise_budget` decision's `budget` may set: the new limits of the budget the run stopped on.
BUDGET_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "usd": {"type": "number", "minimum": 0, "description": "the most USD its model calls may cost"},
        "tokens": {"type": "integer", "minimum": 0, "description": "the most tokens (input and output)"},
        "model_calls": {"type": "integer", "minimum": 0, "description": "the most model calls"},
    },
    "additionalProperties": False,
    "minProperties": 1,
}


class UnknownRun(KeyError):
    """No run with this id in the service's stores (a KeyError, as the contract says)."""


class ServiceError(ValueError):
    """A request the service refuses (bad input, unknown spec or entry, a decision that does not fit): one line."""


class SpecChanged(ServiceError):
    """A decision that would take a run up under a spec edited, since the run started, in ways that can affect what
    is left to run: refused (HTTP 409) with the changes, unless the request accepts them."""

    def __init__(self, found: SpecCheck) -> None:
        super().__init__(f"{found.message()}; {ACCEPT}")
        self.changes = list(found.blocking)


@dataclass
class EntryInfo:
    name: str
    description: str
    #: JSON Schema of the entry's input (None: plain text).
    input_schema: dict[str, Any] | None
    #: JSON Schema of the entry's output (None: plain text).
    output_schema: dict[str, Any] | None


@dataclass
class SpecInfo:
    #: The file's stem, unique among the served specs.
    name: str
    path: Path
    entries: list[EntryInfo] = field(default_factory=list)


@dataclass
class RunView:
    id: str
    spec: str
    entry: str
    #: One of STATUSES.
    status: str
    stop_reason: str | None = None
    output: Any = None
    error: str | None = None
    #: Each {"id", "kind": "approval"|"ask"|"unknown_outcome", "name", "arguments"|"question", "answer_schema"}.
    pending: list[dict[str, Any]] = field(default_factory=list)
    tokens: dict[str, int] = field(default_factory=lambda: {"input": 0, "output": 0})
    cost: float | None = None
    started: str | None = None
    ended: str | None = None
    #: Why a run left mid-way was not taken up (status waiting, stop_reason spec_changed): the changes to its spec
    #: since it started that can affect what is left to run. Empty for every other run.
    spec_changes: list[str] = field(default_factory=list)


@dataclass
class RunEvent:
    #: Strictly increasing per run, stable across restarts.
    seq: int
    type: str
    #: The graph path; path[-1] is the node id drawn on the graph.
    path: list[str]
    data: dict[str, Any]


class RunService:
    """The runs of the served specs, in this process; see the module docstring."""

    def __init__(self, specs: list[Path], store: str | None) -> None:
        from plait.runtime.engine import Engine
        from plait.runtime.store import open_store

        self._url = store
        self._engines: dict[str, Engine] = {}
        self._infos: dict[str, SpecInfo] = {}
        self._by_path: dict[str, str] = {}
        #: One journal per location, shared by the engines of the specs stored there.
        self._stores: dict[str, Journal] = {}
        #: Runs driven by this process: run id → its task.
        self._tasks: dict[str, asyncio.Task[Any]] = {}
        #: Runs this process drives (started, resumed, maybe not admitted yet): run id → (spec, entry, started).
        self._live: dict[str, tuple[str, str, float]] = {}
        #: Per run, set (and replaced) whenever the run emits: what event readers wait on.
        self._changed: dict[str, asyncio.Event] = {}
        #: The Run objects of `_tasks`, and those of them whose events wake readers.
        self._runs: dict[str, Run] = {}
        self._followed: set[str] = set()
        #: The views of the latest runs that ended here (done, error, cancelled, max_steps), oldest first.
        self._finished: dict[str, RunView] = {}
        #: Runs left mid-way that `recover` did not take up, their spec changed: run id → (pinned digest, the check).
        self._held: dict[str, tuple[str, SpecCheck]] = {}
        for path in specs:
            path = Path(path).resolve()
            name = path.stem
            if name in self._infos:
                raise ServiceError(f"two served specs are named {name!r} ({self._infos[name].path} and {path})")
            where = store or str(path.parent)
            journal = self._stores.get(where)
            if journal is None:
                journal = self._stores[where] = open_store(store, str(path.parent))
            engine = Engine.from_spec(path, store=journal)  # SpecError (its diagnostics) for a spec with errors
            self._engines[name] = engine
            self._by_path[str(path)] = name
            self._infos[name] = SpecInfo(name, path, _entries(engine))
        for journal in self._stores.values():
            journal.open()

    def specs(self) -> list[SpecInfo]:
        return list(self._infos.values())

    def engine(self, spec: str) -> "Engine":
        """The engine of a served spec; ServiceError when no spec has that name."""
        engine = self._engines.get(spec)
        if engine is None:
            raise ServiceError(f"no served spec {spec!r}; served: {', '.join(self._engines) or 'none'}")
        return engine

    # -- starting and driving ----------------------------------------------------------

    async def start(self, spec: str, entry: str | None, input: Any) -> str:
        from plait.runtime.errors import AgentError
        from plait.runtime.store import lifecycle

        engine = self.engine(spec)
        try:
            run = engine.start(input, entry=entry)
        except AgentError as exc:
            raise ServiceError(exc.message) from None
        self._live[run.id] = (spec, run.entry, time.time())
        try:
            # The run's row is committed before its id is handed out: any server on the store can find it at once
            # (the run's own start then finds it admitted).
            await lifecycle.admit(run)
        except BaseException:
            self._live.pop(run.id, None)
            raise
        self._drive(spec, run, _finish(run))
        return run.id

    def _drive(self, spec: str, run: "Run", work: Any) -> None:
        """Run `work` (the run's first attempt or a resume) as a task that wakes the run's readers as it goes."""
        run_id = run.id
        self._live.setdefault(run_id, (spec, run.entry, time.time()))
        self._runs[run_id] = run
        if run_id in self._changed:  # someone follows its events: wake them as it goes
            self._follow(run)

        async def drive() -> None:
            try:
                await work
            except asyncio.CancelledError:
                pass  # stored as cancelled by the run itself
            except Exception:  # the run stored what it could; the server goes on serving the others
                log.exception("run %s failed outside its report", run_id)
            finally:
                self._tasks.pop(run_id, None)
                live = self._live.pop(run_id, None)
                self._runs.pop(run_id, None)
                if run.result is not None and live is not None:
                    self._remember(run_id, live, run.result)
                self._followed.discard(run_id)
                self._wake(run_id)

        self._tasks[run_id] = asyncio.get_running_loop().create_task(drive(), name=f"plait-run-{run_id}")

    def _remember(self, run_id: str, live: tuple[str, str, float], result: Any) -> None:
        """A run that ended here, as its view: its status cannot change any more, so `get` needs no journal read
        (the stored row says the same: it was committed before the run handed its result back)."""
        from plait.runtime.secret_values import known, mask_data

        data = result.to_dict()
        row = {
            "id": run_id,
            "spec": str(self._infos[live[0]].path),
            "entry": live[1],
            "status": result.stop_reason,
            "result": mask_data(data) if known() else data,  # as the journal stores it: no secret's value
            "input_tokens": result.report.input_tokens,
            "output_tokens": result.report.output_tokens,
            "cost_usd": result.report.cost,
            "started": live[2],
            "updated": time.time(),
        }
        view = self._view(row)
        if view.status in FINAL:
            self._finished[run_id] = view
            while len(self._finished) > FINISHED_KEPT:
                self._finished.pop(next(iter(self._finished)))

    def _wake(self, run_id: str) -> None:
        changed = self._changed.pop(run_id, None)
        if changed is not None:
            changed.set()

    def _signal(self, run_id: str) -> asyncio.Event:
        changed = self._changed.get(run_id)
        if changed is None:
            changed = self._changed[run_id] = asyncio.Event()
            run = self._runs.get(run_id)
            if run is not None:
                self._follow(run)
        return changed

    def _follow(self, run: "Run") -> None:
        """Wake the run's event readers at each of its events. Only for a run someone follows: a run nobody
        watches builds no events at all (the bus is idle), which is most runs of a busy server."""
        run_id = run.id
        if run_id in self._followed:
            return
        self._followed.add(run_id)
        run.ctx.bus.observe("*", lambda _event: self._wake(run_id))

    async def recover(self) -> list[str]:
        """Continue every run of the served specs that a server left mid-way: killed (its row says running and no
        live process holds it), or stopped by a server's shutdown (SIGTERM). From its journal: nothing that finished
        runs again. A run another live process holds is left to it, and so is one whose spec changed since it
        started in ways that can affect what is left to run (logged; its view says why). Returns the ids taken up."""
        from plait.runtime import pinning
        from plait.runtime.errors import AgentError

        taken = []
        for journal in self._stores.values():
            candidates = [*journal.listing(status="crashed"), *journal.listing(status="cancelled")]
            for listed in candidates:
                name = self._by_path.get(listed.get("spec") or "")
                if name is None:
                    continue
                # Read again just before taking it: another server starting beside this one may have taken it
                # up (and even finished it) since the listing.
                row = journal.run(listed["id"])
                if row is None or not _left_mid_way(row):
                    continue
                engine = self._engines[name]
                if self._holds(engine, row["id"]):
                    continue
                try:
                    run = engine.restore(row["id"])
                except AgentError as exc:  # held by another process, or damaged: not ours to run
                    log.info("not resuming %s: %s", row["id"], exc)
                    continue
                pinning.repin(engine, run.id)
                self._drive(name, run, run.resume())
                taken.append(row["id"])
        return taken

    def _holds(self, engine: Engine, run_id: str) -> bool:
        """Whether recovery leaves the run where it is: its spec changed in ways that can affect what is left to run.
        Checked once per pin (a sweep does not compile the specs again for a run it already held back)."""
        from plait.runtime import pinning

        pin = engine.store.pinned(run_id) if engine.store is not None else None
        held = self._held.get(run_id)
        if held is not None and pin is not None and held[0] == pin[0]:
            return True
        found = pinning.check(engine, run_id)
        if found is None or not found.blocked or pin is None:
            self._held.pop(run_id, None)
            return False
        log.warning("not resuming %s: %s", run_id, found.message())
        self._held[run_id] = (pin[0], found)
        return True

    async def sweep(self, every: float) -> None:
        """`recover` every `every` seconds, for good: runs a replica on the same store left (killed, its lease
        lapsed; or stopped by its shutdown) go on here without waiting for that replica to start again."""
        while True:
            await asyncio.sleep(every)
            try:
                taken = await self.recover()
            except Exception:  # a store that is briefly unreachable: the next sweep tries again
                log.exception("looking for runs left by another server failed")
                continue
            if taken:
                log.warning("resuming %d run(s) another server left: %s", len(taken), ", ".join(taken))

    # -- reading -----------------------------------------------------------------------

    def _row(self, run_id: str) -> tuple["Journal", dict[str, Any]] | None:
        for journal in self._stores.values():
            row = journal.run(run_id)
            if row is not None:
                return journal, row
        return None

    async def get(self, run_id: str) -> RunView:
        finished = self._finished.get(run_id)
        if finished is not None:
            return finished
        live = self._live.get(run_id)
        if live is not None:  # running here: nothing in the journal says more until it stops (its events do)
            return RunView(run_id, live[0], live[1], "running", started=_iso(live[2]))
        found = self._row(run_id)
        if found is None:
            raise UnknownRun(run_id)
        return self._view(found[1])

    def _view(self, row: dict[str, Any]) -> RunView:
        result = row.get("result") or {}
        # A run this process drives is running whatever its last stop said (a decision resumed it); a killed run
        # reads as running too: `recover` (at start-up) takes it up.
        status = "running" if row["id"] in self._tasks else _status(row["status"])
        error = result.get("error") if status in ("error", "cancelled") else None
        held = self._held.get(row["id"]) if row["id"] not in self._tasks and _left_mid_way(row) else None
        if held is not None:  # left mid-way, not taken up: it waits for its spec's changes to be accepted
            return RunView(
                id=row["id"],
                spec=self._by_path.get(row.get("spec") or "", Path(row.get("spec") or "?").stem),
                entry=row["entry"],
                status="waiting",
                stop_reason="spec_changed",
                error=f"not taken up: {held[1].message()}; {ACCEPT}",
                tokens={"input": row.get("input_tokens") or 0, "output": row.get("output_tokens") or 0},
                cost=row.get("cost_usd"),
                started=_iso(row.get("started")),
                spec_changes=list(held[1].blocking),
            )
        return RunView(
            id=row["id"],
            spec=self._by_path.get(row.get("spec") or "", Path(row.get("spec") or "?").stem),
            entry=row["entry"],
            status=status,
            stop_reason=None if status == "running" else row["status"],
            output=result.get("output") if status != "running" else None,
            error=(error.get("message") if isinstance(error, dict) else str(error)) if error else None,
            pending=_all_pending(result) if status == "waiting" else [],
            tokens={"input": row.get("input_tokens") or 0, "output": row.get("output_tokens") or 0},
            cost=row.get("cost_usd"),
            started=_iso(row.get("started")),
            ended=_iso(row.get("updated")) if status != "running" else None,
        )

    async def list(self, spec: str | None = None, status: str | None = None, limit: int = 100) -> list[RunView]:
        if spec is not None:
            self.engine(spec)
        if status is not None and status not in STATUSES:
            raise ServiceError(f"status must be one of {', '.join(STATUSES)}, not {status!r}")
        picked: list[tuple[Journal, dict[str, Any], RunView | None]] = []
        for journal in self._stores.values():
            for row in journal.listing():
                name = self._by_path.get(row.get("spec") or "")
                if name is None or (spec is not None and name != spec):
                    continue
                view = None
                if row["id"] in self._held and row["id"] not in self._tasks:
                    # Held back at start-up: whether it still waits is _view's to say (another process may have
                    # taken it up since), and that reads the run's whole row.
                    full = journal.run(row["id"])
                    view = self._view(full) if full is not None else None
                if status is not None and (view.status if view is not None else _status(row["status"])) != status:
                    continue
                picked.append((journal, row, view))
        picked.sort(key=lambda jrv: (jrv[1]["started"], jrv[1]["id"]), reverse=True)
        views = []
        for journal, row, view in picked[: max(0, limit)]:
            if view is None:
                full = journal.run(row["id"])
                view = self._view(full) if full is not None else None
            if view is not None:
                views.append(view)
        return views

    async def events(self, run_id: str, after: int | None = None) -> AsyncIterator[RunEvent]:
        """The run's events from its journal, after seq `after`; live until the run ends (done, error, cancelled,
        max_steps). A run waiting for a decision keeps the stream open: its stop is a `run_end` event with
        stop_reason `interrupt` or `pause`, and what follows a decision comes on the same stream."""
        await self.get(run_id)  # UnknownRun (a KeyError) for an unknown id, before the first event
        seen = after or 0
        while True:
            changed = self._signal(run_id)
            found = self._row(run_id)
            final = found is not None and _status(found[1]["status"]) in FINAL and run_id not in self._tasks
            if found is not None:
                for row in found[0].events(run_id):
                    if row["seq"] > seen:
                        seen = row["seq"]
                        yield to_event(row, found[1]["entry"])
            if final:
                return
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(changed.wait(), POLL_SECONDS)

    def trace(self, run_id: str) -> dict[str, Any]:
        """What `plait trace ID --json` prints: the run's summary and timeline."""
        from plait.cli.runs import with_totals
        from plait.cli.trace import build

        found = self._row(run_id)
        if found is None:
            raise UnknownRun(run_id)
        journal, row = found
        row = with_totals(journal, row)
        summary = {
            k: row.get(k)
            for k in ("id", "status", "entry", "spec", "started", "steps", "input_tokens", "output_tokens", "cost_usd")
        }
        return {"run": summary, "timeline": build(list(journal.events(run_id)))}

    # -- deciding, cancelling, waiting -------------------------------------------------

    async def decide(
        self, run_id: str, decisions: builtins.list[dict[str, Any]], accept_changes: bool = False
    ) -> RunView:
        """Answer a waiting run's pending items; it goes on. Under a spec edited since the run started in ways that
        can affect what is left to run: SpecChanged, unless `accept_changes` (a run recovery held back for that
        takes no decisions: an empty list with `accept_changes` takes it up)."""
        from plait.runtime import pinning
        from plait.runtime.ask import accept_answers
        from plait.runtime.errors import AgentError
        from plait.runtime.outcomes import Decision

        view = await self.get(run_id)
        if view.status != "waiting":
            raise ServiceError(f"run {run_id} is {view.status}, not waiting for a decision")
        held = view.stop_reason == "spec_changed"
        if not isinstance(decisions, list) or (not decisions and not held):
            raise ServiceError("decisions: give a list of {id, action} objects")
        engine = self.engine(view.spec)
        pending = {p["id"]: p for p in view.pending}
        names = {p["name"]: p for p in view.pending if p["kind"] == "ask"}
        given: dict[str, Any] = {}
        answers: dict[str, Any] = {}
        budget: dict[str, Any] | None = None
        for i, d in enumerate(decisions):
            where = f"decisions[{i}]"
            if not isinstance(d, dict) or not isinstance(d.get("id"), str):
                raise ServiceError(f"{where}.id: the id of a pending call or ask is required")
            action = d.get("action")
            if action not in ACTIONS:
                raise ServiceError(f"{where}.action: one of {', '.join(ACTIONS)}, not {action!r}")
            target = pending.get(d["id"]) or names.get(d["id"])
            if target is None:
                raise ServiceError(f"{where}.id: no pending {d['id']!r}; pending: {', '.join(pending) or 'none'}")
            if ACTIONS[action] != target["kind"]:
                raise ServiceError(f"{where}.action: {action} does not answer a pending {target['kind']}")
            if action == "raise_budget":
                budget = _budget_items(d.get("budget"), f"{where}.budget")
            elif action == "answer":
                if "answer" not in d:
                    raise ServiceError(f"{where}.answer: required for action answer")
                answers[target["id"]] = d["answer"]
            elif action == "edit":
                if not isinstance(d.get("arguments"), dict):
                    raise ServiceError(f"{where}.arguments: an object is required for action edit")
                given[target["id"]] = Decision("edit", d["arguments"])
            elif action == "reject":
                reason = d.get("reason")
                given[target["id"]] = Decision("reject", None, reason if isinstance(reason, str) else None)
            else:
                given[target["id"]] = Decision(action)
        if answers:
            asks = [p for p in _raw_pending(self._row(run_id)) if p.get("kind") == "ask"]
            try:
                accept_answers(engine.program, asks, answers)
            except AgentError as exc:
                raise ServiceError(str(exc)) from None
        found = pinning.check(engine, run_id)
        if found is not None and found.blocked and not accept_changes:
            raise SpecChanged(found)
        try:
            run = engine.restore(run_id)
        except AgentError as exc:
            raise ServiceError(str(exc)) from None
        pinning.repin(engine, run_id)  # it goes on under the served spec: the next check compares with that
        self._held.pop(run_id, None)
        self._drive(view.spec, run, run.resume(given, answers=answers, budget=budget))
        await asyncio.sleep(0)  # the resume records its decisions before the caller reads the run again
        return await self.get(run_id)

    async def cancel(self, run_id: str) -> RunView:
        from plait.runtime.errors import AgentError
        from plait.runtime.outcomes import Fail
        from plait.runtime.report import RunResult
        from plait.runtime.store import lifecycle

        view = await self.get(run_id)
        task = self._tasks.get(run_id)
        if task is not None:
            task.cancel("an HTTP request")
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.shield(task)
        elif view.status == "waiting":
            try:
                run = self.engine(view.spec).restore(run_id)
            except AgentError as exc:
                raise ServiceError(str(exc)) from None
            error = AgentError("cancelled", "the run was cancelled by an HTTP request")
            run.result = RunResult(Fail(error), run.ctx.report, run_id)
            lifecycle.record_stop(run, run.result)
            self._wake(run_id)
        elif view.status == "running":
            raise ServiceError(f"run {run_id} is driven by another server process: cancel it there")
        return await self.get(run_id)

    async def wait(self, run_id: str, timeout: float) -> RunView:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + max(0.0, timeout)
        task = self._tasks.get(run_id)
        if task is not None:  # driven here: its task ends when it stops
            await asyncio.wait({task}, timeout=max(0.0, timeout))
        while True:
            changed = self._signal(run_id)
            view = await self.get(run_id)
            left = deadline - loop.time()
            if view.status != "running" or left <= 0:
                return view
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(changed.wait(), min(left, POLL_SECONDS))

    async def aclose(self) -> None:
        tasks = list(self._tasks.values())
        for task in tasks:
            task.cancel(SHUTDOWN)  # stored as cancelled "by plait serve's shutdown": the next start takes it up
        for task in tasks:
            with contextlib.suppress(BaseException):
                await task
        for engine in self._engines.values():
            await engine.aclose()


def _left_mid_way(row: dict[str, Any]) -> bool:
    """Whether a run's row is one a server left mid-way: killed (crashed), or stopped by a server's shutdown."""
    if row["status"] == "crashed":
        return True
    error = (row.get("result") or {}).get("error") or {}
    return row["status"] == "cancelled" and isinstance(error, dict) and error.get("message", "").endswith(SHUTDOWN)


async def _finish(run: "Run") -> Any:
    return await run


def _status(stored: str) -> str:
    """A journal status (the stop reason, or running/crashed) → a RunView status."""
    if stored in ("running", "crashed"):
        return "running"
    if stored in ("interrupt", "pause"):
        return "waiting"
    if stored in ("error", "cancelled", "max_steps"):
        return stored
    return "done"


def _iso(at: float | None) -> str | None:
    return None if at is None else dt.datetime.fromtimestamp(at, dt.timezone.utc).isoformat()


def _raw_pending(found: tuple[Any, dict[str, Any]] | None) -> list[dict[str, Any]]:
    return list(((found[1].get("result") or {}) if found else {}).get("pending", []))


def _all_pending(result: dict[str, Any]) -> list[dict[str, Any]]:
    """A waiting run's pending items: its approvals, asks and unknown outcomes, and the budget it stopped on."""
    out = [_pending(p) for p in result.get("pending", [])]
    exceeded = (result.get("budget") or {}).get("exceeded")
    if isinstance(exceeded, dict) and result.get("stop_reason") == "pause":
        out.append(
            {
                "id": "budget",
                "kind": "budget",
                "name": exceeded.get("runnable"),
                "path": exceeded.get("path"),
                "limit": exceeded.get("limit"),
                "limits": exceeded.get("limits"),
                "spent": exceeded.get("spent"),
                "needed": exceeded.get("needed"),
                "answer_schema": BUDGET_SCHEMA,
            }
        )
    return out


def _budget_items(budget: Any, where: str) -> dict[str, Any]:
    """A raise_budget decision's `budget` → the new limits, checked as `plait resume --budget` checks them."""
    from plait.core.budget import Budget

    if not isinstance(budget, dict) or not budget:
        raise ServiceError(f'{where}: an object of new limits is required, e.g. {{"usd": 5}}')
    unknown = sorted(set(budget) - set(BUDGET_SCHEMA["properties"]))
    if unknown:
        raise ServiceError(f"{where}: `{unknown[0]}` is not a limit; give usd, tokens or model_calls")
    try:
        Budget().with_items(budget)
    except ValueError as exc:
        raise ServiceError(f"{where}: {exc}") from None
    return dict(budget)


def _pending(p: dict[str, Any]) -> dict[str, Any]:
    """A stored pending item → the contract's shape: id, kind, name, arguments or question, answer_schema."""
    kind = p.get("kind") or "approval"
    if kind == "ask":
        return {
            "id": p["id"],
            "kind": "ask",
            "name": p.get("ask"),
            "question": p.get("question"),
            "answer_schema": p.get("answer_schema"),
        }
    return {"id": p["id"], "kind": kind, "name": p.get("tool"), "arguments": p.get("arguments"), "answer_schema": None}


#: Journal row kinds → event types.
_TYPES = {
    "admit": "run_start",
    "base": "run_start",
    "resume": "run_resume",
    "model_request": "step_start",
    "model_reply": "step_end",
    "model_error": "step_error",
    "tool_intent": "tool_call_start",
    "tool_completed": "tool_result",
    "decision": "decision",
    "state": "state",
    "pause": "pause",
    "stop": "run_end",
}


def to_event(row: dict[str, Any], entry: str) -> RunEvent:
    """One journal row of a run of `entry` → one RunEvent; its seq is the row's, so it is the same on every read.
    Run-level events (start, resume, end) have the entry as their path."""
    kind, key, data = row["kind"], row.get("key") or "", row.get("data")
    data = dict(data) if isinstance(data, dict) else {"value": data}
    if kind in ("admit", "base", "resume", "stop") or not key:
        path = [entry]
    elif kind == "state":
        path = [p for p in key.split("/") if p]
    else:
        path = [p for p in key.split("#", 1)[0].split("/") if p]
    if kind in ("model_reply", "model_error"):
        data.pop("providers", None)
        message = data.pop("message", None) or {}
        if kind == "model_reply":
            data["text"] = "".join(p.get("text", "") for p in message.get("content", ()) if isinstance(p, dict))
            data["tool_calls"] = [c.get("name") for c in message.get("tool_calls", ()) if isinstance(c, dict)]
    if kind == "base":
        data = {"from_snapshot": True}
    if kind in ("model_request", "tool_intent", "tool_completed") and key:
        data.setdefault("position", key)
    if row.get("damaged"):
        data["damaged"] = row["damaged"]
    return RunEvent(row["seq"], _TYPES.get(kind, kind), path, data)


def _entries(engine: "Engine") -> list[EntryInfo]:
    """The runnables a request may start: the spec's entry (main) first, then its other roots."""
    program = engine.program
    names = [n for n in (program.entry, *program.roots) if n]
    seen: list[str] = []
    for n in names:
        if n not in seen:
            seen.append(n)
    return [EntryInfo(n, _description(program, n), program.input, _output(program, n)) for n in seen]


def _description(program: Any, name: str) -> str:
    config = program.agents.get(name)
    return (config.description or "") if config is not None else ""


def _output(program: Any, name: str) -> dict[str, Any] | None:
    """The entry's output type as JSON Schema (a step's `output`, or a chain's last member's); None = text."""
    step = program.steps.get(name)
    if step is not None:
        return step.output_schema()
    chain = program.chains.get(name)
    if chain is not None and chain.elements and chain.elements[-1] != name:
        return _output(program, chain.elements[-1])
    return None
