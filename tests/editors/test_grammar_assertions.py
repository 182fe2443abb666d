"""The grammar's scope assertions (tests/editors/*.test.plait), run by vscode-tmgrammar-test on vscode-textmate
and Oniguruma: the engine VS Code itself highlights with."""

from __future__ import annotations

import subprocess

import pytest

from editors_support import CASES, GRAMMAR, npm_tool

pytestmark = pytest.mark.slow


def run_cases(*cases: str) -> subprocess.CompletedProcess[str]:
    tool = npm_tool("vscode-tmgrammar-test")
    # --compact: one line per failed assertion (file:line:columns, the missing scopes and the actual ones).
    return subprocess.run(
        [str(tool), "--compact", "--grammar", str(GRAMMAR), *cases],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_every_scope_assertion_holds():
    result = run_cases(*(str(case) for case in CASES))
    assert result.returncode == 0, result.stdout + result.stderr
    for case in CASES:
        assert f"{case.name} run successfuly" in result.stdout


def test_a_wrong_assertion_fails(tmp_path):
    # The tool must be able to fail: a case asserting a scope the grammar does not give is reported.
    case = tmp_path / "wrong.test.plait"
    case.write_text(
        '# SYNTAX TEST "source.plait" "wrong"\nmodel fast = "x"\n#     ^^^^ entity.name.function.agent.plait\n'
    )
    result = run_cases(str(case))
    assert result.returncode != 0
    assert "wrong.test.plait:2:7:11" in result.stdout and "entity.name.function.agent.plait" in result.stdout


def test_an_unclosed_string_ends_at_the_end_of_its_line(tmp_path):
    # Not plait (the parser rejects it), but typed on the way to plait: one missing quote must not colour
    # the rest of the file as a string.
    case = tmp_path / "unclosed.test.plait"
    case.write_text(
        '# SYNTAX TEST "source.plait" "unclosed"\n'
        'step s { prompt = "unclosed\n'
        "  model = fast }\n"
        "# ^^^^^ meta.block.plait entity.other.attribute-name.plait\n"
        "#         ^^^^ variable.other.reference.plait\n"
    )
    result = run_cases(str(case))
    assert result.returncode == 0, result.stdout + result.stderr
