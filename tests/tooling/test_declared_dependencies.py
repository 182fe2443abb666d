"""The package's imports → the distributions pyproject.toml declares: every third-party module plait imports
itself is named in `dependencies` or in an extra, not only reached through another package's requirements.

A module that arrives with something else (yarl with aiohttp, lsprotocol with pygls, httpx2 and mcp_types with
the MCP SDK) works until that package drops or renames it in a minor release; then a fresh install fails at
import time while every developer's venv still has it.
"""

from __future__ import annotations

import ast
import importlib.metadata
import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
SOURCES = ("src/plait",)
# Written by lark's standalone tool: it tries `import regex` and falls back to `re` (plait never installs regex).
GENERATED = ("plait_parser.py",)
# Extras that describe a developer's tools, not what the package itself imports.
NOT_RUNTIME = ("test", "bench")
# Imports that only run inside the tool they extend, which brings its own package.
HOSTED = {("pytest", "src/plait/testing.py")}  # a pytest plugin: loaded by pytest, through `-p plait.testing`


def _name(requirement: str) -> str:
    return re.split(r"[<>=!~\[ ;]", requirement, maxsplit=1)[0].lower().replace("_", "-")


def _declared() -> set[str]:
    requirements = list(PROJECT["dependencies"])
    for extra, listed in PROJECT["optional-dependencies"].items():
        if extra not in NOT_RUNTIME:
            requirements.extend(listed)
    return {_name(r) for r in requirements}


def _third_party_imports() -> dict[str, set[str]]:
    """Top-level module name → the source files (relative to the repo) that import it, absolute imports only."""
    out: dict[str, set[str]] = {}
    for folder in SOURCES:
        for path in (ROOT / folder).rglob("*.py"):
            if path.name in GENERATED:
                continue
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Import):
                    modules = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    modules = [node.module]
                else:
                    continue
                for module in modules:
                    top = module.split(".")[0]
                    if top != "plait" and top not in sys.stdlib_module_names:
                        out.setdefault(top, set()).add(path.relative_to(ROOT).as_posix())
    return out


def _undeclared(imports: dict[str, set[str]], declared: set[str]) -> dict[str, list[str]]:
    distributions = importlib.metadata.packages_distributions()
    missing: dict[str, list[str]] = {}
    for module, files in sorted(imports.items()):
        files = {f for f in files if (module, f) not in HOSTED}
        # A module that is not installed here is looked up by its own name.
        names = {_name(d) for d in distributions.get(module, [module])}
        if files and not names & declared:
            missing[module] = sorted(files)
    return missing


def test_every_third_party_import_is_a_declared_dependency():
    assert _undeclared(_third_party_imports(), _declared()) == {}


def test_an_import_that_only_arrives_with_another_package_is_reported():
    imports = {
        "yarl": {"src/plait/runtime/providers/transport.py"},
        "aiohttp": {"src/plait/runtime/providers/transport.py"},
    }
    assert _undeclared(imports, {"aiohttp"}) == {"yarl": ["src/plait/runtime/providers/transport.py"]}
