"""The lint rules' own contract: one module per rule, documented, with a catalogued code,
run by the `lint` pass after `validate_graph`."""

from __future__ import annotations

import importlib

import pytest

from plait.compiler.codes import CODES
from plait.compiler.passes.lint import lint
from plait.compiler.pipeline import PASSES
from plait.compiler.passes.validate_graph import validate_graph
from plait.compiler.rules import RULES


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.__name__)
def test_rule_module_shape(rule):
    module = importlib.import_module(rule.__module__)
    assert module.__name__.rsplit(".", 1)[1] == rule.__name__
    first, _, rest = (module.__doc__ or "").partition("\n")
    assert "→" in first and "Why:" in rest
    assert module.CODE in CODES


def test_lint_runs_last_after_validate_graph():
    assert PASSES[-1] is lint and PASSES[-2] is validate_graph


def test_rule_names_are_unique():
    assert len({r.__name__ for r in RULES}) == len(RULES)
