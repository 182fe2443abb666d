"""Each module of the package → a docstring whose first line says what it turns into what ("X → Y").

The first line is what a newcomer reads in a file list, `help()` and the architecture's stage table; a
module that cannot say its input and output in one line usually does two jobs. An empty package
`__init__.py` (and `__main__.py`, which only calls the CLI) has nothing to describe.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SOURCES = ("src/plait",)
ARROWS = ("→", "⇄")
# Written by lark's standalone tool (python -m plait.dsl.build_parser), not by us.
GENERATED = ("plait_parser.py",)


def _first_line(path: Path) -> str | None:
    """The docstring's first line; None for a file with no docstring and no code (an empty package marker)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    doc = ast.get_docstring(tree)
    if doc is None:
        return None if path.name in ("__init__.py", "__main__.py") else ""
    return doc.strip().splitlines()[0]


def _without_arrow(paths: list[Path], root: Path = ROOT) -> list[str]:
    out = []
    for path in paths:
        first = _first_line(path)
        if first is not None and not any(arrow in first for arrow in ARROWS):
            out.append(f"{path.relative_to(root).as_posix()}: {first!r}")
    return out


def test_every_module_docstring_starts_with_what_it_turns_into_what():
    modules = sorted(
        p
        for folder in SOURCES
        for p in (ROOT / folder).rglob("*.py")
        if "__pycache__" not in p.parts and p.name not in GENERATED
    )
    assert len(modules) > 100
    assert _without_arrow(modules) == []


def test_a_module_without_an_arrow_or_a_docstring_is_named(tmp_path):
    (tmp_path / "plain.py").write_text('"""Helpers for things."""\n')
    (tmp_path / "bare.py").write_text("x = 1\n")
    (tmp_path / "__init__.py").write_text("")
    (tmp_path / "good.py").write_text('"""Text → tokens."""\n')
    found = _without_arrow(sorted(tmp_path.glob("*.py")), tmp_path)
    assert found == ["bare.py: ''", "plain.py: 'Helpers for things.'"]
