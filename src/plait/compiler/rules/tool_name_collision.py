"""Agents' `tools` → P306 when two tools would reach the model under one name,
or a name is one providers refuse.

Why: providers identify a tool call by function name only; two tools under one
name make the model's choice ambiguous and most APIs reject the request. All
declarations (imports included) share one namespace, which `P102` keeps
unique, so a collision is a name listed twice in one agent's `tools` (a
delegated agent is offered under its own name). Function names must match
`^[a-zA-Z0-9_-]{1,64}$`; plait names can only break the length.
"""

from __future__ import annotations

from plait.core.diagnostics import Fix, Label, Severity
from plait.core.source import Span

from plait.core.codes import declare, make
from ..context import CompileContext

# The codes this module raises; their documentation is explain/<code>.md beside it.
P306 = declare("P306", "tool-name-collision", Severity.ERROR, "two tools an agent would see under one name")

__all__ = ["CODE", "tool_name_collision"]

CODE = "P306"

MAX_NAME = 64


def tool_name_collision(ctx: CompileContext) -> None:
    first: dict[tuple[str, str, str | None], Span] = {}
    #: (agent, MCP server) → the first of its tools listed one by one, with where.
    some: dict[tuple[str, str], tuple[str, Span]] = {}
    too_long: set[str] = set()
    for ref in ctx.references:
        if ref.attr != "tools":
            continue
        # An MCP server's tool (`files.read_text_file`) is listed twice with the whole server, before or after it.
        key = (ref.owner, ref.target, ref.member)
        earlier = first.get(key)
        member = ref.member
        if earlier is None and member is not None:
            earlier = first.get((ref.owner, ref.target, None))
        elif earlier is None and (ref.owner, ref.target) in some:
            member, earlier = some[(ref.owner, ref.target)]
        if member is not None:
            some.setdefault((ref.owner, ref.target), (member, ref.span))
        if earlier is not None:
            what = f"{ref.target}.{member}" if member else ref.target
            ctx.diagnostics.append(
                make(
                    CODE,
                    f"agent `{ref.owner}` lists `{what}` twice in `tools`",
                    ref.span,
                    labels=[Label(earlier, "first listed here")],
                    fix=Fix("remove the second one", ref.span, ""),
                )
            )
            continue
        first[key] = ref.span
        if ctx.kind(ref.target) == "mcp":
            continue  # the model sees the server's tools, not its name: check_mcp compares those
        if len(ref.target) > MAX_NAME and ref.target not in too_long:
            too_long.add(ref.target)
            decl = ctx.decls[ref.target]
            ctx.diagnostics.append(
                make(
                    CODE,
                    f"`{ref.target[:20]}…` is {len(ref.target)} characters; providers accept tool names of at most {MAX_NAME}",
                    decl.name.span,
                    labels=[Label(ref.span, f"offered to `{ref.owner}` as a tool here")],
                    fix=Fix("rename it"),
                )
            )
    _handoff_names(ctx, first)


def _handoff_names(ctx: CompileContext, listed: dict[tuple[str, str, str | None], Span]) -> None:
    """A hand-off target is offered as `transfer_to_NAME` (plait 0.3): a listed tool of that name, or a name
    past the providers' limit, is the same problem as two tools under one name."""
    for ref in ctx.references:
        if ref.attr != "handoff":
            continue
        name = f"transfer_to_{ref.target}"
        clash = listed.get((ref.owner, name, None))
        if clash is not None:
            ctx.diagnostics.append(
                make(
                    CODE,
                    f"agent `{ref.owner}` hands off to `{ref.target}` as the tool `{name}`, which it also lists in `tools`",
                    ref.span,
                    labels=[Label(clash, "listed here")],
                    fix=Fix(f"rename the tool `{name}`"),
                )
            )
        elif len(name) > MAX_NAME:
            ctx.diagnostics.append(
                make(
                    CODE,
                    f"`{name[:24]}…` is {len(name)} characters; providers accept tool names of at most {MAX_NAME}",
                    ref.span,
                    fix=Fix(f"give `{ref.target}` a shorter name"),
                )
            )
