"""The graph of LANGUAGE.md's whole-file example has the nodes and edges docs/graph.md promises."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import plait

LANGUAGE = Path(__file__).resolve().parents[2] / "docs" / "language.md"


@pytest.fixture(scope="module")
def spec():
    return re.search(r"```plait\n(.*?)```", LANGUAGE.read_text(), re.S).group(1)


@pytest.fixture(scope="module")
def graph(spec):
    result = plait.compile(spec)
    assert result.errors == [], [f"{d} {d.message}" for d in result.errors]
    return result.graph


def _edges(graph, kind):
    return {(e.source, e.target) for e in graph.edges(kind)}


def test_every_node_kind(graph):
    kinds = {data["kind"] for _, data in graph.nx.nodes(data=True)}
    assert kinds == {node.kind for node in graph.nodes()}
    assert kinds == {"model", "tool", "agent", "step", "chain", "parallel", "join", "consolidate", "entry", "exit"}
    assert graph.entry == "main"
    assert graph.nodes_of("parallel") == ["main/parallel#1"]
    assert graph.node("main/parallel#1").branches == ("translate", "verdict")
    assert graph.node("main/parallel#1").join == "main/parallel#1/join"


def test_every_edge_kind(graph):
    kinds = {data["kind"] for _, _, data in graph.nx.edges(data=True)}
    assert [d["record"] for _, _, d in graph.nx.edges(data=True)] == list(graph.edges())
    assert kinds == {
        "next",
        "branch",
        "join",
        "uses",
        "delegates",
        "calls",
        "fallback",
        "judge",
        "participant",
        "until",
    }


def test_chain_order_through_the_inline_parallel(graph):
    nexts = [(e.source, e.target, e.index) for e in graph.edges("next") if e.chain == "main"]
    assert sorted(nexts, key=lambda e: e[2]) == [
        ("main", "writer", 0),
        ("writer", "main/parallel#1", 1),
        ("main/parallel#1/join", "summary", 2),
    ]
    assert {("main/parallel#1", "translate"), ("main/parallel#1", "verdict")} <= _edges(graph, "branch")
    assert {("translate", "main/parallel#1/join"), ("verdict", "main/parallel#1/join")} <= _edges(graph, "join")
    assert {("@entry", "main"), ("main", "@exit")} <= _edges(graph, "next")


def test_agent_edges(graph):
    assert ("writer", "researcher") in _edges(graph, "delegates")
    assert {("writer", "submit_report"), ("researcher", "lookup"), ("researcher", "get_time")} <= _edges(graph, "uses")
    assert ("writer", "submit_report") in _edges(graph, "until")
    until = next(e for e in graph.edges("until") if e.source == "writer")
    assert until.succeeded is True
    assert {("researcher", "fast"), ("writer", "strong"), ("translate", "fast")} <= _edges(graph, "calls")
    fallback = [(e.source, e.target, e.order) for e in graph.edges("fallback")]
    assert fallback == [("researcher", "strong", 1)]


def test_consolidate_edges(graph):
    participants = sorted((e.index, e.target) for e in graph.edges("participant") if e.source == "verdict")
    assert participants == [(0, "analyst_a"), (1, "analyst_b")]
    assert _edges(graph, "judge") == {("verdict", "judge")}


def test_edges_point_back_into_the_source(graph, spec):
    span = next(e.span for e in graph.edges("delegates") if (e.source, e.target) == ("writer", "researcher"))
    assert spec[span.offset : span.end_offset] == "researcher"
    assert spec.splitlines()[span.line - 1].lstrip().startswith("tools  = [researcher")


def test_attributes_and_json(graph):
    lookup = graph.node("lookup")
    assert lookup.run["type"] == "http" and lookup.timeout == 10.0
    assert lookup.parameters["required"] == ["topic"]
    assert graph.node("submit_report").approval is True
    assert graph.node("fast").temperature == 0.2 and graph.node("fast").timeout == 30.0
    assert graph.node("verdict").rounds == 3 and graph.node("verdict").task == "{{input}}"
    data = graph.to_json()
    assert data["entry"] == "main" and data["nodes"][0]["id"] == "fast"
