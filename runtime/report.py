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

    def warn(self, code: str, message: str, path: tuple[str, ...] = (), **details: Any) -> dict[str, Any]:
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
