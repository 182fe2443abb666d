"""Diagnostics → text as rustc and ruff print it.

    error[P101]: undefined name `fsat`
     --> spec.plait:4:11
      |
    4 |   model = fsat
      |           ^^^^
      |
      = note: `model` takes a model
    help: did you mean `fast`?

Secondary labels in the same file join the primary snippet (underlined with
`-`); labels in other files get their own ` ::: file` snippet. Colour is
ANSI, and only when the caller asks for it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Mapping, Sequence

from plait.core.diagnostics import Diagnostic, Severity
from plait.core.record import Record, record
from plait.core.source import SourceFile, Span

from .summary import summarize

if TYPE_CHECKING:
    from .mask import Redactor

__all__ = ["render_text"]

_SEVERITY_COLOR = {Severity.ERROR: "1;31", Severity.WARNING: "1;33", Severity.INFO: "1;36"}
_GUTTER, _LABEL, _BOLD, _HELP = "1;34", "1;34", "1", "1;36"
_SECRET_MARGIN = 1024


class _Paint:
    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    def __call__(self, style: str, text: str) -> str:
        return f"\x1b[{style}m{text}\x1b[0m" if self.enabled and text else text


@record(kw_only=False)
class _Mark(Record):
    span: Span
    primary: bool
    message: str


def render_text(
    diagnostics: Sequence[Diagnostic],
    sources: Mapping[str, SourceFile],
    color: bool = False,
    *,
    summary: bool = True,
) -> str:
    paint = _Paint(color)
    # A diagnostic that follows from another one listed here is folded into a line under it (src/plait/compiler/cascade.py).
    # What follows from a follower is folded under the root it all follows from.
    listed = {(d.code, d.span) for d in diagnostics if d.follows is None}
    cause = {(d.code, d.span): d.follows for d in diagnostics if d.follows is not None}
    folded: dict[tuple, list[Diagnostic]] = {}
    shown: list[Diagnostic] = []
    for d in diagnostics:
        root, seen = d.follows, set()
        while root is not None and root not in listed and root in cause and root not in seen:
            seen.add(root)
            root = cause[root]
        if root is not None and root in listed:
            folded.setdefault(root, []).append(d)
        else:
            shown.append(d)
    blocks = [_diagnostic(d, sources, paint, folded.get((d.code, d.span), ())) for d in shown]
    if summary:
        blocks.append(summarize(diagnostics, sources).line() + "\n")
    return "\n".join(blocks)


def _diagnostic(
    d: Diagnostic, sources: Mapping[str, SourceFile], paint: _Paint, followers: Sequence[Diagnostic] = ()
) -> str:
    # Imported with the first diagnostic shown: a clean check's report is its summary line alone.
    from .line_view import clean
    from .mask import Redactor

    redactor = Redactor(d, sources)

    def say(text: str) -> str:  # every string from a diagnostic is masked and made safe to print
        return clean(redactor.text(text))

    marks = [_Mark(d.span, True, "")] + [_Mark(label.span, False, say(label.message)) for label in d.labels]
    width = len(str(max(max(m.span.line, 1) for m in marks)))
    pad = " " * width
    bar = paint(_GUTTER, "|")
    lines = [paint(_SEVERITY_COLOR[d.severity], f"{d.severity}[{d.code}]") + paint(_BOLD, ": " + say(d.message))]
    groups: dict[str, list[_Mark]] = {}
    for mark in marks:
        groups.setdefault(mark.span.file, []).append(mark)
    for index, (file, group) in enumerate(groups.items()):
        first = group[0].span
        source = sources.get(file)
        arrow = "-->" if index == 0 else ":::"
        lines.append(f"{pad}{paint(_GUTTER, arrow)} {_where(first, source is not None)}")
        if source is not None:
            lines.extend(_snippet(group, source, redactor, paint, d.severity, width))
    footer = [f"{pad} {paint(_BOLD, '=')} {paint(_BOLD, 'note')}: {say(note)}" for note in d.notes]
    if followers:
        many = len(followers) > 1
        footer.append(
            f"{pad} {paint(_BOLD, '=')} {paint(_BOLD, 'note')}: {len(followers)} more problem{'s' * many} "
            f"follow{'' if many else 's'} from this one; fix it first:"
        )
        for f in followers:
            said = clean(Redactor(f, sources).text(f.message))
            where = _where(f.span, sources.get(f.span.file) is not None)
            footer.append(f"{pad}   {paint(_SEVERITY_COLOR[f.severity], f'{f.severity}[{f.code}]')} {where}: {said}")
    if d.fix is not None:
        footer.append(f"{paint(_HELP, 'help')}: {say(d.fix.message)}")
    if footer:
        if any(sources.get(m.span.file) is not None for m in marks):
            lines.append(f"{pad} {bar}")
        lines.extend(footer)
    return "\n".join(lines) + "\n"


def _where(span: Span, readable: bool) -> str:
    from .line_view import clean  # loaded already: only a shown diagnostic has a place

    # A file name is untrusted text too: one holding an escape sequence must not drive the terminal.
    file = clean(span.file)
    # A file that could not be read carries a placeholder span at 1:1; a made-up position would mislead.
    if not readable and span.offset == 0 and span.line == 1:
        return file
    return f"{file}:{span.line}:{span.column}"


def _snippet(
    group: list[_Mark], source: SourceFile, redactor: Redactor, paint: _Paint, severity: Severity, width: int
) -> list[str]:
    from .line_view import view_line, window

    pad = " " * width
    bar = paint(_GUTTER, "|")
    out = [f"{pad} {bar}"]
    by_line: dict[int, list[_Mark]] = {}
    for mark in sorted(group, key=lambda m: (m.span.line, not m.primary)):
        by_line.setdefault(mark.span.line, []).append(mark)
    previous = None
    for number, marks in by_line.items():
        if previous is not None and number > previous + 1:
            out.append(paint(_GUTTER, "..."))
        previous = number
        text = source.line_text(number)
        focus = marks[0].span.column - 1
        lo, hi = window(len(text), focus)
        # The margin keeps any secret that overlaps the window whole, so it is matched and masked whole.
        masks = redactor.line_ranges(source, number, text, max(0, lo - _SECRET_MARGIN), hi + _SECRET_MARGIN)
        view = view_line(text, masks, focus)
        out.append(f"{paint(_GUTTER, str(number).rjust(width))} {bar} {view.text}".rstrip())
        continues = False
        for mark in marks:
            span = mark.span
            start = view.column(span.column - 1)
            multiline = span.end_line > span.line
            continues |= multiline
            end = view.column(len(text)) if multiline else view.column(span.end_column - 1)
            char, style = ("^", _SEVERITY_COLOR[severity]) if mark.primary else ("-", _LABEL)
            underline = char * max(1, end - start)
            if mark.message:
                underline += " " + mark.message
            out.append(f"{pad} {bar} {' ' * start}{paint(style, underline)}")
        if continues:
            out.append(paint(_GUTTER, "..."))
    return out
