"""plait, a declarative language for LLM agents: Python callers → compile, check, render and run a spec.

The public API (`__all__`; `dir(plait)` shows exactly these names). Everything
is imported on first use, so `import plait` is cheap: the functions import
their stage inside, and the classes (`Decision`, `Engine`) load when first
named. docs/api.md shows a run stopping for approval, and each way to answer;
`ToolResult` is what a python tool returns to report an error, write state or send messages.

    result = plait.compile("spec.plait")           # graph + diagnostics
    run = plait.arun("spec.plait", "input")        # await it, or iterate its events
    result = await run                             # stop_reason "interrupt": result.pending
    await run.resume({result.pending[0].id: "approve"})   # or "reject", or plait.Decision("edit", {...})
"""

import typing as _typing

if _typing.TYPE_CHECKING:
    from plait.compiler.pipeline import CompileResult
    from plait.core.diagnostics import Diagnostic
    from plait.dsl.ast import Module
    from plait.runtime.engine import Engine, Run
    from plait.runtime.outcomes import Decision
    from plait.runtime.report import RunResult
    from plait.runtime.tools import ToolResult

__version__ = "0.3.0"

__all__ = ["Decision", "Engine", "ToolResult", "__version__", "arun", "compile", "format", "parse", "render", "run"]

#: Public classes, imported on first use: name → module.
_LAZY = {"Decision": "plait.runtime.outcomes", "Engine": "plait.runtime.engine", "ToolResult": "plait.runtime.tools"}


def __getattr__(name: str) -> _typing.Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'plait' has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(module), name)
    globals()[name] = value  # the next lookup is a plain attribute
    return value


def __dir__() -> list[str]:
    return sorted(__all__)


def compile(path_or_text: _typing.Any, *, path: str | None = None) -> "CompileResult":
    """Compile a spec (a path to a `.plait` file, or spec text) to a graph and diagnostics."""
    from plait.compiler.pipeline import compile_spec

    return compile_spec(path_or_text, path=path)


def render(spec: _typing.Any, format: str = "dot", **options: _typing.Any) -> "str | bytes":
    """Draw a spec (a path, spec text, or a compiled `CompileResult`/`AgentGraph`).

    `format` is one of svg, png, pdf, dot, mermaid, json, html; `options` are
    `RenderOptions` fields (`entry`, `expand`, `direction`, `hide`). Raises
    `ValueError` with the diagnostics when the spec does not compile.
    """
    from plait.compiler.render import RenderOptions
    from plait.compiler.render import render as draw

    result = spec if hasattr(spec, "diagnostics") else None
    if hasattr(spec, "nodes_of"):
        graph, sources = spec, dict[str, _typing.Any]()
    else:
        result = result or compile(spec)
        if result.graph is None:
            raise ValueError("the spec does not compile:\n" + "\n".join(str(d) for d in result.errors))
        graph, sources = result.graph, result.sources
    return draw(graph, format, RenderOptions(**options), sources)


def parse(text: str, path: str = "<string>") -> "tuple[Module | None, list[Diagnostic]]":
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
    from plait.dsl.loader import text_problem

    # The size cap and NUL rule of `plait check`: text check rejects is never formatted.
    if (refused := text_problem(text, path)) is not None:
        raise FormatError([refused])
    formatted, diagnostics = format_text(text, path)
    if formatted is None:
        raise FormatError(diagnostics)
    return formatted


def arun(spec: _typing.Any, input: _typing.Any = None, *, entry: str | None = None, **options: _typing.Any) -> "Run":
    """Start a run of `spec` (a path, spec text, compiled graph or `Engine`) on `input`.

    `await plait.arun(...)` gives the `RunResult`; `async for event in
    plait.arun(...)` steps through its events first. Options go to `Engine`
    (`providers`, `should_pause`, `store`). When done with the run (and any
    resume), `await run.engine.aclose()` releases HTTP connections.

    A tool with `approval = required` stops the run before the call:
    `result.stop_reason == "interrupt"` and `result.pending` lists the calls
    (`id`, `tool`, `arguments`, `agent`). `await run.resume({id: decision})`
    continues it, one decision per pending id:

    - `"approve"`: the call runs with the model's arguments;
    - `"reject"` or `{"action": "reject", "message": "why"}`: the call does not
      run, and the model reads the message as the tool's result;
    - `plait.Decision("edit", {...})` or `{"action": "edit", "arguments": {...}}`:
      the call runs with these arguments instead.

    A pause (`stop_reason == "pause"`) resumes with `await run.resume()`; a run
    paused on a budget resumes with new limits: `await run.resume(budget={"usd": 5})`.
    `budget={"usd": 2, "tokens": 100_000}` is the run's own budget, around
    everything it runs (docs/language.md, Budgets).

    `tracer_provider=` (an OpenTelemetry TracerProvider; needs `plait[otel]`)
    traces the run: GenAI spans linked to the spec's lines (src/plait/runtime/telemetry.py).
    """
    from plait.runtime.engine import Engine

    tracer_provider = options.pop("tracer_provider", None)
    budget = options.pop("budget", None)
    if isinstance(spec, Engine):
        engine = spec
    elif hasattr(spec, "nodes_of"):
        engine = Engine.from_graph(spec, **options)
    else:
        engine = Engine.from_spec(spec, **options)
    started = engine.start(input, entry=entry, budget=budget)
    if tracer_provider is not None:
        from plait.runtime.telemetry import attach

        attach(started, tracer_provider)
    return started


def run(
    spec: _typing.Any,
    input: _typing.Any = None,
    *,
    entry: str | None = None,
    raise_on_error: bool = True,
    **options: _typing.Any,
) -> "RunResult":
    """Run `spec` to its end and return the `RunResult` (stop_reason, output, report).

    A failed run raises its error (a provider's `ProviderError` or the runtime's
    `AgentError`, each with `kind` and the run report on `.report`) unless
    `raise_on_error=False`. A run that stops for approval returns with
    `stop_reason == "interrupt"`; to answer it in the same process use `arun`
    and `run.resume` (see `arun`), or `plait run FILE --resume ID --decide ...`.
    """
    import asyncio

    result = asyncio.run(_finish(arun(spec, input, entry=entry, **options)))
    if raise_on_error and result.error is not None:
        raise result.error
    return result


async def _finish(started: "Run") -> "RunResult":
    try:
        return await started
    finally:
        await started.engine.aclose()
