"""The shipped examples are what `plait fmt` would write: users copy them."""

from __future__ import annotations

from pathlib import Path

import pytest

from plait.cli import main
from plait.dsl.discover import spec_files

EXAMPLES = Path(__file__).parents[2] / "examples"
SPECS = spec_files(EXAMPLES)


def test_there_are_examples():
    assert len(SPECS) >= 5


@pytest.mark.parametrize("spec", SPECS, ids=lambda p: str(p.relative_to(EXAMPLES)))
def test_example_is_canonical(spec, capsys):
    assert main(["fmt", "--check", str(spec)]) == 0, capsys.readouterr().out
