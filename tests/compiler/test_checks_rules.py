"""The lint rules' own contract: one module per rule, documented, with a catalogued code,
run by the `lint` pass after `validate_graph`."""

from __future__ import annotations

import importlib

import pytest

from plait.core.codes import CODES
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


@pytest.mark.slow
def test_the_rules_never_need_networkx():
    # `plait check` avoids importing networkx; the template rule's input walk must too.
    import subprocess
    import sys

    code = (
        "import sys, plait\n"
        'spec = \'model m = "openai/x"\\nstep a { model = m, prompt = "{{input}}" }\\n\''
        " 'step s { model = m, prompt = \"{{input.b}}\" }\\nchain main = parallel(a) -> s\\n'\n"
        "r = plait.compile(spec)\n"
        "assert [d.code for d in r.diagnostics] == ['P401'], r.diagnostics\n"
        "print('networkx' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"
