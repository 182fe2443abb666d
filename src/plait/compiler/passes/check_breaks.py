"""Routes' `LITERAL -> break [LOOP]` cases → the loop each leaves, checked (plait 0.3).

A route case that goes to `break` ends the loop around the route, from the
middle of its body; the loop's output is what the route received. A bare
`break` leaves the innermost loop around the route, `break outer` the loop
named (and every loop inside it). A break travels up through what runs one
thing after another (a chain, a route's case, a loop's body): a map's item, a
parallel's branch or an agent's hand-off runs beside others or for an agent,
and cannot end a loop for them. What could not be left is reported here:

- P321: the route is not inside a loop on every way it runs (or not inside the
  loop named, or the name is no loop).
- P322: a bare `break` in a route placed in different loops: which loop it
  leaves would depend on where it runs, so it must name one.
- P323: a case names two things and the first is not `break`.

It reads the element lists check_chains wrote and runs before build_graph,
which puts the resolved cases on the route's record (`RouteNode.breaks`). A
runnable the spec declares under the name `break` keeps its 0.2 meaning: a
case goes to it.
"""

from __future__ import annotations

from plait.core.codes import declare, make
from plait.core.diagnostics import Severity
from plait.core.kinds import RouteBreak
from plait.dsl import ast

from ..context import CompileContext

__all__ = ["check_breaks", "is_break"]

# The codes this module raises; their documentation is explain/<code>.md beside it.
P321 = declare("P321", "break-outside-loop", Severity.ERROR, "a route case that goes to `break` with no loop to leave")
P322 = declare("P322", "break-ambiguous", Severity.ERROR, "a bare `break` whose loop depends on where the route runs")
P323 = declare("P323", "case-two-targets", Severity.ERROR, "a route case that names two things, the first not `break`")

#: What a break passes up through: a chain's elements, a route's cases, a loop's body (the loop itself stops it).
_THROUGH = frozenset({"chain", "route", "loop"})
#: A way up that reaches no loop: the route runs at the top, or inside one of these (named in the message).
_NO_LOOP = ""


def is_break(case: ast.RouteCase, decls: dict[str, object]) -> bool:
    """Whether a case leaves a loop: it goes to `break`, and no runnable is declared under that name."""
    return case.target.name == "break" and "break" not in decls


class _Parents:
    """Who places each runnable: (container, its kind), for chains, routes and loops; and any other container."""

    def __init__(self, ctx: CompileContext) -> None:
        self.up: dict[str, list[tuple[str, str]]] = {}
        decls = ctx.decls
        for name, decl in decls.items():
            kind = decl.kind
            if kind == "chain":
                children: tuple[str, ...] = ctx.draft(name).get("elements", ())
            elif kind in ("loop", "map"):
                children = ctx.draft(name).get("body", ())
            elif kind == "parallel":
                children = ctx.draft(name).get("branches", ())
            elif isinstance(decl, ast.RouteDecl):
                children = tuple(c.target.name for c in decl.cases if c.target.name in decls)
            else:
                continue
            for child in children:
                self.up.setdefault(child, []).append((name, kind))
            for pid, inline in ctx.inline_parallels.get(name, ()):  # `parallel(a, b)` in a chain or body
                for branch in inline.branches:
                    self.up.setdefault(branch.name, []).append((pid, "parallel"))
                self.up.setdefault(pid, []).append((name, kind))
        self.innermost_memo: dict[str, frozenset[str]] = {}

    def innermost(self, name: str, seen: frozenset[str] = frozenset()) -> frozenset[str]:
        """The loops a bare break in `name` would leave, one per way up; `_NO_LOOP` for a way that has none, or
        `kind NAME` for the map, parallel or other container it cannot cross."""
        memo = self.innermost_memo.get(name)
        if memo is not None:
            return memo
        found: set[str] = set()
        ups = self.up.get(name, [])
        if not ups:
            found.add(_NO_LOOP)
        for parent, kind in ups:
            if parent in seen:  # a cycle (P304, reported elsewhere): no new way up
                continue
            if kind == "loop":
                found.add(parent)
            elif kind in _THROUGH:
                found |= self.innermost(parent, seen | {name})
            else:
                found.add(f"{kind} `{parent}`")
        out = frozenset(found)
        self.innermost_memo[name] = out
        return out

    def outside(self, name: str, loop: str, seen: frozenset[str] = frozenset()) -> str | None:
        """None when every way up from `name` reaches `loop` through chains, routes and loops; else what one
        reaches instead (`_NO_LOOP` for the top)."""
        ups = self.up.get(name, [])
        if not ups:
            return _NO_LOOP
        for parent, kind in ups:
            if parent == loop or parent in seen:
                continue
            if kind not in _THROUGH:
                return f"{kind} `{parent}`"
            blocked = self.outside(parent, loop, seen | {name})
            if blocked is not None:
                return blocked
        return None


def check_breaks(ctx: CompileContext) -> None:
    parents: _Parents | None = None
    for name, decl in ctx.decls.items():
        if not isinstance(decl, ast.RouteDecl):
            continue
        breaks: list[RouteBreak] = []
        for case in decl.cases:
            if not is_break(case, ctx.decls):
                if case.loop is not None:
                    ctx.diagnostics.append(
                        make(
                            "P323",
                            f"case `{case.target.name} {case.loop.name}` names two things: a case runs one runnable, "
                            "and only `break` takes a loop's name after it",
                            case.loop.span,
                        )
                    )
                continue
            parents = parents or _Parents(ctx)
            leaves = _leaves(ctx, parents, name, case)
            if leaves is not None:
                value = case.literal.value if case.literal is not None else None
                breaks.append(RouteBreak(value, leaves, case.span))
        if breaks:
            ctx.draft(name)["breaks"] = tuple(breaks)


def _leaves(ctx: CompileContext, parents: _Parents, route: str, case: ast.RouteCase) -> str | None:
    """The loop a break case leaves, or None after reporting why there is none."""
    if case.loop is not None:
        loop = case.loop.name
        if getattr(ctx.decls.get(loop), "kind", None) != "loop":
            return None  # resolve_names reported it (P101, P103)
        blocked = parents.outside(route, loop)
        if blocked is None:
            return loop
        where = "is not in it at all" if blocked == _NO_LOOP else f"runs in {blocked}, which a break cannot leave"
        ctx.diagnostics.append(
            make(
                "P321",
                f"`break {loop}` in route `{route}`: the route is not inside loop `{loop}` on every way it runs "
                f"(one way {where})",
                case.span,
            )
        )
        return None
    found = parents.innermost(route)
    loops = sorted(f for f in found if f and " " not in f)
    crossed = sorted(f for f in found if f not in loops)
    if crossed:
        where = (
            "runs where no loop is around it"
            if crossed == [_NO_LOOP]
            else f"runs in {', '.join(b for b in crossed if b)}, which a break cannot leave"
        )
        ctx.diagnostics.append(
            make("P321", f"`break` in route `{route}` has no loop to leave: the route {where}", case.span)
        )
        return None
    if len(loops) > 1:
        named = " and ".join(f"`{loop}`" for loop in loops)
        ctx.diagnostics.append(
            make(
                "P322",
                f"`break` in route `{route}`: the route runs inside loops {named}, so which one it leaves depends on "
                f"where it runs; name it (`break {loops[0]}`)",
                case.span,
            )
        )
        return None
    return loops[0]
