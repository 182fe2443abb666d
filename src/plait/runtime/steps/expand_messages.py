"""Tool results that asked to arrive as messages → messages on this turn's model call.

First in the turn on purpose: a turn that ended on an interrupt or a satisfied
`until` expands nothing, and results produced by a resume expand on the same
terms as any other.
"""

from __future__ import annotations

from ..context import AgentRun, RunContext
from ..outcomes import CONTINUE, Outcome


async def expand_messages(run: AgentRun, ctx: RunContext) -> Outcome:
    if run.expand:
        run.messages.extend(run.expand)
        run.expand = []
    return CONTINUE
