"""plait: a declarative language for LLM agents.

The public API. Everything is imported on first use, so `import plait` is cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from plait.compiler.pipeline import CompileResult

__version__ = "0.1.0"

__all__ = ["__version__", "compile", "parse"]


def compile(path_or_text: Any, *, path: str | None = None) -> "CompileResult":
    """Compile a spec (a path to a `.plait` file, or spec text) to a graph and diagnostics."""
    from plait.compiler.pipeline import compile_spec

    return compile_spec(path_or_text, path=path)


def parse(text: str, path: str = "<string>"):
    """Parse one file's text to its AST. Returns `(module or None, diagnostics)`."""
    from plait.dsl.parser import parse_module
    from plait.dsl.source import SourceFile

    return parse_module(SourceFile(path, text))
