"""Runtime benchmark → medians for plait's agent loop, parallel fan-out and concurrent runs, beside LangGraph.

    python bench/runtime_bench.py            # everything (LangGraph too, if installed: pip install -e '.[bench]')
    python bench/runtime_bench.py --quick    # fewer repetitions

1. Overhead per round of a 10-round tool loop (10 tool rounds, then the answer)
   with an in-process model that answers instantly and a trivial tool: the whole
   wall time is framework overhead. Argument validation is on (the default).
2. 1,000 parallel branches whose model waits 50 ms: wall time over the ideal 50 ms.
3. 1,000 concurrent runs of that loop at 50 ms per model call: wall time over
   the ideal (11 calls x 50 ms) and memory per in-flight run (tracemalloc peak).
4. Control flow (plait 0.2), with an instant in-process model: what a route, a
   loop iteration and a map item add on top of the step they run, as a
   multiple of what one chain element costs; and a 1,000-item map whose
   body waits 50 ms, at concurrency 1,000, over bare asyncio's 1,000 sleeps.

2 and 3 take turns with the same waits in bare asyncio (the floor), repetition
by repetition, and report CPU time beside wall time: on a shared machine the
load changes within a run, and CPU is far less sensitive to it.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import operator
import os
import platform
import statistics
import subprocess
import sys
import time
import tracemalloc
import warnings
from pathlib import Path
from typing import Annotated, TypedDict

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from plait.runtime.conditions import Field  # noqa: E402
from plait.core.kinds import ModelNode
from plait.runtime.function_tool import FunctionTool
from plait.core.kinds import AgentNode
from plait.runtime.program import Program
from plait.core.kinds import StepNode
from plait.core.kinds import ChainNode, LoopNode, MapNode, ParallelNode, RouteCase, RouteNode
from plait.runtime.engine import Engine  # noqa: E402
from plait.runtime.providers.base import Message, ModelResponse, TextPart, ToolCall, Usage  # noqa: E402

ROUNDS = 10
LATENCY = 0.05


class LoopModel:
    """In-process model: a tool call until ROUNDS results are in the conversation, then the answer."""

    name = "bench"

    def __init__(self, latency: float = 0.0) -> None:
        self.latency = latency

    async def complete(self, request):
        if self.latency:
            await asyncio.sleep(self.latency)
        # user, then an (assistant, tool) pair per round so far
        done = (len(request.messages) - 1) // 2
        if done < ROUNDS:
            call = ToolCall(f"c{done}", "echo", {"text": "x"}, '{"text": "x"}')
            return ModelResponse(Message("assistant", [], [call]), "tool_calls", usage=Usage(10, 5))
        return ModelResponse(Message("assistant", [TextPart("done")]), "stop", usage=Usage(10, 1))

    async def aclose(self):
        pass


async def echo(text: str) -> str:
    return text


def loop_engine(latency: float = 0.0) -> Engine:
    program = Program(entry="main")
    program.models["bench"] = ModelNode(name="bench", provider="scripted", model_id="bench")
    program.tools["echo"] = FunctionTool(
        name="echo",
        description="Echo.",
        parameters={"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
        run={"type": "function"},
        fn=echo,
    )
    program.agents["main"] = AgentNode(name="main", model="bench", tools=("echo",), max_steps=ROUNDS + 1)
    return Engine(program, providers={"bench": LoopModel(latency)})


# -- plait ---------------------------------------------------------------------------------


def plait_overhead(runs: int) -> list[float]:
    engine = loop_engine()

    async def main():
        samples = []
        for _ in range(20):
            await engine.run("go")
        for _ in range(runs):
            t0 = time.perf_counter()
            result = await engine.run("go")
            samples.append((time.perf_counter() - t0) / ROUNDS * 1e6)
            assert result.output == "done" and result.report.model_calls == ROUNDS + 1
        return samples

    return asyncio.run(main())


def plait_parallel(branches: int) -> tuple[float, float]:
    """(wall, CPU) seconds of one run of a `parallel` of `branches` steps, on a fresh engine."""
    program = Program(entry="main")
    program.models["bench"] = ModelNode(name="bench", provider="scripted", model_id="bench")
    names = tuple(f"b{i}" for i in range(branches))
    program.parallels["main"] = ParallelNode(name="main", branches=names)
    for n in names:
        program.steps[n] = StepNode(name=n, model="bench")
    engine = Engine(program, providers={"bench": LoopModel(LATENCY)})

    async def main():
        t0, c0 = time.perf_counter(), time.process_time()
        result = await engine.run("go")
        elapsed, cpu = time.perf_counter() - t0, time.process_time() - c0
        assert len(result.output) == branches
        return elapsed, cpu

    return asyncio.run(main())


def plait_concurrent(runs: int, measure_memory: bool = False) -> tuple[float, float | None, float]:
    engine = loop_engine(LATENCY)

    async def main():
        gc.collect()
        if measure_memory:
            tracemalloc.start()
            base = tracemalloc.get_traced_memory()[0]
        t0, c0 = time.perf_counter(), time.process_time()
        results = await asyncio.gather(*(engine.run("go") for _ in range(runs)))
        elapsed, cpu = time.perf_counter() - t0, time.process_time() - c0
        peak = None
        if measure_memory:
            peak = (tracemalloc.get_traced_memory()[1] - base) / runs / 1024
            tracemalloc.stop()
        assert all(r.output == "done" for r in results)
        return elapsed, peak, cpu / (runs * (ROUNDS + 1)) * 1e6

    return asyncio.run(main())


def asyncio_floor(sleeps: int = ROUNDS + 1) -> tuple[float, float]:
    """The same waits with no framework at all: what the event loop alone costs on this machine now (wall, CPU)."""

    async def one():
        for _ in range(sleeps):
            await asyncio.sleep(LATENCY)

    async def main():
        t0, c0 = time.perf_counter(), time.process_time()
        await asyncio.gather(*(one() for _ in range(1000)))
        return time.perf_counter() - t0, time.process_time() - c0

    return asyncio.run(main())


# -- control flow (plait 0.2) ---------------------------------------------------------------

#: Elements per measured run: long enough that a run's fixed cost is spread thin, short enough to repeat often.
FLOW_N = 200


class TextModel:
    """In-process model that answers every call with the same text (a JSON object, so a loop's condition can read it)."""

    name = "bench"

    def __init__(self, latency: float = 0.0) -> None:
        self.latency = latency
        self.message = Message("assistant", [TextPart('{"ok": false}')])

    async def complete(self, request):
        if self.latency:
            await asyncio.sleep(self.latency)
        return ModelResponse(self.message, "stop", usage=Usage(1, 1))

    async def aclose(self):
        pass


def flow_engine(kind: str, n: int, latency: float = 0.0, concurrency: int = 4) -> Engine:
    """A program whose entry runs `n` steps: chained, each behind a route, as loop iterations, or as map items."""
    program = Program(entry="main")
    program.models["bench"] = ModelNode(name="bench", provider="scripted", model_id="bench")
    steps = [f"s{i}" for i in range(n)]
    for name in steps:
        program.steps[name] = StepNode(name=name, model="bench")
    if kind == "chain":
        program.chains["main"] = ChainNode(name="main", elements=tuple(steps))
    elif kind == "route":
        routes = [f"r{i}" for i in range(n)]
        for route, step in zip(routes, steps):
            program.routes[route] = RouteNode(
                name=route, subject=("input",), cases=(RouteCase("go", step),), otherwise=step
            )
        program.chains["main"] = ChainNode(name="main", elements=tuple(routes))
    elif kind == "loop":
        program.loops["main"] = LoopNode(
            name="main", body=("s0",), max_iterations=n, until=Field(("ok",)), on_exhausted="last"
        )
    elif kind == "map":
        program.maps["main"] = MapNode(name="main", body=("s0",), over=("input",), concurrency=concurrency)
    return Engine(program, providers={"bench": TextModel(latency)})


def flow_run_seconds(kind: str, n: int, runs: int) -> list[float]:
    """Wall seconds of each of `runs` runs (after a warm-up) of `flow_engine(kind, n)`."""
    engine = flow_engine(kind, n)
    items = [f"item {i}" for i in range(n)]

    async def main():
        samples = []
        for rep in range(runs + 5):
            t0 = time.perf_counter()
            result = await engine.run(items if kind == "map" else "go")
            if rep >= 5:
                samples.append(time.perf_counter() - t0)
            assert result.stop_reason == "done", result.to_dict().get("error")
        return samples

    return asyncio.run(main())


def flow_overheads(runs: int) -> dict[str, float]:
    """µs per chain element, and what a route, a loop iteration and a map item add to the step they run (µs and x element)."""
    kinds = ("chain", "route", "loop", "map")
    medians: dict[str, list[float]] = {k: [] for k in kinds}
    ones: list[float] = []
    for _ in range(5):  # taking turns, so a change in load hits every kind alike
        ones.append(statistics.median(flow_run_seconds("chain", 1, runs)))
        for kind in kinds:
            medians[kind].append(statistics.median(flow_run_seconds(kind, FLOW_N, runs)))
    t = {k: statistics.median(v) for k, v in medians.items()}
    element = (t["chain"] - statistics.median(ones)) / (FLOW_N - 1)
    out = {"chain_element_us": element * 1e6}
    for kind in ("route", "loop", "map"):
        extra = (t[kind] - t["chain"]) / FLOW_N
        out[f"{kind}_extra_us"] = extra * 1e6
        out[f"{kind}_x_element"] = extra / element
    return out


def plait_map(items: int, concurrency: int) -> tuple[float, float]:
    """(wall, CPU) seconds of a map of `items` steps whose model waits 50 ms, on a fresh engine."""
    engine = flow_engine("map", 1, LATENCY, concurrency)

    async def main():
        t0, c0 = time.perf_counter(), time.process_time()
        result = await engine.run([f"item {i}" for i in range(items)])
        elapsed, cpu = time.perf_counter() - t0, time.process_time() - c0
        assert len(result.output) == items
        return elapsed, cpu

    return asyncio.run(main())


def interleaved(reps: int, *measures):
    """Each measure `reps` times, taking turns, so a change in the machine's load hits all of them alike."""
    return list(zip(*[[m() for m in measures] for _ in range(reps)]))


# -- LangGraph -----------------------------------------------------------------------------


def langgraph_available() -> bool:
    try:
        import langgraph  # noqa: F401
        import langchain_core  # noqa: F401
    except ImportError:
        return False
    return True


def langgraph_agent(latency: float = 0.0):
    from langchain_core.language_models.chat_models import BaseChatModel
    from langchain_core.messages import AIMessage, ToolMessage
    from langchain_core.outputs import ChatGeneration, ChatResult
    from langchain_core.tools import tool

    with warnings.catch_warnings():
        warnings.simplefilter(
            "ignore"
        )  # create_react_agent is deprecated in favour of langchain.agents; it is still the prebuilt
        from langgraph.prebuilt import create_react_agent

    class LoopChat(BaseChatModel):
        delay: float = 0.0

        @property
        def _llm_type(self) -> str:
            return "bench-loop"

        def bind_tools(self, tools, **kwargs):
            return self

        def _reply(self, messages):
            done = sum(1 for m in messages if isinstance(m, ToolMessage))
            if done < ROUNDS:
                msg = AIMessage("", tool_calls=[{"name": "echo", "args": {"text": "x"}, "id": f"c{done}"}])
            else:
                msg = AIMessage("done")
            return ChatResult(generations=[ChatGeneration(message=msg)])

        def _generate(self, messages, stop=None, run_manager=None, **kwargs):
            return self._reply(messages)

        async def _agenerate(self, messages, stop=None, run_manager=None, **kwargs):
            if self.delay:
                await asyncio.sleep(self.delay)
            return self._reply(messages)

    @tool
    async def echo_tool(text: str) -> str:
        """Echo."""
        return text

    echo_tool.name = "echo"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return create_react_agent(LoopChat(delay=latency), [echo_tool])


def langgraph_overhead(runs: int) -> list[float]:
    agent = langgraph_agent()

    async def main():
        samples = []
        for _ in range(5):
            await agent.ainvoke({"messages": [("user", "go")]}, {"recursion_limit": 100})
        for _ in range(runs):
            t0 = time.perf_counter()
            out = await agent.ainvoke({"messages": [("user", "go")]}, {"recursion_limit": 100})
            samples.append((time.perf_counter() - t0) / ROUNDS * 1e6)
            assert out["messages"][-1].content == "done"
        return samples

    return asyncio.run(main())


def langgraph_parallel(branches: int) -> float:
    from langgraph.graph import END, START, StateGraph

    class State(TypedDict):
        out: Annotated[dict, operator.or_]

    graph = StateGraph(State)

    def make(name):
        async def node(state):
            await asyncio.sleep(LATENCY)
            return {"out": {name: "ok"}}

        return node

    for i in range(branches):
        graph.add_node(f"b{i}", make(f"b{i}"))
        graph.add_edge(START, f"b{i}")
        graph.add_edge(f"b{i}", END)
    app = graph.compile()

    async def main():
        t0 = time.perf_counter()
        out = await app.ainvoke({"out": {}})
        elapsed = time.perf_counter() - t0
        assert len(out["out"]) == branches
        return elapsed

    return asyncio.run(main())


def langgraph_concurrent(runs: int) -> float:
    agent = langgraph_agent(LATENCY)

    async def main():
        t0 = time.perf_counter()
        outs = await asyncio.gather(
            *(agent.ainvoke({"messages": [("user", "go")]}, {"recursion_limit": 100}) for _ in range(runs))
        )
        elapsed = time.perf_counter() - t0
        assert all(o["messages"][-1].content == "done" for o in outs)
        return elapsed

    return asyncio.run(main())


# -- report ----------------------------------------------------------------------------------


def machine() -> dict[str, str]:
    cpu = platform.processor() or ""
    try:
        for line in subprocess.run(["lscpu"], capture_output=True, text=True, check=False).stdout.splitlines():
            if line.startswith("Model name"):
                cpu = line.split(":", 1)[1].strip()
    except OSError:
        pass
    load = " ".join(f"{x:.1f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "?"
    return {
        "nproc": str(os.cpu_count()),
        "cpu": cpu,
        "python": platform.python_version(),
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "load": load,
    }


FLOW_ROWS = [
    ("one chain element, instant model (µs)", "chain_element_us", ""),
    ("  a route adds (x one chain element)", "route_x_element", "≤ 2"),
    ("  a loop iteration adds (x one chain element)", "loop_x_element", "≤ 2"),
    ("  a map item adds (x one chain element)", "map_x_element", "≤ 2"),
    ("1,000-item map at 50 ms, concurrency 1,000 (x bare asyncio)", "map_1000_x_asyncio", "≤ 1.15"),
    ("  the same map (x ideal 50 ms)", "map_1000_x_ideal", ""),
    ("  CPU per item in that map (µs)", "map_cpu_us_per_item", ""),
    ("  bare asyncio: 1,000 tasks x 1 sleep of 50 ms (x ideal)", "map_floor_x_ideal", ""),
    ("  bare asyncio: CPU per task (µs)", "map_floor_cpu_us_per_task", ""),
]


def flow_results(quick: bool, reps: int) -> dict[str, float]:
    out = flow_overheads(5 if quick else 15)
    mapped, floor = interleaved(reps, lambda: plait_map(1000, 1000), lambda: asyncio_floor(1))
    wall, floor_wall = statistics.median(m[0] for m in mapped), statistics.median(f[0] for f in floor)
    out["map_1000_x_asyncio"] = wall / floor_wall
    out["map_1000_x_ideal"] = wall / LATENCY
    out["map_cpu_us_per_item"] = statistics.median(m[1] for m in mapped) / 1000 * 1e6
    out["map_floor_x_ideal"] = floor_wall / LATENCY
    out["map_floor_cpu_us_per_task"] = statistics.median(f[1] for f in floor) / 1000 * 1e6
    return out


def report_flow(results: dict[str, float], as_json: bool) -> int:
    info = machine()
    if as_json:
        print(json.dumps({"machine": info, "results": {"plait": results}}, indent=2))
        return 0
    print(
        f"machine: {info['nproc']} x {info['cpu']}, Python {info['python']}, {info['date']}, load average {info['load']}"
    )
    print(f"{'measure':62} {'target':>8} {'plait':>10}")
    for label, key, target in FLOW_ROWS:
        print(f"{label:62} {target:>8} {results[key]:>10.2f}")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    parser.add_argument("--no-langgraph", action="store_true", help="skip LangGraph even if installed")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.add_argument("--flow", action="store_true", help="only the control-flow measures (route, loop, map)")
    args = parser.parse_args()
    reps = 3 if args.quick else 5
    with_lg = langgraph_available() and not args.no_langgraph
    ideal_loop = (ROUNDS + 1) * LATENCY
    results: dict[str, dict[str, float]] = {"plait": {}, "langgraph": {}}

    if args.flow:
        return report_flow(flow_results(args.quick, reps), args.json)
    samples = sorted(plait_overhead(100 if args.quick else 300))
    results["plait"]["overhead_us_per_round"] = statistics.median(samples)
    results["plait"]["overhead_us_per_round_p10"] = samples[len(samples) // 10]
    parallel, floor = interleaved(reps, lambda: plait_parallel(1000), lambda: asyncio_floor(1))
    results["plait"]["parallel_1000_x_ideal"] = statistics.median(p[0] for p in parallel) / LATENCY
    results["plait"]["parallel_cpu_us_per_branch"] = statistics.median(p[1] for p in parallel) / 1000 * 1e6
    results["plait"]["parallel_floor_x_ideal"] = statistics.median(f[0] for f in floor) / LATENCY
    results["plait"]["parallel_floor_cpu_us_per_branch"] = statistics.median(f[1] for f in floor) / 1000 * 1e6
    concurrent, floor = interleaved(reps, lambda: plait_concurrent(1000), asyncio_floor)
    results["plait"]["concurrent_1000_x_ideal"] = statistics.median(c[0] for c in concurrent) / ideal_loop
    results["plait"]["concurrent_cpu_us_per_call"] = statistics.median(c[2] for c in concurrent)
    results["plait"]["asyncio_floor_x_ideal"] = statistics.median(f[0] for f in floor) / ideal_loop
    results["plait"]["asyncio_floor_cpu_us_per_sleep"] = (
        statistics.median(f[1] for f in floor) / (1000 * (ROUNDS + 1)) * 1e6
    )
    results["plait"]["kib_per_inflight_run"] = statistics.median(
        plait_concurrent(1000, True)[1] for _ in range(max(1, reps // 2))
    )
    results["plait"].update(flow_results(args.quick, reps))
    if with_lg:
        samples = sorted(langgraph_overhead(20 if args.quick else 50))
        results["langgraph"]["overhead_us_per_round"] = statistics.median(samples)
        results["langgraph"]["overhead_us_per_round_p10"] = samples[len(samples) // 10]
        results["langgraph"]["parallel_1000_x_ideal"] = (
            statistics.median(langgraph_parallel(1000) for _ in range(max(1, reps // 2))) / LATENCY
        )
        results["langgraph"]["concurrent_1000_x_ideal"] = langgraph_concurrent(1000) / ideal_loop
    info = machine()
    if args.json:
        print(json.dumps({"machine": info, "results": results}, indent=2))
        return 0
    print(
        f"machine: {info['nproc']} x {info['cpu']}, Python {info['python']}, {info['date']}, load average {info['load']}"
    )
    rows = [
        ("overhead per round, 10-round tool loop (µs, median)", "overhead_us_per_round", "≤ 50"),
        ("overhead per round, 10-round tool loop (µs, p10)", "overhead_us_per_round_p10", ""),
        ("1,000 parallel branches at 50 ms (x ideal)", "parallel_1000_x_ideal", "≤ 1.25"),
        ("  CPU per branch in that run (µs)", "parallel_cpu_us_per_branch", ""),
        ("  bare asyncio: 1,000 tasks x 1 sleep of 50 ms (x ideal)", "parallel_floor_x_ideal", ""),
        ("  bare asyncio: CPU per task (µs)", "parallel_floor_cpu_us_per_branch", ""),
        ("1,000 concurrent 10-round runs at 50 ms/call (x ideal)", "concurrent_1000_x_ideal", "≤ 1.5"),
        ("  CPU per model call in that run, GC included (µs)", "concurrent_cpu_us_per_call", ""),
        ("  bare asyncio: 1,000 tasks x 11 sleeps of 50 ms (x ideal)", "asyncio_floor_x_ideal", ""),
        ("  bare asyncio: CPU per sleep (µs)", "asyncio_floor_cpu_us_per_sleep", ""),
        ("memory per in-flight run (KiB)", "kib_per_inflight_run", "≤ 30"),
        *FLOW_ROWS,
    ]
    print(f"{'measure':58} {'target':>8} {'plait':>10} {'LangGraph':>10}")
    for label, key, target in rows:
        lg = results["langgraph"].get(key)
        print(f"{label:58} {target:>8} {results['plait'][key]:>10.2f} {('%.2f' % lg) if lg is not None else '—':>10}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
