"""Modules → the symbol table: one namespace for every file of the spec, and the named types it declares."""

from __future__ import annotations

from plait.dsl import ast
from plait.core.diagnostics import Fix, Label, Severity

from plait.core.codes import declare, make
from ..context import CompileContext
from ..schema import a
from ..types import named_types

# The codes this module raises; their documentation is explain/<code>.md beside it.
P102 = declare("P102", "duplicate-name", Severity.ERROR, "two declarations with one name")


def collect_symbols(ctx: CompileContext) -> None:
    for module in ctx.load.modules:
        for decl in module.declarations:
            if isinstance(decl, ast.ImportDecl):
                continue
            if isinstance(decl, ast.InputDecl | ast.StateDecl):  # unnamed: one of each per spec
                _block(ctx, decl)
                continue
            if isinstance(decl, ast.TestDecl):  # tests are not graph nodes: a namespace of their own
                _test(ctx, decl)
                continue
            name = decl.name.name
            first = ctx.decls.get(name) or ctx.type_decls.get(name)
            if first is None:
                # A named type is no graph node either, but its name is one of the spec's.
                (ctx.type_decls if isinstance(decl, ast.TypeDecl) else ctx.decls)[name] = decl
                continue
            ctx.diagnostics.append(
                make(
                    "P102",
                    f"`{name}` is declared twice",
                    decl.name.span,
                    labels=[Label(first.name.span, f"first declared here as {a(first.kind)}")],
                    fix=Fix("rename one of them; all declarations share one namespace"),
                )
            )

    if ctx.type_decls:
        ctx.named_types = named_types(ctx.type_decls, ctx.diagnostics.append)


def _block(ctx: CompileContext, decl: ast.InputDecl | ast.StateDecl) -> None:
    first = ctx.blocks.get(decl.kind)
    if first is None:
        ctx.blocks[decl.kind] = decl
        return
    ctx.diagnostics.append(
        make(
            "P102",
            f"`{decl.kind}` is declared twice",
            decl.span,
            labels=[Label(first.span, "first declared here")],
            fix=Fix(f"merge the fields into one `{decl.kind}` block"),
        )
    )


def _test(ctx: CompileContext, decl: ast.TestDecl) -> None:
    name = decl.name.name
    first = next((t for t in ctx.tests_written if t.name.name == name), None)
    if first is None:
        ctx.tests_written.append(decl)
        return
    ctx.diagnostics.append(
        make(
            "P102",
            f"test `{name}` is declared twice",
            decl.name.span,
            labels=[Label(first.name.span, "first declared here")],
            fix=Fix("rename one of them; tests share one namespace"),
        )
    )
