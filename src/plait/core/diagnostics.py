"""Problems → data: Severity, Label, Fix and Diagnostic.

Diagnostics are values collected by every pass and never raised, so one run
reports every problem. Emitters (text, JSON, GitHub, SARIF) live in
`plait.compiler.report`; the catalogue of codes in `plait.core.codes`.
"""

from __future__ import annotations

from dataclasses import field
from enum import Enum
from typing import Iterable

from plait.core.record import Record, record
from plait.core.source import Span
from plait.core.codes import declare

__all__ = ["MAX_PROBLEMS", "Diagnostic", "Findings", "Fix", "Label", "Severity", "did_you_mean"]


class Severity(str, Enum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"

    def __str__(self) -> str:
        return self.value


# The code this module raises; its documentation is explain/P008.md beside it.
P008 = declare("P008", "too-many-problems", Severity.ERROR, "more problems than a check lists (the rest are counted)")


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


def did_you_mean(
    hint: str | None, span: Span | None = None, replacement: str | None = None, *, shown: str | None = None
) -> Fix | None:
    """The fix a near miss suggests, `did you mean `HINT`?` (`shown` instead of `HINT` in backticks), replacing
    `span` with `replacement` (the hint itself by default); None when there is no hint."""
    if not hint:
        return None
    said = shown if shown is not None else f"`{hint}`"
    return Fix(f"did you mean {said}?", span, (replacement if replacement is not None else hint) if span else None)


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
    #: (code, span) of the diagnostic this one follows from (src/plait/compiler/cascade.py); None for a root cause.
    follows: tuple[str, Span] | None = None

    @property
    def is_error(self) -> bool:
        return self.severity is Severity.ERROR

    def __str__(self) -> str:
        return f"{self.span}: {self.severity}[{self.code}] {self.message}"

    def sort_key(self) -> tuple:
        return (self.span.file, self.span.offset, self.code)


#: Problems one compile lists at most. Past it they are only counted, and one last diagnostic (P008) says how
#: many were left out: a generated spec can hold millions of the same mistake (`tools = [a, a, a, ...]`), and
#: a diagnostic each took gigabytes and minutes to print while telling the reader nothing the first did not.
MAX_PROBLEMS = 1000


class Findings(list[Diagnostic]):
    """The diagnostics a compile collects: a list that keeps the first MAX_PROBLEMS and counts the rest."""

    def __init__(self, diagnostics: Iterable[Diagnostic] = ()) -> None:
        super().__init__()
        #: Left out, by severity; and the first of them (where `left_out()` points).
        self.omitted: dict[Severity, int] = {}
        self.first_omitted: Diagnostic | None = None
        if isinstance(diagnostics, Findings):
            self.omitted, self.first_omitted = dict(diagnostics.omitted), diagnostics.first_omitted
        self.extend(diagnostics)

    def append(self, diagnostic: Diagnostic) -> None:
        if len(self) < MAX_PROBLEMS:
            super().append(diagnostic)
            return
        self.omitted[diagnostic.severity] = self.omitted.get(diagnostic.severity, 0) + 1
        if self.first_omitted is None:
            self.first_omitted = diagnostic

    def extend(self, diagnostics: Iterable[Diagnostic]) -> None:
        for diagnostic in diagnostics:
            self.append(diagnostic)

    @property
    def has_errors(self) -> bool:
        return Severity.ERROR in self.omitted or any(d.is_error for d in self)

    def left_out(self) -> Diagnostic | None:
        """P008 for the problems not listed (an error if any of them is), or None when all were."""
        first = self.first_omitted
        if first is None:
            return None
        total = sum(self.omitted.values())
        counts = ", ".join(f"{n:,} {s.value}{'s' if n > 1 else ''}" for s, n in self.omitted.items())
        return Diagnostic(
            P008.code,
            P008.name,  # its severity is the worst of those left out, not the declaration's
            Severity.ERROR if Severity.ERROR in self.omitted else Severity.WARNING,
            f"{total:,} more problem{'s' if total > 1 else ''} ({counts}) found and not listed",
            first.span,
            notes=(
                f"plait lists the first {MAX_PROBLEMS:,} problems of a check; the first not listed is here: "
                f"{first.severity}[{first.code}] {first.message}",
                "a spec with this many is usually generated: fix the generator, or the first ones and check again",
            ),
        )
