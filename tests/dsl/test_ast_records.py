"""AST nodes are frozen slotted dataclasses (plait.core.record): what code that
reads the AST relies on — fields, replace, equality, hashing, pickling, and
that nothing can change a node after the parser made it."""

from __future__ import annotations

import copy
import dataclasses
import pickle

import pytest

import plait
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
