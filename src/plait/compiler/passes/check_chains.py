"""Chains, parallels and the 0.2 compositions → their element lists, with every misplaced name reported.

A chain's elements, a parallel's branches, and a loop's or map's body become
the tuples the graph is built from; inline `parallel(...)` elements get their
node ids here. Names were resolved by resolve_names: an element that did not
resolve is left out, so nothing downstream meets a dangling name.
"""

from __future__ import annotations

from plait.core.codes import make
from plait.dsl import ast

from ..context import CompileContext
from ._blocks import inline_id
from .resolve_names import RUNNABLE

__all__ = ["check_chains"]


def _resolved(ctx: CompileContext, name: str) -> bool:
    decl = ctx.decls.get(name)
    return decl is not None and decl.kind in RUNNABLE


def _elements(ctx: CompileContext, owner: str, elements: tuple[ast.ChainElement, ...]) -> tuple[str, ...]:
    out: list[str] = []
    inline: list[tuple[str, ast.InlineParallel]] = []
    for element in elements:
        if isinstance(element, ast.InlineParallel):
            pid = inline_id(owner, len(inline) + 1)
            inline.append((pid, element))
            out.append(pid)
        elif _resolved(ctx, element.name):
            out.append(element.name)
    ctx.inline_parallels[owner] = inline
    return tuple(out)


def check_chains(ctx: CompileContext) -> None:
    for name, decl in ctx.decls.items():
        if isinstance(decl, ast.ChainDecl):
            ctx.draft(name)["elements"] = _elements(ctx, name, decl.elements)
        elif isinstance(decl, ast.ParallelDecl):
            branches = []
            for item in decl.branches.items:
                if not isinstance(item, ast.Ref):
                    ctx.diagnostics.append(make("P203", "parallel branches must be names", item.span))
                elif _resolved(ctx, item.name):
                    branches.append(item.name)
            ctx.draft(name)["branches"] = tuple(branches)
        elif isinstance(decl, ast.LoopDecl | ast.MapDecl):
            ctx.draft(name)["body"] = _elements(ctx, name, decl.body)
