"""Template strings → P401 for a malformed `{{ ... }}` anywhere, and for a tool template naming no parameter.

Why: a path that does not resolve fails the run at the moment the template is
filled, often after minutes of model calls. A tool's templates (an http
tool's `url`, `body` and header values) may only name its parameters and
`state.<key>`. A runnable's paths (`input...`, `run.input...`, `NAME...`,
`loop...`, `map...`, `state...`) depend on where it runs and are typed per
use by passes/check_flow; this rule only reports their malformed placeholders.
"""

from __future__ import annotations

from itertools import chain
from typing import Iterator

from plait.dsl import ast
from plait.core.diagnostics import Diagnostic, Fix, Severity, did_you_mean

from plait.core.codes import declare, make
from ..context import CompileContext
from ..schema import TEMPLATES, suggest
from ._placeholders import Placeholder, placeholders
from .literal_secret import looks_secret, looks_secret_in
from ..draft import NOTHING

# The codes this module raises; their documentation is explain/<code>.md beside it.
P401 = declare("P401", "unresolved-template", Severity.ERROR, "a template path that cannot resolve")
# Expressions (`{{ len(docs) }}`): parsed here once per string, typed per use by passes/check_flow through
# src/plait/compiler/expressions.py, which raises P404 with this module's declaration.
P403 = declare("P403", "expression-syntax", Severity.ERROR, "a `{{ ... }}` that is neither a path nor an expression")
P404 = declare(
    "P404", "expression-type", Severity.ERROR, "an expression whose operands, filter or function do not fit its types"
)

__all__ = ["CODE", "unresolved_template"]

CODE = "P401"


def _strings(decl: ast.AgentDecl | ast.StepDecl | ast.ConsolidateDecl, keys: tuple[str, ...]) -> Iterator[ast.String]:
    for key in keys:
        entry = decl.body.get(key)
        if entry is not None and isinstance(entry.value, ast.String):
            yield entry.value
    if isinstance(decl, ast.StepDecl) and decl.body.get("messages") is not None:
        from ..messages import message_strings

        yield from message_strings(decl)


def _http_strings(decl: ast.ToolDecl) -> Iterator[ast.String]:
    run = decl.body.get("run")
    call = run.value if run is not None else None
    if not isinstance(call, ast.Call) or call.func.name != "http":
        return
    if len(call.args) == 2 and isinstance(call.args[1], ast.String):
        yield call.args[1]
    for entry in call.block.attributes if call.block else ():
        if entry.key.name == "body" and isinstance(entry.value, ast.String):
            yield entry.value
        elif entry.key.name == "headers" and isinstance(entry.value, ast.Block):
            yield from (h.value for h in entry.value.attributes if isinstance(h.value, ast.String))


#: A message is one line in every format (JSON and SARIF too): a line break between the braces is shown escaped.
_ONE_LINE = str.maketrans({"\n": "\\n", "\r": "\\r", "\t": "\\t"})


def _shown(raw: str) -> str:
    """Text between braces as a message may echo it: short, on one line, and never a whole secret."""
    raw = raw.translate(_ONE_LINE)
    if looks_secret(raw, None):
        return raw.strip()[:4] + "…"
    return raw if len(raw) <= 24 else raw[:20] + "…"


def _expression(p: Placeholder) -> Iterator[Diagnostic]:
    """P403 when the expression does not parse (its types are checked per use, by passes/check_flow)."""
    from plait.core.expr import ExprSyntaxError, parse

    # A key pasted between braces: said without parsing (or echoing) it.
    if looks_secret_in(p.path, p.string.span, p.sources):
        yield make(CODE, f"`{{{{{_shown(p.path)}}}}}` is not a template path", p.span)
        return
    try:
        parse(p.path)
    except ExprSyntaxError as e:
        yield make(
            "P403",
            f"`{{{{ {_shown(p.path)} }}}}` is not an expression: {e.message}",
            p.span,
            notes=["between `{{` and `}}` goes a path (`classify.summary`) or a Jinja expression (`len(docs) > 0`)"],
        )


def _tool_expression(ctx: CompileContext, p: Placeholder, owner: str) -> Iterator[Diagnostic]:
    """A tool template's expression reads only the tool's parameters and `state`, as its paths do."""
    from plait.core.expr import ExprSyntaxError, parse

    from ..expressions import paths

    if looks_secret_in(p.path, p.string.span, p.sources):
        return
    try:
        tree = parse(p.path)
    except ExprSyntaxError:
        return
    for parts in paths(tree):
        read = Placeholder(".".join(parts), None, p.string, p.nth, p.sources, p.shared)
        yield from _tool_path(ctx, read, owner)


def _malformed(p: Placeholder) -> Diagnostic:
    if p.problem == "unclosed":
        return make(
            CODE, "unclosed `{{` in template", p.span, fix=Fix("close it with `}}`, or write `\\{{` for literal braces")
        )
    return make(
        CODE,
        "`{{}}` holds nothing",
        p.span,
        notes=["a path is `input`, `input.<branch>`, `state.<key>` or, in a tool, a parameter name"],
    )


def _tool_path(ctx: CompileContext, p: Placeholder, owner: str) -> Iterator[Diagnostic]:
    params = list((ctx.values.get(owner, NOTHING).get("parameters") or {}).get("properties", {}))
    head = p.parts[0]
    if head in params or head == "state":
        return
    hint = suggest(head, params)
    listed = ", ".join(f"`{n}`" for n in params) or "none"
    yield make(
        CODE,
        f"`{{{{{p.path}}}}}` is not a parameter of tool `{owner}`",
        p.span,
        notes=[f"its parameters: {listed}; a tool's templates can use its parameters and `state.<key>`"],
        fix=did_you_mean(hint, p.span, p.path.replace(head, hint, 1)) if hint else None,
    )


def unresolved_template(ctx: CompileContext) -> None:
    if ctx.graph is None:
        return
    seen: set[tuple] = set()
    sources = ctx.load.sources
    for name, decl in ctx.decls.items():
        if isinstance(decl, ast.ToolDecl):
            strings = list(_http_strings(decl))
        elif decl.kind in TEMPLATES and name in ctx.graph:
            strings = list(_strings(decl, TEMPLATES[decl.kind]))
        else:
            continue
        for string in strings:
            for p in placeholders(string, sources):
                if p.problem == "expression":
                    found: Iterator[Diagnostic] = _expression(p)
                    if decl.kind == "tool":
                        found = chain(found, _tool_expression(ctx, p, name))
                elif p.problem is not None:
                    found = iter([_malformed(p)])
                elif decl.kind == "tool":
                    found = _tool_path(ctx, p, name)
                else:
                    continue  # a runnable's paths are typed per use by passes/check_flow
                for d in found:
                    # One placeholder may fail the same way at several uses: say it once.
                    if (d.span, d.message) not in seen:
                        seen.add((d.span, d.message))
                        ctx.diagnostics.append(d)
