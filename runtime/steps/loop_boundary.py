"""The end of a turn → another turn if the model is waiting on tool results, else the answer.

A model that stops without calling its `until` tool breaks the contract: an
`until_tool_not_called` error naming the targets.
"""

from __future__ import annotations

from ..context import AgentRun, RunContext
from ..errors import AgentError
from ..outcomes import CONTINUE, Done, Fail, Outcome
from ..providers.base import final_answer_text


async def loop_boundary(run: AgentRun, ctx: RunContext) -> Outcome:
    response = run.response
    run.response = None
    run.results = {}
    run.outcomes = []
    if response is None or response.message.tool_calls:
        return CONTINUE
    if run.agent.until:
        targets = ", ".join(f"`{t}`" for t in run.agent.until)
        return Fail(
            AgentError(
                "until_tool_not_called",
                f"agent `{run.agent.name}` stopped without calling {targets} (its `until` contract)",
                path=run.path,
            )
        )
    # A declared `output` was validated by call_model: the record, not its JSON text, is the result.
    output = response.output if response.output is not None else final_answer_text(response.message)
    return Done(output, "done", finish_reason=response.finish_reason)
