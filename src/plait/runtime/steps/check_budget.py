"""Before a model call → pause if the caller's hook asks, stop if `max_steps` calls are spent.

Checked before each call, so the last permitted response still runs its tools
and can satisfy `until`.
"""

from __future__ import annotations

from ..context import AgentRun, RunContext
from ..outcomes import CONTINUE, Done, Outcome, Pause

DEFAULT_MAX_STEPS = 16


async def check_budget(run: AgentRun, ctx: RunContext) -> Outcome:
    if ctx.should_pause is not None:
        asked = ctx.should_pause()
        if asked:
            return Pause(asked if isinstance(asked, str) else None)
    limit = run.agent.max_steps if run.agent.max_steps > 0 else DEFAULT_MAX_STEPS
    if run.steps >= limit:
        return Done(f"stopped: reached max_steps ({limit})", "max_steps", finish_reason="length")
    return CONTINUE
