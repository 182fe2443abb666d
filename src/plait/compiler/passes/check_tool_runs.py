"""A tool's `run = delegate(AGENT) { returns = ... }` or `run = hosted(KIND) { ... }` → its checked `run` value, and the
graph's agent tools and hosted tools → their diagnostics (plait 0.3).

An agent tool exposes an agent under the tool's own name, with the tool's
declared `params` as the agent's input record and a chosen part of the agent's
output (`returns = output.flights`) as the tool's result. A hosted tool is
one the model's provider runs itself (web search, code execution): nothing
runs on plait's side, so what matters is whether the provider of every model
an agent using it may call (its fallbacks included) hosts it.

- P381 (error): `delegate(AGENT)` names no agent, or `returns` is not a field of
  that agent's declared output.
- P382 (error): a hosted tool on an agent whose model's provider does not host
  that kind of tool.
- P383 (warning): the model's catalogue entry says it has no `hosted_tools`.

A hosted kind plait does not know, or an option it does not take, is P204 /
P201, as for any attribute value.
"""

from __future__ import annotations

from typing import Any, Callable

from plait.core import types as t
from plait.core.codes import declare, make
from plait.core.diagnostics import Diagnostic, Fix, Label, Severity, did_you_mean
from plait.core.hosted import HOSTED, OPTIONS, hosts
from plait.dsl import ast

from ..context import CompileContext
from ..schema import a, suggest
from ._blocks import path_parts

__all__ = ["check_tool_runs", "tool_run"]

# The codes this module raises; their documentation is explain/<code>.md beside it.
P381 = declare("P381", "agent-tool-invalid", Severity.ERROR, "an agent tool whose agent or `returns` does not resolve")
P382 = declare(
    "P382", "hosted-tool-unsupported", Severity.ERROR, "a hosted tool on a model whose provider does not run it"
)
P383 = declare(
    "P383", "hosted-tool-without-capability", Severity.WARNING, "a hosted tool on a model the catalogue says lacks it"
)


def tool_run(ctx: CompileContext, owner: str, call: ast.Call, report: Callable[[Diagnostic], None]) -> dict | None:
    """`delegate(AGENT) { returns = output.a.b }` or `hosted(KIND) { options }` → the tool's `run` value (None: reported)."""
    if call.func.name == "delegate":
        return _delegate(ctx, owner, call, report)
    return _hosted(call, report)


def _delegate(ctx: CompileContext, owner: str, call: ast.Call, report: Callable[[Diagnostic], None]) -> dict | None:
    arg = call.args[0] if len(call.args) == 1 else None
    if not isinstance(arg, ast.Ref):
        report(make("P203", "`delegate` takes the name of one agent: `delegate(flight_finder)`", call.span))
        return None
    returns: tuple[str, ...] = ()
    for entry in call.block.attributes if call.block is not None else ():
        if entry.key.name != "returns":
            report(_unknown_option(entry.key, ("returns",), "delegate"))
            continue
        value = entry.value
        parts = path_parts(value)
        if parts is None or parts[0] != "output":
            report(make("P203", "`returns` is a path into the agent's output: `output` or `output.FIELD`", value.span))
            return None
        returns = parts[1:]
    # The reference makes the agent used (and drawn as delegated to); its kind is checked like any reference's.
    decl = ctx.decls.get(arg.name)
    if decl is None or decl.kind != "agent":
        what = f"is {a(decl.kind)}" if decl is not None else "is not declared"
        hint = suggest(arg.name, [n for n, d in ctx.decls.items() if d.kind == "agent"]) if decl is None else None
        report(
            make(
                "P381",
                f"`delegate({arg.name})` in tool `{owner}`: `{arg.name}` {what}; `delegate(...)` takes an agent",
                arg.span,
                fix=did_you_mean(hint, arg.span),
            )
        )
        return None
    from ..context import Reference

    ctx.references.append(Reference(owner, "run", arg.name, arg.span))
    return {"type": "agent", "agent": arg.name, "returns": list(returns)}


def _hosted(call: ast.Call, report: Callable[[Diagnostic], None]) -> dict | None:
    arg = call.args[0] if len(call.args) == 1 else None
    if not isinstance(arg, ast.Ref):
        report(make("P203", "`hosted` takes one kind of tool: `hosted(web_search)`", call.span))
        return None
    if arg.name not in HOSTED:
        hint = suggest(arg.name, list(HOSTED))
        known = ", ".join(f"`{k}`" for k in HOSTED)
        report(
            make(
                "P204",
                f"`{arg.name}` is not a hosted tool plait knows; expected one of {known}",
                arg.span,
                fix=did_you_mean(hint, arg.span),
            )
        )
        return None
    options: dict[str, Any] = {}
    allowed = OPTIONS[arg.name]
    for entry in call.block.attributes if call.block is not None else ():
        key, value = entry.key.name, entry.value
        if key not in allowed:
            report(_unknown_option(entry.key, tuple(allowed), f"hosted({arg.name})"))
            continue
        want = allowed[key]
        if want == "int" and isinstance(value, ast.Number) and isinstance(value.value, int) and value.value >= 1:
            options[key] = value.value
        elif (
            want == "strings"
            and isinstance(value, ast.ListValue)
            and all(isinstance(i, ast.String) for i in value.items)
        ):
            options[key] = [i.value for i in value.items if isinstance(i, ast.String)]
        elif isinstance(want, tuple) and isinstance(value, ast.Ref) and value.name in want:
            options[key] = value.name
        else:
            expected = (
                "a whole number, at least 1"
                if want == "int"
                else 'a list of strings (`["example.com"]`)'
                if want == "strings"
                else "one of " + ", ".join(f"`{w}`" for w in want)
            )
            report(make("P203", f"`{key}` in `hosted({arg.name})` must be {expected}", value.span))
    return {"type": "hosted", "hosted": arg.name, "options": options}


def _unknown_option(key: ast.Ident, allowed: tuple[str, ...], where: str) -> Diagnostic:
    hint = suggest(key.name, list(allowed))
    return make(
        "P201",
        f"unknown attribute `{key.name}` in `{where}`; expected " + ", ".join(f"`{a}`" for a in allowed),
        key.span,
        fix=did_you_mean(hint, key.span),
    )


# --- the pass ------------------------------------------------------------------------------


def check_tool_runs(ctx: CompileContext) -> None:
    tools = {
        name: run
        for name, decl in ctx.decls.items()
        if decl.kind == "tool" and isinstance(run := _value(ctx, name, "run"), dict)
        if run.get("type") in ("agent", "hosted")
    }
    if not tools:
        return
    for name, run in tools.items():
        if run["type"] == "agent" and run["returns"]:
            _returns(ctx, name, run)
    for ref in ctx.references:
        if ref.attr == "tools" and ref.target in tools and tools[ref.target]["type"] == "hosted":
            _hosted_on(ctx, ref.owner, ref.target, tools[ref.target]["hosted"], ref.span)


def _returns(ctx: CompileContext, tool: str, run: dict) -> None:
    agent = run["agent"]
    shape = ctx.types.get(agent)
    if shape is None:
        return
    walked = "output"
    for part in run["returns"]:
        current = t.strip_optional(shape)
        if isinstance(current, t.AnyType):
            return
        found = t.step(current, part)
        if found is None:
            span = ctx.spans.get(tool, {}).get("run") or ctx.decls[tool].name.span
            if isinstance(current, t.TextType):
                why = f"`{walked}` of agent `{agent}` is text, not a record"
            else:
                fields = [f.name for f in getattr(current, "fields", ())]
                why = (
                    f"`{walked}` of agent `{agent}` has no field `{part}` (its fields: "
                    + ", ".join(f"`{f}`" for f in fields)
                    + ")"
                )
            ctx.diagnostics.append(
                make(
                    "P381",
                    f"tool `{tool}` returns `{'.'.join(('output', *run['returns']))}`, which does not resolve: {why}",
                    span,
                    labels=[Label(ctx.decls[agent].name.span, f"agent `{agent}` is declared here")],
                    fix=Fix("name a field of the agent's `output`, or `output` for all of it"),
                )
            )
            return
        walked = f"{walked}.{part}"
        shape = found


def _hosted_on(ctx: CompileContext, owner: str, tool: str, kind: str, span: Any) -> None:
    if ctx.kind(owner) != "agent":
        return
    models = [_value(ctx, owner, "model"), *(_value(ctx, owner, "fallback") or ())]
    for model in models:
        if not model or ctx.kind(model) != "model":
            continue
        provider = _value(ctx, model, "provider") or ""
        via = f"`{model}` ({provider}/{_value(ctx, model, 'model_id') or ''})"
        if not hosts(provider, kind):
            which = ", ".join(p for p in HOSTED[kind])
            ctx.diagnostics.append(
                make(
                    "P382",
                    f"agent `{owner}` uses hosted tool `{tool}` ({kind}), but {via} cannot run it: "
                    f"{kind} is hosted by {which}",
                    span,
                    labels=[Label(ctx.decls[tool].name.span, f"`{tool}` is declared here")],
                    fix=Fix(f"give `{owner}` a model of a provider that hosts {kind}, or use a tool plait runs"),
                )
            )
            continue
        info = _value(ctx, model, "catalogue")
        if info is not None and info.can("hosted_tools") is False:
            ctx.diagnostics.append(
                make(
                    "P383",
                    f"agent `{owner}` uses hosted tool `{tool}`, but the catalogue says {via} has no hosted tools",
                    span,
                    fix=Fix("use a model with hosted tools, or add `hosted_tools` to the model's `capabilities`"),
                )
            )


def _value(ctx: CompileContext, name: str, attr: str) -> Any:
    draft = ctx.values.get(name)
    return draft.get(attr) if draft is not None else None
