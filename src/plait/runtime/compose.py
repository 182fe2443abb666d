"""A runnable's name, its input and a graph path → its outcome: agents, steps, chains, parallels, consolidates,
routes, loops, maps and asks (the last four in route.py, loop.py, mapping.py and ask.py).

Every finished runnable is memoised by path in the run context, so a resume
re-walks the composition and replays nothing that already finished; its output
is also written under its name where it ran (scope.py), which is what
`{{NAME}}` reads. Outcomes that stop for a human propagate upward; a parallel
gathers every branch's pending calls so they can all be answered at once.
"""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any, Awaitable, Callable

from .handoff import run_handing_off
from .ask import run_ask
from .bindings import bind
from .code_step import run_code_step
from plait.core.kinds import (
    AgentNode,
    ChainNode,
    ConsolidateNode,
    LoopNode,
    MapNode,
    ParallelNode,
    RouteNode,
    StepNode,
    journaled_fields,
)
from .budget import BudgetExceeded, open_scope, stop_for
from .context import RunContext
from .errors import AgentError, error_info
from .loop import run_loop
from .mapping import run_map
from .model_call import (
    TRUNCATED,
    complete_with_fallbacks,
    cut_off,
    direct_call,
    model_request,
    served,
    structured_answer,
)
from .outcomes import Done, Fail, Interrupt, Outcome, Pause, merge_stops
from .providers.base import Message, TextPart, final_answer_text
from .route import run_route
from .scope import outputs
from .templates import as_text, render
from .threads import history_of, leave

__all__ = ["EXECUTORS", "run_chain", "run_runnable"]

#: The kinds that may bind their input with `with`.
_BINDS = frozenset({"step", "agent", "ask"})


async def run_runnable(
    ctx: RunContext, name: str, input: Any, path: tuple[str, ...], branch: str | None = None
) -> Outcome:
    key = "/".join(path)
    done = ctx.results.get(key)
    if done is not None:
        outputs(ctx)[name] = done.output  # a resume re-walks finished runnables: `{{NAME}}` reads them again
        if done.hosted:
            outputs(ctx).update(done.hosted)
        return done
    try:
        found = ctx.program.runnable(name)
        if found is None:
            raise AgentError("unknown_runnable", f"`{name}` is not a runnable declared in the spec", path=path)
        kind, record = found
        if kind in _BINDS and record.bindings:  # `with`: the record it binds is its input (runtime/bindings.py)
            input = bind(ctx, record, input, path)
        if record.budget is not None:
            open_scope(ctx, record, path)
        outcome = await EXECUTORS[kind](ctx, record, input, path, branch)
    except BudgetExceeded as exc:  # a step's or a judge's one call refused (an agent's turn stops on its own)
        outcome = stop_for(ctx, exc, path)
    except Exception as exc:
        outcome = Fail(exc)
    if isinstance(outcome, Done):
        ctx.results[key] = outcome
        outputs(ctx)[name] = outcome.output
        if outcome.hosted:  # what an agent's hosted tools reported: `{{TOOL.citations}}`
            outputs(ctx).update(outcome.hosted)
    return outcome


def _step(
    ctx: RunContext, step: StepNode, input: Any, path: tuple[str, ...], branch: str | None = None
) -> Awaitable[Outcome]:
    # Not a coroutine itself: the caller awaits the model call directly, one frame less per step.
    if step.model is None and step.run is None and step.bindings:
        return _built(input)  # a record builder: `with` alone, its input is its output
    if step.run is not None:
        # Its result is replayed on a resume, like a tool's (src/plait/runtime/store/effects.py).
        if ctx.journal is not None:
            from .store.effects import journaled_code_step

            return journaled_code_step(ctx, step, input, path, run_code_step)
        return run_code_step(step, input, path)
    if step.messages:
        return _conversation(ctx, step, input, path)
    prompt = render(step.prompt, input=input, state=ctx.state, scope=ctx.scope)
    system = render(step.system, input=input, state=ctx.state, strict=False, scope=ctx.scope) if step.system else None
    if step.thread is not None:
        return _threaded(ctx, step, step.thread, [Message.user(prompt)], system, path)
    return _one_shot(ctx, _call_of(ctx, step), prompt, system, path)


async def _threaded(
    ctx: RunContext, step: StepNode, thread: str, messages: list[Message], system: str | None, path: tuple[str, ...]
) -> Done:
    """A model step that continues a thread: the thread's messages, then its own; those and the reply are its turn,
    added to the thread (threads.py)."""
    done, reply = await _call(ctx, _call_of(ctx, step), history_of(ctx, thread) + messages, system, path)
    leave(ctx, thread, path, step.name, [*messages, reply])
    return done


async def _conversation(ctx: RunContext, step: StepNode, input: Any, path: tuple[str, ...]) -> Done:
    """A step's `messages` (plait 0.3), each rendered as a prompt is: the system ones as the system prompt, the
    rest as the conversation the model answers."""
    system: list[str] = []
    messages: list[Message] = []
    for message in step.messages:
        role, text = message["role"], render(message["content"], input=input, state=ctx.state, scope=ctx.scope)
        if role == "system":
            system.append(text)
        else:
            messages.append(Message("assistant" if role == "assistant" else "user", [TextPart(text)]))
    said = "\n\n".join(system) or None
    if step.thread is not None:
        return await _threaded(ctx, step, step.thread, messages, said, path)
    return (await _call(ctx, _call_of(ctx, step), messages, said, path))[0]


async def _built(record: Any) -> Done:
    return Done(record)


def _call_of(ctx: RunContext, step: StepNode) -> AgentNode:
    """A model step is one model call, seen as an agent with no tools so it shares the call machinery."""
    made = ctx.program.step_calls.get(step.name)
    if made is not None and made[0] is step:  # made for this very record (a caller may swap one between runs)
        return made[1]
    # No fallback models and an empty `fallback_on`; the step's output type, asked for in its strict form.
    agent = AgentNode(
        name=step.name,
        model=step.model or "",
        fallback_on=(),
        output=step.output,
        retry_malformed=step.retry_malformed,
        validate=step.validate,
        # The settings its request carries (temperature, max_tokens), as the step's record journals them.
        **{name: getattr(step, name) for name in journaled_fields(StepNode)},
    )
    ctx.program.step_calls[step.name] = (step, agent)
    return agent


async def _one_shot(ctx: RunContext, agent: AgentNode, prompt: str, system: str | None, path: tuple[str, ...]) -> Done:
    return (await _call(ctx, agent, [Message.user(prompt)], system, path))[0]


async def _call(
    ctx: RunContext, agent: AgentNode, messages: list[Message], system: str | None, path: tuple[str, ...]
) -> tuple[Done, Message]:
    """One model call → its outcome and the model's reply as a message (what a thread keeps)."""
    request = model_request(agent, messages, system=system, path=path)
    if ctx.bus.active:  # an agent's turns announce themselves in call_model; a one-shot call does it here
        ctx.emit("step_start", path, agent, step=1)
    call = direct_call(ctx, agent, request)
    if call is None:
        response = await complete_with_fallbacks(ctx, agent, request, path)
    else:  # awaited here rather than through complete_with_fallbacks: one frame less per branch of a parallel
        response = await call
        served(ctx, agent, agent.model, request, response, path)
    if response.finish_reason in TRUNCATED:
        # As an agent's turn does (call_model): the text goes on, but not unannounced.
        why, fix = cut_off(request, response)
        ctx.warn(
            "response_truncated",
            f"`{agent.name}`: the model's response was cut off ({why}); {fix} for the whole answer",
            path,
            agent,
            finish_reason=response.finish_reason,
            raw_finish_reason=response.raw_finish_reason,
        )
    if agent.output_schema() is not None or agent.validate is not None:
        response = await structured_answer(ctx, agent, request, response, path)
        return Done(response.output, "done", finish_reason=response.finish_reason), response.message
    return Done(final_answer_text(response.message), "done", finish_reason=response.finish_reason), response.message


async def run_chain(
    ctx: RunContext, elements: tuple[str, ...], input: Any, path: tuple[str, ...], branch: str | None
) -> Outcome:
    """Each element's output is the next one's input; the first that does not finish normally ends the chain."""
    outcome: Outcome = Done(input)
    for element in elements:
        outcome = await run_runnable(ctx, element, input, path + (element,), branch)
        # A bounded stop is not an answer to feed forward; a `break` ends the chain on its way to its loop.
        if not isinstance(outcome, Done) or outcome.reason in ("max_steps", "break"):
            return outcome
        input = outcome.output
    return outcome


class _FanIn:
    """A parallel's branches report here as they finish; the parallel wakes once, when the last is in.

    Each branch reports from inside its own task, so a branch costs one task and
    no done-callbacks (gather and a fail-fast watcher would schedule two per
    branch), and finished tasks are freed as soon as the parallel returns.
    """

    __slots__ = ("all_in", "left", "outcomes", "tasks", "fail_fast", "failure")

    def __init__(self, size: int, fail_fast: bool) -> None:
        self.all_in: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.left = size
        #: Per branch, in declaration order: its outcome, or the BaseException it ended with.
        self.outcomes: list[Any] = [None] * size
        self.tasks: list[asyncio.Task[None]] = []
        self.fail_fast = fail_fast
        #: The first branch to fail, when failing fast: (index, its Fail).
        self.failure: tuple[int, Fail] | None = None
        if size == 0:
            self.all_in.set_result(None)

    def arrive(self, index: int, outcome: Any) -> None:
        self.outcomes[index] = outcome
        self.left -= 1
        if self.fail_fast and self.failure is None and isinstance(outcome, Fail):
            self.failure = (index, outcome)
            for i, task in enumerate(self.tasks):
                if i != index:
                    task.cancel()
        # Already resolved by an earlier fast failure, or cancelled along with the parallel.
        if (self.left == 0 or self.failure is not None) and not self.all_in.done():
            self.all_in.set_result(None)

    async def wait(self) -> None:
        """Until every branch is in, or one failed fast; either way no branch is still running after."""
        try:
            await self.all_in
        except asyncio.CancelledError:
            for task in self.tasks:
                task.cancel()
            await self._settle()
            raise
        if self.failure is not None:
            await self._settle()

    async def _settle(self) -> None:
        # As gather does, cancelled branches finish before the parallel does. A branch cancelled
        # before it started never reports in, so this waits on the tasks, not on the count.
        running = [t for t in self.tasks if not t.done()]
        if running:
            await asyncio.wait(running)


async def _branch(ctx: RunContext, fan: _FanIn, index: int, name: str, input: Any, path: tuple[str, ...]) -> None:
    try:
        outcome = await run_runnable(ctx, name, input, path, name)
    except BaseException as exc:  # cancelled (a sibling failed, or the parallel was): still counted in
        fan.arrive(index, exc)
        raise
    fan.arrive(index, outcome)


async def _parallel(
    ctx: RunContext, parallel: ParallelNode, input: Any, path: tuple[str, ...], branch: str | None = None
) -> Outcome:
    branches = parallel.branches
    fan = _FanIn(len(branches), parallel.on_error == "fail")
    create_task = asyncio.get_running_loop().create_task
    fan.tasks = [create_task(_branch(ctx, fan, i, b, input, path + (b,))) for i, b in enumerate(branches)]
    await fan.wait()
    if fan.failure is not None:
        index, failed = fan.failure
        try:
            failed.error.branch = branches[index]  # type: ignore[attr-defined]
        except AttributeError:
            pass
        return failed
    record: dict[str, Any] = {}
    stops: list[Interrupt | Pause] = []
    bounded = False
    for b, outcome in zip(branches, fan.outcomes):
        if isinstance(outcome, BaseException):
            raise outcome
        if isinstance(outcome, Done):
            record[b] = outcome.output
            bounded = bounded or outcome.reason == "max_steps"
        elif isinstance(outcome, Fail):
            if isinstance(outcome.error, BudgetExceeded):
                return outcome  # a budget that fails the run fails it whatever the parallel collects
            info = error_info(outcome.error)
            info["branch"] = b
            ctx.warn(
                "branch_failed",
                f"branch `{b}` of `{parallel.name}` failed: {info['message']}",
                path + (b,),
                branch=b,
                kind=info["kind"],
            )
            # Memoised as the branch's record entry so a resume does not re-run the failure.
            ctx.results["/".join(path + (b,))] = Done({"error": info})
            record[b] = {"error": info}
        else:
            stops.append(outcome)
    if stops:
        return merge_stops(stops)
    return Done(record, "max_steps" if bounded else "done")


VERDICT_PROMPT = """You judge whether these agents agree on the task.

Task:
{task}

Answers (round {round}):
{answers}

Reply with one JSON object and nothing else: {{"agreed": true or false, "summary": "the agreed answer, or a summary of the disagreement"}}"""

_JSON_OBJECT = re.compile(r"\{.*\}", re.S)


def _verdict(text: str) -> tuple[bool, str, bool]:
    """(agreed, summary, parsed) from the judge's reply; an unreadable verdict counts as disagreement."""
    match = _JSON_OBJECT.search(text)
    if match:
        try:
            data = json.loads(match.group(0))
            if isinstance(data, dict) and isinstance(data.get("agreed"), bool):
                return data["agreed"], as_text(data.get("summary", "")), True
        except ValueError:
            pass
    return False, text, False


async def _consolidate(
    ctx: RunContext, cfg: ConsolidateNode, input: Any, path: tuple[str, ...], branch: str | None
) -> Outcome:
    task = render(cfg.task, input=input, state=ctx.state, scope=ctx.scope)
    answers: dict[str, str] = {}
    summary = ""
    for round_no in range(1, max(1, cfg.rounds) + 1):
        prompts = {a: task if not answers else _with_peers(task, a, answers) for a in cfg.agents}
        round_path = path + (f"round{round_no}",)
        outcomes = await asyncio.gather(
            *(run_runnable(ctx, a, prompts[a], round_path + (a,), branch) for a in cfg.agents)
        )
        for a, outcome in zip(cfg.agents, outcomes):
            if not isinstance(outcome, Done):
                return outcome
            answers[a] = as_text(outcome.output)
        listing = "\n\n".join(f"[{a}]\n{text}" for a, text in answers.items())
        judged = await _judge(
            ctx,
            cfg.judge,
            VERDICT_PROMPT.format(task=task, round=round_no, answers=listing),
            round_path + (cfg.judge,),
            branch,
        )
        if not isinstance(judged, Done):
            return judged
        agreed, summary, parsed = _verdict(as_text(judged.output))
        if not parsed:
            ctx.warn(
                "judge_verdict_unparsed",
                f"judge `{cfg.judge}` of `{cfg.name}` did not reply with a JSON verdict; counted as disagreement",
                path,
            )
        if ctx.bus.active:
            ctx.emit("consolidate_round", path, None, round=round_no, agreed=agreed, summary=summary)
        if agreed:
            break
    return Done(summary)


def _with_peers(task: str, me: str, answers: dict[str, str]) -> str:
    others = "\n\n".join(f"[{a}]\n{text}" for a, text in answers.items() if a != me)
    return f"{task}\n\nYour previous answer:\n{answers.get(me, '')}\n\nThe other agents answered:\n{others}\n\nConsider their answers and give your answer again."


async def _judge(ctx: RunContext, judge: str, prompt: str, path: tuple[str, ...], branch: str | None) -> Outcome:
    if judge in ctx.program.agents:
        return await run_runnable(ctx, judge, prompt, path, branch)
    agent = AgentNode(name=judge, model=judge, fallback_on=())
    try:
        return await _one_shot(ctx, agent, prompt, None, path)
    except BudgetExceeded as exc:
        return stop_for(ctx, exc, path)
    except Exception as exc:
        return Fail(exc)


# --- one executor per runnable kind --------------------------------------------------
# Each is called as (ctx, record, input, path, branch); those that run other runnables get the runners here
# (route, loop and map are below compose: they are handed run_runnable and run_chain rather than importing them).


def _chain(
    ctx: RunContext, chain: ChainNode, input: Any, path: tuple[str, ...], branch: str | None
) -> Awaitable[Outcome]:
    return run_chain(ctx, chain.elements, input, path, branch)


def _route(
    ctx: RunContext, route: RouteNode, input: Any, path: tuple[str, ...], branch: str | None
) -> Awaitable[Outcome]:
    return run_route(ctx, route, input, path, branch, run_runnable)


def _loop(ctx: RunContext, loop: LoopNode, input: Any, path: tuple[str, ...], branch: str | None) -> Awaitable[Outcome]:
    return run_loop(ctx, loop, input, path, branch, run_chain)


def _map(ctx: RunContext, cfg: MapNode, input: Any, path: tuple[str, ...], branch: str | None) -> Awaitable[Outcome]:
    return run_map(ctx, cfg, input, path, branch, run_runnable, run_chain)


#: Runnable kind → how one runs; `run_runnable` looks a name up in the program (`Program.runnable`) and calls this.
EXECUTORS: dict[str, Callable[..., Awaitable[Outcome]]] = {
    "agent": run_handing_off,
    "step": _step,
    "chain": _chain,
    "parallel": _parallel,
    "consolidate": _consolidate,
    "route": _route,
    "loop": _loop,
    "map": _map,
    "ask": run_ask,
}
