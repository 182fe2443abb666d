"""Diagnostics + sources → diagnostics with `# plait: ignore[CODE, ...]` applied (and P610 for idle ones).

A suppression comment covers the diagnostics that start on its line; on a
declaration's header line it covers the whole declaration. Only warnings can
be suppressed: an error means the spec cannot run, and a spec `plait check`
passes must run. P0xx (files, syntax) and P610 itself are never suppressed.
A comment that suppresses nothing is P610, with a fix that removes it.
"""

from __future__ import annotations

import re

from plait.core.codes import declare, lookup, make
from plait.core.diagnostics import Diagnostic, Fix, Severity
from plait.core.record import Record, record
from plait.core.source import SourceFile, Span

# The codes this module raises; their documentation is explain/<code>.md beside it.
P610 = declare(
    "P610", "unused-suppression", Severity.WARNING, "a `# plait: ignore[...]` comment that suppresses nothing"
)

__all__ = ["CODE", "MARKER", "Suppression", "apply", "suppressions"]

CODE = "P610"
#: Cheap pre-filter: only files containing this are parsed for comments.
MARKER = "plait:"
_COMMENT = re.compile(r"#\s*plait:\s*ignore\b(?:\[([^\]]*)\])?")


@record(kw_only=False)
class Suppression(Record):
    #: The comment (from `#` to its end).
    comment: Span
    #: The words between the brackets as written, e.g. ("P601", "unused-declaration").
    words: tuple[str, ...]
    #: What it covers: the comment's line, or a declaration's span.
    start: int
    end: int
    line_only: bool


def suppressions(source: SourceFile) -> list[Suppression] | None:
    """The file's suppression comments; None when the file does not parse (nothing reliable to say)."""
    if MARKER not in source.text:
        return []
    from plait.dsl.parser import parse_module

    module, _ = parse_module(source)
    if module is None:
        return None
    headers = {decl.span.line: decl.span for decl in module.declarations}
    found = []
    for comment in module.comments:
        match = _COMMENT.search(comment.text)
        if not match:
            continue
        words = tuple(w.strip() for w in (match.group(1) or "").split(",") if w.strip())
        # The directive only: `# why  # plait: ignore[P601]` keeps its first comment when the fix removes it.
        span = source.span(comment.span.offset + match.start(), comment.span.offset + match.end())
        decl = headers.get(span.line)
        if decl is not None:
            found.append(Suppression(span, words, decl.offset, decl.end_offset, False))
        else:
            found.append(Suppression(span, words, span.line, span.line, True))
    return found


def apply(diagnostics: list[Diagnostic], sources: dict[str, SourceFile]) -> list[Diagnostic]:
    """The diagnostics a user should see: suppressed warnings dropped, a P610 per idle or invalid suppression."""
    by_file: dict[str, list[Suppression]] = {}
    broken = {d.span.file for d in diagnostics if d.code.startswith("P0")}
    for name, source in sources.items():
        if name in broken:
            continue
        found = suppressions(source)
        if found:
            by_file[name] = found
    if not by_file:
        return diagnostics
    used: set[tuple[Span, str]] = set()
    kept = []
    for d in diagnostics:
        hit = _covering(d, by_file.get(d.span.file, ()))
        if hit is None:
            kept.append(d)
        else:
            used.add(hit)
    for found in by_file.values():
        for s in found:
            kept.extend(_problems(s, used, sources[s.comment.file]))
    return kept


def _covering(d: Diagnostic, found: list[Suppression] | tuple[()]) -> tuple[Span, str] | None:
    if d.severity is Severity.ERROR or d.code.startswith("P0") or d.code == CODE:
        return None
    for s in found:
        inside = s.start <= d.span.line <= s.end if s.line_only else s.start <= d.span.offset < s.end
        if not inside:
            continue
        for word in s.words:
            entry = lookup(word)
            if entry is not None and entry.code == d.code:
                return (s.comment, word)
    return None


def _problems(s: Suppression, used: set[tuple[Span, str]], source: SourceFile) -> list[Diagnostic]:
    where = "this declaration" if not s.line_only else "this line"
    if not s.words:
        return [
            make(
                CODE,
                "`# plait: ignore` names no code; write `# plait: ignore[P601]`",
                s.comment,
                fix=Fix("name the codes to suppress"),
            )
        ]
    out = []
    idle = []
    for word in s.words:
        entry = lookup(word)
        if entry is None:
            message = f"`{word}` is not a plait code, so this suppression suppresses nothing"
        elif entry.severity is Severity.ERROR:
            message = f"{entry.code} is an error, and errors cannot be suppressed (a spec that passes must run)"
        elif (s.comment, word) not in used:
            message = f"{entry.code} is not reported on {where}, so `ignore[{word}]` suppresses nothing"
        else:
            continue
        idle.append(word)
        out.append(message)
    if not out:
        return []
    keep = [w for w in s.words if w not in idle]
    fix = _removal(s, keep, source)
    return [make(CODE, message, s.comment, fix=fix) for message in out]


def _removal(s: Suppression, keep: list[str], source: SourceFile) -> Fix:
    span = s.comment
    if keep:
        return Fix(f"keep only `ignore[{', '.join(keep)}]`", span, f"# plait: ignore[{', '.join(keep)}]")
    # Take the spaces before the comment too, so the line ends where the code does.
    start = span.offset
    while start > 0 and source.text[start - 1] in " \t":
        start -= 1
    return Fix("remove the comment", source.span(start, span.end_offset), "")
