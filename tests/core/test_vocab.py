"""The shared words (src/plait/core/vocab.py) are the ones every stage dispatches on."""

from __future__ import annotations

import argparse
import dataclasses

import plait
from plait.core import vocab


def test_every_provider_name_has_a_provider_and_nothing_else_does():
    from plait.runtime.providers import PROVIDERS

    assert sorted(PROVIDERS) == sorted(vocab.PROVIDERS)


def test_report_and_render_dispatch_tables_cover_exactly_the_format_lists():
    from plait.compiler.diff import EMITTERS as DIFF_EMITTERS
    from plait.compiler.render.api import BUILDERS
    from plait.compiler.report import EMITTERS

    assert tuple(EMITTERS) == vocab.REPORT_FORMATS
    assert tuple(DIFF_EMITTERS) == vocab.DIFF_FORMATS
    assert set(BUILDERS) == set(vocab.RENDER_FORMATS) and len(BUILDERS) == len(vocab.RENDER_FORMATS)


def _accepts(command: str, args: list[str], value: str) -> bool:
    from importlib import import_module

    parser = argparse.ArgumentParser(exit_on_error=False)
    import_module(f"plait.cli.{command}").register(parser)
    try:
        parser.parse_args([*args, value])
    except argparse.ArgumentError:
        return False
    return True


def test_the_cli_offers_the_one_list_of_formats():
    for command, args, formats in (
        ("check", ["spec.plait"], vocab.REPORT_FORMATS),
        ("render", ["spec.plait"], vocab.RENDER_FORMATS),
        ("diff", ["old.plait", "new.plait"], vocab.DIFF_FORMATS),
    ):
        assert all(_accepts(command, [*args, "--format"], f) for f in formats), command
        assert not _accepts(command, [*args, "--format"], "yaml"), command


def test_turn_step_names_are_the_pipeline_the_runtime_runs():
    from plait.runtime.pipeline import TURN_STEPS

    assert tuple(step.__name__ for step in TURN_STEPS) == vocab.TURN_STEP_NAMES


def test_an_unset_attribute_has_one_default_in_the_graph_and_the_runtime():
    """A spec that writes no optional attribute runs the very records it compiles to: one declaration, one set of
    defaults, the same a Python caller gets by building the record bare."""
    from plait.core.kinds import AgentNode
    from plait.runtime.program import program_from_graph

    spec = """
model m = "openai/gpt-4o-mini"
tool t "T." { run = python("tools:t") }
agent a "A." { model = m, tools = [t] }
agent b { model = m }
step s { model = m, prompt = "{{input}}" }
parallel p = [a, b]
consolidate c { agents = [a, b], judge = m }
chain main = s -> p -> c
"""
    result = plait.compile(spec)
    assert result.graph is not None, [d.message for d in result.diagnostics]
    program = program_from_graph(result.graph)
    graph = result.graph
    for table, name in [("models", "m"), ("tools", "t"), ("agents", "a"), ("agents", "b"), ("steps", "s")]:
        assert getattr(program, table)[name] == graph.node(name), name
    assert program.parallels["p"] == graph.node("p") and program.consolidates["c"] == graph.node("c")
    assert program.chains["main"] == graph.node("main")
    declared = dataclasses.replace(program.agents["b"], span=None, file=None)
    assert declared == AgentNode(name="b", model="m")
