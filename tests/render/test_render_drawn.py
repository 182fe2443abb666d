"""What a node's label shows is what its kind record draws: `attr(drawn=True)` decides, the renderer follows.

Every node of every fixture and example is labelled through a spy that notes
which of the record's fields the renderer reads (with models and tools folded
in, so every line that can be written is); the fields read are exactly the
drawn ones, and a field whose flag is turned off is no longer read.
"""

from __future__ import annotations

import copy
import dataclasses

import pytest
from render_helpers import cases, compiled

from plait.compiler.render.labels import entries, label_lines
from plait.compiler.render.scene import RenderOptions, build_scene
from plait.core.kinds import NODE_TYPES, drawn_fields

FOLDED = frozenset({"models", "tools"})


def _spied(graph, node):
    """The label of `node` and the names of its record's fields the renderer read to write it."""
    read: set[str] = set()
    cls = type(node)

    class Spy(cls):  # type: ignore[misc, valid-type]
        __slots__ = ()

        def __getattribute__(self, name):
            if name in cls._names:
                read.add(name)
            return super().__getattribute__(name)

    spy = copy.copy(node)
    object.__setattr__(spy, "__class__", Spy)
    lines = label_lines(graph, spy, FOLDED)
    return lines, read - {"name"}  # every label's first line names its node


def _nodes():
    """Every node a picture of a fixture or example draws (models and tools as nodes), and its input and state."""
    for _, path in cases():
        graph = compiled(path).graph
        shown = [n.id for n in build_scene(graph, RenderOptions(hide=("none",))).nodes]
        for id in [*shown, *graph.nodes_of("input", "state")]:
            yield graph, graph.node(id)


def test_each_kinds_label_entries_say_exactly_its_drawn_fields():
    for kind, cls in NODE_TYPES.items():
        said = {f for fields, _ in entries(cls) for f in fields if f in cls._names}
        assert said == set(drawn_fields(cls)), kind


def test_a_field_only_its_record_draws_gets_a_plain_line(monkeypatch):
    from plait.core.kinds import ModelNode

    metas = dict(ModelNode._metas)
    metas["base_url"] = dataclasses.replace(metas["base_url"], drawn=True)
    monkeypatch.setattr(ModelNode, "_metas", metas)
    node = ModelNode(name="local", provider="openai-compatible", model_id="llama", base_url="http://localhost:8000")
    graph = compiled(cases()[0][1]).graph
    assert _spied(graph, node)[0] == ["local", "openai-compatible/llama", "base_url http://localhost:8000"]
    assert _spied(graph, ModelNode(name="local", provider="openai", model_id="x"))[0] == ["local", "openai/x"]


def test_the_renderer_reads_exactly_the_drawn_fields_of_each_kind():
    read: dict[str, set[str]] = {kind: set() for kind in NODE_TYPES}
    for graph, node in _nodes():
        lines, fields = _spied(graph, node)
        assert lines == label_lines(graph, node, FOLDED)
        read[node.kind] |= fields
    for kind, cls in NODE_TYPES.items():
        assert read[kind] == set(drawn_fields(cls)), kind


@pytest.mark.parametrize(("kind", "field"), [(k, f) for k, cls in NODE_TYPES.items() for f in drawn_fields(cls)])
def test_a_field_no_longer_drawn_leaves_the_label(monkeypatch, kind, field):
    cls = NODE_TYPES[kind]
    metas = dict(cls._metas)
    metas[field] = dataclasses.replace(metas[field], drawn=False)
    monkeypatch.setattr(cls, "_metas", metas)
    seen = False
    for graph, node in _nodes():
        if node.kind == kind:
            seen = True
            assert field not in _spied(graph, node)[1]
    assert seen
