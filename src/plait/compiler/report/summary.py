"""Diagnostics → counts for the summary line and the JSON `summary` object."""

from __future__ import annotations

from typing import Iterable, Mapping

from plait.core.diagnostics import Diagnostic, Severity
from plait.core.record import Record, record

__all__ = ["Summary", "summarize"]


@record(kw_only=False)
class Summary(Record):
    errors: int
    warnings: int
    #: Files holding at least one diagnostic.
    files: int
    #: Files looked at: every source read plus every file a diagnostic names.
    checked: int

    def line(self) -> str:
        """ "Found 3 errors and 1 warning in 2 files." or "No problems found in 4 files."."""
        if not self.errors and not self.warnings:
            return f"No problems found in {_count(self.checked, 'file')}."
        found = [_count(n, word) for n, word in ((self.errors, "error"), (self.warnings, "warning")) if n]
        return f"Found {' and '.join(found)} in {_count(self.files, 'file')}."


def _count(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def summarize(diagnostics: Iterable[Diagnostic], sources: Mapping[str, object]) -> Summary:
    errors = warnings = 0
    files: set[str] = set()
    for d in diagnostics:
        errors += d.severity is Severity.ERROR
        warnings += d.severity is Severity.WARNING
        files.add(d.span.file)
    return Summary(errors, warnings, len(files), len(files | set(sources)))
