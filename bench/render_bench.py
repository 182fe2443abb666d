"""A generated 1,000-agent spec → DOT, Mermaid (in-process) and SVG (through Graphviz), timed.

Beside it, in the same run: LangGraph's `get_graph().draw_mermaid()` of a
1,000-node chain, when `langgraph` is importable (`pip install -e '.[bench]'`).
Run: python bench/render_bench.py
"""

from __future__ import annotations

import statistics
import time

from plait.compiler.pipeline import compile_spec
from plait.compiler.render import RenderOptions, render

AGENTS = 1000
TOOLS = 20
MODELS = ("openai/gpt-4o-mini", "anthropic/claude-sonnet-4-5", "google/gemini-2.0-flash", "openai/gpt-4o")
TARGETS_MS = {"dot": 150, "mermaid": 150, "svg": 3000}


def spec(agents: int = AGENTS) -> str:
    """Models, tools (some behind approval), agents with fallbacks and until, all in one chain of parallels."""
    lines = [f'model m{i} = "{m}"' for i, m in enumerate(MODELS)]
    for t in range(TOOLS):
        approval = "\n  approval = required" if t % 5 == 0 else ""
        lines.append(f'tool t{t} "Tool {t}." {{\n  params {{ q: string }}\n  run = python("tools:t{t}"){approval}\n}}')
    for a in range(agents):
        tool = f"t{a % TOOLS}"
        until = f"\n  until = {tool} succeeded" if a % 7 == 0 else ""
        lines.append(
            f"agent a{a} {{\n  model = m{a % 4}\n  fallback = [m{(a + 1) % 4}]\n  tools = [{tool}]\n"
            f"  max_steps = {4 + a % 12}{until}\n}}"
        )
    # Groups of ten agents: five in a row, then a parallel of five, as real pipelines mix both.
    elements = []
    for g in range(0, agents, 10):
        elements += [f"a{g + i}" for i in range(5)]
        elements.append("parallel(" + ", ".join(f"a{g + i}" for i in range(5, 10)) + ")")
    lines.append("chain main = " + " -> ".join(elements))
    return "\n\n".join(lines) + "\n"


def median_ms(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def langgraph_ms(nodes: int = AGENTS, repeat: int = 7) -> float | None:
    try:
        from typing import TypedDict

        from langgraph.graph import END, START, StateGraph
    except ImportError:
        return None

    class State(TypedDict):
        x: int

    builder = StateGraph(State)
    for i in range(nodes):
        builder.add_node(f"n{i}", lambda state: state)
    builder.add_edge(START, "n0")
    for i in range(nodes - 1):
        builder.add_edge(f"n{i}", f"n{i + 1}")
    builder.add_edge(f"n{nodes - 1}", END)
    app = builder.compile()
    return median_ms(lambda: app.get_graph().draw_mermaid(), repeat)


def main() -> None:
    start = time.perf_counter()
    result = compile_spec(spec(), path="bench.plait")
    assert result.graph is not None, [str(d) for d in result.errors]
    graph = result.graph
    print(
        f"spec: {AGENTS} agents, {graph.nx.number_of_nodes()} nodes, {graph.nx.number_of_edges()} edges "
        f"(compiled in {(time.perf_counter() - start) * 1000:.0f} ms, not counted below)"
    )
    everything = RenderOptions(hide=("none",))
    # The default folds models and tools above 150 runnables; `--hide none` draws all 4,745 edges.
    rows = [
        ("dot", median_ms(lambda: render(graph, "dot"), 21)),
        ("mermaid", median_ms(lambda: render(graph, "mermaid"), 21)),
        ("dot --hide none", median_ms(lambda: render(graph, "dot", everything), 21)),
        ("mermaid --hide none", median_ms(lambda: render(graph, "mermaid", everything), 21)),
        ("svg (dot + Graphviz)", median_ms(lambda: render(graph, "svg"), 5)),
    ]
    reference = langgraph_ms()
    for name, ms in rows:
        target = TARGETS_MS.get(name.split()[0]) if "none" not in name else None
        verdict = "" if target is None else f"  (target ≤ {target} ms: {'ok' if ms <= target else 'MISSED'})"
        print(f"plait render {name:<26} median {ms:8.1f} ms{verdict}")
    if reference is None:
        print("langgraph not importable: reference skipped (pip install -e '.[bench]')")
    else:
        print(f"langgraph get_graph().draw_mermaid(), 1,000-node chain  median {reference:8.1f} ms")


if __name__ == "__main__":
    main()
