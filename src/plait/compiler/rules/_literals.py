"""Modules → every string literal written in them, with the key it is the value of.

Rules that look at literals (secrets) walk the AST directly rather than the
symbol table, so duplicate declarations and imported files are covered too.
The walk is written per node type, not via reflection, to stay cheap on large specs.
"""

from __future__ import annotations

from typing import Iterator

from plait.dsl import ast

from ..passes._blocks import body_of

__all__ = ["string_literals"]

#: (the string, the attribute / map key / parameter name it belongs to, or None)
Literal = tuple[ast.String, str | None]


def string_literals(modules: list[ast.Module]) -> Iterator[Literal]:
    for module in modules:
        for decl in module.declarations:
            yield from _decl(decl)


def _decl(decl: ast.Node) -> Iterator[Literal]:
    if isinstance(decl, ast.ImportDecl):
        return
    if isinstance(decl, ast.ModelDecl):
        yield decl.target, None
    description = getattr(decl, "description", None)
    if description is not None:
        yield description, None
    if isinstance(decl, ast.ParallelDecl):
        yield from _value(decl.branches, None)
    # A loop's or map's `body` is its runnables; its attributes are in `block` (as body_of reads them).
    body = body_of(decl)
    if body is not None:
        yield from _block(body)


def _block(block: ast.Block) -> Iterator[Literal]:
    for entry in block.attributes:
        yield from _value(entry.value, entry.key.name)
    for params in block.params:
        yield from _params(params.params)


def _params(params: tuple[ast.Param, ...]) -> Iterator[Literal]:
    for param in params:
        if param.description is not None:
            yield param.description, None
        if param.default is not None:
            yield from _value(param.default, param.name.name)
        yield from _params(param.type.fields)


def _value(value: ast.Node, key: str | None) -> Iterator[Literal]:
    if isinstance(value, ast.String):
        yield value, key
    elif isinstance(value, ast.ListValue):
        for item in value.items:
            yield from _value(item, key)
    elif isinstance(value, ast.Block):
        yield from _block(value)
    elif isinstance(value, ast.Call):
        # env("NAME") holds a variable's name, which is exactly what should be written; anything after
        # the name (a default, a stray second argument) is a value and may be a key.
        args = value.args[1:] if value.func.name == "env" else value.args
        for arg in args:
            yield from _value(arg, key)
        if value.block is not None:
            yield from _block(value.block)
