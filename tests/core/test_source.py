"""Spans: three slots whose lines and columns come from the file when asked for, equal to spans of given
positions, immutable and hashable like the named tuple they replaced."""

from __future__ import annotations

import copy
import pickle
from dataclasses import FrozenInstanceError

import pytest

from plait.core.source import SourceFile, Span, span_of

TEXT = "model m = 1\n\n  agent é {\r\n}\n"


def test_a_span_reads_its_lines_and_columns_from_its_file():
    source = SourceFile("spec.plait", TEXT)
    start = TEXT.index("agent")
    span = source.span(start, TEXT.index("}") + 1)
    assert (span.line, span.column, span.end_line, span.end_column) == (3, 3, 4, 2)
    assert (span.file, span.offset, span.end_offset) == ("spec.plait", start, TEXT.index("}") + 1)
    assert str(span) == "spec.plait:3:3" and span.start.line == 3 and span.end.column == 2
    # Columns count code points (as lark does): `é` is one.
    assert source.span(TEXT.index("{"), TEXT.index("{") + 1).column == len("  agent é ") + 1


def test_a_span_equals_the_span_of_the_same_positions_given():
    source = SourceFile("spec.plait", TEXT)
    light = source.span(0, 5)
    given = Span("spec.plait", 1, 1, 1, 6, 0, 5)
    assert light == given and hash(light) == hash(given)
    assert light != Span("spec.plait", 1, 1, 1, 6, 0, 6) and light != source.span(0, 4)
    assert light != Span("other.plait", 1, 1, 1, 6, 0, 5)
    # Read as the seven values it used to be a named tuple of.
    assert tuple(light) == ("spec.plait", 1, 1, 1, 6, 0, 5) and light[1:5] == (1, 1, 1, 6) and len(light) == 7
    file, line, *_ = light
    assert (file, line) == ("spec.plait", 1)


def test_to_joins_spans_of_one_file_and_of_given_positions():
    source = SourceFile("spec.plait", TEXT)
    joined = source.span(0, 5).to(source.span(6, 7))
    assert joined == source.span(0, 7) and joined.end_column == 8
    assert source.span(0, 5).to(Span("spec.plait", 9, 1, 9, 4, 100, 103)).values() == ("spec.plait", 1, 1, 9, 4, 0, 103)


def test_a_span_pickles_and_copies_without_its_file_text():
    source = SourceFile("spec.plait", TEXT * 1000)
    span = source.span(13, 20)
    data = pickle.dumps(span)
    assert pickle.loads(data) == span and copy.deepcopy(span) == span and len(data) < 200


def test_a_span_is_immutable():
    span = span_of(SourceFile("spec.plait", TEXT), 0, 5)
    with pytest.raises(FrozenInstanceError):
        span.offset = 3
    with pytest.raises(FrozenInstanceError):
        del span.offset
    assert {span: 1}[Span("spec.plait", 1, 1, 1, 6, 0, 5)] == 1
