"""Diagnostics → GitHub Actions workflow commands (`::error file=…::message`).

GitHub shows each line as an annotation on the pull request. Values are
escaped by the runner's rules: `%`, `\r` and `\n` everywhere, and also `:`
and `,` inside properties, where they would end a property.
"""

from __future__ import annotations

from typing import Mapping, Sequence

from plait.core.diagnostics import Diagnostic, Severity
from plait.core.source import SourceFile

from .line_view import clean
from .mask import Redactor
from .paths import relative_path

__all__ = ["escape_data", "escape_property", "render_github"]

_COMMAND = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def escape_data(value: str) -> str:
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(value: str) -> str:
    return escape_data(value).replace(":", "%3A").replace(",", "%2C")


def _annotation(d: Diagnostic, sources: Mapping[str, SourceFile]) -> str:
    redactor = Redactor(d, sources)

    def say(text: str) -> str:  # annotations land in a log that renders escapes
        return clean(redactor.text(text), newlines=True)

    span = d.span
    line, column = max(span.line, 1), max(span.column, 1)
    # A file name that holds control characters could drive the log's terminal rendering too.
    props: dict[str, object] = {"file": clean(relative_path(span.file).as_posix()), "line": line}
    # GitHub ignores columns on an annotation that spans lines; send them only when they mean something.
    if span.end_line <= span.line:
        props |= {"col": column, "endLine": line, "endColumn": max(span.end_column, column)}
    else:
        props["endLine"] = span.end_line
    props["title"] = f"{d.code} {d.name}"
    body = [say(d.message)]
    body += [f"note: {say(note)}" for note in d.notes]
    if d.fix is not None:
        body.append(f"help: {say(d.fix.message)}")
    rendered = ",".join(f"{key}={escape_property(str(value))}" for key, value in props.items())
    message = escape_data("\n".join(body))
    return f"::{_COMMAND[d.severity]} {rendered}::{message}"


def render_github(diagnostics: Sequence[Diagnostic], sources: Mapping[str, SourceFile]) -> str:
    return "".join(_annotation(d, sources) + "\n" for d in diagnostics)
