"""Diagnostics → one JSON document: `{"diagnostics": [...], "summary": {...}}`.

Keys come out in one fixed order (the order built here), so output diffs
and goldens stay readable. Secrets are masked as in every other format.
"""

from __future__ import annotations

import json
from typing import Any, Mapping, Sequence

from plait.core.diagnostics import Diagnostic
from plait.core.source import SourceFile, Span

from .mask import Redactor
from .summary import summarize

__all__ = ["render_json", "to_dict"]


def _where(span: Span | None) -> dict[str, Any]:
    if span is None:
        return {"file": None, "line": None, "column": None, "end_line": None, "end_column": None}
    return {
        "file": span.file,
        "line": span.line,
        "column": span.column,
        "end_line": span.end_line,
        "end_column": span.end_column,
    }


def to_dict(d: Diagnostic, sources: Mapping[str, SourceFile]) -> dict[str, Any]:
    say = Redactor(d, sources).text
    fix = None
    if d.fix is not None:
        replacement = None if d.fix.replacement is None else say(d.fix.replacement)
        fix = {"message": say(d.fix.message), "replacement": replacement, **_where(d.fix.span)}
    return {
        "code": d.code,
        "name": d.name,
        "severity": str(d.severity),
        "message": say(d.message),
        **_where(d.span),
        "labels": [{"message": say(label.message), **_where(label.span)} for label in d.labels],
        "notes": [say(note) for note in d.notes],
        "fix": fix,
        **({} if d.follows is None else {"follows": {"code": d.follows[0], **_where(d.follows[1])}}),
    }


def render_json(diagnostics: Sequence[Diagnostic], sources: Mapping[str, SourceFile]) -> str:
    s = summarize(diagnostics, sources)
    document = {
        "diagnostics": [to_dict(d, sources) for d in diagnostics],
        # `files` is the files checked, as a reader takes it (it once counted only those with problems, which read
        # as 0 files for a clean check); `checked` says the same for older readers.
        "summary": {
            "errors": s.errors,
            "warnings": s.warnings,
            "files": s.checked,
            "files_with_problems": s.files,
            "checked": s.checked,
        },
    }
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"
