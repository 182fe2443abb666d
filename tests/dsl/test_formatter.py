"""`plait fmt`: golden layouts, idempotency, meaning and comments preserved, the CLI.

Goldens live in tests/fixtures/fmt: `<case>.plait` is a messy input and
`<case>.expected.plait` its canonical layout. Set UPDATE_GOLDENS=1 (as for every golden) to
rewrite the expected files after a deliberate layout change.
"""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import plait
from plait.cli import main
from plait.dsl.ast import strip_spans
from plait.dsl.formatter import COMMENT_COLUMN, FormatError, encode_string, format_text
from plait.dsl.parser import parse_module
from plait.core.source import SourceFile

FIXTURES = Path(__file__).parent.parent / "fixtures" / "fmt"
CASES = sorted(p.name[: -len(".plait")] for p in FIXTURES.glob("*.plait") if not p.name.endswith(".expected.plait"))


def parse(text: str):
    module, diagnostics = parse_module(SourceFile("<test>", text))
    assert module is not None, diagnostics
    return module


def fmt(text: str) -> str:
    out, diagnostics = format_text(text)
    assert out is not None, diagnostics
    return out


def assert_preserved(text: str, out: str) -> None:
    """Same meaning, same comments (by count and by text), and a fixed point."""
    before, after = parse(text), parse(out)
    assert strip_spans(after) == strip_spans(before)
    assert len(after.comments) == len(before.comments)
    assert sorted(c.text.rstrip() for c in after.comments) == sorted(c.text.rstrip() for c in before.comments)
    assert fmt(out) == out


# --- goldens ------------------------------------------------------------------------


def test_there_are_goldens():
    assert {"everything", "comments", "strings", "long", "house"} <= set(CASES)


@pytest.mark.parametrize("case", CASES)
def test_golden(case):
    text = (FIXTURES / f"{case}.plait").read_text(encoding="utf-8")
    expected_path = FIXTURES / f"{case}.expected.plait"
    out = fmt(text)
    if os.environ.get("UPDATE_GOLDENS") == "1":
        expected_path.write_text(out, encoding="utf-8")
    assert out == expected_path.read_text(encoding="utf-8")
    assert_preserved(text, out)


@pytest.mark.parametrize("case", CASES)
def test_golden_is_a_fixed_point(case):
    expected = (FIXTURES / f"{case}.expected.plait").read_text(encoding="utf-8")
    assert fmt(expected) == expected


def test_everything_golden_covers_every_construct():
    module = parse((FIXTURES / "everything.plait").read_text(encoding="utf-8"))
    kinds = {d.kind for d in module.declarations}
    assert kinds == {"model", "tool", "agent", "step", "consolidate", "chain", "parallel", "import"}
    text = (FIXTURES / "everything.expected.plait").read_text(encoding="utf-8")
    for construct in (
        "list[",
        "object {",
        " | ",
        "float?",
        "}]?",
        "http(",
        "parallel(",
        "on_error = collect",
        "succeeded",
        "keep_last(",
        '"app.tenant" =',
        '"""',
        "\\{{",
        "result  = messages",
    ):
        assert construct in text, construct


# --- layout rules -------------------------------------------------------------------


def test_version_first_then_one_blank_line_and_aligned_model_group():
    out = fmt('plait  0.1\nmodel a="x/y"\nmodel long_name = "x/z"   {temperature=1}\n')
    assert out == 'plait 0.1\n\nmodel a         = "x/y"\nmodel long_name = "x/z" { temperature = 1 }\n'


def test_declarations_keep_their_order_and_get_one_blank_line():
    text = 'chain c = b -> a\n\n\n\nagent b { model = m }\nagent a {\nmodel = m\n}\nmodel m = "x/y"\n'
    out = fmt(text)
    assert out == ('chain c = b -> a\n\nagent b { model = m }\n\nagent a {\n  model = m\n}\n\nmodel m = "x/y"\n')


def test_blank_lines_inside_a_block_collapse_to_one_and_break_alignment():
    out = fmt("agent a {\n  model = m\n\n\n\n  max_steps = 3\n  tools = [t]\n}\n")
    assert out == "agent a {\n  model = m\n\n  max_steps = 3\n  tools     = [t]\n}\n"


def test_long_key_is_not_padded_and_does_not_widen_the_others():
    out = fmt("agent a {\n model = m\n retry_malformed = 2\n tools = [t]\n}\n")
    assert out == "agent a {\n  model = m\n  retry_malformed = 2\n  tools = [t]\n}\n"


def test_block_layout_follows_the_author_where_it_fits():
    assert fmt("agent a { model = m, tools = [t] }") == "agent a { model = m, tools = [t] }\n"
    assert fmt("agent a {\n model = m, tools = [t] }") == "agent a {\n  model = m\n  tools = [t]\n}\n"
    long = 'agent a { model = m, system = "' + "x" * 80 + '" }'
    assert fmt(long).startswith("agent a {\n  model  = m\n  system = ")


def test_long_list_breaks_one_item_per_line_and_short_list_joins():
    items = ", ".join(f"tool_number_{i}" for i in range(8))
    out = fmt(f"agent a {{\n  tools = [{items}]\n  fallback = [\n    x,\n    y\n  ]\n}}\n")
    assert "  tools    = [\n    tool_number_0,\n" in out
    assert "    tool_number_7,\n  ]\n" in out
    assert "  fallback = [x, y]\n" in out


def test_long_chain_breaks_before_arrows():
    names = " -> ".join(f"stage_number_{i}" for i in range(7))
    out = fmt(f"chain c = {names}")
    assert out.splitlines()[0] == "chain c = stage_number_0"
    assert out.splitlines()[1] == "  -> stage_number_1"


def test_empty_and_comment_only_files():
    assert fmt("") == ""
    assert fmt("\n\n  \n") == ""
    assert fmt("# just a note\n\n\n# another") == "# just a note\n\n# another\n"


def test_crlf_input_becomes_lf_with_the_same_meaning():
    text = 'agent a {\r\n  model = m\r\n  system = """\r\n    one\r\n\r\n    two\r\n  """\r\n}\r\n'
    out = fmt(text)
    assert "\r" not in out
    assert_preserved(text, out)


# --- strings ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value",
    [
        "",
        "plain",
        'quote " and \\ backslash',
        "tab\tnewline\n",
        "\\{{ literal }}",
        "\\\\{{x}}",
        "é ✓ 😀",
        "\ud83d lone surrogate",
        "\x00\x1f control",
        "\u2028 separator",
        "{{input.a}}",
    ],
)
def test_encode_string_decodes_back(value):
    literal = encode_string(value)
    module = parse(f"model m = {literal}")
    assert module.declarations[0].target.value == value


@pytest.mark.parametrize(
    "raw",
    [
        '"""\n  a\n    b\n\n  c\n"""',
        '"""\n\n  a\n\n"""',
        '""""""',
        '"""\n"""',
        '"""one line"""',
        '"""\n\ttab\n  space\n"""',
        '"""\n  trailing  \n  spaces \n"""',
        '"""  leading on the first line\n  x\n"""',
        '"""\n  say "hi"\n"""',
        '"""x\n  y"""',
    ],
)
def test_block_strings_stay_block_strings_with_the_same_value(raw):
    text = f"agent a {{\n  model = m\n  system = {raw}\n  tools = [{raw}]\n}}\n"
    out = fmt(text)
    assert_preserved(text, out)
    value = parse(out).declarations[0].body.get("system").value
    assert value.block


def test_block_string_is_reindented_under_its_line():
    out = fmt('agent a {\nsystem = """\n          deep\n            deeper\n        """\n}')
    assert out == 'agent a {\n  system = """\n    deep\n      deeper\n  """\n}\n'


def test_numbers_and_durations_keep_their_text():
    out = fmt('model m = "x/y" { temperature = 0.50, retries = 1e3, timeout = 1.5s, n = -0 }')
    assert "temperature = 0.50" in out and "retries = 1e3" in out and "1.5s" in out and "n = -0" in out


# --- comments -----------------------------------------------------------------------


def test_every_comment_is_kept_in_its_place():
    text = (
        "# head\n"
        "agent a { # after brace\n"
        "  # above model\n"
        "  model = m # after model\n"
        "  tools = [x, # after x\n"
        "    y]\n"
        "  # dangling\n"
        "} # after decl\n"
        "# tail\n"
    )
    out = fmt(text)

    def note(code: str, comment: str) -> str:
        return code.ljust(COMMENT_COLUMN) + comment + "\n"

    assert out == (
        "# head\n"
        + note("agent a {", "# after brace")
        + "  # above model\n"
        + note("  model = m", "# after model")
        + "  tools = [\n"
        + note("    x,", "# after x")
        + "    y,\n"
        + "  ]\n"
        + "  # dangling\n"
        + note("}", "# after decl")
        + "# tail\n"
    )
    assert {line.index("#") for line in out.splitlines() if "# after" in line} == {COMMENT_COLUMN}
    assert_preserved(text, out)


def test_trailing_comments_on_consecutive_lines_share_a_column():
    long = "x" * 50
    out = fmt(f'agent a {{\n  system = "{long}" # one\n  model = m # two\n\n  tools = [t] # three\n}}\n')
    lines = [line for line in out.splitlines() if "#" in line]
    assert lines[0].index("#") == lines[1].index("#") == len(f'  system = "{long}"') + 2
    assert lines[2].index("#") == COMMENT_COLUMN


def test_two_comments_for_one_line_never_merge():
    text = 'model # one\n m = # two\n "x/y" # three\n'
    out = fmt(text)
    assert out.count("#") == 3
    assert_preserved(text, out)


def test_a_comment_next_to_a_block_string_stays_outside_it():
    text = 'agent a {\n  model = m\n}\nmodel x # note\n = """\n  v\n"""\n'
    out = fmt(text)
    assert parse(out).declarations[1].target.value == "v"
    assert_preserved(text, out)


# --- a property: random specs -------------------------------------------------------

_names = st.sampled_from(["fast", "strong", "writer", "a", "b_2", "_x", "models", "a_very_long_name_indeed"])
_keys = _names | st.sampled_from(["model", "tools", "params", "true", "max_steps"])  # keywords may be keys
_comment = st.sampled_from(["# note", "#", "# a # b", '# "quoted" {', "# é ✓", "#   spaced   "])
_spaces = st.sampled_from(["", " ", "  ", "\t"])
# A newline, maybe after a comment, maybe with a blank or comment line after it.
_line_end = st.builds(
    lambda pad, trailing, extra, lead: pad + trailing + "\n" + extra + lead,
    _spaces,
    st.just("") | _comment.map(lambda c: " " + c),
    st.sampled_from(["", "\n"]) | _comment.map(lambda c: "  " + c + "\n"),
    st.sampled_from(["", "\n", "    "]),
)
_member_sep = st.sampled_from([",", ", ", " , "]) | _line_end | _line_end.map(lambda e: "," + e)
_loose = _spaces | _line_end  # where newlines mean nothing: in brackets and at top level
_plain_string = st.builds(
    lambda text, ascii_only, template: json.dumps(text, ensure_ascii=ascii_only)[:-1] + template + '"',
    st.text(st.sampled_from(['"', "\\", "{", "}", "\n", "\t", "#", "é", "\u2028", "\U0001f600", "a", " "]), max_size=6),
    st.booleans(),
    st.sampled_from(["", "\\{{x}}"]),
)
_block_string = st.builds(
    lambda lines, indent, head, tail: '"""' + head + "\n".join(indent + s if s else "" for s in lines) + tail + '"""',
    st.lists(st.sampled_from(["text", "  more", "", "\tx", "a  ", 'say "hi"', "{{input}}"]), max_size=3),
    _spaces,
    st.sampled_from(["\n", ""]),
    st.sampled_from(["\n", "\n  ", ""]),
)
_strings = _plain_string | _block_string
_scalars = (
    _strings
    | _names
    | _names.map(lambda n: f"{n} succeeded")
    | st.sampled_from(["16", "0.2", "-1", "1e3", "500ms", "30s", "2m", "1h", "true", "false"])
)


def _block(lead: str, members: list[str], seps: list[str], close: str) -> str:
    return "{" + lead + "".join(m + s for m, s in zip(members, seps)) + close + "}"


def _blocks(member: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    edge = st.sampled_from(["", " ", "\n"]) | _line_end
    return st.builds(_block, edge, st.lists(member, max_size=3), st.lists(_member_sep, min_size=3, max_size=3), edge)


def _list(items: list[tuple[str, str]], lead: str, trailing_comma: bool) -> str:
    return "[" + lead + ",".join(v + gap for v, gap in items) + ("," if items and trailing_comma else "") + "]"


_values = st.deferred(
    lambda: st.one_of(
        _scalars,
        st.builds(_list, st.lists(st.tuples(_values, _loose), max_size=3), _loose, st.booleans()),
        st.builds(
            lambda f, args, block: f"{f}({', '.join(args)})" + (" " + block if block else ""),
            _names,
            st.lists(_values, max_size=2),
            st.none() | _maps,
        ),
        _maps,
    )
)
_attribute = st.builds(lambda k, v: f"{k} = {v}", _keys | _plain_string, _values)
_maps = _blocks(_attribute)
_types = st.deferred(
    lambda: st.builds(
        lambda t, q: t + q,
        st.sampled_from(["string", "int", "float", "bool"])
        | _types.map(lambda t: f"list[{t}]")
        | st.lists(_plain_string, min_size=1, max_size=3).map(" | ".join)
        | _blocks(_param).map(lambda b: "object " + b),
        st.sampled_from(["", "?"]),
    )
)
_param = st.builds(
    lambda k, pad, t, d, v: f"{k}{pad}: {t}" + (f" {d}" if d else "") + (f" = {v}" if v else ""),
    _keys,
    _spaces,
    _types,
    st.none() | _strings,
    st.none() | _scalars,
)
_body = _blocks(_attribute | _blocks(_param).map(lambda b: "params " + b))
_inline_parallel = st.lists(st.tuples(_names, _loose), min_size=1, max_size=3).map(
    lambda items: "parallel(" + ",".join(n + g for n, g in items) + ")"
)


def _chain(name: str, gap: str, elements: list[tuple[str, str]]) -> str:
    return f"chain {name} ={gap} " + "->".join(e + g for e, g in elements)


def _described(kind: str, name: str, gap: str, description: str | None, body: str) -> str:
    return f"{kind} {name}{gap}" + (f" {description} " if description else " ") + body


_declarations = st.one_of(
    st.builds(lambda gap, path: f"import{gap or ' '}{path}", _loose, _strings),
    st.builds(
        lambda n, gap, t, b: f"model {n}{gap}= {t}" + (f" {b}" if b else ""),
        _names,
        _loose,
        _strings,
        st.none() | _body,
    ),
    st.builds(_chain, _names, _loose, st.lists(st.tuples(_names | _inline_parallel, _loose), min_size=1, max_size=4)),
    st.builds(
        lambda n, branches, b: f"parallel {n} = {branches}" + (f" {b}" if b else ""),
        _names,
        st.builds(_list, st.lists(st.tuples(_names, _loose), max_size=3), _loose, st.booleans()),
        st.none() | _body,
    ),
    st.builds(
        _described,
        st.sampled_from(["tool", "agent", "step", "consolidate"]),
        _names,
        _loose,
        st.none() | _strings,
        _body,
    ),
)
_specs = st.builds(
    lambda head, decls: head + "".join(d + gap for d, gap in decls),
    st.sampled_from(["", "plait 0.1\n", "# head\nplait 0.1 # v\n\n"]),
    st.lists(st.tuples(_declarations, st.sampled_from(["\n", "\n\n", " "]) | _line_end), max_size=3),
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(_specs)
def test_random_specs_keep_meaning_and_comments_and_reach_a_fixed_point(text):
    module, _ = parse_module(SourceFile("<test>", text))
    if module is None:  # the generator may write an invalid escape; those are not formatted
        assert format_text(text)[0] is None
        return
    assert_preserved(text, fmt(text))


def test_mutated_goldens_keep_meaning_and_comments():
    """Newlines, comments and commas dropped at random into the goldens: wherever
    the result still parses, formatting it keeps its meaning and every comment."""
    rng = random.Random(20261130)
    texts = [p.read_text(encoding="utf-8") for p in sorted(FIXTURES.glob("*.plait"))]
    inserts = ["\n", "\n", " # m\n", "\n# own\n", "\n\n", ",", " ", "\n  # x\n\n"]
    checked = 0
    for _ in range(40):
        text = rng.choice(texts)
        for _ in range(rng.randint(1, 3)):
            i = rng.randrange(len(text) + 1)
            cut = 0 if rng.random() < 0.9 else rng.randint(1, 3)
            text = text[:i] + (rng.choice(inserts) if not cut else "") + text[i + cut :]
        if parse_module(SourceFile("<test>", text))[0] is not None:
            assert_preserved(text, fmt(text))
            checked += 1
    assert checked >= 5


# --- API ------------------------------------------------------------------------------


def test_public_api_formats_and_refuses_broken_text():
    assert plait.format("agent a{model=m}") == "agent a { model = m }\n"
    with pytest.raises(FormatError) as caught:
        plait.format("agent a { model = }")
    assert caught.value.diagnostics and caught.value.diagnostics[0].code.startswith("P0")


def test_syntax_error_is_not_formatted():
    out, diagnostics = format_text("agent a {\n  model = m\n", "spec.plait")
    assert out is None
    assert diagnostics and diagnostics[0].span.file == "spec.plait"


# --- CLI --------------------------------------------------------------------------------

MESSY = "agent a{model=m}\n"
TIDY = "agent a { model = m }\n"


def test_cli_rewrites_files_and_directories(tmp_path, capsys):
    (tmp_path / "sub").mkdir()
    one, two, other = tmp_path / "one.plait", tmp_path / "sub" / "two.plait", tmp_path / "notes.txt"
    for path in (one, two, other):
        path.write_text(MESSY)
    assert main(["fmt", str(tmp_path)]) == 0
    assert one.read_text() == TIDY and two.read_text() == TIDY
    assert other.read_text() == MESSY
    assert "reformatted" in capsys.readouterr().err
    assert main(["fmt", str(one)]) == 0
    assert capsys.readouterr().err == ""
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temporary files left


def test_cli_check_lists_files_and_changes_nothing(tmp_path, capsys):
    messy, tidy = tmp_path / "messy.plait", tmp_path / "tidy.plait"
    messy.write_text(MESSY)
    tidy.write_text(TIDY)
    assert main(["fmt", "--check", str(messy), str(tidy)]) == 1
    out = capsys.readouterr().out
    assert str(messy) in out and str(tidy) not in out
    assert messy.read_text() == MESSY
    assert main(["fmt", "--check", str(tidy)]) == 0


def test_cli_diff_prints_a_unified_diff(tmp_path, capsys):
    path = tmp_path / "spec.plait"
    path.write_text(MESSY)
    assert main(["fmt", "--diff", str(path)]) == 1
    out = capsys.readouterr().out
    assert f"--- a/{path}" in out and "-agent a{model=m}" in out and "+agent a { model = m }" in out
    assert path.read_text() == MESSY
    path.write_text(TIDY)
    assert main(["fmt", "--diff", str(path)]) == 0
    assert capsys.readouterr().out == ""


def test_cli_stdin_to_stdout(monkeypatch, capsys):
    import io
    import sys

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(MESSY.encode())))
    assert main(["fmt", "-"]) == 0
    assert capsys.readouterr().out == TIDY


def test_cli_leaves_a_file_with_syntax_errors_untouched(tmp_path, capsys):
    path = tmp_path / "broken.plait"
    broken = "agent a {\n  model = m\n  tools = [x,\n}\n"
    path.write_text(broken)
    assert main(["fmt", str(path)]) == 1
    err = capsys.readouterr().err
    assert f"{path}:" in err and "error[P0" in err
    assert path.read_text() == broken


def test_cli_missing_or_undecodable_file_is_a_p005_diagnostic_and_exit_1(tmp_path, capsys):
    # As `plait check` reports them (src/plait/cli/__init__.py's exit-code table): a file that cannot be read is a spec error.
    assert main(["fmt", str(tmp_path / "missing.plait")]) == 1
    assert "error[P005]: no such file" in capsys.readouterr().err
    binary = tmp_path / "binary.plait"
    binary.write_bytes(b"agent a {\xff}")
    assert main(["fmt", str(binary)]) == 1
    assert "error[P005]: invalid UTF-8 (byte 0xff)" in capsys.readouterr().err
    assert binary.read_bytes() == b"agent a {\xff}"


def test_cli_keeps_the_file_mode(tmp_path):
    path = tmp_path / "spec.plait"
    path.write_text(MESSY)
    path.chmod(0o640)
    assert main(["fmt", str(path)]) == 0
    assert path.stat().st_mode & 0o777 == 0o640


def test_a_layout_that_changes_the_meaning_is_refused(monkeypatch):
    # The check compares digests of the two trees (never both trees at once): it must still catch a change.
    from plait.dsl import formatter

    real = formatter.format_module
    monkeypatch.setattr(formatter, "format_module", lambda m, s: real(m, s).replace("0.5", "0.6"))
    with pytest.raises(formatter.FormatterBug, match="change the meaning"):
        formatter.format_text('model m = "openai/gpt-4o-mini" { temperature = 0.5 }\n')
