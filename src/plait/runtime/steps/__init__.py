"""The turn's steps, one small async function each: (AgentRun, RunContext) → Outcome."""

from .call_model import call_model
from .check_budget import check_budget
from .check_interrupts import check_interrupts
from .check_until import check_until
from .expand_messages import expand_messages
from .loop_boundary import loop_boundary
from .propagate_state import propagate_state
from .run_tools import run_tools

__all__ = [
    "call_model",
    "check_budget",
    "check_interrupts",
    "check_until",
    "expand_messages",
    "loop_boundary",
    "propagate_state",
    "run_tools",
]
