"""Builders for compiler check tests: compile spec text as a file, find diagnostics and positions."""

from __future__ import annotations

import textwrap
from pathlib import Path

import plait
from plait.core.diagnostics import Diagnostic

FAST = 'model fast = "openai/gpt-4o-mini"\n'
MODELS = """
model fast   = "openai/gpt-4o-mini"
model strong = "anthropic/claude-sonnet-4-5"
"""


def compile_text(text: str, tmp_path: Path, name: str = "spec.plait", files: dict[str, str] | None = None):
    """Write `text` (dedented) to tmp_path/name with `files` beside it, and compile the file."""
    for rel, content in (files or {}).items():
        target = tmp_path / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(textwrap.dedent(content))
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return plait.compile(path)


def codes(result) -> list[str]:
    return [d.code for d in result.diagnostics]


def only(result, code: str) -> Diagnostic:
    found = [d for d in result.diagnostics if d.code == code]
    assert len(found) == 1, f"expected one {code}, got {[str(d) + ' ' + d.message for d in result.diagnostics]}"
    return found[0]


def at(text: str, needle: str, nth: int = 1) -> tuple[int, int]:
    """1-based (line, column) of the nth occurrence of `needle` in dedented `text`."""
    text = textwrap.dedent(text)
    index = -1
    for _ in range(nth):
        index = text.index(needle, index + 1)
    line = text.count("\n", 0, index) + 1
    return line, index - (text.rfind("\n", 0, index) + 1) + 1


def assert_at(d: Diagnostic, text: str, needle: str, nth: int = 1) -> None:
    assert (d.span.line, d.span.column) == at(text, needle, nth), f"{d} {d.message}"


def clean(result) -> None:
    assert result.diagnostics == [], [f"{d} {d.message}" for d in result.diagnostics]
