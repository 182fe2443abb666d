"""Runtime declarations → the plain config objects the loop works on.

The loop never reads graph nodes or AST nodes: `graph_adapter.py` builds these
from the compiled graph, and tests or Python callers may build them directly.
Slotted dataclasses, because the loop reads their fields on every step.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from .providers.base import FALLBACK_KINDS, ModelConfig

__all__ = [
    "AgentConfig",
    "ChainConfig",
    "ConsolidateConfig",
    "ModelConfig",
    "NO_FALLBACK",
    "ParallelConfig",
    "Program",
    "StepConfig",
    "ToolConfig",
]


@dataclass(slots=True)
class ToolConfig:
    name: str
    description: str = ""
    #: JSON Schema of the arguments object.
    parameters: dict[str, Any] = field(default_factory=lambda: {"type": "object", "properties": {}})
    #: {"type": "python", "target": "mod:fn", "base_dir": ...} | {"type": "http", ...}
    #: | {"type": "agent", "agent": name} | {"type": "function"} (then `fn` is set).
    run: dict[str, Any] = field(default_factory=dict)
    approval: bool = False
    timeout: float | None = 60.0
    #: "content" or "messages" (the result arrives as messages on the next call).
    result: str = "content"
    #: A Python callable registered in code (sync or async), keyword arguments in.
    fn: Callable[..., Any] | None = None


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
    max_steps: int = 16
    until: tuple[str, ...] = ()
    until_succeeded: bool = False
    retry_malformed: int = 0
    validate_arguments: bool = True
    keep_last: int | None = None
    approval: tuple[str, ...] = ()
    tool_timeout: float | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    label: str | None = None
    source: str | None = None
    attributes: dict[str, Any] = field(default_factory=dict)


#: What a step falls back on: nothing. One shared set rather than a new one per step.
NO_FALLBACK: frozenset[str] = frozenset()


@dataclass(slots=True)
class StepConfig:
    name: str
    model: str
    prompt: str = "{{input}}"
    system: str | None = None
    max_tokens: int | None = None
    temperature: float | None = None
    _agent: AgentConfig | None = field(default=None, repr=False, compare=False)

    def as_agent(self) -> AgentConfig:
        """A step is one model call, seen through an agent config so it shares the call machinery."""
        if self._agent is None:
            self._agent = AgentConfig(self.name, self.model, temperature=self.temperature, max_tokens=self.max_tokens, fallback_on=NO_FALLBACK)
        return self._agent


@dataclass(slots=True)
class ChainConfig:
    name: str
    elements: tuple[str, ...]


@dataclass(slots=True)
class ParallelConfig:
    name: str
    branches: tuple[str, ...]
    on_error: str = "fail"


@dataclass(slots=True)
class ConsolidateConfig:
    name: str
    agents: tuple[str, ...]
    judge: str
    rounds: int = 3
    task: str = "{{input}}"


@dataclass(slots=True)
class Program:
    """Everything one spec declares, by name: what an engine runs."""

    models: dict[str, ModelConfig] = field(default_factory=dict)
    tools: dict[str, ToolConfig] = field(default_factory=dict)
    agents: dict[str, AgentConfig] = field(default_factory=dict)
    steps: dict[str, StepConfig] = field(default_factory=dict)
    chains: dict[str, ChainConfig] = field(default_factory=dict)
    parallels: dict[str, ParallelConfig] = field(default_factory=dict)
    consolidates: dict[str, ConsolidateConfig] = field(default_factory=dict)
    entry: str | None = None
    base_dir: str | None = None

    def runnables(self) -> list[str]:
        """Names a run can start at, in declaration order within each kind; inline parallels excluded."""
        names = [*self.agents, *self.steps, *self.chains, *self.parallels, *self.consolidates]
        return [n for n in names if "/" not in n]

    def kind_of(self, name: str) -> str | None:
        for kind in ("agents", "steps", "chains", "parallels", "consolidates", "tools", "models"):
            if name in getattr(self, kind):
                return kind[:-1]
        return None
