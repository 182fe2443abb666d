"""State updates returned by this turn's tools → merged into the run's state."""

from __future__ import annotations

from ..context import AgentRun, RunContext
from ..outcomes import CONTINUE, Outcome


async def propagate_state(run: AgentRun, ctx: RunContext) -> Outcome:
    for _call, outcome in run.outcomes:
        if outcome.state:
            ctx.state.update(outcome.state)
            if ctx.journal is not None:
                ctx.journal.record_state(run.path, outcome.state)
    return CONTINUE
