"""This turn's tool outcomes → the end of the run when the `until` tool was called (and succeeded, if asked)."""

from __future__ import annotations

from ..context import AgentRun, RunContext
from ..outcomes import CONTINUE, Done, Outcome


async def check_until(run: AgentRun, ctx: RunContext) -> Outcome:
    until = run.agent.until
    if not until:
        return CONTINUE
    for call, outcome in run.outcomes:
        if call.name in until and not (run.agent.until_succeeded and outcome.is_error):
            return Done(outcome.value if outcome.value is not None else outcome.content, "until", outcome.content, run.response.finish_reason if run.response else None)
    return CONTINUE
