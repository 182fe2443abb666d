"""Shared by the render tests: fixture specs, examples, compiling, and golden files."""

from __future__ import annotations

import os
import re
import subprocess
from functools import lru_cache
from pathlib import Path

import pytest

from plait.compiler.pipeline import compile_spec
from plait.dsl.discover import spec_files

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "render"
EXAMPLES = ROOT / "examples"
GOLDENS = Path(__file__).resolve().parent / "goldens"
UPDATE = os.environ.get("UPDATE_GOLDENS") == "1"

#: format → golden file extension.
GOLDEN_FORMATS = {"dot": "dot", "mermaid": "mmd", "json": "json", "svg": "svg", "html": "html"}


def cases() -> list[tuple[str, Path]]:
    """(golden name, spec path): our fixtures, then every example."""
    out = [(p.stem, p) for p in sorted(FIXTURES.glob("*.plait"))]
    # A `*.test.plait` holds tests, which draw nothing: its spec is drawn under its own name.
    specs = [p for p in spec_files(EXAMPLES) if not p.name.endswith(".test.plait")]
    imported = {
        (p.parent / m).resolve() for p in specs for m in re.findall(r'^import\s+"([^"]+)"', p.read_text(), re.M)
    }
    # A file that only exists to be imported by another example is drawn through its importer.
    out += [(f"examples/{p.relative_to(EXAMPLES).with_suffix('')}", p) for p in specs if p.resolve() not in imported]
    return out


@lru_cache(maxsize=None)
def compiled(path: Path):
    result = compile_spec(path)
    assert result.graph is not None, "\n".join(str(d) for d in result.diagnostics)
    return result


def graph(name: str):
    return compiled(FIXTURES / f"{name}.plait").graph


@lru_cache(maxsize=1)
def graphviz_version() -> str | None:
    try:
        out = subprocess.run(["dot", "-V"], capture_output=True, text=True, check=False).stderr
    except FileNotFoundError:
        return None
    match = re.search(r"version (\S+)", out)
    return match.group(1) if match else None


def check_golden(relative: str, data: str | bytes) -> None:
    """Compare with goldens/<relative>; UPDATE_GOLDENS=1 writes it instead."""
    path = GOLDENS / relative
    raw = data.encode("utf-8") if isinstance(data, str) else data
    if UPDATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(raw)
        return
    if not path.exists():
        pytest.fail(f"no golden {path.relative_to(ROOT)}; run UPDATE_GOLDENS=1 pytest tests/render and review it")
    assert raw == path.read_bytes(), (
        f"{relative} differs from its golden; if intended, UPDATE_GOLDENS=1 and review the diff"
    )


def pinned_graphviz() -> str | None:
    """The Graphviz version the SVG goldens were made with (layouts differ between versions)."""
    path = GOLDENS / "GRAPHVIZ_VERSION"
    if UPDATE and graphviz_version():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(graphviz_version() + "\n")
    return path.read_text().strip() if path.exists() else None
