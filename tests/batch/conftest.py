"""Fixtures for batch tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from batch_helpers import write_echo

#: Delays that make rows finish out of input order.
DELAYS = [0.12, 0.01, 0.08, 0.02, 0.06, 0.0, 0.04, 0.03]


@pytest.fixture
def echo_project(tmp_path: Path) -> Path:
    return write_echo(tmp_path / "echo", [{"text": f"t{i}", "delay": d} for i, d in enumerate(DELAYS)])
