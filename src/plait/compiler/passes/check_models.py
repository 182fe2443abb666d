"""Model declarations + the `models` section of the `plait.lock` beside them → each model's catalogue entry, and
what it says checked against the runnables that call the model.

Runs after check_types (attribute values are normalised; the spec's own
`price`, `context_window`, `max_output` and `capabilities` are in the draft)
and writes `catalogue` (a `plait.core.catalogue.ModelInfo`, or None) into
each model's draft: the spec's values first, field by field, over the lock's
entry. Nothing is fetched: the entries come from the lock `plait models lock`
wrote (src/plait/cli/models.py), and a model with neither a lock entry nor
values of its own is not checked, so a spec without a lock checks as before.

The lock records, for a model id the catalogue does not list, the nearest
ids it does (`near`): that is how an offline check can say "did you mean".
A lock that has a `models` section but no entry for a model the spec uses is
reported too (the spec changed since it was locked).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from plait.core.codes import declare, make
from plait.core.diagnostics import Fix, Label, Severity, did_you_mean
from plait.core.source import Span
from plait.dsl import ast

from ..context import CompileContext
from .check_types import folder

if TYPE_CHECKING:
    from plait.core.catalogue import ModelInfo, Price
    from plait.core.mcp_lock import Lock, LockedModel

# The codes this module raises; their documentation is explain/<code>.md beside it.
P341 = declare("P341", "model-unknown", Severity.ERROR, "a model id the catalogue does not list (per `plait.lock`)")
P342 = declare(
    "P342", "model-not-locked", Severity.WARNING, "a model the `plait.lock` beside the spec has no entry for"
)
P343 = declare("P343", "model-lacks-capability", Severity.ERROR, "tools on a model that cannot call tools")
P344 = declare(
    "P344",
    "model-output-through-tool",
    Severity.INFO,
    "an `output` on a model without structured output, asked through a forced tool call",
)
P347 = declare(
    "P347",
    "model-output-told",
    Severity.INFO,
    "an `output` on a model without structured output, told in the system message",
)
P345 = declare("P345", "max-tokens-above-limit", Severity.ERROR, "`max_tokens` above the model's output limit")
P346 = declare("P346", "fallback-smaller-context", Severity.WARNING, "a fallback model with a smaller context window")

__all__ = ["check_models", "uncatalogued"]

#: The providers the catalogue lists. A compatible server's ids are its own and a scripted model is a file: their
#: entry can only be the spec's own.
CATALOGUED = ("openai", "anthropic", "google")
_PRICE_KEYS = ("input", "output", "cached_input", "per_request")


def uncatalogued(provider: str) -> bool:
    """Whether `plait models lock` skips a model of this provider (its entry can only be the spec's own)."""
    return provider not in CATALOGUED


def check_models(ctx: CompileContext) -> None:
    models = {name: decl for name, decl in ctx.decls.items() if isinstance(decl, ast.ModelDecl)}
    if not models:
        return
    locks = _Locks(ctx)
    entries: dict[str, ModelInfo] = {}
    for name, decl in models.items():
        values = ctx.draft(name)
        own = _own(ctx, name, decl)
        provider, model_id = values.get("provider") or "", values.get("model_id") or ""
        locked = None if uncatalogued(provider) or not model_id else locks.entry(decl, f"{provider}/{model_id}")
        info = _merge(provider, model_id, own, locked.info if locked is not None else None)
        values["catalogue"] = info
        if info is not None:
            entries[name] = info
    if entries:
        _Uses(ctx, entries).check()


# --- the spec's own values ---------------------------------------------------------------


def _own(ctx: CompileContext, name: str, decl: ast.ModelDecl) -> dict[str, Any]:
    """The folded attributes a model sets, checked: `price` → a Price; the others as check_types left them."""
    values = ctx.values[name]
    own: dict[str, Any] = {}
    for key in ("context_window", "max_output", "capabilities"):
        value = values.pop(key, None)
        if value is not None and decl.body is not None and decl.body.get(key) is not None:
            own[key] = value
    raw = values.pop("price", None)
    entry = decl.body.get("price") if decl.body is not None else None
    if raw is not None and entry is not None:
        price = _price(ctx, entry)
        if price is not None:
            own["price"] = price
    return own


def _price(ctx: CompileContext, entry: ast.Attribute) -> Price | None:
    from plait.core.catalogue import Price

    from ..schema import suggest

    block = entry.value
    if not isinstance(block, ast.Block):
        return None  # check_types has reported it
    rates: dict[str, float] = {}
    ok = True
    for key, value in block.entries():
        span = _key_span(block, key) or value.span
        if key not in _PRICE_KEYS:
            hint = suggest(key, list(_PRICE_KEYS))
            ctx.diagnostics.append(
                make(
                    "P201",
                    f"unknown `price` field `{key}`",
                    span,
                    notes=["a price has " + ", ".join(f"`{k}`" for k in _PRICE_KEYS) + " (USD per million tokens)"],
                    fix=did_you_mean(hint, span),
                )
            )
            ok = False
        elif not isinstance(value, ast.Number) or value.value < 0:
            ctx.diagnostics.append(make("P203", f"`price.{key}` must be a number of USD, 0 or more", value.span))
            ok = False
        else:
            rates[key] = float(value.value)
    missing = [k for k in ("input", "output") if k not in rates]
    if ok and missing:
        ctx.diagnostics.append(
            make(
                "P202",
                "a `price` needs both `input` and `output`",
                block.span,
                fix=Fix("add " + " and ".join(f"`{k} = ...`" for k in missing) + " (USD per million tokens)"),
            )
        )
        ok = False
    if not ok:
        return None
    return Price(
        input=rates["input"],
        output=rates["output"],
        cached_input=rates.get("cached_input"),
        per_request=rates.get("per_request"),
    )


def _key_span(block: ast.Block, key: str) -> Span | None:
    for attribute in block.attributes:
        if attribute.key.name == key:
            return attribute.key.span
    return None


def _merge(provider: str, model_id: str, own: dict[str, Any], locked: ModelInfo | None) -> ModelInfo | None:
    """The spec's values over the lock's entry, field by field; None when neither says anything."""
    from plait.core.catalogue import CAPABILITIES, ModelInfo

    if not own and locked is None:
        return None
    base = locked or ModelInfo(provider=provider, model_id=model_id)
    capabilities, lacks = base.capabilities, base.lacks
    if "capabilities" in own:  # a whole statement: what it leaves out, the model lacks
        capabilities = frozenset(own["capabilities"])
        lacks = frozenset(CAPABILITIES) - capabilities
    return ModelInfo(
        provider=provider,
        model_id=model_id,
        price=own.get("price", base.price),
        context_window=own.get("context_window", base.context_window),
        max_output=own.get("max_output", base.max_output),
        capabilities=capabilities,
        lacks=lacks,
        source="lock" if not own else "spec+lock" if locked is not None else "spec",
    )


# --- the lock ----------------------------------------------------------------------------


class _Locks:
    """Each folder's `plait.lock`, read at most once; a model's entry, with an unknown or unlocked id reported."""

    def __init__(self, ctx: CompileContext) -> None:
        self.ctx = ctx
        self.read: dict[Path, Lock | str | None] = {}
        self.reported: set[Path] = set()

    def entry(self, decl: ast.ModelDecl, ref: str) -> LockedModel | None:
        where = folder(self.ctx, decl)
        if where is None:
            return None
        if where not in self.read:
            self.read[where] = _load(self.ctx, where)
        lock = self.read[where]
        if lock is None:
            return None  # no lock beside the spec: nothing to check against
        # The fix is spelt (with shlex) only for a diagnostic: a clean locked check pays nothing for it.
        if isinstance(lock, str):
            # check_mcp reports an unreadable lock once for the spec's servers; without servers it is ours to say.
            servers = any(isinstance(d, ast.McpDecl) for d in self.ctx.decls.values())
            if where not in self.reported and not servers:
                self.reported.add(where)
                self.ctx.diagnostics.append(
                    make("P334", f"`plait.lock` {lock}", decl.target.span, fix=_relock_fix(decl))
                )
            return None
        if lock is None or not lock.models:
            return None  # never locked for models: nothing to check against
        locked = lock.models.get(ref)
        if locked is None:
            self.ctx.diagnostics.append(
                make(
                    "P342",
                    f"`{ref}` has no entry in the `plait.lock` beside the spec",
                    decl.target.span,
                    notes=["the lock's models were written for other ids: the spec changed since it was locked"],
                    fix=_relock_fix(decl),
                )
            )
            return None
        if locked.info is None:
            self.ctx.diagnostics.append(_unknown(decl, ref, locked.near))
        return locked


def _load(ctx: CompileContext, where: Path) -> Lock | str | None:
    # The lock's name is spelt here, not imported: a spec without a lock loads no lock reader (nor its JSON codec).
    path = where / "plait.lock"
    if not os.path.lexists(path):
        return None
    from ..lock_file import read_lock

    return read_lock(path, ctx.load.root_dir)


def _relock_fix(decl: ast.ModelDecl) -> Fix:
    file = decl.span.file
    if file == "<string>":
        return Fix("run `plait models lock SPEC`")
    import shlex

    try:
        relative = os.path.relpath(file)
    except ValueError:  # another drive on Windows
        relative = file
    return Fix(f"run `plait models lock {shlex.quote(file if relative.startswith('..') else relative)}`")


def _unknown(decl: ast.ModelDecl, ref: str, near: tuple[str, ...]) -> Any:
    provider = ref.partition("/")[0]
    span = decl.target.span
    notes = ["`plait models lock` found no such model in the catalogue"]
    if len(near) > 1:
        notes.append("near ids: " + ", ".join(f"`{provider}/{n}`" for n in near))
    if near:
        hint = f"{provider}/{near[0]}"
        fix = Fix(f'did you mean `"{hint}"`?', span, f'"{hint}"')
    else:
        fix = Fix("check the model id in the provider's model list, then run `plait models lock`")
    return make("P341", f"`{ref}` is not a model the catalogue lists", span, notes=notes, fix=fix)


# --- what the runnables ask of their models ---------------------------------------------------


class _Uses:
    """Each agent, step and judge call against the entries of the models it calls."""

    def __init__(self, ctx: CompileContext, entries: dict[str, ModelInfo]) -> None:
        self.ctx = ctx
        self.entries = entries

    def check(self) -> None:
        ctx = self.ctx
        primary: dict[str, tuple[str, Span]] = {}
        for ref in ctx.references:
            if ref.attr == "model" and ctx.kind(ref.target) == "model":
                primary[ref.owner] = (ref.target, ref.span)
        for ref in ctx.references:
            if ref.target not in self.entries or ctx.kind(ref.target) != "model":
                continue
            if ref.attr in ("model", "fallback", "judge"):
                self._call(ref.owner, ref.target, ref.span, fallback=ref.attr == "fallback")
            if ref.attr == "fallback" and ref.owner in primary:
                self._smaller(ref.owner, ref.target, ref.span, *primary[ref.owner])
        for name, info in self.entries.items():
            self._model_settings(name, info)

    def _call(self, owner: str, model: str, span: Span, *, fallback: bool) -> None:
        info = self.entries[model]
        ctx = self.ctx
        spans = ctx.spans.get(owner, {})
        values = ctx.values.get(owner)
        kind = ctx.kind(owner)
        via = f"its fallback `{model}`" if fallback else f"`{model}`"
        notes = ["a fallback is called with the same tools, output and settings"] if fallback else []
        tools = values.get("tools") if values is not None else None
        if tools and info.can("tools") is False:
            labels = [Label(spans["tools"], "its tools")] if "tools" in spans else []
            ctx.diagnostics.append(
                make(
                    "P343",
                    f"{kind} `{owner}` has tools, but {via} ({info.provider}/{info.model_id}) has no tool calling",
                    span,
                    labels=labels,
                    notes=notes,
                    fix=Fix("use a model with tool calling, or remove the tools"),
                )
            )
        output = _output_block(ctx.decls.get(owner))
        if output is not None and info.can("structured_output") is False:
            labels = [Label(output.span, "its output")]
            if info.provider == "anthropic" and info.can("tools") is not False:
                ctx.diagnostics.append(
                    make(
                        "P344",
                        f"{via} ({info.provider}/{info.model_id}) has no structured output: {kind} `{owner}`'s "
                        "`output` is asked for through a forced tool call",
                        span,
                        labels=labels,
                        notes=["the answer is still validated against the schema"],
                    )
                )
            else:
                retries = values.get("retry_malformed") if values is not None else None
                told = ["the reply is validated against the schema, and a miss fails the run"]
                if not retries:
                    told[0] += " (`retry_malformed = N` asks again, with the schema, N times)"
                ctx.diagnostics.append(
                    make(
                        "P347",
                        f"{via} ({info.provider}/{info.model_id}) has no structured output: {kind} `{owner}`'s "
                        "`output` is told to it in the system message, as a JSON Schema",
                        span,
                        labels=labels,
                        notes=told + notes,
                    )
                )
        limit = info.max_output
        asked = values.get("max_tokens") if values is not None else None
        if limit is not None and isinstance(asked, int) and asked > limit and "max_tokens" in spans:
            where = spans["max_tokens"]
            ctx.diagnostics.append(
                make(
                    "P345",
                    f"`max_tokens = {asked}` of {kind} `{owner}` is above the {limit}-token output limit of {via}",
                    where,
                    labels=[Label(span, "the model")],
                    notes=notes,
                    fix=Fix(f"lower it to {limit}", where, str(limit)),
                )
            )

    def _smaller(self, owner: str, fallback: str, span: Span, primary: str, primary_span: Span) -> None:
        first = self.entries.get(primary)
        second = self.entries[fallback]
        if first is None or first.context_window is None or second.context_window is None:
            return
        if second.context_window < first.context_window:
            self.ctx.diagnostics.append(
                make(
                    "P346",
                    f"fallback `{fallback}` holds {second.context_window:,} tokens, fewer than the "
                    f"{first.context_window:,} of `{primary}`, the model it stands in for",
                    span,
                    labels=[Label(primary_span, "the primary model")],
                    notes=["a conversation that fits the primary may not fit the fallback, and fails there"],
                    fix=Fix(f"choose a fallback with a context window of at least {first.context_window:,} tokens"),
                )
            )

    def _model_settings(self, name: str, info: ModelInfo) -> None:
        """The model's own `max_tokens` and `tool_choice` against its entry."""
        values = self.ctx.values[name]
        spans = self.ctx.spans.get(name, {})
        asked = values.get("max_tokens")
        if info.max_output is not None and isinstance(asked, int) and asked > info.max_output and "max_tokens" in spans:
            where = spans["max_tokens"]
            self.ctx.diagnostics.append(
                make(
                    "P345",
                    f"`max_tokens = {asked}` is above the {info.max_output}-token output limit of "
                    f"{info.provider}/{info.model_id}",
                    where,
                    fix=Fix(f"lower it to {info.max_output}", where, str(info.max_output)),
                )
            )
        choice = values.get("tool_choice")
        if choice in ("required", "auto") and info.can("tools") is False and "tool_choice" in spans:
            self.ctx.diagnostics.append(
                make(
                    "P343",
                    f"`tool_choice = {choice}` on `{name}`, but {info.provider}/{info.model_id} has no tool calling",
                    spans["tool_choice"],
                    fix=Fix("remove `tool_choice`"),
                )
            )


def _output_block(decl: Any) -> Any:
    body = getattr(decl, "body", None)
    for typed in getattr(body, "params", ()) or ():
        if getattr(typed, "keyword", "params") == "output":
            return typed
    return None
