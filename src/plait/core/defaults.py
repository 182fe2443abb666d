"""An attribute a spec does not write → the value it has (attribute defaults).

One copy for every stage: the compiler's schema fills them in, the graph
records default to them, and the runtime's config objects (built by hand in
tests and the Python API) start from them.
"""

from __future__ import annotations

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
MODEL_RETRIES = 2
#: tool: seconds one call may take; how the result reaches the model.
TOOL_TIMEOUT = 60.0
TOOL_RESULT = "content"
#: a run's input (`--input`, a batch line): its size at most, in bytes of UTF-8 (larger is refused, with this number).
MAX_INPUT_BYTES = 16 * 1024 * 1024
#: agent: LLM calls in one run; malformed replies re-asked.
MAX_STEPS = 16
RETRY_MALFORMED = 0
#: step: what a step sends when it has no prompt (only a code step or the Python API has none).
PROMPT = "{{input}}"
#: consolidate: debate rounds and the task every agent is given.
ROUNDS = 3
TASK = "{{input}}"
#: parallel and map: the first failure cancels the rest ("fail") or every result is kept ("collect").
ON_ERROR = "fail"
#: loop: what happens when max_iterations run out ("fail" or "last").
ON_EXHAUSTED = "fail"
#: map: items run at once.
MAP_CONCURRENCY = 4
