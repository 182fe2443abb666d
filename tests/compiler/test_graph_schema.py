"""docs/graph.md is the graph's schema: its tables, the records in plait.core.graph and the emitted JSON agree."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import plait
from plait.core import graph as g

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "graph.md").read_text(encoding="utf-8")
SPECS = [
    ROOT / "tests" / "fixtures" / "render" / name
    for name in ("language.plait", "flow.plait", "contracts.plait", "mcp.plait")
]


def _table(heading: str) -> dict[str, list[str]]:
    """The `| kind | ... | attributes |` table under `heading`: kind → attribute names, in order."""
    section = DOC.split(f"## {heading}\n", 1)[1].split("\n## ", 1)[0]
    rows: dict[str, list[str]] = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 3 and re.fullmatch(r"`[a-z_]+`", cells[0]):
            rows[cells[0].strip("`")] = re.findall(r"`([a-z_]+)`", cells[-1])
    return rows


NODES = _table("Node records")
EDGES = _table("Edges")


def test_every_node_kind_is_documented_with_its_record_and_attributes_in_order():
    assert list(NODES) == list(g.NODE_TYPES)
    for kind, cls in g.NODE_TYPES.items():
        assert NODES[kind] == list(g.node_attrs(cls)), kind
        assert f"| `{kind}` | `{cls.__name__}` |" in DOC


def test_every_edge_kind_is_documented_with_its_attributes_in_order():
    assert list(EDGES) == list(g.EDGE_KINDS)
    for kind, attrs in g.EDGE_ATTRS.items():
        assert EDGES[kind] == list(attrs), kind


def test_run_edges_are_the_documented_ones():
    documented = re.search(r"\*\*Run edges\*\* are the ones a run travels: (.*?) \(", DOC, re.S).group(1)
    assert re.findall(r"`([a-z_]+)`", documented) == list(g.RUN_EDGES)


@pytest.mark.parametrize("spec", SPECS, ids=lambda p: p.stem)
def test_emitted_json_has_exactly_the_documented_attributes(spec):
    result = plait.compile(spec)
    assert result.graph is not None, [d.message for d in result.diagnostics]
    data = result.graph.to_json()
    assert set(data) == {"version", "entry", "nodes", "edges"} and data["version"] == 1
    for node in data["nodes"]:
        assert set(node) == {"id", "kind", "attrs", "span"}
        assert list(node["attrs"]) == NODES[node["kind"]], node["id"]
    for edge in data["edges"]:
        assert set(edge) == {"source", "target", "kind", "attrs", "span"}
        assert list(edge["attrs"]) == EDGES[edge["kind"]], (edge["source"], edge["target"], edge["kind"])


def test_the_0_2_spec_uses_every_new_node_and_edge_kind():
    data = plait.compile(SPECS[1]).graph.to_json()
    assert {"route", "loop", "map", "ask", "input"} <= {n["kind"] for n in data["nodes"]}
    assert {"case", "body", "back", "each", "reads"} <= {e["kind"] for e in data["edges"]}


EXAMPLES = sorted(p for p in (Path(__file__).resolve().parents[2] / "examples").rglob("*.plait") if p.is_file())


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_streamed_graph_json_is_the_document_json_dumps_writes(path):
    # `plait graph` writes graph_json_chunks a node at a time; what a reader gets must not depend on that.
    import json

    from plait.compiler.render import graph_json, graph_json_chunks

    result = plait.compile(path)
    assert result.graph is not None
    whole = json.dumps(result.graph.to_json(), indent=2, ensure_ascii=False) + "\n"
    chunks = list(graph_json_chunks(result.graph))
    assert "".join(chunks) == graph_json(result.graph) == whole
    assert len(chunks) > len(result.graph.to_json()["nodes"])  # a chunk per node at least: streamed


def test_streamed_graph_json_of_an_empty_graph():
    import json

    from plait.compiler.render import graph_json

    graph = plait.compile("# nothing declared\n").graph
    assert graph is not None and json.loads(graph_json(graph))["nodes"] == []
    assert graph_json(graph) == json.dumps(graph.to_json(), indent=2, ensure_ascii=False) + "\n"
