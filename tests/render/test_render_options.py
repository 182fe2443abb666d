"""--expand, --entry, --hide and --direction change what is drawn, and only that."""

from __future__ import annotations

import re

import pytest
from render_helpers import graph

from plait.compiler.render import RenderError, RenderOptions, build_scene, render
from plait.core.vocab import TURN_STEP_NAMES


def _edges(scene) -> set[tuple[str, str, str]]:
    return {(e.source, e.target, e.label) for e in scene.edges}


def test_turn_steps_match_the_runtime_pipeline():
    from plait.runtime.pipeline import TURN_STEPS

    assert TURN_STEP_NAMES == tuple(step.__name__ for step in TURN_STEPS)


def test_expand_draws_the_pipeline_and_every_exit():
    scene = build_scene(graph("language"), RenderOptions(expand=("writer",)))
    t = "writer@turn/"
    edges = _edges(scene)
    pipeline = [f"{t}{name}" for name in TURN_STEP_NAMES]
    for a, b in zip(pipeline, pipeline[1:]):
        assert (a, b, "") in edges
    assert ("writer", f"{t}check_budget", "each turn") in edges
    assert (f"{t}loop_boundary", f"{t}check_budget", "loop") in edges
    assert (f"{t}check_budget", f"{t}returns", "max steps (16)") in edges
    assert (f"{t}check_until", f"{t}returns", "until satisfied") in edges
    assert (f"{t}check_interrupts", f"{t}human", "interrupt") in edges
    assert (f"{t}run_tools", f"{t}human", "interrupt (delegate)") in edges
    assert (f"{t}check_budget", f"{t}human", "pause") in edges
    assert (f"{t}call_model", f"{t}fails", "error") in edges
    assert (f"{t}call_model", f"{t}check_budget", "retry malformed (≤2)") in edges
    # With an until contract, stopping without the tool is an error, not "done".
    assert (f"{t}loop_boundary", f"{t}fails", "error: until not called") in edges
    assert not any(label == "done" for _, _, label in edges)


def test_expand_without_until_ends_done_and_shows_the_gates():
    scene = build_scene(graph("language"), RenderOptions(expand=("researcher",)))
    assert ("researcher@turn/loop_boundary", "researcher@turn/returns", "done") in _edges(scene)
    lines = {n.id: n.lines for n in scene.nodes}
    assert lines["researcher@turn/call_model"] == ["call model", "fast → strong"]
    assert lines["researcher@turn/check_interrupts"] == ["check interrupts", "no approval gates"]
    assert lines["researcher@turn/check_until"] == ["check until", "no until"]
    # No gate and no delegate: nothing in this turn can stop for a human but the pause hook.
    assert [label for s, t, label in _edges(scene) if t == "researcher@turn/human"] == ["pause"]


@pytest.mark.parametrize("format", ["dot", "mermaid"])
def test_expand_is_a_labelled_cluster(format):
    out = render(graph("language"), format, RenderOptions(expand=("writer",)))
    assert "one turn of writer" in out and "until satisfied" in out and "max steps (16)" in out


def test_entry_draws_only_what_that_runnable_reaches():
    scene = build_scene(graph("language"), RenderOptions(entry="writer", hide=("none",)))
    ids = [n.id for n in scene.nodes]
    # Declaration order, as in the whole picture.
    assert ids == ["@entry", "fast", "strong", "get_time", "lookup", "submit_report", "researcher", "writer", "@exit"]
    assert ("@entry", "writer", "input") in _edges(scene) and ("writer", "@exit", "output") in _edges(scene)
    # The chain edge writer -> parallel belongs to `main`, which is not drawn.
    assert not any(e.kind == "next" and e.source == "writer" and e.target != "@exit" for e in scene.edges)
    assert scene.clusters == []


def test_entry_of_a_parallel_keeps_its_join_and_cluster():
    scene = build_scene(graph("contracts"), RenderOptions(entry="fanout"))
    ids = {n.id for n in scene.nodes}
    assert {"fanout", "fanout/join", "draft", "debate", "pro", "con", "chair"} <= ids
    assert not {"scout", "editor", "main", "search"} & ids
    assert [c.title for c in scene.clusters] == ["parallel fanout"]
    assert [c.title for c in scene.clusters[0].children] == ["consolidate debate"]


def test_hide_folds_models_and_tools_into_labels():
    scene = build_scene(graph("language"), RenderOptions(hide=("models", "tools")))
    kinds = {n.kind for n in scene.nodes}
    assert "model" not in kinds and "tool" not in kinds
    lines = {n.id: n.lines for n in scene.nodes}
    assert "model fast (openai/gpt-4o-mini)" in lines["researcher"]
    assert "fallback 1. strong" in lines["researcher"]
    assert "tools lookup, get_time" in lines["researcher"]
    assert "tools submit_report [approval]" in lines["writer"]
    assert "judge judge (anthropic/claude-opus-4-1)" in lines["verdict"]
    assert not any(e.kind in ("calls", "uses", "fallback", "until") for e in scene.edges)


def test_hide_models_only_keeps_tools():
    scene = build_scene(graph("language"), RenderOptions(hide=("models",)))
    kinds = {n.kind for n in scene.nodes}
    assert "model" not in kinds and "tool" in kinds


@pytest.mark.parametrize("format,needle", [("dot", "rankdir=TB"), ("mermaid", "flowchart TB")])
def test_direction(format, needle):
    assert needle in render(graph("single"), format, RenderOptions(direction="TB"))


@pytest.mark.parametrize(
    "options,message",
    [
        (RenderOptions(entry="nope"), "unknown entry `nope`; expected one of: researcher, writer, translate"),
        (RenderOptions(expand=("summary",)), "unknown agent to expand `summary`; expected one of: researcher, writer"),
        (RenderOptions(hide=("agents",)), "unknown --hide value `agents`; expected one of: models, tools"),
        (
            RenderOptions(entry="researcher", expand=("writer",)),
            "unknown agent to expand `writer`; expected one of: researcher",
        ),
    ],
)
def test_bad_options_are_one_line(options, message):
    with pytest.raises(RenderError) as info:
        render(graph("language"), "dot", options)
    assert str(info.value).startswith(message) and "\n" not in str(info.value)


def test_clusters_nest_in_declaration_order():
    scene = build_scene(graph("nested"))
    titles = [c.title for c in scene.clusters]
    assert titles == ["chain main"]
    main = scene.clusters[0]
    assert [c.title for c in main.children] == ["consolidate odd", "chain outer"]
    outer = main.children[1]
    assert [c.title for c in outer.children] == ["chain inner", "parallel"]
    dot = render(graph("nested"), "dot")
    assert re.search(r'subgraph "cluster:main" \{', dot)
    assert 'lhead="cluster:inner"' in dot  # merge -> inner meets the cluster's border


def _many_agents(count: int):
    from plait.compiler.pipeline import compile_spec

    agents = "\n".join(f"agent a{i} {{ model = m }}" for i in range(count))
    chain = " -> ".join(f"a{i}" for i in range(count))
    result = compile_spec(f'model m = "openai/gpt-4o"\n{agents}\nchain main = {chain}\n', path="many.plait")
    assert result.graph is not None
    return result.graph


def test_models_and_tools_are_folded_unless_asked_and_large_graphs_say_so():
    from plait.compiler.render.scene import LARGE

    small, large = _many_agents(LARGE - 2), _many_agents(LARGE)
    # Folded by default: their dotted edges would cross everything else; the labels name them instead.
    assert build_scene(small).note == "" and "model" not in {n.kind for n in build_scene(small).nodes}
    assert "model m (openai/gpt-4o)" in build_scene(small).nodes[0].lines
    assert "model" in {n.kind for n in build_scene(small, RenderOptions(hide=("none",))).nodes}
    folded = build_scene(large)
    assert "model" not in {n.kind for n in folded.nodes}
    assert folded.note == f"{LARGE + 1} runnables: models and tools are folded into labels (--hide none draws them)"
    assert 'labelloc="b"' in render(large, "dot") and "%% " in render(large, "mermaid")
    assert "model" in {n.kind for n in build_scene(large, RenderOptions(hide=("none",))).nodes}
    assert "nslimit=0.2" not in render(small, "dot")


@pytest.mark.parametrize("name", ["language", "contracts", "nested", "single"])
def test_every_entry_expand_and_hide_combination_renders(name):
    g = graph(name)
    agents = g.nodes_of("agent")
    for entry in [None, *g.runnables()]:
        for hide in [(), ("models",), ("tools",), ("models", "tools")]:
            scene = build_scene(g, RenderOptions(entry=entry, hide=hide))
            shown_agents = tuple(n.id for n in scene.nodes if n.kind == "agent")
            options = RenderOptions(entry=entry, hide=hide, expand=shown_agents, direction="TB")
            for format in ("dot", "mermaid"):
                out = render(g, format, options)
                # Every edge joins two drawn nodes; nothing dangles.
                ids = {n.id for n in build_scene(g, options).nodes}
                assert all(e.source in ids and e.target in ids for e in build_scene(g, options).edges), (entry, hide)
                assert out.endswith("\n")
    assert agents


def test_a_spec_without_an_entry_draws_no_start_or_end():
    from plait.compiler.pipeline import compile_spec

    result = compile_spec('model m = "openai/gpt-4o"\nagent a { model = m }\nagent b { model = m }\n', path="x.plait")
    assert result.graph.entry is None
    scene = build_scene(result.graph)
    assert [n.id for n in scene.nodes] == ["a", "b"]
    assert "start" not in render(result.graph, "mermaid")


def _spec_graph(text: str):
    from plait.compiler.pipeline import compile_spec

    result = compile_spec(text, path="x.plait")
    assert result.graph is not None, result.diagnostics
    return result.graph


def test_auto_direction_draws_a_long_chain_top_to_bottom_and_a_wide_parallel_left_to_right():
    steps = "".join(f'step s{i} {{ model = m, prompt = "{{{{input}}}}" }}\n' for i in range(8))
    head = 'model m = "openai/gpt-4o"\n' + steps
    long = _spec_graph(head + "chain main = " + " -> ".join(f"s{i}" for i in range(8)) + "\n")
    wide = _spec_graph(head + "parallel main = [" + ", ".join(f"s{i}" for i in range(8)) + "]\n")
    assert build_scene(long).direction == "TB"
    assert build_scene(wide).direction == "LR"
    # An explicit direction is kept whatever the shape.
    assert build_scene(long, RenderOptions(direction="LR")).direction == "LR"
    assert render(long, "mermaid").startswith("flowchart TB") and "rankdir=TB" in render(long, "dot")


def test_unknown_direction_is_one_line():
    with pytest.raises(RenderError, match="unknown direction `up`; expected one of: auto, LR, TB"):
        build_scene(graph("single"), RenderOptions(direction="up"))


@pytest.mark.slow
@pytest.mark.parametrize("example", ["briefing", "triage", "report", "polish", "approve"])
def test_each_example_draws_a_picture_that_fits_a_screen(example):
    """What `plait render X -o x.png` gives a new user: near a screen's shape, and no dotted model/tool edges."""
    import struct

    from render_helpers import EXAMPLES, compiled

    from plait.compiler.render.image import dot_available

    if not dot_available():
        pytest.skip("Graphviz's dot is not installed")
    spec = EXAMPLES / example / f"{example}.plait"
    png = render(compiled(spec).graph, "png")
    width, height = struct.unpack(">II", png[16:24])
    # The demo's briefing was 2713 x 678 (4:1) drawn left to right with every model and tool edge.
    assert 1 / 2 <= width / height <= 2.2, (width, height)
    assert max(width, height) <= 1600, (width, height)
    assert not {"model", "tool"} & {n.kind for n in build_scene(compiled(spec).graph).nodes}
