"""plait: a declarative language for LLM agents.

The public API. Everything is imported on first use, so `import plait` is cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from plait.compiler.pipeline import CompileResult

__version__ = "0.1.0"

__all__ = ["__version__", "arun", "compile", "format", "parse", "render", "run"]


def compile(path_or_text: Any, *, path: str | None = None) -> "CompileResult":
    """Compile a spec (a path to a `.plait` file, or spec text) to a graph and diagnostics."""
    from plait.compiler.pipeline import compile_spec

    return compile_spec(path_or_text, path=path)


def render(spec: Any, format: str = "dot", **options: Any) -> "str | bytes":
    """Draw a spec (a path, spec text, or a compiled `CompileResult`/`AgentGraph`).

    `format` is one of svg, png, pdf, dot, mermaid, json, html; `options` are
    `RenderOptions` fields (`entry`, `expand`, `direction`, `hide`). Raises
    `ValueError` with the diagnostics when the spec does not compile.
    """
    from plait.compiler.render import RenderOptions
    from plait.compiler.render import render as draw

    result = spec if hasattr(spec, "diagnostics") else None
    if hasattr(spec, "nodes_of"):
        graph, sources = spec, {}
    else:
        result = result or compile(spec)
        if result.graph is None:
            raise ValueError("the spec does not compile:\n" + "\n".join(str(d) for d in result.errors))
        graph, sources = result.graph, result.sources
    return draw(graph, format, RenderOptions(**options), sources)


def parse(text: str, path: str = "<string>"):
    """Parse one file's text to its AST. Returns `(module or None, diagnostics)`."""
    from plait.dsl.parser import parse_module
    from plait.core.source import SourceFile

    return parse_module(SourceFile(path, text))


def format(text: str, path: str = "<string>") -> str:
    """`text` in the canonical layout of `plait fmt`.

    Raises `plait.dsl.formatter.FormatError` (a ValueError carrying the
    diagnostics) when the text does not parse: broken specs are never rewritten.
    """
    from plait.dsl.formatter import FormatError, format_text

    formatted, diagnostics = format_text(text, path)
    if formatted is None:
        raise FormatError(diagnostics)
    return formatted


def arun(spec, input=None, *, entry=None, **options):
    """Start a run of `spec` (a path, spec text, compiled graph or `Engine`) on `input`.

    `await plait.arun(...)` gives the `RunResult`; `async for event in
    plait.arun(...)` steps through its events first. `run.resume(decisions)`
    continues after an interrupt or pause. Options go to `Engine`
    (`providers`, `should_pause`, `store`). When done with the run (and any
    resume), `await run.engine.aclose()` releases HTTP connections.
    """
    from plait.runtime.engine import Engine

    if isinstance(spec, Engine):
        engine = spec
    elif hasattr(spec, "nodes_of"):
        engine = Engine.from_graph(spec, **options)
    else:
        engine = Engine.from_spec(spec, **options)
    return engine.start(input, entry=entry)


def run(spec, input=None, *, entry=None, raise_on_error=True, **options):
    """Run `spec` to its end and return the `RunResult` (stop_reason, output, report).

    A failed run raises its error (a provider's `ProviderError` or the runtime's
    `AgentError`, each with `kind` and the run report on `.report`) unless
    `raise_on_error=False`.
    """
    import asyncio

    result = asyncio.run(_finish(arun(spec, input, entry=entry, **options)))
    if raise_on_error and result.error is not None:
        raise result.error
    return result


async def _finish(started):
    try:
        return await started
    finally:
        await started.engine.aclose()
