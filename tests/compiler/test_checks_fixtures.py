"""Fixture-driven rule tests: tests/fixtures/compiler/rules/<rule>.plait marks each line where a
finding must start with `# expect: CODE ...`; the rule's findings must be exactly those."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

import plait
from plait.compiler.rules import RULES

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "compiler" / "rules"
_EXPECT = re.compile(r"#\s*expect:\s*((?:P\d{3}\s*)+)$")


def _expected(path: Path) -> Counter:
    found: Counter = Counter()
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        match = _EXPECT.search(line)
        if match:
            found.update((number, code) for code in match.group(1).split())
    return found


@pytest.mark.parametrize("rule", [r.__name__ for r in RULES])
def test_rule_fixture(rule):
    path = FIXTURES / f"{rule}.plait"
    assert path.exists(), f"every rule has a fixture: add {path.name}"
    expected = _expected(path)
    assert expected, "a fixture must expect at least one finding"
    got = Counter((d.span.line, d.code) for d in plait.compile(path).diagnostics)
    assert got == expected, [f"{d} {d.message}" for d in plait.compile(path).diagnostics]
