"""The public API in `src/plait/__init__.py`: compile, parse, format, render, run."""

from __future__ import annotations

import subprocess
import sys

import pytest

import plait

SPEC = 'model m = "scripted/m" { script = "r.json" }\nagent main { model = m, max_steps = 3 }\n'


@pytest.mark.slow
def test_import_plait_loads_no_stage():
    code = "import sys, plait; print(sorted(m for m in sys.modules if m.startswith('plait.')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_render_accepts_a_path_text_or_a_compiled_graph(tmp_path):
    path = tmp_path / "s.plait"
    path.write_text(SPEC)
    (tmp_path / "r.json").write_text('[{"text": "hi"}]')
    from_path = plait.render(path, "mermaid")
    from_result = plait.render(plait.compile(path), "mermaid")
    from_graph = plait.render(plait.compile(path).graph, "mermaid")
    assert from_path == from_result == from_graph
    assert "main" in from_path and "max_steps 3" in from_path
    assert plait.render(path, "dot", direction="TB").startswith("digraph")


def test_render_refuses_a_spec_with_errors():
    with pytest.raises(ValueError, match="undefined name `nope`"):
        plait.render("agent main { model = nope }\n", "dot")


def test_parse_and_format_round_trip():
    module, diagnostics = plait.parse("agent  a{model=m}\n")
    assert diagnostics == [] and module.declarations[0].name.name == "a"
    assert plait.format("agent  a{model=m}\n") == "agent a { model = m }\n"


def test_run_a_spec_end_to_end(tmp_path):
    path = tmp_path / "s.plait"
    path.write_text(SPEC)
    (tmp_path / "r.json").write_text('[{"text": "hello there"}]')
    result = plait.run(path, "hi")
    assert (result.stop_reason, result.output) == ("done", "hello there")


def test_a_python_tool_returns_plaits_own_tool_result(tmp_path):
    """`from plait import ToolResult` is the class the runtime reads: an error result without raising."""
    (tmp_path / "store.py").write_text(
        "from pathlib import Path\nfrom plait import ToolResult\n\n"
        "def save(text):\n"
        "    Path(__file__).with_name('called').write_text(text)\n"
        "    return ToolResult('disk full', is_error=True)\n"
    )
    (tmp_path / "r.json").write_text(
        '[{"tool_calls": [{"name": "save", "arguments": {"text": "hi"}}]}, {"text": "Could not save."}]'
    )
    path = tmp_path / "s.plait"
    path.write_text(
        'model m = "scripted/m" { script = "r.json" }\n'
        'tool save "Save a text." {\n  params { text: string }\n  run = python("store:save")\n}\n'
        "agent main { model = m, tools = [save], max_steps = 3 }\n"
    )
    result = plait.run(path, "save hi")
    [call] = result.report.tool_calls
    assert (call["is_error"], result.output) == (True, "Could not save.")
    assert (tmp_path / "called").read_text() == "hi"  # it ran: the import worked, and its error was reported
