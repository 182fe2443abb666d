"""src/plait/compiler/draft.py: the compiler passes build each declaration's record through a builder its kind guards."""

from __future__ import annotations

import pytest

import plait
from plait.compiler.draft import Draft
from plait.core.kinds import AgentNode, ParallelNode, ToolNode


def test_a_name_the_kind_record_does_not_declare_cannot_be_written():
    draft = Draft(ParallelNode)
    with pytest.raises(KeyError, match="src/plait/core/kinds/parallel.py"):
        draft["description"] = "a parallel draws none"
    assert draft.get("description") is None  # reading asks, and finds nothing


def test_the_spec_spelling_and_folded_attributes_are_the_records_own():
    draft = Draft(AgentNode, model="m", history=4)
    assert draft.fields() == {"model": "m", "keep_last": 4}
    assert Draft(ToolNode).declares("allow_private") and not Draft(ToolNode).declares("history")


def test_the_graph_is_built_from_the_drafts():
    result = plait.compile('model m = "openai/gpt-4o-mini"\nagent a "A." { model = m, history = keep_last(3) }\n')
    assert result.graph is not None
    node = result.graph.node("a")
    assert isinstance(node, AgentNode) and node.keep_last == 3 and node.description == "A."
