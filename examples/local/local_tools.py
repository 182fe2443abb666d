"""The local example's tools: read a project file, run its tests."""

from __future__ import annotations

import subprocess
from pathlib import Path


def read_file(path: str) -> str:
    root = Path.cwd().resolve()
    target = (root / path).resolve()
    if not target.is_relative_to(root):
        raise ValueError(f"{path} is outside the project")
    return target.read_text(encoding="utf-8")


def run_tests(only: str | None = None) -> str:
    command = ["python", "-m", "pytest", "-q", *([only] if only else [])]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        # An exception becomes an error result, so `until = run_tests succeeded` keeps going.
        raise RuntimeError(done.stdout[-4000:])
    return done.stdout[-2000:]
