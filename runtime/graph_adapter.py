"""The compiled `AgentGraph` → a `Program` of runtime config objects.

The one place that reads graph node attributes (docs/graph.md); everything
after it works on `config.py` objects, so the loop never depends on how the
compiler stores things.
"""

from __future__ import annotations

from typing import Any

from .config import AgentConfig, ChainConfig, ConsolidateConfig, ParallelConfig, Program, StepConfig, ToolConfig
from .providers.base import FALLBACK_KINDS, ModelConfig

__all__ = ["program_from_graph"]


def _given(attrs: dict[str, Any], key: str, default: Any) -> Any:
    value = attrs.get(key)
    return default if value is None else value


def program_from_graph(graph: Any) -> Program:
    program = Program(entry=graph.entry, base_dir=str(graph.base_dir) if graph.base_dir else None)
    for id in graph.nodes_of("model"):
        a = graph.node(id)
        program.models[id] = ModelConfig(
            name=id,
            provider=a["provider"],
            model_id=a["model_id"],
            temperature=a.get("temperature"),
            max_tokens=a.get("max_tokens"),
            timeout=a.get("timeout"),
            base_url=a.get("base_url"),
            api_key_env=a.get("api_key_env"),
            retries=_given(a, "retries", 2),
            headers=tuple((a.get("headers") or {}).items()),
            api=a.get("api"),
            script=a.get("script"),
        )
    for id in graph.nodes_of("tool"):
        a = graph.node(id)
        program.tools[id] = ToolConfig(
            id,
            a.get("description") or "",
            a.get("parameters") or {"type": "object", "properties": {}},
            dict(a.get("run") or {}),
            approval=bool(a.get("approval")),
            timeout=_given(a, "timeout", 60.0),
            result=_given(a, "result", "content"),
        )
    for id in graph.nodes_of("agent"):
        a = graph.node(id)
        fallback_on = a.get("fallback_on")
        program.agents[id] = AgentConfig(
            id,
            a["model"],
            description=a.get("description"),
            fallback=tuple(a.get("fallback") or ()),
            fallback_on=frozenset(fallback_on) if fallback_on is not None else FALLBACK_KINDS,
            system=a.get("system"),
            tools=tuple(a.get("tools") or ()),
            max_steps=_given(a, "max_steps", 16),
            until=tuple(a.get("until") or ()),
            until_succeeded=bool(a.get("until_succeeded")),
            retry_malformed=_given(a, "retry_malformed", 0),
            validate_arguments=_given(a, "validate_arguments", True),
            keep_last=a.get("keep_last"),
            approval=tuple(a.get("approval") or ()),
            tool_timeout=a.get("tool_timeout"),
            temperature=a.get("temperature"),
            max_tokens=a.get("max_tokens"),
            label=a.get("label"),
            source=a.get("source"),
            attributes=dict(a.get("attributes") or {}),
        )
    for id in graph.nodes_of("step"):
        a = graph.node(id)
        program.steps[id] = StepConfig(id, a["model"], _given(a, "prompt", "{{input}}"), a.get("system"), a.get("max_tokens"), a.get("temperature"))
    for id in graph.nodes_of("chain"):
        program.chains[id] = ChainConfig(id, tuple(graph.node(id)["elements"]))
    for id in graph.nodes_of("parallel"):
        a = graph.node(id)
        program.parallels[id] = ParallelConfig(id, tuple(a["branches"]), _given(a, "on_error", "fail"))
    for id in graph.nodes_of("consolidate"):
        a = graph.node(id)
        program.consolidates[id] = ConsolidateConfig(id, tuple(a["agents"]), a["judge"], _given(a, "rounds", 3), _given(a, "task", "{{input}}"))
    return program
