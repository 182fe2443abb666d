"""Test outcomes → a report: pytest-style text (each failure shown against the spec's lines), JSON, JUnit XML, or
GitHub workflow annotations. Pure functions of the outcomes; text from a run (outputs, replies) is escaped for the
terminal (`plait.term.clean`) and for XML.
"""

from __future__ import annotations

import json
from typing import Any
from xml.sax.saxutils import escape, quoteattr

from plait.term import clean, json_text

from .runner import Outcome

__all__ = ["FORMATS", "render", "summary"]

FORMATS = ("text", "json", "junit", "github")


def summary(outcomes: list[Outcome], seconds: float) -> str:
    counts: dict[str, int] = {}
    for outcome in outcomes:
        counts[outcome.status] = counts.get(outcome.status, 0) + 1
    parts = [f"{counts[s]} {s}" for s in ("passed", "failed", "error", "skipped") if counts.get(s)]
    return (", ".join(parts) or "no tests ran") + f" in {seconds:.2f}s"


def render(outcomes: list[Outcome], format: str, seconds: float, color: bool = False) -> str:
    return {"text": _text, "json": _json, "junit": _junit, "github": _github}[format](outcomes, seconds, color)


# --- text ------------------------------------------------------------------------------


def _paint(text: str, style: str, color: bool) -> str:
    codes = {"red": "31", "green": "32", "yellow": "33", "bold": "1", "dim": "2"}
    return f"\x1b[{codes[style]}m{text}\x1b[0m" if color else text


def _text(outcomes: list[Outcome], seconds: float, color: bool) -> str:
    lines: list[str] = []
    by_file: dict[str, list[Outcome]] = {}
    for outcome in outcomes:
        by_file.setdefault(outcome.test.file, []).append(outcome)
    marks = {"passed": (".", "green"), "failed": ("F", "red"), "error": ("E", "red"), "skipped": ("s", "yellow")}
    for file, group in by_file.items():
        dots = "".join(_paint(marks[o.status][0], marks[o.status][1], color) for o in group)
        lines.append(f"{clean(file)} {dots}")
    bad = [o for o in outcomes if o.status in ("failed", "error")]
    if bad:
        lines.append("")
        lines.append(_paint("=" * 30 + " FAILURES " + "=" * 30, "red", color))
        for outcome in bad:
            lines.extend(_failure(outcome, color))
    skipped = [o for o in outcomes if o.status == "skipped"]
    for outcome in skipped:
        lines.append(_paint(f"SKIPPED {clean(outcome.id)}: {clean(outcome.message or '')}", "yellow", color))
    style = "red" if bad else "green"
    lines.append(_paint(f"{'=' * 20} {summary(outcomes, seconds)} {'=' * 20}", style, color))
    return "\n".join(lines) + "\n"


def _failure(outcome: Outcome, color: bool) -> list[str]:
    test = outcome.test
    lines = ["", _paint(f"___ {clean(outcome.id)} ___", "bold", color)]
    if outcome.message:
        lines.append(f"  {_paint('error', 'red', color)}: {clean(outcome.message)}")
    for failure in outcome.failures:
        expectation = failure.expectation
        if expectation is None:
            span = test.span
            lines.append(f"  {clean(span.file)}:{span.line}:{span.column}: test `{clean(test.name)}`")
        else:
            span = expectation.span
            lines.append(f"  {clean(span.file)}:{span.line}:{span.column}")
            lines.extend(_excerpt(expectation, color))
        lines.append(f"  {_paint('failed', 'red', color)}: {clean(failure.message)}")
    if outcome.run_id:
        lines.append(_paint(f"  run {clean(outcome.run_id)}", "dim", color))
    return lines


def _excerpt(expectation: Any, color: bool) -> list[str]:
    span = expectation.span
    text = expectation.text.splitlines() or [""]
    width = len(str(span.line + len(text) - 1))
    out = []
    for index, line in enumerate(text):
        number = str(span.line + index).rjust(width)
        # The first line starts at the expectation's column: indent it as the file does.
        shown = (" " * (span.column - 1) + line) if index == 0 else line
        out.append(f"  {number} | {clean(shown)}")
    if len(text) == 1:
        out.append(f"  {' ' * width} | {' ' * (span.column - 1)}{_paint('^' * max(1, len(text[0])), 'red', color)}")
    return out


# --- machine formats ------------------------------------------------------------------------


def _record(outcome: Outcome) -> dict[str, Any]:
    test = outcome.test
    return {
        "id": outcome.id,
        "file": test.file,
        "name": test.name,
        "line": test.span.line,
        "status": outcome.status,
        "seconds": round(outcome.seconds, 6),
        "run_id": outcome.run_id,
        "message": outcome.message,
        "failures": [
            {
                "message": f.message,
                "expect": f.expectation.text if f.expectation else None,
                "line": f.expectation.span.line if f.expectation else test.span.line,
                "column": f.expectation.span.column if f.expectation else test.span.column,
            }
            for f in outcome.failures
        ],
    }


def _json(outcomes: list[Outcome], seconds: float, color: bool) -> str:
    counts = {s: sum(1 for o in outcomes if o.status == s) for s in ("passed", "failed", "error", "skipped")}
    data = {"tests": [_record(o) for o in outcomes], "summary": {**counts, "seconds": round(seconds, 6)}}
    return json_text(json.dumps(data, ensure_ascii=False, indent=2)) + "\n"


def _junit(outcomes: list[Outcome], seconds: float, color: bool) -> str:
    def count(status: str) -> int:
        return sum(1 for o in outcomes if o.status == status)

    lines = ['<?xml version="1.0" encoding="utf-8"?>']
    lines.append(
        f'<testsuites><testsuite name="plait" tests="{len(outcomes)}" failures="{count("failed")}" '
        f'errors="{count("error")}" skipped="{count("skipped")}" time="{seconds:.3f}">'
    )
    for outcome in outcomes:
        test = outcome.test
        head = (
            f"<testcase classname={quoteattr(_xml(test.file))} name={quoteattr(_xml(test.name))} "
            f'time="{outcome.seconds:.3f}" file={quoteattr(_xml(test.file))} line="{test.span.line}"'
        )
        if outcome.status == "passed":
            lines.append(head + "/>")
            continue
        lines.append(head + ">")
        if outcome.status == "skipped":
            lines.append(f"<skipped message={quoteattr(_xml(outcome.message or ''))}/>")
        elif outcome.status == "error":
            lines.append(f"<error message={quoteattr(_xml(outcome.message or ''))}/>")
        else:
            first = outcome.failures[0].message if outcome.failures else ""
            body = "\n".join(
                (
                    f"{f.expectation.span.file}:{f.expectation.span.line}: {f.expectation.text}\n"
                    if f.expectation
                    else ""
                )
                + f.message
                for f in outcome.failures
            )
            lines.append(f"<failure message={quoteattr(_xml(first))}>{escape(_xml(body))}</failure>")
        lines.append("</testcase>")
    lines.append("</testsuite></testsuites>")
    return "\n".join(lines) + "\n"


def _xml(text: str) -> str:
    # XML 1.0 cannot hold most control characters, even escaped: show them as the terminal does.
    return clean(text).replace("\t", "\\t")


def _github(outcomes: list[Outcome], seconds: float, color: bool) -> str:
    lines = []
    for outcome in outcomes:
        if outcome.status not in ("failed", "error"):
            continue
        if outcome.message:
            span = outcome.test.span
            lines.append(_annotation(span.file, span.line, span.column, f"{outcome.test.name}: {outcome.message}"))
        for failure in outcome.failures:
            span = failure.expectation.span if failure.expectation else outcome.test.span
            lines.append(_annotation(span.file, span.line, span.column, f"{outcome.test.name}: {failure.message}"))
    lines.append(summary(outcomes, seconds))
    return "\n".join(lines) + "\n"


def _annotation(file: str, line: int, column: int, message: str) -> str:
    # Workflow commands read `%`, CR and LF in a message, and `,` and `:` in properties, as syntax: escape them.
    def data(text: str) -> str:
        return clean(text).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")

    def prop(text: str) -> str:
        return data(text).replace(":", "%3A").replace(",", "%2C")

    return f"::error file={prop(file)},line={line},col={column},title=plait test::{data(message)}"
