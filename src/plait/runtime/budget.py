"""A run's model calls → what they cost (USD from the model's price × the provider's reported usage), and the
budgets they are held to: a call that would exceed one does not start.

A budget (core.budget.Budget) opens a scope when its runnable starts, keyed by
the runnable's graph path; the run's own budget (`plait run --budget`) is the
scope at the root. A call counts against every scope whose path encloses its
own, so a nested runnable gets only what is left of its parent's. Before a
call, its input is priced from the request (`estimate_tokens`: about four
characters a token, as no tokenizer is at hand for every provider) and the
call refused when any enclosing scope would go over; after it, the reported
usage is charged. The ledger travels with the run's report, so the journal's
snapshot carries it and a resume restores what was spent.
"""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING, Any

from plait.core.budget import Budget
from plait.core.catalogue import cost_usd

from .errors import AgentError
from .outcomes import Fail, Outcome, Pause

if TYPE_CHECKING:
    from .context import RunContext
    from .providers.base import ModelRequest

__all__ = [
    "BudgetExceeded",
    "Ledger",
    "Scope",
    "call_cost",
    "estimate_tokens",
    "open_scope",
    "raise_budget",
    "settle",
    "start_budget",
    "stop_for",
]

#: Characters per token when a request's input is estimated before it is sent (the usual rule of thumb for
#: English text and JSON; a provider's own count is charged once the call is made).
CHARS_PER_TOKEN = 4


class BudgetExceeded(AgentError):
    """A model call a budget would not allow: the run pauses for a person (`pause`) or fails (`fail`)."""

    def __init__(self, message: str, info: dict[str, Any], *, pause: bool, path: tuple[str, ...] = ()) -> None:
        super().__init__("budget_exceeded", message, path=path)
        self.info = info
        self.pause = pause


class Scope:
    """One budget's limits and what has been charged against it."""

    __slots__ = ("key", "runnable", "budget", "usd", "tokens", "model_calls", "unpriced_calls", "held")

    def __init__(self, key: str, runnable: str, budget: Budget) -> None:
        self.key = key
        self.runnable = runnable
        self.budget = budget
        self.usd = 0.0
        self.tokens = 0
        self.model_calls = 0
        self.unpriced_calls = 0
        #: What calls in flight were let through on (calls, estimated tokens, estimated USD): a parallel's branches
        #: check at once, and each must see what the others are about to spend.
        self.held = [0, 0, 0.0]

    def encloses(self, call_key: str) -> bool:
        key = self.key
        return not key or call_key == key or call_key.startswith(key + "/")

    def to_json(self) -> dict[str, Any]:
        return {
            "runnable": self.runnable,
            "path": self.key.split("/") if self.key else [],
            "limits": self.budget.to_json(),
            "spent": {
                "usd": round(self.usd, 10),
                "tokens": self.tokens,
                "model_calls": self.model_calls,
                "unpriced_calls": self.unpriced_calls,
            },
        }

    @classmethod
    def from_json(cls, key: str, data: dict[str, Any]) -> Scope:
        scope = cls(key, data.get("runnable", ""), Budget.from_json(data.get("limits")) or Budget())
        spent = data.get("spent") or {}
        scope.usd = float(spent.get("usd", 0.0))
        scope.tokens = int(spent.get("tokens", 0))
        scope.model_calls = int(spent.get("model_calls", 0))
        scope.unpriced_calls = int(spent.get("unpriced_calls", 0))
        return scope


class Ledger:
    """The budgets of one run, by the graph path of the runnable that declared each ("" for the run's own)."""

    __slots__ = ("scopes", "exceeded", "raises", "pending", "holds")

    def __init__(self) -> None:
        self.scopes: dict[str, Scope] = {}
        #: (scope key, items) of every raise so far, in order: a scope opened later (on a resume) takes them.
        self.raises: list[tuple[str, dict[str, Any]]] = []
        #: Raises of this attempt not yet in the journal (written once the run is admitted: `settle`).
        self.pending: list[dict[str, Any]] = []
        #: Calls in flight, by the id of their request: (scopes, estimated tokens, estimated USD) they hold.
        self.holds: dict[int, tuple[list[Scope], int, float]] = {}
        #: The last refusal, while the run is stopped on it: what a person raising the budget needs to know.
        self.exceeded: dict[str, Any] | None = None

    # -- scopes ----------------------------------------------------------------------

    def open(self, path: tuple[str, ...], runnable: str, budget: Budget) -> None:
        """A budgeted runnable starts at `path`, with the raises a person gave it; a resume walking back into a
        scope it still holds keeps what was spent (a journaled resume replays the calls, which charge it again)."""
        key = "/".join(path)
        if key not in self.scopes:
            for raised, items in self.raises:
                if raised == key:
                    budget = budget.with_items(items)
            self.scopes[key] = Scope(key, runnable, budget)

    def add_raise(self, key: str, runnable: str, items: dict[str, Any], *, new: bool = True) -> Scope | None:
        """New limits for the scope at `key` ("" the run's own, made when missing): a person's raise, the run's
        `--budget`, or (`new=False`) one the journal recorded for an earlier attempt."""
        self.raises.append((key, items))
        if new:
            self.pending.append({"scope": key, "runnable": runnable, "items": dict(items)})
        scope = self.scopes.get(key)
        if scope is not None:
            scope.budget = scope.budget.with_items(items)
        elif not key:
            scope = self.scopes[key] = Scope(key, runnable, Budget().with_items(items))
        return scope

    def enclosing(self, path: tuple[str, ...]) -> list[Scope]:
        call_key = "/".join(path)
        return [s for s in self.scopes.values() if s.encloses(call_key)]

    # -- before and after a call -------------------------------------------------------

    def check(self, model: str, info: Any, request: ModelRequest, path: tuple[str, ...]) -> None:
        """Raise BudgetExceeded when the call about to be made would take any enclosing scope over a limit."""
        self.release(request)  # a fallback model's attempt replaces what the failed one held
        scopes = self.enclosing(path)
        if not scopes:
            return
        tokens = estimate_tokens(request)
        price = getattr(info, "price", None)
        usd = cost_usd(price, tokens, 0) if price is not None else None
        # Innermost first: the budget closest to the call is the one to name.
        for scope in sorted(scopes, key=lambda s: -len(s.key)):
            budget = scope.budget
            over: tuple[str, float, float, float] | None = None
            calls_held, tokens_held, usd_held = scope.held
            if budget.model_calls is not None and scope.model_calls + calls_held + 1 > budget.model_calls:
                over = ("model_calls", scope.model_calls + calls_held, 1, budget.model_calls)
            elif budget.tokens is not None and scope.tokens + tokens_held + tokens > budget.tokens:
                over = ("tokens", scope.tokens + tokens_held, tokens, budget.tokens)
            elif budget.usd is not None:
                if usd is None and budget.unpriced != "allow":
                    raise AgentError(
                        "budget_unpriced",
                        f"model `{model}` has no price, so the USD budget of `{scope.runnable}` cannot count its "
                        "calls: run `plait models lock`, give the model a `price`, or add `unpriced = allow`",
                        path=path,
                    )
                if usd is not None and scope.usd + usd_held + usd > budget.usd:
                    over = ("usd", scope.usd + usd_held, usd, budget.usd)
            if over is None:
                continue
            limit_name, spent, needed, limit = over
            what = "the run's budget" if not scope.key else f"the budget of `{scope.runnable}`"
            message = (
                f"{what} would be exceeded: {_shown(limit_name, spent)} spent of {_shown(limit_name, limit)}, and the next call to "
                f"`{model}` needs {_shown(limit_name, needed)} more"
                + (" (its input, estimated)" if limit_name != "model_calls" else "")
            )
            info_out = {
                "scope": scope.key,
                "runnable": scope.runnable,
                "path": scope.key.split("/") if scope.key else [],
                "limit": limit_name,
                "limits": budget.to_json(),
                "spent": spent,
                "needed": needed,
                "model": model,
                "on_exceeded": budget.on_exceeded,
            }
            self.exceeded = info_out
            pause = budget.on_exceeded == "pause"
            if pause:
                message += f"; raise it on resume (--budget {limit_name}=N)"
            raise BudgetExceeded(message, info_out, pause=pause, path=path)
        # Let through: the call holds its estimate until it is charged or fails.
        held_usd = usd or 0.0
        for scope in scopes:
            scope.held[0] += 1
            scope.held[1] += tokens
            scope.held[2] += held_usd
        self.holds[id(request)] = (scopes, tokens, held_usd)

    def charge(self, path: tuple[str, ...], usd: float | None, tokens: int, request: Any = None) -> None:
        """A call was made: its reported usage counts against every enclosing scope, and what it held is let go."""
        self.release(request)
        for scope in self.enclosing(path):
            scope.model_calls += 1
            scope.tokens += tokens
            if usd is None:
                scope.unpriced_calls += 1
            else:
                scope.usd += usd

    def release(self, request: Any) -> None:
        """Let go of what a call held while in flight (it was made and charged, or it failed)."""
        held = self.holds.pop(id(request), None)
        if held is None:
            return
        scopes, tokens, usd = held
        for scope in scopes:
            scope.held[0] -= 1
            scope.held[1] -= tokens
            scope.held[2] -= usd

    # -- the report's JSON -------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"scopes": [s.to_json() for s in self.scopes.values()]}
        if self.exceeded is not None:
            out["exceeded"] = self.exceeded
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any] | None) -> Ledger | None:
        if not data:
            return None
        ledger = cls()
        for item in data.get("scopes", ()):
            key = "/".join(item.get("path", ()))
            ledger.scopes[key] = Scope.from_json(key, item)
        ledger.exceeded = data.get("exceeded")
        return ledger


def open_scope(ctx: RunContext, record: Any, path: tuple[str, ...]) -> None:
    """A runnable starts: its budget (if it has one) opens a scope at its path."""
    budget = getattr(record, "budget", None)
    if budget is None:
        return
    report = ctx.report
    if report.budget is None:
        report.budget = Ledger()
    report.budget.open(path, record.name, budget)


def ledger_of(ctx: RunContext) -> Ledger:
    ledger = ctx.report.budget
    if ledger is None:
        ledger = ctx.report.budget = Ledger()
    return ledger


def start_budget(ctx: RunContext, items: Budget | dict[str, Any], entry: str) -> None:
    """The run's own budget (`plait run --budget usd=2`): the scope at the root, around everything it runs."""
    budget = items if isinstance(items, Budget) else Budget().with_items(items)
    ledger_of(ctx).add_raise("", entry, budget.to_json())


def raise_budget(ctx: RunContext, items: dict[str, Any], entry: str, stopped: dict[str, Any] | None) -> None:
    """A person's raise on resume (`--budget usd=5`, a studio's `raise_budget`): new limits for the budget the run
    stopped on (`stopped`, the report's `budget` of its last stop), else for the run's own. ValueError when bad."""
    checked = Budget().with_items(items)
    items = {key: getattr(checked, key) for key in items}  # `"5"` from a command line is stored as 5.0
    ledger = ledger_of(ctx)
    exceeded = ledger.exceeded or ((stopped or {}).get("exceeded"))
    key = exceeded["scope"] if exceeded else ""
    ledger.add_raise(key, exceeded["runnable"] if exceeded else entry, items)
    ledger.exceeded = None


def settle(ctx: RunContext, *, load: bool) -> None:
    """Once a journaled run is admitted: with `load` (a Run's first attempt in this process, which a resume rebuilds
    from its rows), the raises its journal holds come back first and this attempt's apply after them, so the
    latest word wins; then this attempt's raises are written as `budget` decisions."""
    journal = ctx.journal
    ledger = ctx.report.budget
    recorded = journal.decisions_of("budget") if journal is not None else []
    if load and recorded:
        ledger = ledger_of(ctx)
        mine, ledger.raises = ledger.raises, []
        for _key, data in recorded:
            ledger.add_raise(data["scope"], data.get("name", ""), data["items"], new=False)
            ctx.report.decisions.append(data)
        for key, items in mine:
            ledger.add_raise(key, "", items, new=False)
    if ledger is None or not ledger.pending:
        return
    count = len(recorded)
    for data in ledger.pending:
        count += 1
        where = data["scope"].split("/") if data["scope"] else []
        ctx.decide("budget", data["runnable"], where, f"budget#{count}", scope=data["scope"], items=data["items"])
    ledger.pending.clear()


def stop_for(ctx: RunContext, exc: BudgetExceeded, path: tuple[str, ...], agent: Any = None) -> Outcome:
    """A refused call → the run's stop: a pause for a person (`on_exceeded = pause`) or a failure."""
    if ctx.bus.active:
        ctx.emit("budget_exceeded", path, agent, message=exc.message, **exc.info)
    return Pause(exc.message) if exc.pause else Fail(exc)


def _shown(limit: str, value: float) -> str:
    return f"${value:.4f}" if limit == "usd" else f"{value:g} {limit.replace('_', ' ')}"


def call_cost(info: Any, input_tokens: int, output_tokens: int) -> float | None:
    """USD for one call on a model whose catalogue entry is `info` (None: unpriced)."""
    return cost_usd(getattr(info, "price", None), input_tokens, output_tokens)


def estimate_tokens(request: ModelRequest) -> int:
    """The input tokens a request will be charged for, estimated from its text before it is sent."""
    from .history import to_json

    chars = len(request.system or "") + len(json.dumps(to_json(request.messages), ensure_ascii=False))
    for tool in request.tools:
        chars += len(tool.name) + len(tool.description or "") + len(json.dumps(tool.parameters))
    if request.output_schema is not None:
        chars += len(json.dumps(request.output_schema))
    return math.ceil(chars / CHARS_PER_TOKEN)
