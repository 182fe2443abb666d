"""Kind records' field defaults → named constants for the runtime's config objects, and a run's input cap.

Each default is declared once, on its kind's record (src/plait/core/kinds/);
the compiler's schema and the graph read it there, and the runtime's config
objects (built by hand in tests and the Python API) start from these names.
"""

from __future__ import annotations

from .kinds import AgentNode, ConsolidateNode, LoopNode, MapNode, ModelNode, ParallelNode, StepNode, ToolNode
from .kinds.base import default_of

__all__ = [
    "MAP_CONCURRENCY",
    "MAX_INPUT_BYTES",
    "MAX_STEPS",
    "MODEL_RETRIES",
    "ON_ERROR",
    "ON_EXHAUSTED",
    "PROMPT",
    "RETRY_MALFORMED",
    "ROUNDS",
    "TASK",
    "TOOL_RESULT",
    "TOOL_TIMEOUT",
]

#: model: network retries per call.
MODEL_RETRIES: int = default_of(ModelNode, "retries")
#: tool: seconds one call may take; how the result reaches the model.
TOOL_TIMEOUT: float = default_of(ToolNode, "timeout")
TOOL_RESULT: str = default_of(ToolNode, "result")
#: a run's input (`--input`, a batch line): its size at most, in bytes of UTF-8 (larger is refused, with this number).
MAX_INPUT_BYTES = 16 * 1024 * 1024
#: agent: LLM calls in one run; malformed replies re-asked.
MAX_STEPS: int = default_of(AgentNode, "max_steps")
RETRY_MALFORMED: int = default_of(AgentNode, "retry_malformed")
#: step: what a step sends when it has no prompt (only a code step or the Python API has none).
PROMPT: str = default_of(StepNode, "prompt")
#: consolidate: debate rounds and the task every agent is given.
ROUNDS: int = default_of(ConsolidateNode, "rounds")
TASK: str = default_of(ConsolidateNode, "task")
#: parallel and map: the first failure cancels the rest ("fail") or every result is kept ("collect").
ON_ERROR: str = default_of(ParallelNode, "on_error")
#: loop: what happens when max_iterations run out ("fail" or "last").
ON_EXHAUSTED: str = default_of(LoopNode, "on_exhausted")
#: map: items run at once.
MAP_CONCURRENCY: int = default_of(MapNode, "concurrency")
