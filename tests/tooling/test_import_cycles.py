"""The runtime's composition → no import cycle: what compose imports (agents, the turn pipeline, its steps) never
imports compose back, even inside a function; a step that must run another runnable gets the runner handed in."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"


def _module(path: Path) -> str:
    parts = path.relative_to(SRC).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _graph() -> dict[str, set[str]]:
    """plait module → the plait modules it imports anywhere in its text (deferred imports included)."""
    files = {_module(p): p for p in (SRC / "plait").rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in files.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - node.level + 1]
                    module = ".".join(base + ([node.module] if node.module else []))
                else:
                    module = node.module or ""
                # `from package import submodule` imports the submodule (the package is loaded already).
                candidates = [f"{module}.{a.name}" if f"{module}.{a.name}" in files else module for a in node.names]
            elif isinstance(node, ast.Import):
                candidates = [a.name for a in node.names]
            else:
                continue
            found.update(c for c in candidates if c in files)
        graph[name] = found
    return graph


def _reachable(graph: dict[str, set[str]], start: str) -> set[str]:
    """Modules `start` loads, through any chain of imports. `plait` itself is not followed: the public API above
    every stage, which runtime modules read only `__version__` from (tests/tooling/test_stage_boundaries.py)."""
    seen: set[str] = set()
    todo = list(graph[start])
    while todo:
        module = todo.pop()
        if module not in seen:
            seen.add(module)
            todo.extend(graph[module] if module != "plait" else ())
    return seen


def test_nothing_compose_imports_imports_compose_back():
    graph = _graph()
    for module in ("plait.runtime.compose", "plait.runtime.agent", "plait.runtime.pipeline"):
        assert module not in _reachable(graph, module), module


def test_the_check_follows_imports_made_inside_functions():
    graph = _graph()
    # The engine imports compose at its top; the CLI's `plait run` reaches it from inside its functions.
    assert "plait.runtime.compose" in graph["plait.runtime.engine"]
    assert "plait.runtime.compose" in _reachable(graph, "plait.cli.run")
