"""Model declarations → P302 for every model no call could reach, labelled at each user.

Why: an `openai-compatible` model without `base_url` has no server to call, a
`scripted` model without `script` has no replies, and the Responses API exists
only at OpenAI. Each is certain to fail on the first call, so it is an error
now; the agents, steps and judges that would make that call are labelled.
"""

from __future__ import annotations

from plait.core.diagnostics import Fix, Label, Severity
from plait.core.source import Span

from plait.core.codes import declare, make
from ..context import CompileContext
from ..draft import Draft

# The codes this module raises; their documentation is explain/<code>.md beside it.
P302 = declare("P302", "model-unreachable", Severity.ERROR, "a model the agent cannot reach")

__all__ = ["CODE", "model_unreachable"]

CODE = "P302"

_HOW = {"model": "calls it", "fallback": "falls back to it", "judge": "is judged by it"}


def _problem(name: str, values: Draft, ctx: CompileContext) -> tuple[str, Span, Fix] | None:
    provider = values.get("provider")
    decl = ctx.decls[name]
    if provider == "openai-compatible" and not values.get("base_url"):
        return (
            f"model `{name}` is `openai-compatible` but has no `base_url` to call",
            decl.target.span,
            Fix('add the server\'s address, e.g. `base_url = "http://localhost:11434/v1"`'),
        )
    if provider == "scripted" and not values.get("script"):
        return (
            f"scripted model `{name}` has no `script` to answer from",
            decl.target.span,
            Fix(f'add `script = "{name}.replies.json"`, a file of replies beside the spec'),
        )
    if values.get("api") == "responses" and provider != "openai":
        span = ctx.spans.get(name, {}).get("api", decl.target.span)
        return (
            f'`api = "responses"` needs provider `openai`, but model `{name}` is `{provider}`',
            span,
            Fix('remove `api = "responses"`; only OpenAI serves the Responses API'),
        )
    return None


def model_unreachable(ctx: CompileContext) -> None:
    for name, decl in ctx.decls.items():
        if decl.kind != "model" or name not in ctx.values:
            continue
        found = _problem(name, ctx.values[name], ctx)
        if found is None:
            continue
        message, span, fix = found
        labels = [
            Label(r.span, f"`{r.owner}` {_HOW[r.attr]}") for r in ctx.references if r.target == name and r.attr in _HOW
        ]
        ctx.diagnostics.append(make(CODE, message, span, labels=labels, fix=fix))
