"""Runtime declarations → what the loop works on: a `Program` of kind records and config objects.

Models, tools, MCP servers, chains, parallels, consolidates, routes, loops,
maps, asks and steps are their kind records (src/plait/core/kinds/), the graph's
own nodes (a tool registered in code: `FunctionTool`, its runtime-only
subclass holding the callable); agents are still slotted config
dataclasses that `graph_adapter.py` copies from the graph (issue 20). Tests
and Python callers build either directly. The loop never reads AST nodes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from plait.core import defaults as D
from plait.core.kinds import (
    AskNode,
    ChainNode,
    ConsolidateNode,
    LoopNode,
    MapNode,
    McpNode,
    ModelNode,
    ParallelNode,
    RouteNode,
    StepNode,
    ToolNode,
)

from .providers.base import FALLBACK_KINDS

__all__ = [
    "AgentConfig",
    "NO_FALLBACK",
    "Program",
    "RUNNABLE_TABLES",
]


@dataclass(slots=True)
class AgentConfig:
    name: str
    model: str
    description: str | None = None
    fallback: tuple[str, ...] = ()
    fallback_on: frozenset[str] = FALLBACK_KINDS
    system: str | None = None
    #: Tool and agent names, in spec order (an agent here is delegated to).
    tools: tuple[str, ...] = ()
    max_steps: int = D.MAX_STEPS
    until: tuple[str, ...] = ()
    until_succeeded: bool = False
    retry_malformed: int = D.RETRY_MALFORMED
    validate_arguments: bool = True
    keep_last: int | None = None
    approval: tuple[str, ...] = ()
    tool_timeout: float | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    #: "auto" | "none" | "required" | one of `tools`; None: the model's default, else the provider's.
    tool_choice: str | None = None
    label: str | None = None
    source: str | None = None
    attributes: dict[str, Any] = field(default_factory=dict)
    #: JSON Schema of the declared `output` (strict form, what the model is asked for); None = text.
    output: dict[str, Any] | None = None


#: What a step falls back on: nothing. One shared set rather than a new one per step.
NO_FALLBACK: frozenset[str] = frozenset()


@dataclass(slots=True)
class Program:
    """Everything one spec declares, by name: what an engine runs."""

    models: dict[str, ModelNode] = field(default_factory=dict)
    tools: dict[str, ToolNode] = field(default_factory=dict)
    agents: dict[str, AgentConfig] = field(default_factory=dict)
    steps: dict[str, StepNode] = field(default_factory=dict)
    chains: dict[str, ChainNode] = field(default_factory=dict)
    parallels: dict[str, ParallelNode] = field(default_factory=dict)
    consolidates: dict[str, ConsolidateNode] = field(default_factory=dict)
    routes: dict[str, RouteNode] = field(default_factory=dict)
    loops: dict[str, LoopNode] = field(default_factory=dict)
    maps: dict[str, MapNode] = field(default_factory=dict)
    asks: dict[str, AskNode] = field(default_factory=dict)
    #: MCP servers by declaration name; their tools are in `tools` as "SERVER.TOOL" (run = {"type": "mcp", ...}).
    mcp: dict[str, McpNode] = field(default_factory=dict)
    entry: str | None = None
    #: Runnables nothing else uses: the possible entries when there is no `main` (src/plait/compiler/entry.py).
    roots: tuple[str, ...] = ()
    base_dir: str | None = None
    #: JSON Schema of the `input` block (non-strict, defaults given); None = undeclared (any text).
    input: dict[str, Any] | None = None
    #: JSON Schema of the `state` block (an object; non-strict); None = undeclared (tools write any key).
    state: dict[str, Any] | None = None
    #: Where each declaration is written: name → (file, line); telemetry links spans to it.
    locations: dict[str, tuple[str, int]] = field(default_factory=dict)
    #: A model step's one call as the call machinery sees it (an agent with no tools), made on its first run.
    step_calls: dict[str, tuple[StepNode, AgentConfig]] = field(default_factory=dict, repr=False, compare=False)

    def runnables(self) -> list[str]:
        """Names a run can start at, in declaration order within each kind; inline parallels excluded."""
        return [n for _, table in RUNNABLE_TABLES for n in getattr(self, table) if "/" not in n]

    def runnable(self, name: str) -> tuple[str, Any] | None:
        """The runnable declared as `name`: its kind and its config (None when no runnable has that name)."""
        for kind, table in RUNNABLE_TABLES:
            config = getattr(self, table).get(name)
            if config is not None:
                return kind, config
        return None

    def kind_of(self, name: str) -> str | None:
        for kind, table in _NAMED_TABLES:
            if name in getattr(self, table):
                return kind
        return None


#: Runnable kind → the `Program` table of its configs, in the order a name is looked up.
RUNNABLE_TABLES: tuple[tuple[str, str], ...] = (
    ("agent", "agents"),
    ("step", "steps"),
    ("chain", "chains"),
    ("parallel", "parallels"),
    ("consolidate", "consolidates"),
    ("route", "routes"),
    ("loop", "loops"),
    ("map", "maps"),
    ("ask", "asks"),
)
_NAMED_TABLES = RUNNABLE_TABLES + (("tool", "tools"), ("model", "models"))
