"""Scripted models' reply files (P307), and that checking never imports a python tool module."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from checks_helpers import assert_at, clean, compile_text, only

SPEC = """
model demo = "scripted/demo" { script = "demo.replies.json" }
tool add "Add." {
  params { a: int, b: int }
  run = python("spec_tools:add")
}
agent main { model = demo, tools = [add] }
"""

GOOD = {"main": [{"tool_calls": [{"name": "add", "arguments": {"a": 1, "b": 2}}]}, {"text": "3"}]}


TOOLS = "def add(a, b):\n    return a + b\n"


def _compile(tmp_path, script, spec=SPEC):
    files = {} if script is None else {"demo.replies.json": script if isinstance(script, str) else json.dumps(script)}
    return compile_text(spec, tmp_path, files={"spec_tools.py": TOOLS, **files})


def test_good_script_is_clean(tmp_path):
    clean(_compile(tmp_path, GOOD))


def test_list_script_is_clean(tmp_path):
    clean(_compile(tmp_path, [{"text": "hi", "delay": "5ms"}, {"error": {"kind": "rate_limit"}}]))


def test_missing_script(tmp_path):
    d = only(_compile(tmp_path, None), "P307")
    assert_at(d, SPEC, '"demo.replies.json"')
    assert d.message == "script `demo.replies.json` of model `demo` does not exist"


def test_script_that_is_not_json(tmp_path):
    d = only(_compile(tmp_path, '{"main": [{"text": "hi"},]}'), "P307")
    assert "is not valid JSON" in d.message and "line 1" in d.message


def test_script_nested_too_deeply(tmp_path):
    d = only(_compile(tmp_path, "[" * 100_000), "P307")
    assert "nested too deeply" in d.message


@pytest.mark.parametrize(
    "script, message",
    [
        ('"just text"', "must be a list of replies, or an object"),
        ({"main": [{"txt": "hi"}]}, "`main`[0] has unknown key `txt`; did you mean `text`?"),
        ({"main": ["hi"]}, '`main`[0] is not an object like {"text": "..."}'),
        ({"main": [{"error": {"kind": "boom"}}]}, "`main`[0].error.kind `boom` is not an error kind"),
        (
            {"main": [{"tool_calls": [{"name": "sub", "arguments": {}}]}]},
            "calls `sub`, which is not in the agent's `tools`",
        ),
        ({"main": [{"tool_calls": [{"arguments": {}}]}]}, 'must be an object with a "name"'),
        ({"main": {"text": "hi"}}, "`main` must map to a list of replies"),
        ({"main": [{"text": "hi", "delay": "soon"}]}, '`main`[0].delay `soon` is not a duration like "50ms"'),
        ({"mian": [{"text": "hi"}]}, "has replies for `mian`, which nothing declares; did you mean `main`?"),
    ],
)
def test_script_shape(tmp_path, script, message):
    result = _compile(tmp_path, script)
    assert {d.code for d in result.diagnostics} == {"P307"}
    assert any(message in d.message for d in result.diagnostics), [d.message for d in result.diagnostics]


def test_an_agent_the_run_never_reaches_needs_no_replies(tmp_path):
    # issue 9.12: `spare` calls the scripted model too, but only keys naming no declaration are errors.
    spec = SPEC + 'agent spare "Unused here." { model = demo }\n'
    assert [d.code for d in _compile(tmp_path, GOOD, spec).diagnostics if d.code == "P307"] == []


SIDE_EFFECT = """
from pathlib import Path
Path(__file__).with_name("IMPORTED").write_text("the module was imported")

def add(a, b):
    return a + b
"""


def test_checking_never_imports_a_python_tool_module(tmp_path):
    files = {"spec_tools.py": SIDE_EFFECT, "demo.replies.json": json.dumps(GOOD)}
    result = compile_text(SPEC, tmp_path, files=files)
    clean(result)
    assert not (tmp_path / "IMPORTED").exists()
    # The module is importable: the test would catch an import if one happened.
    assert "spec_tools" not in sys.modules


@pytest.mark.slow
def test_cli_check_never_imports_a_python_tool_module(tmp_path):
    files = {"spec_tools.py": SIDE_EFFECT, "demo.replies.json": json.dumps(GOOD)}
    compile_text(SPEC, tmp_path, files=files)
    done = subprocess.run(
        [sys.executable, "-m", "plait", "check", str(tmp_path / "spec.plait")],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=60,
    )
    assert not (tmp_path / "IMPORTED").exists()
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.slow
def test_the_side_effect_module_does_write_when_imported(tmp_path):
    # Guards the two tests above: if importing did nothing, they could not fail.
    (tmp_path / "spec_tools.py").write_text(SIDE_EFFECT)
    subprocess.run([sys.executable, "-c", "import spec_tools"], cwd=tmp_path, check=True, timeout=60)
    assert (tmp_path / "IMPORTED").exists()


def test_a_replys_server_state_keys_are_known(tmp_path):
    spec = 'model demo = "scripted/demo" { script = "demo.replies.json" }\nagent main { model = demo }\n'
    script = [{"text": "hi", "response_id": "resp_1", "created_at": 1700000000}, {"output": {"verdict": "accept"}}]
    clean(compile_text(spec, tmp_path, files={"demo.replies.json": json.dumps(script)}))
