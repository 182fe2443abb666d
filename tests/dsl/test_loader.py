"""Reading spec files: every way a file can be unreadable is a P005 diagnostic with a position."""

from __future__ import annotations

import pytest

import plait
from plait.core.source import Position, SourceFile


def codes(result):
    return [(d.code, d.span.line, d.span.column) for d in result.diagnostics]


def test_missing_file_is_a_diagnostic(tmp_path):
    result = plait.compile(tmp_path / "nope.plait")
    assert codes(result) == [("P005", 1, 1)]
    assert "no such file" in result.diagnostics[0].message
    assert result.graph is None


def test_directory_is_a_diagnostic(tmp_path):
    folder = tmp_path / "spec.plait"
    folder.mkdir()
    result = plait.compile(folder)
    assert [d.code for d in result.diagnostics] == ["P005"]
    assert "directory" in result.diagnostics[0].message


@pytest.mark.parametrize(
    "data, line, column, says",
    [
        (b'model m = "scripted/x"\nagent a {\xff model = m }\n', 2, 10, "0xff"),
        (b"model \x00", 1, 7, "NUL byte; is it binary?"),
    ],
    ids=["invalid-utf8", "nul-byte"],
)
def test_undecodable_bytes_are_pointed_at_and_named(tmp_path, data, line, column, says):
    path = tmp_path / "bad.plait"
    path.write_bytes(data)
    result = plait.compile(path)
    assert codes(result) == [("P005", line, column)]
    assert says in result.diagnostics[0].message


def test_source_positions_are_one_based_with_exclusive_ends():
    source = SourceFile("s.plait", "ab\ncd\n")
    assert source.position(0) == Position(1, 1, 0)
    assert source.position(4) == Position(2, 2, 4)
    span = source.span(3, 5)
    assert (span.line, span.column, span.end_line, span.end_column) == (2, 1, 2, 3)
    assert source.line_text(2) == "cd"
    assert source.line_text(99) == ""


def test_text_and_path_compile_the_same_graph(tmp_path):
    text = 'model m = "scripted/x" { script = "r.json" }\nagent main { model = m }\n'
    path = tmp_path / "s.plait"
    path.write_text(text)
    (tmp_path / "r.json").write_text("[]")
    from_path = plait.compile(path)
    from_text = plait.compile(text, path=str(path))
    assert from_path.ok and from_text.ok, (from_path.diagnostics, from_text.diagnostics)
    assert from_path.graph.node("m").script == from_text.graph.node("m").script == str(tmp_path / "r.json")
