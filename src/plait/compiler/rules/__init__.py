"""Lint rules → the RULES tuple the `lint` pass runs, in order.

One rule per module: its docstring says what it finds and why, `CODE` is its
diagnostic code, and one same-named function appends findings to the context.
Modules starting with `_` are shared helpers, not rules.
"""

from __future__ import annotations

from .agent_lists import agent_lists
from .budget_unpriced import budget_unpriced
from .duplicate_member import duplicate_member
from .literal_secret import literal_secret
from .model_unreachable import model_unreachable
from .python_module import python_module
from .script_invalid import script_invalid
from .tool_name_collision import tool_name_collision
from .unresolved_template import unresolved_template
from .unused_declaration import unused_declaration

__all__ = ["RULES"]

RULES = (
    literal_secret,
    model_unreachable,
    script_invalid,
    python_module,
    tool_name_collision,
    agent_lists,
    duplicate_member,
    budget_unpriced,
    unresolved_template,
    unused_declaration,
)
