"""A run's records (model calls, tool calls, warnings, usage) → the run report.

One `Report` per run, shared by every nested agent, so `tool_calls` and
`model_calls` cover the whole run. `to_dict` is the `--json` shape.
"""

from __future__ import annotations

from typing import Any

from .providers.base import Usage

__all__ = ["Report"]


class Report:
    __slots__ = ("model_calls", "tool_calls", "warnings", "steps", "usage")

    def __init__(self) -> None:
        self.model_calls = 0
        self.tool_calls: list[dict[str, Any]] = []
        self.warnings: list[dict[str, Any]] = []
        #: One record per model call: agent, path, step, model that served, finish reason, tokens.
        self.steps: list[dict[str, Any]] = []
        self.usage = Usage()

    def warn(self, code: str, message: str, path: tuple[str, ...] = (), /, **details: Any) -> dict[str, Any]:
        warning = {"code": code, "message": message, "path": list(path)}
        if details:
            warning["details"] = details
        self.warnings.append(warning)
        return warning

    def to_dict(self) -> dict[str, Any]:
        return {
            "model_calls": self.model_calls,
            "tool_calls": self.tool_calls,
            "warnings": self.warnings,
            "steps": self.steps,
            "usage": {"input_tokens": self.usage.input_tokens, "output_tokens": self.usage.output_tokens},
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Report":
        report = cls()
        report.model_calls = data.get("model_calls", 0)
        report.tool_calls = list(data.get("tool_calls", ()))
        report.warnings = list(data.get("warnings", ()))
        report.steps = list(data.get("steps", ()))
        usage = data.get("usage") or {}
        report.usage = Usage(usage.get("input_tokens", 0), usage.get("output_tokens", 0))
        return report


class RunResult:
    """How a run (or one agent turn) ended, with its report: what `plait.run` returns."""

    __slots__ = ("stop_reason", "output", "until_result", "pending", "pause_reason", "error", "report", "run_id", "finish_reason")

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
            self.output, self.until_result, self.finish_reason = outcome.output, outcome.until_result, outcome.finish_reason
        elif isinstance(outcome, Interrupt):
            self.stop_reason = "interrupt"
            self.pending = list(outcome.pending)
        elif isinstance(outcome, Pause):
            self.stop_reason = "pause"
            self.pause_reason = outcome.reason
        elif isinstance(outcome, Fail):
            self.stop_reason = "error"
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
