"""The one parser engine: plait's lexer feeding the parser lark's standalone tool generated from the grammar.

The lexer must cut every text as lark's own basic lexer cuts it over the same grammar (the same tokens, with
the same positions and keyword names, or both refuse the text), so the grammar stays the one definition of
the language's tokens; the generated parser must be the one built from the grammar as it is now. lark itself
is needed only here and by the generator: checking any spec, valid or not, never imports it.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lark import Lark
from lark.exceptions import UnexpectedCharacters
from test_fuzz import FUZZ, WHOLE_FILE, WHOLE_FILE_02, mutated, specs

from plait.dsl import build_parser, lexer
from plait.dsl import parser as plait_parser
from plait.dsl.discover import spec_files

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = spec_files(ROOT / "examples")
_OPENERS = {"LBRACE": "RBRACE", "LSQB": "RSQB", "LPAR": "RPAR"}


def _fields(tok) -> tuple:
    return (tok.type, str(tok), tok.start_pos, tok.line, tok.column, tok.end_line, tok.end_column, tok.end_pos)


@pytest.fixture(scope="module")
def lark_lexer() -> Lark:
    """lark's own basic lexer over the grammar (its public `lex`), the reference."""
    return Lark(build_parser.GRAMMAR_PATH.read_text(encoding="utf-8"), parser="lalr", lexer="basic")


def _without_separators(tokens) -> list[tuple]:
    """The tokens but newlines and commas between block members: what the lexer folds, and the reference
    does not."""
    kept, stack = [], []
    for tok in tokens:
        kind = tok.type
        if kind == "_SEP" or (kind == "COMMA" and stack and stack[-1] == "LBRACE"):
            continue
        if kind in _OPENERS:
            stack.append(kind)
        elif stack and _OPENERS[stack[-1]] == kind:
            stack.pop()
        kept.append(_fields(tok))
    return kept


def _reference(lark: Lark, text: str) -> list[tuple] | None:
    try:
        return _without_separators(lark.lex(text))
    except UnexpectedCharacters:
        return None


def _ours(text: str) -> list[tuple] | None:
    try:
        return _without_separators(plait_parser._get_parser().lexer.tokens(text)[0])
    except lexer.BadCharacter:
        return None
    except lexer.NestingTooDeep:
        return "too deep"  # type: ignore[return-value]


def assert_same_tokens(lark: Lark, text: str) -> None:
    ours = _ours(text)
    if ours != "too deep":
        assert ours == _reference(lark, text)


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_examples(lark_lexer, path):
    assert_same_tokens(lark_lexer, path.read_text(encoding="utf-8"))


def test_every_construct(lark_lexer):
    assert_same_tokens(lark_lexer, WHOLE_FILE)
    assert_same_tokens(lark_lexer, WHOLE_FILE_02)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "\n\n",
        "# only a comment",
        'agent a { model = m, tools = [x,\n y,], system = """\n  hi\n  """ }',
        "chain c = a\n  -> parallel(b, c,)\n  -> d",
        "agent a {\r\n  model = m\r\n}\r\n",
        'tool t { params { u: "a" | "b"?, o: object { x: int } } }',
        "agent a { x = 1e3, y = -2, z = 10ms, w = 1.5h, m = 4MB, b = 4Mb }",
        'agent a { s = "\\u00e9\\n" }',
        "agent a { x = $ }",
        '"""never closed',
        'agent a { s = "never closed }',
        "a\rb",
        "agent a { until = a == 1 and not b.c succeeded or d != 2 }",
        "x = a.b -> c | d ? e : f",
    ],
)
def test_edge_cases(lark_lexer, text):
    assert_same_tokens(lark_lexer, text)


@settings(FUZZ, max_examples=60)
@given(specs())
def test_generated_specs(lark_lexer, text):
    assert_same_tokens(lark_lexer, text)


@settings(FUZZ, max_examples=150)
@given(mutated())
def test_mutated_specs(lark_lexer, text):
    assert_same_tokens(lark_lexer, text)


_SOUP = [
    *'ab{}[](),=:?|->"#\n\r \t1.5ms\\e-+_.<!',
    *("model", "agent", "tool", "params", "parallel", "chain", '"""', "succeeded", "true", "plait", "import"),
    *("step", "consolidate", " = ", "{ ", " }", "input", "state", "output", "answer", "route", "loop", "map"),
    *("ask", "mcp", "on", "else", "not", "and", "or", "==", "4MB", "\u00e9", "\x00"),
]


@settings(FUZZ, max_examples=200)
@given(st.lists(st.sampled_from(_SOUP), max_size=60).map("".join))
def test_token_soup(lark_lexer, text):
    assert_same_tokens(lark_lexer, text)


def test_the_ignored_terminals_are_the_grammars(lark_lexer):
    text = "agent a {  # a comment\n\tmodel = m }\n"
    everything = {t.type for t in lark_lexer.lex(text, dont_ignore=True)}
    assert everything - {t.type for t in lark_lexer.lex(text)} == lexer.IGNORED


def test_keywords_are_the_grammars_words():
    words = plait_parser.keywords()
    assert words["agent"] == "AGENT" and words["succeeded"] == "SUCCEEDED" and words["else"] == "ELSE"
    assert "name" not in words and "parallel" in words


def test_the_generated_parser_is_built_from_the_grammar():
    assert build_parser.built_from() == build_parser.grammar_digest(), (
        "grammars/plait_parser.py is stale: run `python -m plait.dsl.build_parser`"
    )


def test_a_grammar_edit_makes_the_generated_parser_stale(tmp_path, monkeypatch):
    grammar = tmp_path / "plait.lark"
    grammar.write_text(build_parser.GRAMMAR_PATH.read_text(encoding="utf-8") + "\n// edited\n", encoding="utf-8")
    monkeypatch.setattr(build_parser, "GRAMMAR_PATH", grammar)
    assert build_parser.main(["--check"]) == 1


@pytest.mark.slow
@pytest.mark.parametrize("text", [WHOLE_FILE, "agent a {\n  model = \n}\nagent b { x = $ }\n"], ids=["valid", "broken"])
def test_checking_a_spec_does_not_import_lark(tmp_path, text):
    spec = tmp_path / "spec.plait"
    spec.write_text(text, encoding="utf-8")
    code = (
        "import sys; from plait.cli import main; code = main(['check', '-q', sys.argv[1]]); "
        "print('lark' in sys.modules); raise SystemExit(code)"
    )
    run = subprocess.run([sys.executable, "-c", code, str(spec)], capture_output=True, text=True)
    assert run.stdout.strip().splitlines()[-1] == "False", run.stdout + run.stderr
