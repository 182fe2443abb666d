"""Any diagnostics over any text → every format renders without raising, bounded, with no secret in full.

Spans here may be anything a buggy pass could produce: past the end of the
file, ending before they start, in files that were never read.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from plait.core.codes import CODES, make
from plait.compiler.report import FORMATS, render
from plait.core.diagnostics import Fix, Label
from plait.core.source import SourceFile, Span

SECRET = "sk-proj-Zx81kQ2mWv7RtY5uPa3LdN9bC4eF6gH0jK"

texts = st.text(st.characters(blacklist_categories=("Cs",)), max_size=400).map(lambda t: t.replace("\r", ""))
numbers = st.integers(min_value=0, max_value=500)


@st.composite
def spans(draw, files):
    file = draw(st.sampled_from(files))
    line, column, end_line, end_column, offset, end_offset = (draw(numbers) for _ in range(6))
    return Span(file, line, column, end_line, end_column, offset, end_offset)


@st.composite
def reports(draw):
    body = draw(texts)
    cut = draw(st.integers(0, len(body)))
    text = body[:cut] + f'"{SECRET}"' + body[cut:]  # a secret somewhere in the file
    source = SourceFile("f.plait", text)
    files = ["f.plait", "unread.plait"]
    diagnostics = []
    for _ in range(draw(st.integers(1, 4))):
        span = draw(spans(files))
        labels = [Label(draw(spans(files)), draw(texts)) for _ in range(draw(st.integers(0, 2)))]
        fix = draw(st.none() | st.builds(Fix, texts, st.none() | spans(files), st.none() | texts))
        redact = (source.span(cut, cut + len(SECRET) + 2),)
        code = draw(st.sampled_from(list(CODES)))
        diagnostics.append(
            make(
                code,
                draw(texts) + f" {SECRET}",
                span,
                labels=labels,
                notes=draw(st.lists(texts, max_size=2)),
                fix=fix,
                redact=redact,
            )
        )
    return diagnostics, {"f.plait": source}


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(reports(), st.sampled_from(FORMATS), st.booleans())
def test_any_report_renders_masked_and_bounded(report, fmt, color):
    diagnostics, sources = report
    out = render(diagnostics, sources, fmt, color=color)
    assert SECRET not in out
    if fmt != "sarif":  # SARIF also carries every rule's documentation
        assert len(out) < 20_000 * len(diagnostics)
