"""Spec path or text → CompileResult: the PASSES run in order over one context.

A pass that finds errors its successors would only repeat sets `ctx.stop`.
"""

from __future__ import annotations

import os
from importlib import import_module
from pathlib import Path
from typing import Callable

from plait.core.diagnostics import Diagnostic, Findings
from plait.dsl.loader import LoadResult, load, load_text
from plait.dsl.parser import collector_paused

from .cascade import fold
from .context import CompileContext
from .graph import AgentGraph
from .passes.build_graph import build_graph
from .passes.check_breaks import check_breaks
from .passes.check_chains import check_chains
from .passes.check_flow import check_flow
from .passes.check_mcp import check_mcp
from .passes.check_models import check_models
from .passes.check_tool_runs import check_tool_runs
from .passes.check_types import check_types
from .passes.collect_symbols import collect_symbols
from .passes.infer_types import infer_types
from .passes.lint import lint
from .passes.resolve_names import resolve_names
from .passes.validate_graph import validate_graph

__all__ = ["PASSES", "CompileResult", "compile_spec"]

Pass = Callable[[CompileContext], None]


def _when(used: Callable[[CompileContext], bool], name: str) -> Pass:
    """The pass `passes.<name>.<name>`, imported at its first need: a spec without the feature `used` looks
    for never loads its checker (a check's start-up is mostly imports)."""

    def run(ctx: CompileContext) -> None:
        if used(ctx):
            getattr(import_module(f"{__package__}.passes.{name}"), name)(ctx)

    run.__name__ = run.__qualname__ = name
    return run


PASSES: tuple[Pass, ...] = (
    collect_symbols,
    resolve_names,
    check_types,
    check_mcp,
    check_models,
    check_chains,
    check_breaks,
    infer_types,
    check_tool_runs,
    build_graph,
    check_flow,
    # Threads, only for a spec where a runnable writes `thread = NAME`.
    _when(lambda ctx: any(ref.attr == "thread" for ref in ctx.references), "check_threads"),
    # The test-block checker, only for a file with `test` declarations: it needs the built, typed graph, and
    # runs before the graph's shape checks and the lint rules, which stay last.
    _when(lambda ctx: bool(ctx.tests_written), "check_tests"),
    validate_graph,
    lint,
)


class CompileResult:
    """A compile's graph, diagnostics, sources and tests. A plain class: `@dataclass` wrote its methods with
    `exec` at every start of a check."""

    def __init__(
        self,
        graph: AgentGraph | None,
        diagnostics: list[Diagnostic] | None = None,
        sources: dict | None = None,
        tests: list | None = None,
        inputs: dict | None = None,
    ) -> None:
        #: None when the spec has errors.
        self.graph = graph
        self.diagnostics: list[Diagnostic] = [] if diagnostics is None else diagnostics
        self.sources: dict = {} if sources is None else sources
        #: The spec's checked `test` declarations (core.kinds.test.TestNode), in the order written.
        self.tests: list = [] if tests is None else tests
        #: Runnable name -> the types that arrive as its `{{input}}`, one per distinct place it runs (for editors).
        self.inputs: dict = {} if inputs is None else inputs

    def __repr__(self) -> str:
        return f"CompileResult(ok={self.ok}, diagnostics={self.diagnostics!r})"

    @property
    def ok(self) -> bool:
        return not any(d.is_error for d in self.diagnostics)

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.is_error]


def run_passes(loaded: LoadResult, passes: tuple[Pass, ...] = PASSES) -> CompileResult:
    ctx = CompileContext(load=loaded, diagnostics=Findings(loaded.diagnostics))
    if not ctx.has_errors:
        for run in passes:
            run(ctx)
            if ctx.stop:
                break
    diagnostics = fold(sorted(ctx.diagnostics, key=Diagnostic.sort_key), ctx.decls)
    left_out = ctx.diagnostics.left_out()
    if left_out is not None:
        diagnostics.append(left_out)  # last in every format, after the ones it counts
    graph = ctx.graph if not any(d.is_error for d in diagnostics) else None
    tests = ctx.tests if graph is not None else []
    return CompileResult(graph, diagnostics, loaded.sources, tests, {k: tuple(v) for k, v in ctx.received.items()})


def compile_spec(path_or_text: str | os.PathLike, *, path: str | None = None) -> CompileResult:
    """Compile a spec file, or spec text when the argument is not an existing path.

    Text containing a newline or a `{` is always treated as text.
    """
    # The AST and graph are acyclic and mostly kept: see collector_paused.
    with collector_paused():
        if isinstance(path_or_text, os.PathLike) or (
            "\n" not in path_or_text and "{" not in path_or_text and path_or_text.endswith(".plait")
        ):
            return run_passes(load(path_or_text))
        root = Path(path).resolve().parent if path else None
        return run_passes(load_text(path_or_text, path or "<string>", root))
