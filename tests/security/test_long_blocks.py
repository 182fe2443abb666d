"""A machine-sized block costs bytes per attribute, not three nodes: `name = literal` members are kept as
offsets into the source (`ast.PackedAttributes`) and rebuilt on access, equal to the nodes the parser made,
on both parsers, and formatted the same.

Memory is tracemalloc's (deterministic); the whole-process bound at the 8 MiB cap is in
test_input_limits_dense.py (2 million `a=1,` in one block: 1.7 GB once, 919 MB with light spans).
"""

from __future__ import annotations

import pickle

import pytest

from plait.core.source import SourceFile
from plait.dsl import ast, transformer
from plait.dsl.formatter import format_module
from test_long_lists import _parse  # the text parsed with packing on or off

#: One of each kind a block member can be; `name = literal` ones are packed, the rest kept whole.
MEMBERS = [
    "a = 7",
    "b = -1.5e3",
    'c = "ab"',
    'd = "a\\nb"',
    "e = true",
    "f = other",
    '"quoted.key" = 1',
    "g = [1, 2]",
    "h = { k = 1 }",
    "i = f(1)",
    "j = a.b",
    'k = """\n    block\n    """',
    "l = 10s",
    "output { x: string }",
]


def _spec(members: list[str], sep: str = "\n  ") -> str:
    return 'agent a "A." {\n  ' + sep.join(members) + "\n}\n"


def test_a_long_block_is_packed_and_reads_back_as_the_nodes_the_parser_made():
    text = _spec(MEMBERS * 8, sep="  # a comment\n  ")
    packed, plain = _parse(text, pack=True), _parse(text, pack=False)
    body, body0 = packed.declarations[0].body, plain.declarations[0].body
    assert isinstance(body.attributes, ast.PackedAttributes) and isinstance(body0.attributes, tuple)
    assert len(body.attributes) == len(body0.attributes) == 13 * 8 and len(body.params) == len(body0.params) == 8
    for a, b in zip(body.attributes, body0.attributes, strict=True):
        assert a == b and a.span == b.span and a.key.span == b.key.span and type(a.value) is type(b.value)
    assert body.attributes[-1] == body0.attributes[-1] and body.attributes[3:9] == body0.attributes[3:9]
    assert body.params == body0.params
    # What map-reading passes use: key and value only, one node per packed entry.
    assert list(body.entries()) == list(body0.entries()) == [(a.key.name, a.value) for a in body0.attributes]
    assert body.get("quoted.key") == body0.get("quoted.key") and body.get("l") == body0.get("l")
    assert packed == plain and hash(packed) == hash(plain)
    assert ast.strip_spans(packed) == ast.strip_spans(plain) and ast.meaning(packed) == ast.meaning(plain)
    assert pickle.loads(pickle.dumps(packed)) == plain
    with pytest.raises(IndexError):
        body.attributes[len(body.attributes)]


@pytest.mark.parametrize(
    "members",
    [
        ['"q" = 1'] + ["a = 1"] * 100,
        ["output { x: string }"] + ["a = 1"] * 100,
        ["a = [1]"] + ["b = 2"] * 100,
        ["a = 1"] * 100 + ['"q" = { k = 1 }'],
    ],
    ids=["quoted-first", "params-first", "node-value-first", "kept-last"],
)
def test_the_first_and_last_members_keep_their_place(members):
    text = _spec(members)
    packed, plain = _parse(text, pack=True), _parse(text, pack=False)
    assert isinstance(packed.declarations[0].body.attributes, ast.PackedAttributes)
    assert packed == plain


def test_a_packed_block_formats_as_the_nodes_do():
    # The formatter reads a packed block a member at a time; the text it writes must not depend on that.
    text = _spec(MEMBERS * 8, sep="  # a comment\n\n  ")
    packed, plain = _parse(text, pack=True), _parse(text, pack=False)
    source = SourceFile("spec.plait", text)
    assert format_module(packed, source) == format_module(plain, source)


def test_a_block_read_from_another_file_is_not_packed():
    # Offsets index one file's text: a block the builder reads for a chunk of another (lark's error
    # recovery) keeps its nodes.
    builder = transformer.AstBuilder("other.plait")
    builder.source = SourceFile("spec.plait", "")
    members = [object()] * 100  # never read: packing them would fail
    assert builder._pack(members, builder.source, ast.PackedAttributes) is members
