"""Paths the editor tests share, and the npm tools they run (installed by `npm ci` in editors/vscode; .ci/run does it)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
EDITORS = REPO / "editors"
GRAMMAR = EDITORS / "plait.tmLanguage.json"
EXTENSION = EDITORS / "vscode"
#: The grammar's scope assertions, in vscode-tmgrammar-test's format (each one a valid plait file).
CASES = sorted(Path(__file__).parent.glob("*.test.plait"))


def node() -> str:
    """The `node` executable; skips (a failure under CI) when there is none."""
    found = shutil.which("node")
    if found is None:
        pytest.skip("node is not installed")
    return found


def npm_tool(name: str) -> Path:
    """A tool in editors/vscode/node_modules/.bin; skips (a failure under CI) when `npm ci` has not run there."""
    node()
    tool = EXTENSION / "node_modules" / ".bin" / name
    if not tool.exists():
        pytest.skip(f"{name} is not installed: run `npm ci` in editors/vscode")
    return tool
