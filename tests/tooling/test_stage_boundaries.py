"""Each stage's imports → none from a stage above it: core below dsl below compiler below runtime and ide below the CLI.

Data flows one way (text → AST → graph → render | run), so a lower stage that imports a higher one is a cycle
in waiting, and it makes `plait check` pay for the runtime. Deferred imports inside functions count too: an
import that only runs on some path is still a dependency. The runtime and the IDE code stand side by side on the
compiler: neither imports the other.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "plait"
# Folder under src/plait/ → its dotted name.
STAGES = {
    "core": "plait.core",
    "dsl": "plait.dsl",
    "compiler": "plait.compiler",
    "runtime": "plait.runtime",
    "ide": "plait.ide",
}
# Stage → its level; stages on one level are siblings and import nothing from each other.
ORDER = {"plait.core": 0, "plait.dsl": 1, "plait.compiler": 2, "plait.runtime": 3, "plait.ide": 3, "plait.cli": 4}
TOP = max(ORDER.values())
# Data, not code: the grammar file every stage may read, as low as core.
BELOW_EVERY_STAGE = ("plait.grammars",)
# `src/plait/__init__.py` is the public API, above every stage; only its version string is for everyone.
SHARED_FROM_ROOT = {"__version__"}


def _stage(module: str) -> str | None:
    """The stage a `plait.*` module belongs to (a key of ORDER, or "plait" for the API's side), None outside plait."""
    if module in BELOW_EVERY_STAGE or module.startswith(tuple(m + "." for m in BELOW_EVERY_STAGE)):
        return "plait.core"
    for stage in ORDER:
        if module == stage or module.startswith(stage + "."):
            return stage
    if module == "plait" or module.startswith("plait."):  # plait, plait.testing, ...: the CLI's side
        return "plait"
    return None


def _rank(stage: str) -> int:
    return ORDER.get(stage, TOP)


def _imports(path: Path, package: str) -> list[tuple[int, str, list[str]]]:
    """(line, absolute module, imported names) for every import in the file, relative ones resolved."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.extend((node.lineno, alias.name, []) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = parts[: len(parts) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            out.append((node.lineno, module, [alias.name for alias in node.names]))
    return out


def _upward(root: Path = PACKAGE, stages: dict[str, str] = STAGES) -> list[str]:
    found = []
    for folder, dotted in stages.items():
        own = _rank(dotted)
        for path in sorted((root / folder).rglob("*.py")):
            rel = path.relative_to(root / folder).with_suffix("")
            parts = [dotted, *rel.parts]
            package = ".".join(parts if rel.name == "__init__" else parts[:-1]).removesuffix(".__init__")
            for line, module, names in _imports(path, package):
                if module == "plait" and set(names) <= SHARED_FROM_ROOT:
                    continue
                stage = _stage(module)
                if stage is None:
                    continue
                rank = _rank(stage)
                if rank > own or (rank == own and stage != dotted):
                    found.append(f"{path.relative_to(root).as_posix()}:{line} imports {module}")
    return found


def test_no_stage_imports_one_above_it():
    assert _upward() == []


def test_an_upward_import_is_named_with_its_line(tmp_path):
    (tmp_path / "dsl").mkdir()
    (tmp_path / "dsl" / "ok.py").write_text("from plait.core.source import Span\nfrom . import ast\n")
    (tmp_path / "dsl" / "bad.py").write_text("def f():\n    from plait.compiler.graph import AgentGraph\n")
    (tmp_path / "core").mkdir()
    (tmp_path / "core" / "worse.py").write_text("from ..runtime import engine\nfrom plait import __version__\n")
    found = _upward(tmp_path, {"core": "plait.core", "dsl": "plait.dsl"})
    assert found == ["core/worse.py:1 imports plait.runtime", "dsl/bad.py:2 imports plait.compiler.graph"]


def test_the_runtime_and_the_ide_code_import_nothing_from_each_other(tmp_path):
    (tmp_path / "ide").mkdir()
    (tmp_path / "ide" / "ok.py").write_text("from plait.compiler.schema import SCHEMAS\nfrom . import index\n")
    (tmp_path / "ide" / "bad.py").write_text("from plait.runtime.engine import Engine\n")
    (tmp_path / "runtime").mkdir()
    (tmp_path / "runtime" / "worse.py").write_text("from ..ide import analysis\n")
    found = _upward(tmp_path, {"runtime": "plait.runtime", "ide": "plait.ide"})
    assert found == ["runtime/worse.py:1 imports plait.ide", "ide/bad.py:1 imports plait.runtime.engine"]
