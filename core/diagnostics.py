"""Problems → data: Severity, Label, Fix and Diagnostic.

Diagnostics are values collected by every pass and never raised, so one run
reports every problem. Emitters (text, JSON, GitHub, SARIF) live in
`plait.compiler.report`; the catalogue of codes in `plait.core.codes`.
"""

from __future__ import annotations

from dataclasses import field
from enum import Enum

from plait.core.record import Record, record
from plait.core.source import Span

__all__ = ["Diagnostic", "Fix", "Label", "Severity"]


class Severity(str, Enum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"

    def __str__(self) -> str:
        return self.value


@record(kw_only=False)
class Label(Record):
    """A secondary location: "`writer` is declared here"."""

    span: Span
    message: str


@record(kw_only=False)
class Fix(Record):
    """A suggested edit: replace `span` with `replacement`; `message` is the `help:` line."""

    message: str
    span: Span | None = None
    replacement: str | None = None


@record(kw_only=False)
class Diagnostic(Record):
    code: str
    name: str
    severity: Severity
    message: str
    span: Span
    labels: tuple[Label, ...] = ()
    notes: tuple[str, ...] = ()
    fix: Fix | None = None
    #: Spans whose text must never be shown (a literal secret); emitters mask them.
    redact: tuple[Span, ...] = field(default=())

    @property
    def is_error(self) -> bool:
        return self.severity is Severity.ERROR

    def __str__(self) -> str:
        return f"{self.span}: {self.severity}[{self.code}] {self.message}"

    def sort_key(self) -> tuple:
        return (self.span.file, self.span.offset, self.code)
