"""The end of a turn → another turn if the model is waiting on tool results, else the answer.

A model that stops without calling its `until` tool breaks the contract: an
`until_tool_not_called` error naming the targets, and a `tools_never_called`
warning when it never called any tool at all (a server that ignores `tools`).
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
        _never_called(run, ctx)
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


def _never_called(run: AgentRun, ctx: RunContext) -> None:
    """Warn when the model never asked for any tool all run: often a server that drops `tools` without a word."""
    offered = run.toolset.specs
    if not offered or any(m.tool_calls for m in run.messages if m.role == "assistant"):
        return
    ctx.warn(
        "tools_never_called",
        f"agent `{run.agent.name}` offered {len(offered)} tool(s) and the model called none in this run; "
        "if the server is a local one, check that it supports tool calls (llama.cpp needs `--jinja`, and the "
        "model's chat template must render tools): a server that drops `tools` answers as if there were none",
        run.path,
        run.agent,
        tools=[t.name for t in offered],
    )
