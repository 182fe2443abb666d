"""A route, its input and a graph path → the outcome of the one case its subject's value picks.

The subject is read on the route's own input (or any visible path), the first
case whose literal equals it runs with that same input, else the `else` case;
the route's output is the case's (from plait 0.3 with the fields only other
cases declare set to null). The choice is recorded (report decision and
`route` event, with the value that decided it) and kept in the run's progress,
so a resumed run goes back into the same case without deciding again. A case
that goes to `break` (plait 0.3) runs nothing: the route finishes as a
`Done` with reason "break", its output what it received and `until_result`
the loop it leaves, which every chain passes up unchanged until that loop
(loop.py) ends with it. A subject written as an expression (`on "{{ len(input.docs) > 0 }}"`) is
evaluated where the route runs, its names read as a template's are.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

from .conditions import same
from plait.core.conditions import Expr, condition_text
from plait.core.kinds import RouteNode
from plait.core.types import ObjectType, Type, UnionType

from .context import RunContext
from .errors import AgentError
from .outcomes import Done, Outcome
from .scope import MISSING, PathError, read_head, resolve

__all__ = ["Runner", "pick", "run_route", "with_absent_fields"]

#: compose.run_runnable, passed in (compose imports this module).
Runner = Callable[[RunContext, str, Any, tuple[str, ...], "str | None"], Awaitable[Outcome]]


def subject_text(route: RouteNode) -> str:
    """The subject as the spec writes it: `input.category`, or `{{ len(input.docs) > 0 }}`."""
    subject = route.subject
    return condition_text(subject) if isinstance(subject, Expr) else ".".join(subject)


def _expression(ctx: RunContext, route: RouteNode, input: Any) -> Any:
    """The value of a subject written as an expression; PathError naming a name that is not there."""
    from plait.core.expr import ExprFailed, evaluate

    assert isinstance(route.subject, Expr)

    def read(name: str) -> Any:
        value = read_head(ctx, name, input)
        if value is MISSING:
            raise PathError(f"`{name}` is not there")
        return value

    try:
        return evaluate(route.subject.text, read)
    except ExprFailed as exc:
        raise AgentError("expression_failed", f"route `{route.name}`: `{subject_text(route)}` failed: {exc}") from None


def pick(route: RouteNode, value: Any) -> tuple[str | None, Any, str | None]:
    """(target, the case's literal or "else", the loop it leaves) for a subject value: the target is None for a
    case that goes to `break`, the loop None for any other; AgentError naming the value when no case fits."""
    for case in route.cases:
        if same(value, case.value):
            return case.target, case.value, None
    for leave in route.breaks:
        if leave.value is not None and same(value, leave.value):
            return None, leave.value, leave.leaves
    if route.otherwise is not None:
        return route.otherwise, "else", None
    for leave in route.breaks:
        if leave.value is None:
            return None, "else", leave.leaves
    literals = [case.value for case in route.cases] + [b.value for b in route.breaks if b.value is not None]
    cases = ", ".join(json.dumps(value) for value in literals)
    raise AgentError(
        "route_unmatched",
        f"route `{route.name}`: no case for {json.dumps(value, default=str)} "
        f"(from `{subject_text(route)}`) and no `else`; the cases are {cases}",
    )


async def run_route(
    ctx: RunContext, route: RouteNode, input: Any, path: tuple[str, ...], branch: str | None, run: Runner
) -> Outcome:
    key = "/".join(path)
    chosen = ctx.progress.get(key)
    if chosen is None:
        try:
            value = (
                _expression(ctx, route, input)
                if isinstance(route.subject, Expr)
                else resolve(ctx, route.subject, input)
            )
        except PathError as exc:
            raise AgentError("route_subject_missing", f"route `{route.name}`: {exc}", path=path) from None
        target, case, leaves = pick(route, value)
        # A break's decision and progress name the loop it leaves (`leaves`), and no target; others' are as in 0.2.
        said = {"target": target} if leaves is None else {"target": None, "leaves": leaves}
        chosen = ctx.progress[key] = {"kind": "route", **said}
        subject = subject_text(route)
        ctx.decide("route", route.name, path, key, subject=subject, value=value, case=case, **said)
        if ctx.bus.active:
            ctx.emit("route", path, None, route=route.name, subject=subject, value=value, case=case, **said)
    target = chosen["target"]
    if target is None:  # `-> break`: nothing runs; the loop it leaves ends with what the route received
        del ctx.progress[key]
        return Done(input, "break", until_result=chosen.get("leaves"))
    outcome = await run(ctx, target, input, path + (target,), branch)
    if isinstance(outcome, Done) and outcome.reason == "break":  # a case's own route left a loop: pass it up
        del ctx.progress[key]
    elif isinstance(outcome, Done):
        del ctx.progress[key]
        outcome.output = with_absent_fields(route.output, outcome.output)
    return outcome


def with_absent_fields(output: Type, value: Any) -> Any:
    """A case's record with every field another case declares and it lacks set to null: from plait 0.3 such a
    field reads as `T?` after the route (the compiler marks the route's output `partial`), so it must be there."""
    if not isinstance(output, UnionType) or not output.partial or not isinstance(value, dict):
        return value
    filled = dict(value)
    for option in output.options:
        for field in option.fields if isinstance(option, ObjectType) else ():
            filled.setdefault(field.name, None)
    return filled
