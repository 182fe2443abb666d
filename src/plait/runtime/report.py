"""A run's records (model calls, tool calls, warnings, decisions, usage) → the run report.

One `Report` per run, shared by every nested agent, so `tool_calls` and
`model_calls` cover the whole run. `to_dict` is the `--json` shape.
"""

from __future__ import annotations

import re
from typing import Any

from .budget import Ledger
from .providers.base import Usage

__all__ = ["Report"]


_STEP_FIELDS = ("agent", "path", "step", "model", "finish_reason", "input_tokens", "output_tokens", "cost_usd")
#: Path elements that are not a runnable's name: a loop's iteration, a map's item, a consolidate's round.
_NOT_A_NAME = re.compile(r"#\d+|\[\d+\]|round\d+")
_TOOL_FIELDS = ("name", "arguments", "is_error", "agent", "path")


class Report:
    """Records are kept as tuples on the hot path and become dicts only when read."""

    __slots__ = (
        "model_calls",
        "_tool_calls",
        "warnings",
        "decisions",
        "_steps",
        "input_tokens",
        "output_tokens",
        "cost_usd",
        "unpriced_calls",
        "budget",
    )

    def __init__(self) -> None:
        self.model_calls = 0
        #: (name, arguments, is_error, agent, path) per executed tool call.
        self._tool_calls: list[tuple[Any, ...]] = []
        self.warnings: list[dict[str, Any]] = []
        #: What control flow decided, in order: a route's case (and the subject's value), each loop
        #: iteration (and its condition's value), each map item's result.
        self.decisions: list[dict[str, Any]] = []
        #: (agent, path, step, model that served, finish reason, input tokens, output tokens, USD or None when the
        #: model has no price) per model call.
        self._steps: list[tuple[Any, ...]] = []
        self.input_tokens = 0
        self.output_tokens = 0
        #: USD of the priced calls; `unpriced_calls` says how many calls it leaves out.
        self.cost_usd = 0.0
        self.unpriced_calls = 0
        #: The run's budgets and what each has spent (src/plait/runtime/budget.py); None when it has none.
        self.budget: Ledger | None = None

    @property
    def steps(self) -> "_ListView":
        return _ListView(self._steps, _STEP_FIELDS)

    @property
    def tool_calls(self) -> "_ListView":
        return _ListView(self._tool_calls, _TOOL_FIELDS)

    @property
    def cost(self) -> float | None:
        """USD of the priced model calls; None when no call had a price (a run's row, a batch row, serve's view)."""
        return round(self.cost_usd, 10) if self.model_calls > self.unpriced_calls else None

    @property
    def usage(self) -> Usage:
        return Usage(self.input_tokens, self.output_tokens)

    def add_step(
        self,
        agent: str,
        path: tuple[str, ...],
        step: int,
        model: str,
        finish_reason: str | None,
        input_tokens: int,
        output_tokens: int,
        cost_usd: float | None = None,
    ) -> None:
        """One model call as `steps` reads it (the token and cost totals are the caller's to add)."""
        self._steps.append((agent, path, step, model, finish_reason, input_tokens, output_tokens, cost_usd))

    def by_runnable(self) -> dict[str, dict[str, Any]]:
        """Model calls, tokens and USD per runnable, each counting the calls of everything it ran (a chain its
        elements', an agent its delegates'), in the order each first called."""
        out: dict[str, dict[str, Any]] = {}
        # A runnable's calls share their path: each (path, agent) is read once (a journaled run's stop makes this).
        named: dict[tuple[tuple[str, ...], str], dict[str, None]] = {}
        for agent, path, _step, _model, _finish, tokens_in, tokens_out, usd in self._steps:
            key = (tuple(path or ()), agent)  # a restored report's paths are lists
            names = named.get(key)
            if names is None:
                names = named[key] = dict.fromkeys([*(p for p in key[0] if not _NOT_A_NAME.fullmatch(p)), agent])
            for name in names:
                row = out.get(name)
                if row is None:
                    row = out[name] = {"model_calls": 0, "input_tokens": 0, "output_tokens": 0, "cost_usd": 0.0}
                row["model_calls"] += 1
                row["input_tokens"] += tokens_in or 0
                row["output_tokens"] += tokens_out or 0
                if usd is None:
                    row["unpriced_calls"] = row.get("unpriced_calls", 0) + 1
                else:
                    row["cost_usd"] += usd
        for row in out.values():
            row["cost_usd"] = round(row["cost_usd"], 10)
        return out

    def add_tool_call(self, name: str, arguments: Any, is_error: bool, agent: str, path: tuple[str, ...]) -> None:
        """One executed tool call as `tool_calls` reads it."""
        self._tool_calls.append((name, arguments, is_error, agent, path))

    def warn(self, code: str, message: str, path: tuple[str, ...] = (), /, **details: Any) -> dict[str, Any]:
        warning: dict[str, Any] = {"code": code, "message": message, "path": list(path)}
        if details:
            warning["details"] = details
        self.warnings.append(warning)
        return warning

    def decide(self, kind: str, name: str, path: tuple[str, ...] | list[str], /, **details: Any) -> dict[str, Any]:
        # A list is taken as it is: a map shares one among its items' records.
        decision = {"kind": kind, "name": name, "path": path if isinstance(path, list) else list(path), **details}
        self.decisions.append(decision)
        return decision

    def to_dict(self) -> dict[str, Any]:
        out = {
            "model_calls": self.model_calls,
            "tool_calls": list(self.tool_calls),
            "warnings": self.warnings,
            "steps": list(self.steps),
            "usage": {
                "input_tokens": self.input_tokens,
                "output_tokens": self.output_tokens,
                "cost_usd": round(self.cost_usd, 10),
                "unpriced_calls": self.unpriced_calls,
            },
            "runnables": self.by_runnable(),
        }
        if self.decisions:
            out["decisions"] = self.decisions
        if self.budget is not None:
            out["budget"] = self.budget.to_json()
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Report":
        report = cls()
        report.model_calls = data.get("model_calls", 0)
        report._tool_calls = [tuple(c.get(f) for f in _TOOL_FIELDS) for c in data.get("tool_calls", ())]
        report.warnings = list(data.get("warnings", ()))
        report.decisions = list(data.get("decisions", ()))
        report._steps = [tuple(s.get(f) for f in _STEP_FIELDS) for s in data.get("steps", ())]
        usage = data.get("usage") or {}
        report.input_tokens = usage.get("input_tokens", 0)
        report.output_tokens = usage.get("output_tokens", 0)
        report.cost_usd = float(usage.get("cost_usd") or 0.0)
        report.unpriced_calls = usage.get("unpriced_calls", 0)
        report.budget = Ledger.from_json(data.get("budget"))
        return report


class _ListView:
    """A read-only list of dicts over a list of tuples (a record is built when it is read)."""

    __slots__ = ("_rows", "_fields")

    def __init__(self, rows: list[tuple[Any, ...]], fields: tuple[str, ...]) -> None:
        self._rows = rows
        self._fields = fields

    def _dict(self, row: tuple[Any, ...]) -> dict[str, Any]:
        out = dict(zip(self._fields, row))
        if "path" in out and out["path"] is not None:
            out["path"] = list(out["path"])
        return out

    def __len__(self) -> int:
        return len(self._rows)

    def __getitem__(self, index: int) -> dict[str, Any]:
        return self._dict(self._rows[index])

    def __iter__(self):
        return (self._dict(r) for r in self._rows)

    def __eq__(self, other: object) -> bool:
        return list(self) == list(other)  # type: ignore[call-overload]

    def __repr__(self) -> str:
        return repr(list(self))


class RunResult:
    """How a run (or one agent turn) ended, with its report: what `plait.run` returns."""

    __slots__ = (
        "stop_reason",
        "output",
        "until_result",
        "pending",
        "pause_reason",
        "error",
        "report",
        "run_id",
        "finish_reason",
    )

    def __init__(self, outcome: Any, report: Report, run_id: str | None = None) -> None:
        from .outcomes import Done, Fail, Interrupt, Pause

        self.report = report
        self.run_id = run_id
        self.output: Any = None
        self.until_result: Any = None
        self.pending: list[Any] = []
        self.pause_reason: str | None = None
        self.error: BaseException | None = None
        self.finish_reason: str | None = None
        if isinstance(outcome, Done):
            self.stop_reason = outcome.reason
            self.output, self.until_result, self.finish_reason = (
                outcome.output,
                outcome.until_result,
                outcome.finish_reason,
            )
        elif isinstance(outcome, Interrupt):
            self.stop_reason = "interrupt"
            self.pending = list(outcome.pending)
        elif isinstance(outcome, Pause):
            self.stop_reason = "pause"
            self.pause_reason = outcome.reason
            self.pending = list(outcome.pending)
        elif isinstance(outcome, Fail):
            # Stopped from outside (Ctrl-C, SIGTERM): it did not fail, and a resume continues it.
            self.stop_reason = "cancelled" if getattr(outcome.error, "kind", None) == "cancelled" else "error"
            self.error = outcome.error
        else:  # pragma: no cover - the runner only hands over terminal results
            raise TypeError(f"not a terminal outcome: {outcome!r}")

    @property
    def text(self) -> str:
        from .templates import as_text

        return as_text(self.output)

    def __repr__(self) -> str:
        return f"RunResult(stop_reason={self.stop_reason!r}, output={self.output!r})"

    def to_dict(self) -> dict[str, Any]:
        from .errors import error_info

        out: dict[str, Any] = {"run_id": self.run_id, "stop_reason": self.stop_reason, "output": self.output}
        if self.finish_reason is not None:
            out["finish_reason"] = self.finish_reason
        if self.stop_reason == "until":
            out["until_result"] = self.until_result
        if self.pending:
            out["pending"] = [p.to_dict() for p in self.pending]
        if self.stop_reason == "pause":
            out["pause_reason"] = self.pause_reason
        out.update(self.report.to_dict())
        if self.error is not None:
            out["error"] = error_info(self.error)
        return out
