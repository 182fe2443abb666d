"""This turn's tool outcomes → the end of the run when the `until` tool was called (and succeeded, if asked)."""

from __future__ import annotations

from ..context import AgentRun, RunContext
from ..outcomes import CONTINUE, Done, Outcome
from ..tools import as_text


async def check_until(run: AgentRun, ctx: RunContext) -> Outcome:
    until = run.agent.until
    if not until:
        return CONTINUE
    for call, outcome in run.outcomes:
        if call.name in until and not (run.agent.until_succeeded and outcome.is_error):
            finish = run.response.finish_reason if run.response else None
            if outcome.delivered is not None:  # `result = messages`: no next call delivers them, so return them
                return Done(outcome.delivered, "until", as_text(outcome.delivered), finish)
            return Done(
                outcome.value if outcome.value is not None else outcome.content, "until", outcome.content, finish
            )
    return CONTINUE
