"""A compiled spec's sources → the pinned form a run records (every file's text, a digest); a pinned form → compiled again.

A run is pinned to the spec it started with: `plait resume` and `plait runs
fork` compare that spec with the one they are given, by meaning (diff.py), so
an edit that changes what the rest of the run promises is never picked up
unnoticed. The pinned form holds every file the spec is made of (its imports
too), named relative to the spec's folder, so it still compiles after the
project moved; the digest is over that form, so two runs of the same text share
one stored copy.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import TYPE_CHECKING

from plait.dsl.loader import Reader, load_text, resolve_path

if TYPE_CHECKING:
    from plait.core.source import SourceFile

    from .pipeline import CompileResult

__all__ = ["compile_pinned", "pin_of"]


def pin_of(sources: dict[str, SourceFile], spec: str | Path) -> tuple[str, str]:
    """(digest, pinned form as JSON text) of a compiled spec whose main file is `spec`."""
    main = resolve_path(spec)
    files: dict[str, str] = {}
    for name, source in sources.items():
        path = resolve_path(name)
        try:
            relative = path.relative_to(main.parent).as_posix()
        except ValueError:  # not beside the spec (imports cannot leave its folder): kept as it was named
            relative = name
        files[relative] = source.text
    form = json.dumps(
        {"main": main.name, "files": dict(sorted(files.items()))}, ensure_ascii=False, separators=(",", ":")
    )
    return "sha256:" + hashlib.sha256(form.encode("utf-8", "surrogatepass")).hexdigest(), form


def compile_pinned(form: str, folder: str | Path) -> CompileResult | None:
    """The pinned spec compiled as if its files were in `folder` (the spec's folder now); None when the form cannot
    be read (not the JSON `pin_of` writes)."""
    from .pipeline import run_passes

    try:
        data = json.loads(form)
        main, files = data["main"], data["files"]
        if not isinstance(main, str) or not isinstance(files, dict) or not isinstance(files.get(main), str):
            return None
    except (ValueError, TypeError, KeyError):
        return None
    root = resolve_path(folder)
    texts = {resolve_path(root / name): text for name, text in files.items() if isinstance(text, str)}
    # Every file from the pinned form, never from the disk: an import edited since must not leak into the old side.
    reader = Reader(overlay=lambda path: texts.get(path, ""))
    return run_passes(load_text(files[main], str(root / main), root, reader))
