"""Agents' `approval` and `fallback` lists → P204 for entries that cannot take effect.

Why: `approval = [t]` only gates calls the agent can make, so a tool missing
from its `tools` means a human was expected to approve something that never
happens (usually a typo or a forgotten `tools` entry). A fallback equal to the
primary model, or listed twice, retries the same model under a name that
suggests resilience it does not give.
"""

from __future__ import annotations

from plait.core.diagnostics import Fix, Label
from plait.core.source import Span

from plait.core.codes import make
from ..context import CompileContext
from ..draft import NOTHING

__all__ = ["CODE", "agent_lists"]

CODE = "P204"


def agent_lists(ctx: CompileContext) -> None:
    seen_fallback: dict[str, dict[str, Span]] = {}
    for ref in ctx.references:
        values = ctx.values.get(ref.owner, NOTHING)
        spans = ctx.spans.get(ref.owner, {})
        if ref.attr == "approval" and ref.target not in (values.get("tools") or ()):
            labels = [Label(spans["tools"], "the agent's tools")] if "tools" in spans else []
            ctx.diagnostics.append(
                make(
                    CODE,
                    f"`approval` names `{ref.target}`, which agent `{ref.owner}` does not have in `tools`",
                    ref.span,
                    labels=labels,
                    fix=Fix(f"add `{ref.target}` to `tools`, or remove it from `approval`"),
                )
            )
        elif ref.attr == "fallback":
            earlier = seen_fallback.setdefault(ref.owner, {})
            if ref.target == values.get("model"):
                ctx.diagnostics.append(
                    make(
                        CODE,
                        f"fallback `{ref.target}` is the primary model of `{ref.owner}`",
                        ref.span,
                        labels=[Label(spans["model"], "the primary model")] if "model" in spans else [],
                        fix=Fix("fall back to a different model; `retries` on the model covers retrying it"),
                    )
                )
            elif ref.target in earlier:
                ctx.diagnostics.append(
                    make(
                        CODE,
                        f"fallback `{ref.target}` is listed twice",
                        ref.span,
                        labels=[Label(earlier[ref.target], "first listed here")],
                    )
                )
            earlier.setdefault(ref.target, ref.span)
