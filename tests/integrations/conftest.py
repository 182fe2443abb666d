"""Shared helpers for the editor and CI integration tests: a project folder and `plait check` in-process."""

from __future__ import annotations

from pathlib import Path

import pytest

from plait.cli import main

CLEAN = 'model fast = "openai/gpt-4o-mini"\nagent main { model = fast }\n'
#: One P601 warning (`spare`), at 2:7.
WARNING = 'model fast = "openai/gpt-4o-mini"\nmodel spare = "openai/gpt-4o"\nagent main { model = fast }\n'


@pytest.fixture
def project(tmp_path, monkeypatch):
    """Write files into a fresh working directory (which is also the project root)."""
    monkeypatch.chdir(tmp_path)

    def write(name: str, text: str) -> Path:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        return path

    return write


@pytest.fixture
def check(capsys):
    def run(*argv: str) -> tuple[int, str, str]:
        status = main(["check", *argv])
        captured = capsys.readouterr()
        return status, captured.out, captured.err

    return run
