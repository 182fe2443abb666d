"""Parallels and consolidates → P204 for a branch or agent listed twice.

Why: a parallel's output is a record keyed by branch name, so a branch listed
twice runs twice and one result overwrites the other; a consolidate with one
agent listed twice has that agent debate itself (and passes the two-agent
minimum without having two voices).
"""

from __future__ import annotations

from plait.core.diagnostics import Fix, Label
from plait.core.source import Span

from plait.core.codes import make
from ..context import CompileContext
from ._inputs import show

__all__ = ["CODE", "duplicate_member"]

CODE = "P204"

_WHAT = {"branches": "branch", "agents": "agent"}


def duplicate_member(ctx: CompileContext) -> None:
    first: dict[tuple[str, str, str], Span] = {}
    for ref in ctx.references:
        if ref.attr not in _WHAT or (ref.attr == "agents" and ctx.kind(ref.owner) != "consolidate"):
            continue
        key = (ref.owner, ref.attr, ref.target)
        if key not in first:
            first[key] = ref.span
            continue
        owner = show(ctx.graph, ref.owner) if ctx.graph is not None and ref.owner in ctx.graph else ref.owner
        ctx.diagnostics.append(
            make(
                CODE,
                f"{_WHAT[ref.attr]} `{ref.target}` is listed twice in `{owner}`",
                ref.span,
                labels=[Label(first[key], "first listed here")],
                fix=Fix("remove the second one", ref.span, ""),
            )
        )
