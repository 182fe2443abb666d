"""`.typecheck/plait/` (mypy's view of the package, see pyproject's [tool.mypy]) links to every part of the real one:
a stage or a top-level module missing from it would not be type-checked at all."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TREE = ROOT / ".typecheck" / "plait"


def test_every_stage_of_the_package_dir_is_linked():
    package_dir = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]
    for package, folder in package_dir.items():
        if package == "plait":
            continue
        link = TREE / package.removeprefix("plait.")
        assert link.is_symlink() and link.resolve() == (ROOT / folder).resolve(), f"ln -s ../../{folder} {link}"


def test_every_module_and_package_of_plait_is_linked():
    for entry in (ROOT / "plait").iterdir():
        if entry.name.startswith(("__pycache__", ".")) or not (
            entry.suffix == ".py" or (entry / "__init__.py").exists()
        ):
            continue
        link = TREE / entry.name
        assert link.is_symlink() and link.resolve() == entry.resolve(), f"ln -s ../../plait/{entry.name} {link}"
