"""AST nodes are frozen slotted dataclasses (plait.core.record): what code that
reads the AST relies on — fields, replace, equality, hashing, pickling, and
that nothing can change a node after the parser made it."""

from __future__ import annotations

import copy
import dataclasses
import pickle
from dataclasses import replace

import pytest

import plait
from plait.core.source import Span
from plait.dsl import ast


def _module() -> ast.Module:
    module, diagnostics = plait.parse('agent a "A." { model = m, tools = [t], until = x == "y" }\n')
    assert not diagnostics
    return module


def test_nodes_are_slotted_keyword_only_dataclasses():
    agent = _module().declarations[0]
    assert dataclasses.is_dataclass(agent)
    assert [f.name for f in dataclasses.fields(agent)] == ["span", "name", "description", "body", "kind"]
    assert not hasattr(agent, "__dict__")
    with pytest.raises(TypeError):
        ast.Ident(agent.span, "a")  # keywords only


def test_nodes_are_frozen():
    agent = _module().declarations[0]
    with pytest.raises(dataclasses.FrozenInstanceError):
        agent.name = None
    with pytest.raises(dataclasses.FrozenInstanceError):
        del agent.body


def test_equality_hashing_replace_and_repr_are_the_dataclass_ones():
    one, two = _module(), _module()
    assert one == two and hash(one) == hash(two)
    agent = one.declarations[0]
    renamed = dataclasses.replace(agent, name=ast.Ident(span=agent.name.span, name="b"))
    assert renamed != agent and renamed.name.name == "b" and renamed.body is agent.body
    assert ast.Ref(span=agent.span, name="x") != ast.ChainRef(span=agent.span, name="x")  # another class
    assert repr(agent.name) == f"Ident(span={agent.name.span!r}, name='a')"


def test_pickle_and_copy_give_an_equal_tree():
    module = _module()
    assert pickle.loads(pickle.dumps(module)) == module
    assert copy.deepcopy(module) == module and copy.copy(module) == module


def test_strip_spans_is_plain_data():
    data = ast.strip_spans(_module())
    assert data["__type__"] == "Module"
    assert data["declarations"][0]["name"] == {"name": "a", "__type__": "Ident"}


# --- meaning: the formatter's digest of strip_spans ---------------------------------------------------------

_SAME = 'model m = "openai/gpt-4o-mini"\nagent a "A." { model = m, temperature = 0.5, tools = [a], stop = ["x"] }\n'


def _meaning(text: str) -> bytes:
    from plait.core.source import SourceFile
    from plait.dsl.parser import parse_module

    module, diagnostics = parse_module(SourceFile("<t>", text))
    assert module is not None, diagnostics
    return ast.meaning(module)


def test_meaning_ignores_layout_spans_and_comments():
    relaid = 'model m = "openai/gpt-4o-mini"  # the model\n\nagent a "A." {\n  model = m\n  temperature = 0.5\n'
    relaid += '  tools = [ a ]\n  stop = [\n    "x",\n  ]\n}\n'
    assert _meaning(relaid) == _meaning(_SAME)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("0.5", "0.50"),  # the number as written is part of the tree (`raw`), as in strip_spans
        ("0.5", "1"),
        ("temperature = 0.5, tools", "tools = [a], temperature = 0.5, tools"),
        ('["x"]', '["y"]'),
        ('["x"]', '["x", "x"]'),
        ('["x"]', "[x]"),
        ('"A."', '"A"'),
    ],
)
def test_meaning_changes_with_what_the_spec_says(old, new):
    assert _meaning(_SAME.replace(old, new, 1)) != _meaning(_SAME)


def test_meaning_tells_types_apart_where_equality_would_not():
    one = ast.Number(span=Span("<t>", 1, 1, 1, 2, 0, 1), value=1, raw="1")
    also_one = ast.Number(span=Span("<t>", 1, 1, 1, 2, 0, 1), value=1.0, raw="1")
    assert ast.strip_spans(one) == ast.strip_spans(also_one) and ast.meaning(one) != ast.meaning(also_one)


def test_meaning_of_a_packed_list_is_that_of_its_nodes():
    items = ", ".join(str(i) for i in range(200))
    packed = _meaning(f'agent a "A." {{ attributes = {{ xs = [{items}] }} }}\n')
    from plait.core.source import SourceFile
    from plait.dsl.parser import parse_module

    module, _ = parse_module(SourceFile("<t>", f'agent a "A." {{ attributes = {{ xs = [{items}] }} }}\n'))
    assert module is not None
    value = module.declarations[0].body.attributes[0].value.attributes[0].value
    assert isinstance(value.items, ast.PackedItems)
    plain = replace(value, items=tuple(value.items))
    assert ast.meaning(plain) == ast.meaning(value) and packed == ast.meaning(module)
