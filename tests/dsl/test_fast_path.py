"""The fast path (plait's lexer and table-driven parser, over tables generated
from the grammar) and lark's own lexer and parser agree on every text: the
same tokens with the same positions, and the same AST, or both reject it.
Users only ever see one parser; this is what lets the fast one stand in for
lark's. The generated tables must match the grammar.
"""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_fuzz import FUZZ, WHOLE_FILE, WHOLE_FILE_02, mutated, specs

from plait.dsl import ast, lark_parse, tables
from plait.dsl import parser as plait_parser
from plait.dsl.discover import spec_files
from plait.dsl.lalr import ParseMismatch
from plait.dsl.lexer import LexMismatch
from plait.core.source import Span

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = spec_files(ROOT / "examples")


def _fields(tok) -> tuple:
    return (tok.type, tok.value, tok.start_pos, tok.line, tok.column, tok.end_line, tok.end_column, tok.end_pos)


def _lark_tokens(lark, text: str) -> list[tuple] | None:
    try:
        return [_fields(t) for t in lark.lex(text)]
    except Exception:  # any lexing error: the fast lexer must refuse the text too
        return None


def _fast_tokens(parser, text: str) -> list[tuple] | None:
    try:
        return [_fields(t) for t in parser.lexer.tokens(text)[0]]
    except LexMismatch:
        return None


def _outcome(parse, text: str):
    try:
        return "ok", parse(text)
    except Exception as exc:  # noqa: BLE001 - which error is lark's business; failing at all is the point
        return "error", type(exc).__name__


def assert_agree(text: str) -> None:
    parser = plait_parser._get_parser()
    reference = lark_parse._get_parser()
    parser.builder.file = reference.builder.file = "<fast-path>"
    fast_tokens = _fast_tokens(parser, text)
    if fast_tokens is not None:
        assert fast_tokens == _lark_tokens(reference.lark, text)
    lark_result = _outcome(reference.lark.parse, text)
    fast_result = _outcome(lambda t: parser.table.parse(parser.lexer.tokens(t)[0]), text)
    if lark_result[0] == "ok":
        assert fast_result == lark_result
    else:
        assert fast_result[0] == "error"
        # Mismatches hand the text to lark; anything else (a bad escape) is the same error lark raised.
        if fast_result[1] not in (LexMismatch.__name__, ParseMismatch.__name__):
            assert fast_result == lark_result


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_examples(path):
    assert_agree(path.read_text(encoding="utf-8"))


def test_every_construct():
    assert_agree(WHOLE_FILE)


def test_every_02_construct():
    assert_agree(WHOLE_FILE_02)
    assert_agree(WHOLE_FILE_02.replace("plait 0.2", "plait 0.1"))


@pytest.mark.parametrize(
    "text",
    [
        "",
        "\n\n",
        "# only a comment",
        "plait 0.1",
        'agent a { model = m, tools = [x,\n y,], system = """\n  hi\n  """ }',
        "chain c = a\n  -> parallel(b, c,)\n  -> d",
        "agent a {\r\n  model = m\r\n}\r\n",
        'tool t { params { u: "a" | "b"?, o: object { x: int } } }',
        "agent a { x = 1e3, y = -2, z = 10ms, w = 1.5h }",
        'agent a { s = "\\u00e9\\n" }',
        'agent a { s = "\\q" }',  # a bad escape: the builder's own error, raised on both paths
        "agent a {" + "[" * 70 + "]" * 70 + "}",  # deeper than the nesting cap
        "agent a { x = $ }",
        "agent a { model = }",
        "agent a {",
        "}",
        '"""never closed',
        'route r on input.c { "a" -> b\n  else\n    -> c, }',
        "route r on { }",
        "loop l = a -> { }",
        "agent a { until = (a == 1 }",
        "agent a { until = a == == 1 }",
        "agent a { until = not }",
        "agent a { m = 4MB, k = 1.5KB, b = 100B, g = 1GB, x = 4Mb }",
        "agent a { x = a.b.c, y = [a.b, c.d succeeded] }",
        "ask q",
        "input { a: int }\nstate { }",
    ],
)
def test_edge_cases(text):
    assert_agree(text)


@settings(FUZZ, max_examples=60)
@given(specs())
def test_generated_specs(text):
    assert_agree(text)


@settings(FUZZ, max_examples=150)
@given(mutated())
def test_mutated_specs(text):
    assert_agree(text)


_SOUP = [
    *'ab{}[](),=:?|->"#\n\r \t1.5ms\\e-+_.<!',
    "model",
    "agent",
    "tool",
    "params",
    "parallel",
    "chain",
    '"""',
    "succeeded",
    "true",
    "plait",
    "import",
    "step",
    "consolidate",
    " = ",
    "{ ",
    " }",
    "input",
    "state",
    "output",
    "answer",
    "route",
    "loop",
    "map",
    "ask",
    "mcp",
    "on",
    "else",
    "not",
    "and",
    "or",
    "==",
    "4MB",
]


@settings(FUZZ, max_examples=200)
@given(st.lists(st.sampled_from(_SOUP), max_size=60).map("".join))
def test_token_soup(text):
    assert_agree(text)


def test_generated_tables_match_the_grammar():
    assert tables.generate() == tables.TABLES_PATH.read_text(encoding="utf-8"), (
        "grammars/plait_tables.py is stale: run `python -m plait.dsl.tables`"
    )


@pytest.mark.slow
def test_checking_a_valid_spec_does_not_import_lark(tmp_path):
    spec = tmp_path / "ok.plait"
    spec.write_text(WHOLE_FILE, encoding="utf-8")
    code = (
        "import sys; from plait.cli import main; code = main(['check', '-q', sys.argv[1]]); "
        "print('lark' in sys.modules); raise SystemExit(code)"
    )
    run = subprocess.run([sys.executable, "-c", code, str(spec)], capture_output=True, text=True)
    assert run.stdout.strip().splitlines()[-1] == "False", run.stdout + run.stderr


def test_a_syntax_error_is_explained_through_lark(tmp_path):
    module, diagnostics = plait_parser.parse_module(plait_parser.SourceFile("bad.plait", "agent a {\n  model = \n"))
    assert module is None
    assert diagnostics and diagnostics[0].code.startswith("P00")
    # Only lark's post-lexer knows which block is still open.
    assert "expected `}` to close `agent a` opened at 1:9" in diagnostics[0].message


def _nodes(value):
    if isinstance(value, ast.Node):
        yield value
        for field in dataclasses.fields(value):
            yield from _nodes(getattr(value, field.name))
    elif isinstance(value, tuple) and not isinstance(value, Span):
        for item in value:
            yield from _nodes(item)


@pytest.mark.parametrize("text", [WHOLE_FILE, WHOLE_FILE_02, *(p.read_text(encoding="utf-8") for p in EXAMPLES)])
def test_every_node_has_every_field_in_order(text):
    # The parser's constructors bypass the dataclasses' __init__; a node missing a
    # field would only fail when that field is read. Reading every field (in
    # _nodes) and rebuilding the node through its class must give it back.
    module, diagnostics = plait_parser.parse_module(plait_parser.SourceFile("spec.plait", text))
    assert module is not None, diagnostics
    nodes = list(_nodes(module))
    assert len(nodes) > 50
    for node in nodes:
        assert node == type(node)(**{f.name: getattr(node, f.name) for f in dataclasses.fields(node)})


@pytest.mark.parametrize("cls", [ast.String, ast.Block, ast.Module, ast.RouteDecl, ast.Params])
def test_constructor_makes_what_the_class_makes(cls):
    span = Span("f", 1, 1, 1, 2, 0, 1)
    required = {
        f.name: (span if f.name == "span" else ()) for f in dataclasses.fields(cls) if f.default is dataclasses.MISSING
    }
    made = ast.constructor(cls)(**required)
    assert made == cls(**required)
    assert hash(made) == hash(cls(**required))
    with pytest.raises(TypeError):
        ast.constructor(cls)(**required, unknown=1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.span = span
