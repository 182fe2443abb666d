"""A machine-sized list costs bytes per item, not a node: its literals are kept as offsets into the source
(`ast.PackedItems`) and rebuilt on access, equal to the nodes the parser made, on both parsers.

The memory figures are tracemalloc's (deterministic: no timing); the whole-process bound on the 8 MiB
inputs is in test_input_limits.py.
"""

from __future__ import annotations

import pickle
import tracemalloc

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import plait
from plait.core.source import SourceFile
from plait.dsl import ast, transformer
from plait.dsl.parser import parse_module

#: One of each kind a list item can be; the literals are the packed ones.
ITEMS = [
    "7",
    "-1.5e3",
    "12345678901234567890",
    '"ab"',
    '""',
    '"a\\nb"',
    '"x\\{y}"',
    '"\\u00e9t\\u00e9"',
    '"é"',
    "true",
    "false",
    "foo",
    "a.b",
    "f(1)",
    "[1, 2]",
    "{ k = 1 }",
    '"""\n    block\n    """',
    "10s",
    "4MB",
    "x succeeded",
]


def _spec(items: list[str], sep: str = ",\n    ") -> str:
    body = sep.join(items)
    return f'agent a "A." {{\r\n  model = m\n  xs = [{body}]\n  ys = g({body})\n}}\n'


def _parse(text: str, pack: bool) -> ast.Module:
    old = transformer.PACK_AFTER
    transformer.PACK_AFTER = 64 if pack else 10**9
    try:
        module, diagnostics = parse_module(SourceFile("spec.plait", text))
    finally:
        transformer.PACK_AFTER = old
    assert module is not None and not diagnostics, diagnostics
    return module


def _values(module: ast.Module) -> tuple:
    body = module.declarations[0].body
    return body.get("xs").value.items, body.get("ys").value.args


def test_a_long_list_is_packed_and_reads_back_as_the_nodes_the_parser_made():
    text = _spec(ITEMS * 8, sep=",  # a comment\n    ")
    packed, plain = _parse(text, pack=True), _parse(text, pack=False)
    (xs, ys), (xs0, ys0) = _values(packed), _values(plain)
    assert isinstance(xs, ast.PackedItems) and isinstance(ys, ast.PackedItems) and isinstance(xs0, tuple)
    assert len(xs) == len(xs0) == len(ITEMS) * 8
    for a, b in zip(xs, xs0, strict=True):
        assert type(a) is type(b) and a == b and a.span == b.span
    assert xs[-1] == xs0[-1] and xs[3:9] == xs0[3:9] and xs[5] == xs0[5]
    assert tuple(ys) == ys0
    assert packed == plain and hash(packed) == hash(plain)
    assert ast.strip_spans(packed) == ast.strip_spans(plain)
    assert pickle.loads(pickle.dumps(packed)) == plain
    with pytest.raises(IndexError):
        xs[len(xs)]


@pytest.mark.parametrize(
    "items",
    [["f(1)"] + ["7"] * 100, ["7"] + ["f(1)"] * 100, ['"a\\n"'] + ["7"] * 100, ["7"] * 100 + ["[1]"]],
    ids=["node-then-literals", "literal-then-nodes", "escaped-first", "node-last"],
)
def test_the_first_and_last_items_keep_their_place(items):
    text = _spec(items)
    assert _parse(text, pack=True) == _parse(text, pack=False)


def test_a_short_list_stays_a_tuple():
    xs, ys = _values(_parse(_spec(ITEMS), pack=True))
    assert isinstance(xs, tuple) and isinstance(ys, tuple)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(ITEMS), min_size=60, max_size=140), st.sampled_from([",", ", ", ",\n  ", ",\r\n"]))
def test_any_mix_of_items_reads_back_equal(items, sep):
    text = _spec(items, sep)
    packed, plain = _parse(text, pack=True), _parse(text, pack=False)
    assert packed == plain
    assert [x.span for x in _values(packed)[0]] == [x.span for x in _values(plain)[0]]


def test_diagnostics_inside_a_long_list_point_at_the_item():
    # A pass reads the packed items as nodes: a wrong item is reported at its own line and column.
    items = ", ".join(['"read"'] * 100 + ["42"])
    text = f'model m = "openai/gpt-4o-mini"\nagent a "A." {{\n  model = m\n  tools = [{items}]\n}}\n'
    diagnostics = plait.compile(text).diagnostics
    assert diagnostics, "a number among tool names is an error"
    column = text.splitlines()[3].index("42") + 1
    assert any(d.span.line == 4 and d.span.column == column for d in diagnostics), diagnostics


def test_a_long_list_of_numbers_costs_bytes_per_item_not_a_node():
    count = 200_000
    text = 'agent a "A." {\n  xs = [' + ",".join(["7", "123456", '"ab"', "true", "x"] * (count // 5)) + "]\n}\n"
    source = SourceFile("spec.plait", text)
    tracemalloc.start()
    try:
        module, diagnostics = parse_module(source)
        kept, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert module is not None and not diagnostics
    assert len(module.declarations[0].body.get("xs").value.items) == count
    # A node and its span were ~300 bytes an item; packed, an item is 9 bytes (the rest is slack and the
    # handful of nodes alive at once).
    assert kept / count < 24, kept / count
    assert peak / count < 40, peak / count


def test_fmt_writes_a_long_list_as_it_writes_a_short_one(monkeypatch):
    # The formatter reads items and their spans (comments sit between them) from the packed sequence.
    items = ", ".join(['"a"', "7", "f(1)", "[1, 2]", "true", "x", '"""\n    b\n    """'] * 20)
    text = f'model m = "openai/gpt-4o-mini"\nagent a "A." {{\n  model = m\n  tools = [{items}]  # c\n}}\n'
    packed = plait.format(text)
    monkeypatch.setattr(transformer, "PACK_AFTER", 10**9)
    assert plait.format(text) == packed
