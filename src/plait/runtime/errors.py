"""Failures of the run itself (not of a provider) → one exception type with a `kind`.

Provider failures stay `ProviderError` (raised as the provider raised them).
Both carry the run's `report` once the engine has one, so a caller who catches
the error can still read what happened before it.
"""

from __future__ import annotations

from typing import Any

__all__ = ["AgentError", "ToolNameCollision", "error_info"]


class AgentError(Exception):
    """`kind`: until_tool_not_called, malformed_tool_call, output_invalid (an answer that
    missed the declared `output`), tool_name_collision, unknown_runnable, branch_failed,
    resume_invalid, ..."""

    def __init__(self, kind: str, message: str, *, path: tuple[str, ...] = (), branch: str | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.path = path
        self.branch = branch
        self.report: Any = None

    def __str__(self) -> str:
        return f"{self.kind}: {self.message}"


class ToolNameCollision(AgentError):
    def __init__(self, message: str) -> None:
        super().__init__("tool_name_collision", message)


def error_info(error: BaseException) -> dict[str, Any]:
    """The `error` object of a run report: type, kind, message (and where, when known)."""
    info: dict[str, Any] = {
        "type": type(error).__name__,
        "kind": getattr(error, "kind", None) or "internal",
        "message": getattr(error, "message", None) or str(error),
    }
    for key in ("model", "provider", "status", "branch"):
        value = getattr(error, key, None)
        if value is not None:
            info[key] = value
    path = getattr(error, "path", None)
    if path:
        info["path"] = list(path)
    return info
