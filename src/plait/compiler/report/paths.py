"""A span's file → the path a CI service can match: relative to the working directory when inside it.

GitHub annotations and SARIF results are matched against files of the
checked-out repository, where `plait` runs; an absolute path would match
nothing there.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path, PurePath

__all__ = ["relative_path"]


@lru_cache(maxsize=256)
def _relative(path: str, cwd: Path) -> PurePath:
    p = Path(path)
    if p.is_absolute() and p.is_relative_to(cwd):
        return p.relative_to(cwd)
    return p


def relative_path(path: str, cwd: Path | None = None) -> PurePath:
    """`path` relative to `cwd` (default: the working directory) if it lies inside it, else unchanged."""
    return _relative(path, cwd or Path.cwd())
