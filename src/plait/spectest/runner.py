"""Spec files with `test` blocks → one run per test, its stops answered, its expectations judged: `Outcome`s.

A `Session` runs tests side by side in one event loop (at most `jobs` at once): an offline run is a few
milliseconds of Python, far less than starting a process, and runs against real models wait on the network,
where concurrency is what pays. Each test gets its own engine over its file's one compiled program, with the
providers its `replies` name (src/plait/spectest/sources.py), and every run is journaled in the session's store,
so what the session ran can be read back afterwards (`Session.runs`, `Session.store`).
"""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

from plait.core.kinds.test import Expectation, TestNode

from .evaluate import Observed, evaluate
from .sources import Skip, SourceError, providers_for

__all__ = ["Failure", "Outcome", "Session", "SpecTests", "load_tests"]

#: Stops (approvals, asks) one test may answer before it is taken for a loop that never ends.
MAX_STOPS = 100
#: The stats a test that reads them accepts a failed run for (else a failed run fails the test).
_FAILURE_STATS = {"stop_reason", "error"}


@dataclass
class SpecTests:
    """One spec file's compile: its tests, or the diagnostics that stop them."""

    path: Path
    tests: list[TestNode] = field(default_factory=list)
    graph: Any = None
    diagnostics: list[Any] = field(default_factory=list)
    sources: dict[str, Any] = field(default_factory=dict)
    program: Any = None


@dataclass
class Failure:
    """One expectation that did not hold (`expectation` None: the run itself failed the test)."""

    message: str
    expectation: Expectation | None = None


@dataclass
class Outcome:
    """How one test went: "passed", "failed", "error" (it could not be run) or "skipped"."""

    test: TestNode
    spec: SpecTests
    status: str = "passed"
    failures: list[Failure] = field(default_factory=list)
    #: Why it was skipped or could not run.
    message: str | None = None
    run_id: str | None = None
    seconds: float = 0.0
    #: The run's RunResult (its report), for a caller that wants more than the verdict.
    result: Any = None

    @property
    def id(self) -> str:
        return f"{self.test.file}::{self.test.name}"


def load_tests(paths: Iterable[Path]) -> list[SpecTests]:
    """Compile each spec file that writes a `test` (a file named on the command line is compiled whatever it holds)."""
    from plait.compiler.pipeline import compile_spec

    out = []
    for path in paths:
        loaded = compile_spec(path)
        out.append(SpecTests(path, list(loaded.tests), loaded.graph, list(loaded.diagnostics), loaded.sources))
    return out


def has_tests(path: Path) -> bool:
    """Whether a file's text declares a test: a folder's other specs are not compiled for nothing."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return True  # compiled, so the problem is reported
    return re.search(r"^[ \t]*test[ \t]", text, re.MULTILINE) is not None


class Session:
    """Runs tests: `await session.run(specs)` → an Outcome per test, in the order given."""

    def __init__(
        self,
        *,
        live: bool = False,
        jobs: int = 8,
        store: Any = None,
        on_outcome: Callable[[Outcome], Any] | None = None,
        record: bool = False,
        record_tools: bool = False,
    ) -> None:
        self.live = live
        #: Run the tests that read a cassette against their real models, and write what they answered into it
        #: (with `record_tools`, what their tools returned too).
        self.record = record
        self.record_tools = record_tools
        self.jobs = max(1, jobs)
        self._folder: str | None = None
        #: The journal every run of the session is kept in (a store URL or Journal; default: a temporary SQLite
        #: journal, removed by `close`).
        self.store = store
        self.on_outcome = on_outcome
        self.outcomes: list[Outcome] = []

    @property
    def runs(self) -> list[tuple[Outcome, str]]:
        """(outcome, run id) of every run the session made, in the order the tests were given."""
        return [(o, o.run_id) for o in self.outcomes if o.run_id is not None]

    def _journal(self) -> Any:
        if self.store is None:
            from plait.runtime.store.sqlite import SQLiteJournal

            self._folder = tempfile.mkdtemp(prefix="plait-test-")
            self.store = SQLiteJournal(Path(self._folder) / "journal.db")
        elif isinstance(self.store, str):
            from plait.runtime.store import open_store

            self.store = open_store(self.store)
        return self.store

    def close(self) -> None:
        if self.store is not None and not isinstance(self.store, str):
            self.store.close()
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)
            self._folder = None
            self.store = None

    async def run(self, specs: list[SpecTests], selected: Callable[[TestNode], bool] = lambda t: True) -> list[Outcome]:
        from plait.runtime.program import program_from_graph

        store = self._journal()
        gate = asyncio.Semaphore(self.jobs)
        work: list[Any] = []
        for spec in specs:
            chosen = [t for t in spec.tests if selected(t)]
            if not chosen or spec.graph is None or any(d.is_error for d in spec.diagnostics):
                continue
            if spec.program is None:
                spec.program = program_from_graph(spec.graph)
            work.extend(self._one(spec, test, store, gate) for test in chosen)
        outcomes = list(await asyncio.gather(*work))
        self.outcomes.extend(outcomes)
        return outcomes

    async def _one(self, spec: SpecTests, test: TestNode, store: Any, gate: asyncio.Semaphore) -> Outcome:
        async with gate:
            started = time.perf_counter()
            outcome = Outcome(test, spec)
            try:
                await self._execute(spec, test, store, outcome)
            except Skip as skip:
                outcome.status, outcome.message = "skipped", str(skip)
            except SourceError as exc:
                outcome.status, outcome.message = "error", str(exc)
            except Exception as exc:  # one test that cannot go on (a refused answer, ...) never stops the others
                outcome.status, outcome.message = "error", f"the test could not run: {_error_text(exc)}"
            outcome.seconds = time.perf_counter() - started
            if outcome.status == "passed" and outcome.failures:
                outcome.status = "failed"
            if self.on_outcome is not None:
                self.on_outcome(outcome)
            return outcome

    async def _execute(self, spec: SpecTests, test: TestNode, store: Any, outcome: Outcome) -> None:
        from plait.runtime.engine import Engine
        from plait.runtime.errors import AgentError

        recording = self.record and test.replies == "cassette"
        providers = {} if recording else providers_for(test, spec.program, self.live)
        engine = Engine(spec.program, providers=providers, store=store)
        engine.spec = str(Path(test.file).resolve())
        recorder = None
        if recording:
            from plait.runtime.cassettes import record

            recorder = record(engine, tools=self.record_tools)
        elif test.replies == "cassette":
            _replay_tools(engine, providers)
        stand_ins = None
        if test.tools:
            from .tools import StandInTools

            stand_ins = engine.tools = StandInTools(test.tools, engine.tools)
        judges: dict[int, Any] = {}
        try:
            try:
                run = engine.start(test.input, entry=test.entry)
            except AgentError as exc:
                outcome.status, outcome.message = "error", f"the run could not start: {exc}"
                return
            outcome.run_id = run.id
            seen = Observed()
            result = await run
            for _ in range(MAX_STOPS):
                if result.stop_reason != "interrupt":
                    break
                decisions, answers, missing = _answer(test, result.pending, seen)
                if missing:
                    outcome.failures.append(Failure(missing))
                    break
                result = await run.resume(decisions, answers=answers)
            outcome.result = result
            if stand_ins is not None:
                outcome.failures.extend(Failure(message) for message in stand_ins.missing)
            _observe(seen, run, result, spec.program)
            seen.judge = lambda subject, text: _judge(engine, run, judges, subject, text)
            if result.error is not None and not _reads_failure(test):
                outcome.failures.append(Failure(f"the run failed: {_error_text(result.error)}"))
                return
            if result.stop_reason == "interrupt" and not outcome.failures:
                outcome.failures.append(Failure(f"the run still waits after {MAX_STOPS} answered stops"))
            for expectation in test.expects:
                passed, why = await evaluate(expectation.tree, seen)
                if not passed:
                    outcome.failures.append(Failure(why, expectation))
        finally:
            engine.store = None  # the session's journal outlives this engine: aclose must not close it
            await engine.aclose()
            if recorder is not None:
                _save(recorder, test, outcome)


def _replay_tools(engine: Any, providers: dict[str, Any]) -> None:
    """A cassette that holds tool results serves the tools too (cassettes/tools.py): the test runs none."""
    from plait.runtime.cassettes import ReplayProvider, ReplayTools

    served = next((p for p in providers.values() if isinstance(p, ReplayProvider)), None)
    if served is not None and served.cassette.tool_results:
        engine.tools = ReplayTools(served.cassette)


def _save(recorder: Any, test: TestNode, outcome: Outcome) -> None:
    """`plait test --record`: the test's cassette, whatever the run's end (its replies are data either way)."""
    from plait.runtime.cassettes import CassetteError

    from .sources import cassette_path

    if not recorder.interactions and not recorder.tool_results:
        return  # nothing was asked: a cassette recorded before is kept, not emptied
    try:
        recorder.cassette(spec=Path(test.file).name, entry=test.entry).save(cassette_path(test))
    except CassetteError as exc:
        outcome.failures.append(Failure(str(exc)))


def _answer(test: TestNode, pending: list[Any], seen: Observed) -> tuple[dict[str, Any], dict[str, Any], str | None]:
    """The decisions and answers for a stop, from the test; a message when the test gives none for one of them."""
    decisions: dict[str, Any] = {}
    answers: dict[str, Any] = {}
    for item in pending:
        ask = getattr(item, "ask", None)
        if ask is not None:
            seen.asked.append(ask)
            if ask not in (test.answers or {}):
                return (
                    {},
                    {},
                    f"the run stopped at ask `{ask}` and the test gives no answer (`answers = {{ {ask} = ... }}`)",
                )
            answer = test.answers[ask]  # type: ignore[index]
            answers[item.id] = answer
            continue
        tool = getattr(item, "tool", "?")
        seen.approvals.append(tool)
        if tool not in (test.decisions or {}):
            return (
                {},
                {},
                f"the run asked approval for `{tool}` and the test gives no decision "
                f'(`decisions = {{ {tool} = "approve" }}`)',
            )
        decisions[item.id] = test.decisions[tool]  # type: ignore[index]
    return decisions, answers, None


def _observe(seen: Observed, run: Any, result: Any, program: Any) -> None:
    report = result.report
    seen.output = result.output
    seen.results = [(key.rsplit("/", 1)[-1], done.output) for key, done in run.ctx.results.items()]
    seen.stop_reason = result.stop_reason
    seen.error = getattr(result.error, "kind", None) or (type(result.error).__name__ if result.error else None)
    seen.model_calls = report.model_calls
    seen.input_tokens = report.input_tokens
    seen.output_tokens = report.output_tokens
    seen.steps = len(report.steps)
    seen.tool_calls = [(call["name"], call["arguments"]) for call in report.tool_calls]
    seen.decisions = list(report.decisions)
    seen.cost = _cost(report, program)


def _cost(report: Any, program: Any) -> float | None:
    from plait.core.catalogue import cost_usd

    total = 0.0
    for step in report.steps:
        config = program.models.get(step.get("model") or "")
        usd = cost_usd(
            getattr(config, "catalogue", None), step.get("input_tokens") or 0, step.get("output_tokens") or 0
        )
        if usd is None:
            return None
        total += usd
    return total


def _reads_failure(test: TestNode) -> bool:
    return any(_FAILURE_STATS & set(_stats(e.tree)) for e in test.expects)


def _stats(tree: Any) -> Iterable[str]:
    if isinstance(tree, dict):
        if tree.get("kind") == "run":
            yield tree["stat"]
        for value in tree.values():
            yield from _stats(value)
    elif isinstance(tree, list):
        for value in tree:
            yield from _stats(value)


def _error_text(error: BaseException) -> str:
    kind = getattr(error, "kind", None)
    return f"{kind}: {error}" if kind else f"{type(error).__name__}: {error}"


_VERDICT = {
    "type": "object",
    "properties": {"pass": {"type": "boolean"}, "reason": {"type": "string"}},
    "required": ["pass", "reason"],
    "additionalProperties": False,
}
_JUDGE_SYSTEM = (
    "You grade the output of an AI agent against a rubric. Answer with JSON only: "
    '{"pass": true or false, "reason": "one sentence"}.'
)


async def _judge(engine: Any, run: Any, judges: dict[int, Any], subject: dict[str, Any], text: str) -> tuple[bool, str]:
    """One verdict of the subject's judge on `text`: the request a judge gets, its reply read as {"pass", "reason"}."""
    from plait.runtime.model_call import model_only_request
    from plait.runtime.providers.base import Message
    from plait.runtime.providers.scripted import ScriptedProvider

    model, rubric = subject["model"], subject["rubric"]
    config = engine.program.models[model]
    provider = judges.get(id(subject))
    if provider is None:
        if subject.get("replies") is not None:
            # The verdicts written in the judge's own block: a list of this expectation's, read in order.
            provider = ScriptedProvider(config, replies=subject["replies"])
        else:
            # The test's provider for the model (inline replies, a cassette, the real model), its cursors fresh.
            provider = run.ctx.provider(model)
            provider = provider.for_run() if hasattr(provider, "for_run") else provider
        judges[id(subject)] = provider
    request = model_only_request(
        config,
        [Message.user(f"Rubric:\n{rubric}\n\nOutput to grade:\n{text}")],
        system=_JUDGE_SYSTEM,
        output_schema=_VERDICT,
    )
    try:
        response = await provider.complete(request)
    except Exception as exc:  # a judge that fails is a failed verdict, said as such
        return False, f"the judge failed: {_error_text(exc)}"
    reply = response.message.text
    try:
        verdict = json.loads(reply)
    except ValueError:
        return False, f"the judge's reply is not a verdict: {reply[:200]}"
    if not isinstance(verdict, dict) or not isinstance(verdict.get("pass"), bool):
        return False, f"the judge's reply is not a verdict: {reply[:200]}"
    return verdict["pass"], str(verdict.get("reason") or "")
