"""`plait trace` of a code step (`run = python(...)`) shows what it returned, as it does for a tool call."""

from __future__ import annotations

import json

from plait.cli import main

SPEC = """
step shout "Upper-case the input." {
  run = python("trace_code_tools:shout")
}
"""


def test_a_code_step_traces_its_result_not_null(tmp_path, capsys):
    (tmp_path / "spec.plait").write_text(SPEC)
    (tmp_path / "trace_code_tools.py").write_text("def shout(input):\n    return input.upper() + '!'\n")
    assert main(["run", str(tmp_path / "spec.plait"), "--input", "hello"]) == 0
    capsys.readouterr()
    assert main(["runs", "--json", "--dir", str(tmp_path)]) == 0
    run_id = json.loads(capsys.readouterr().out.splitlines()[0])["id"]

    assert main(["trace", run_id, "--json", "--dir", str(tmp_path)]) == 0
    step = next(i for i in json.loads(capsys.readouterr().out)["timeline"] if i["kind"] == "tool_call")
    assert step["status"] == "ok" and step["result"] == "HELLO!"

    assert main(["trace", run_id, "--dir", str(tmp_path)]) == 0
    text = capsys.readouterr().out
    assert "code step shout ok" in text and "→ HELLO!" in text and "(null)" not in text
