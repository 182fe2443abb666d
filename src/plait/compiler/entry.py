"""AgentGraph → where a run starts: `main`, else the spec's only root; the roots are the candidates otherwise.

A root is a declared runnable nothing else uses: no chain, parallel, route,
loop or map places it, no agent delegates to it, no consolidate debates or
judges with it. `plait check` uses the roots to decide what is unused
(P601); `plait run` uses the entry, and lists the roots when there is none.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .graph import AgentGraph

__all__ = ["USE_EDGES", "entry_point", "roots"]

#: Edges that place, call, debate or hand control to a runnable inside another one.
USE_EDGES = ("next", "branch", "case", "body", "each", "delegates", "participant", "judge", "handoff")


def roots(graph: AgentGraph) -> list[str]:
    """Declared runnables nothing else uses, in declaration order."""
    used = {e.target for e in graph.edges(*USE_EDGES) if not (e.kind == "next" and e.chain is None)}
    return [name for name in graph.runnables() if name not in used]


def entry_point(graph: AgentGraph) -> str | None:
    """`main` when it is a runnable, else the only root, else None (the caller must pick one)."""
    if "main" in graph.runnables():
        return "main"
    found = roots(graph)
    return found[0] if len(found) == 1 else None
