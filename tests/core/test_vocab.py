"""The shared words (src/plait/core/vocab.py, src/plait/core/defaults.py) are the ones every stage dispatches on."""

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
    """A spec that writes no optional attribute compiles to the config a Python caller gets by building it bare."""
    from plait.runtime.config import AgentConfig
    from plait.runtime.graph_adapter import program_from_graph

    spec = """
model m = "openai/gpt-4o-mini"
tool t "T." { run = python("tools:t") }
agent a "A." { model = m, tools = [t] }
agent b "B." { model = m }
step s { model = m, prompt = "{{input}}" }
parallel p = [a, b]
consolidate c { agents = [a, b], judge = m }
chain main = s -> p -> c
"""
    result = plait.compile(spec)
    assert result.graph is not None, [d.message for d in result.diagnostics]
    program = program_from_graph(result.graph)
    bare = {
        "agent": AgentConfig("b", "m"),
    }
    built = {
        "agent": program.agents["b"],
    }
    # Models, tools, steps, parallels and consolidates run as their graph records: one declaration, one set of defaults.
    assert program.models["m"] == result.graph.node("m") and program.tools["t"] == result.graph.node("t")
    assert program.parallels["p"] == result.graph.node("p") and program.consolidates["c"] == result.graph.node("c")
    assert program.steps["s"] == result.graph.node("s")
    skip = {"description", "parameters", "run", "fn", "output"}
    for kind, config in bare.items():
        for f in dataclasses.fields(config):
            if f.name not in skip:
                assert getattr(built[kind], f.name) == getattr(config, f.name), (kind, f.name)
