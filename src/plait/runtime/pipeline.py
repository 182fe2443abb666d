"""One agent turn → the outcome of running TURN_STEPS in order.

Each step returns CONTINUE or a terminal result (Done, Interrupt, Pause, Fail)
that is passed straight through; NEXT_TURN skips the rest of the turn. A run that
stopped resumes at the step that stopped it, named (never numbered, so stored
runs survive a step being added or moved; after an interrupt that is
`check_interrupts`), so approved calls run through the same tool, state and
until steps as any other, and their results expand at the start of the next turn.
"""

from __future__ import annotations

from typing import Awaitable, Callable

from .context import AgentRun, RunContext
from .outcomes import CONTINUE, NEXT_TURN, Outcome
from .steps import (
    call_model,
    check_budget,
    check_interrupts,
    check_until,
    expand_messages,
    loop_boundary,
    propagate_state,
    run_tools,
)

__all__ = ["TURN_STEPS", "Step", "run_turn"]

Step = Callable[[AgentRun, RunContext], Awaitable[Outcome]]

TURN_STEPS: tuple[Step, ...] = (
    check_budget,
    expand_messages,
    call_model,
    check_interrupts,
    run_tools,
    propagate_state,
    check_until,
    loop_boundary,
)


async def run_turn(
    run: AgentRun, ctx: RunContext, start: str | None = None, steps: tuple[Step, ...] = TURN_STEPS
) -> Outcome:
    """Run `steps` from the one named `start` (None: the first) until one stops the turn."""
    first = 0 if start is None else _index(steps, start)
    for index in range(first, len(steps)):
        outcome = await steps[index](run, ctx)
        if outcome is not CONTINUE:
            if outcome is NEXT_TURN:
                return CONTINUE
            # A run stopped for a human or a pause picks up at the step that stopped it.
            run.resume_at = steps[index].__name__
            return outcome
    return CONTINUE


def _index(steps: tuple[Step, ...], name: str) -> int:
    for index, step in enumerate(steps):
        if step.__name__ == name:
            return index
    raise ValueError(f"the stored run resumes at step `{name}`, which this plait's turn does not have")
