"""Rendering a template with expressions against today's plain `{{path}}` template of the same size.

Usage: python bench/expression_bench.py [--quick]

Two prompts of the same length with the same number of placeholders (12), each
filled from the same values (a plan record with a list of tasks, a loop's
last review, the run's input) through `plait.runtime.templates.render`, as a
step's prompt is at run time: one with plain paths only (`{{plan.title}}`),
one with an expression in every placeholder (`{{ plan.title | upper }}`,
`{{ len(plan.tasks) }}`, `{{ loop.last.feedback | default("none") }}`,
`{{ "urgent" if plan.urgent else "" }}`, ...). Compiled expressions are cached
per text, so the timed loop is the steady state a run sees after its first
call. Target: an expression template costs at most 2x the plain one.
Prints the median per-render time over batches, their ratio, and the median of
the ratios of batches run back to back.
"""

from __future__ import annotations

import os
import statistics
import sys
import time

PLAIN = (
    "Write the report {{plan.title}} for {{run.input.customer}} about {{run.input.topic}}. "
    "Tasks: {{plan.tasks}}. Count: {{plan.count}}. Urgent: {{plan.urgent}}. "
    "Last review: {{loop.last.feedback}} (round {{loop.iteration}}). "
    "Notes: {{plan.note}}; owner {{plan.owner}}; due {{plan.due}}; budget {{plan.budget}}."
)
EXPRESSIONS = (
    "Write {{ plan.title | upper }} for {{ run.input.customer }} on {{ run.input.topic | lower }}. "
    "Tasks: {{ plan.tasks | join(', ') }}. Count: {{ len(plan.tasks) }}. {{ 'Urgent.' if plan.urgent else '' }} "
    "Review: {{ loop.last.feedback | default('none') }} ({{ loop.iteration + 1 }}). "
    "{{ plan.note | default('') }}; {{ plan.owner }}; {{ plan.due }}; {{ plan.budget * 2 }}."
)
# The same size: the plain one padded with literal text to the expression one's length.
PLAIN += " Keep it short and plain, no tables."[: len(EXPRESSIONS) - len(PLAIN)].ljust(
    len(EXPRESSIONS) - len(PLAIN), "."
)

VALUES = {
    "plan": {
        "title": "Quarterly review",
        "tasks": ["intro", "numbers", "risks", "outlook"],
        "count": 4,
        "urgent": True,
        "note": None,
        "owner": "ops",
        "due": "2026-12-31",
        "budget": 1200,
    },
    "run": {"input": {"customer": "ACME", "topic": "Churn"}},
    "loop": {"iteration": 2, "last": {"feedback": "shorter intro"}},
}


def main() -> None:
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))
    from plait.runtime.templates import render

    quick = "--quick" in sys.argv
    batches, per_batch = (7, 2000) if quick else (21, 10000)
    scope = VALUES.get

    def time_one(template: str) -> float:
        started = time.perf_counter()
        for _ in range(per_batch):
            render(template, input=None, state={}, scope=scope)
        return (time.perf_counter() - started) / per_batch

    print(f"plain template {len(PLAIN)} chars, expression template {len(EXPRESSIONS)} chars, 12 placeholders each")
    print("plain:      ", render(PLAIN, scope=scope)[:100], "...")
    print("expressions:", render(EXPRESSIONS, scope=scope)[:100], "...")
    plain, expr, ratios = [], [], []
    for i in range(batches):
        first, second = (PLAIN, EXPRESSIONS) if i % 2 == 0 else (EXPRESSIONS, PLAIN)
        a, b = time_one(first), time_one(second)
        p, e = (a, b) if first is PLAIN else (b, a)
        plain.append(p)
        expr.append(e)
        ratios.append(e / p)
    mp, me = statistics.median(plain), statistics.median(expr)
    print(f"plain {mp * 1e6:.1f} us  expressions {me * 1e6:.1f} us  ratio of medians {me / mp:.2f}x")
    print(f"median of paired batch ratios {statistics.median(ratios):.2f}x  (target <= 2x)")
    print(f"load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
