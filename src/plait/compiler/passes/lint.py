"""A checked graph → the findings of every lint rule in `compiler.rules.RULES`.

Runs last: rules read the symbol table, the normalised values and the graph,
and only append diagnostics.
"""

from __future__ import annotations

from ..context import CompileContext
from ..rules import RULES


def lint(ctx: CompileContext) -> None:
    for rule in RULES:
        rule(ctx)
