"""Spec paths → the `plait.lock` files beside them: the steps `plait mcp lock` and `plait models lock` share.

Each command finds its specs, reads the lock of each folder its declarations
live in, puts its own section into it and writes the file when the text
changed (with `--check`: says it would, and fails).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    from plait.compiler.graph import AgentGraph
    from plait.core.mcp_lock import Lock


def spec_paths(paths: list[str]) -> tuple[list[Path], str | None]:
    """The spec files the paths name (a folder: the specs under it), or the reason there are none."""
    from plait.dsl.discover import spec_files

    out: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            out.extend(spec_files(path))
        elif path.is_file():
            out.append(path)
        else:
            return [], f"no such spec or folder: {raw}"
    if not out:
        return [], f"no .plait specs under {', '.join(paths)}"
    return out, None


def compiled(specs: list[Path], skipped: Callable[..., Any]) -> tuple[list[tuple[Path, AgentGraph]], bool]:
    """Each spec with its graph, checked by every pass but `skipped` (the check that reads the lock about to be
    written); True when a spec has errors (printed)."""
    from plait.cli import print_diagnostics
    from plait.compiler.pipeline import PASSES, run_passes
    from plait.dsl.loader import load

    passes = tuple(p for p in PASSES if p is not skipped)
    out: list[tuple[Path, AgentGraph]] = []
    failed = False
    for spec in specs:
        result = run_passes(load(spec), passes)
        if result.graph is None:
            print_diagnostics(result.diagnostics, result.sources)
            failed = True
            continue
        out.append((spec, result.graph))
    return out, failed


def declaring_file(node: Any, spec: Path) -> Path:
    """The file that declares `node` (a file the spec imports, or the spec itself), resolved."""
    return Path(node.file).resolve() if node.file else spec.resolve()


def shown(path: Path) -> str:
    """A path as messages show it: relative to the current folder when under it."""
    from plait.compiler.report.paths import relative_path

    return str(relative_path(str(path)))


def read_lock(path: Path) -> tuple[str | None, Lock | Exception]:
    """The lock's text (None: no file) and what it says (an empty lock when there is no file), or why it cannot
    be read."""
    from plait.core.mcp_lock import Lock, LockError, loads

    current: str | None = None
    try:
        current = path.read_text(encoding="utf-8") if path.exists() else None
        return current, loads(current) if current is not None else Lock()
    except (LockError, OSError, UnicodeDecodeError) as exc:
        return current, exc


def write_lock(path: Path, text: str, current: str | None, *, check: bool, command: str, specs: set[Path]) -> bool:
    """Write the lock when its text changed; with `check`, write nothing and say which command would change it.

    False when `check` found a change."""
    if text == current:
        return True
    if check:
        import shlex

        named = " ".join(shlex.quote(shown(spec)) for spec in sorted(specs))
        print(f"{shown(path)}: would change; run `plait {command} {named}` and commit it", file=sys.stderr)
        return False
    path.write_text(text, encoding="utf-8")
    print(f"{shown(path)}: written")
    return True
