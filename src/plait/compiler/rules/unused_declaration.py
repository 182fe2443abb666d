"""Declarations → P601 (warning) for each one nothing references and that is not the entry.

Without `main`, every root is a possible entry (LANGUAGE.md, Entry point), so
only models, tools and threads can be unused; with `main`, a runnable nothing uses is.

Why: an unused model, tool or runnable is usually a typo'd reference or a
leftover; in an imported file it is still dead weight in this spec. Only the
first level is reported: what an unused declaration itself references counts
as used, so removing one warning never hides another problem.
"""

from __future__ import annotations

from plait.core.diagnostics import Fix, Severity

from plait.core.codes import declare, make
from ..context import CompileContext
from ..schema import RUNNABLE_KINDS
from ..types import type_names

# The codes this module raises; their documentation is explain/<code>.md beside it.
P601 = declare("P601", "unused-declaration", Severity.WARNING, "a declaration nothing uses")

__all__ = ["CODE", "unused_declaration"]

CODE = "P601"


def unused_declaration(ctx: CompileContext) -> None:
    used = {r.target for r in ctx.references}
    entry = ctx.graph.entry if ctx.graph is not None else None
    # Without `main` every root is a possible entry (`plait run --entry`), so no runnable is unused.
    has_main = ctx.kind("main") in RUNNABLE_KINDS
    for name, decl in ctx.decls.items():
        if name in used or name == entry:
            continue
        if decl.kind in ("model", "tool", "mcp"):
            hint = "reference it from an agent or step, or remove it"
        elif decl.kind == "thread":
            hint = "continue it from an agent or a model step (`thread = NAME`), or remove it"
        elif not has_main or decl.kind not in RUNNABLE_KINDS:
            continue
        else:
            hint = f"place it in `{entry}` (or what it runs), or remove it"
        ctx.diagnostics.append(make(CODE, f"{decl.kind} `{name}` is never used", decl.name.span, fix=Fix(hint)))
    if ctx.type_decls:
        _unused_types(ctx)


def _unused_types(ctx: CompileContext) -> None:
    """A named type (plait 0.3) no type expression of the spec names, not even another type's."""
    named = {n for module in ctx.load.modules for decl in module.declarations for n in type_names(decl)}
    # A misspelt use (P207's "did you mean `Flight`?") is the finding; the type it meant is not unused.
    named |= {d.fix.replacement for d in ctx.diagnostics if d.code == "P207" and d.fix and d.fix.replacement}
    for name, decl in ctx.type_decls.items():
        if name not in named:
            fix = Fix(f"use it where a type is written (`output {name}`, `field: {name}`), or remove it")
            ctx.diagnostics.append(make(CODE, f"type `{name}` is never used", decl.name.span, fix=fix))
