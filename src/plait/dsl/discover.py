"""A directory → the `.plait` spec files under it, as `plait check DIR` and `plait fmt DIR` see them.

Only regular files count (a symlink named `*.plait` is not followed: `plait fmt`
would otherwise rewrite a file outside the project); a run store (`.plait/`, which `plait run` leaves beside
a spec) matches `*.plait` by name and must never be taken for one. Like ruff,
the search skips hidden directories (`.plait/`, `.git/`, `.venv/`), virtual
environments under any name, and the usual build and dependency folders, so
checking a project's root checks the project's specs, not its tools' state.
"""

from __future__ import annotations

import os
from pathlib import Path

SUFFIX = ".plait"

#: Folders never searched (besides hidden ones): ruff's default excludes that are not hidden.
SKIPPED_DIRS = frozenset({"__pycache__", "__pypackages__", "_build", "buck-out", "dist", "node_modules", "venv"})


def spec_files(root: str | os.PathLike[str]) -> list[Path]:
    """Every spec file under `root`, sorted; an unreadable subfolder is skipped rather than fatal."""
    out: list[Path] = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not _skipped(Path(folder, d)))
        out.extend(Path(folder, name) for name in files if name.endswith(SUFFIX) and _is_spec(Path(folder, name)))
    return sorted(out)


def _skipped(path: Path) -> bool:
    # pyvenv.cfg marks a virtual environment whatever its name (`env/`, `.tox/py311/`).
    return path.name.startswith(".") or path.name in SKIPPED_DIRS or (path / "pyvenv.cfg").exists()


def _is_spec(path: Path) -> bool:
    # Hidden files are skipped like hidden folders; `.plait` itself (the store's name) is one. A symlink is
    # not a regular file of the project: `plait fmt` would rewrite its target, wherever that lives.
    return not path.name.startswith(".") and not path.is_symlink() and path.is_file()
