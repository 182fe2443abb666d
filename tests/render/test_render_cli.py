"""`plait render` and `plait graph` on the command line: formats, outputs, exit codes, bad input."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from render_helpers import FIXTURES, ROOT, compiled, graph

from plait.cli import main
from plait.compiler.render import render

LANGUAGE = str(FIXTURES / "language.plait")


def plait(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "plait.cli", *args], capture_output=True, cwd=ROOT, env=env, check=False
    )


def test_no_output_writes_dot_to_stdout(capsysbinary):
    assert main(["render", LANGUAGE]) == 0
    assert capsysbinary.readouterr().out.decode() == render(graph("language"), "dot")


@pytest.mark.parametrize(
    "name,check",
    [
        ("out.mmd", lambda b: b.startswith(b"flowchart ")),
        ("out.dot", lambda b: b.startswith(b"digraph plait")),
        ("out.json", lambda b: json.loads(b)["entry"] == "main"),
        ("out.svg", lambda b: b"<svg" in b),
        ("out.png", lambda b: b.startswith(b"\x89PNG")),
        ("out.pdf", lambda b: b.startswith(b"%PDF")),
        ("out.html", lambda b: b.startswith(b"<!DOCTYPE html>") and b"<svg" in b),
    ],
)
def test_format_follows_the_extension(tmp_path, name, check):
    out = tmp_path / name
    assert main(["render", LANGUAGE, "-o", str(out)]) == 0
    assert check(out.read_bytes())


def test_explicit_format_wins_over_extension(tmp_path):
    out = tmp_path / "picture.txt"
    assert main(["render", LANGUAGE, "-o", str(out), "--format", "mermaid"]) == 0
    assert out.read_text().startswith("flowchart")


def test_unknown_extension_is_a_usage_error(tmp_path, capsys):
    assert main(["render", LANGUAGE, "-o", str(tmp_path / "x.bmp")]) == 2
    assert "cannot tell the format" in capsys.readouterr().err


def test_binary_to_a_terminal_is_refused(monkeypatch, capsys):
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    assert main(["render", LANGUAGE, "--format", "png"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "pass -o FILE" in err


@pytest.mark.slow
def test_binary_to_a_pipe_is_written():
    done = plait("render", LANGUAGE, "--format", "png")
    assert done.returncode == 0 and done.stdout.startswith(b"\x89PNG")


FOLDABLE = """
model fast = "openai/gpt-4o-mini"

tool lookup "Look a word up." {
  params { word: string }
  run = http(GET, "https://example.com/{{word}}")
}

agent helper { model = fast, tools = [lookup] }
"""


def test_models_and_tools_are_folded_by_default_and_hide_none_draws_them(tmp_path, capsys):
    """What a user types: the default folds the model and tool into the agent's label, `--hide none` draws them."""
    spec = tmp_path / "fold.plait"
    spec.write_text(FOLDABLE)
    assert main(["render", str(spec), "--format", "mermaid"]) == 0
    folded = capsys.readouterr().out
    assert "n_fast" not in folded and "n_lookup" not in folded and "-.->" not in folded
    assert "model fast (openai/gpt-4o-mini)" in folded and "tools lookup" in folded
    assert main(["render", str(spec), "--format", "mermaid", "--hide", "none"]) == 0
    drawn = capsys.readouterr().out
    assert "n_fast" in drawn and "n_lookup" in drawn and "n_helper -.-> n_fast" in drawn
    assert main(["render", str(spec), "--format", "mermaid", "--hide", "tools"]) == 0
    only_tools = capsys.readouterr().out
    assert "n_fast" in only_tools and "n_lookup" not in only_tools


@pytest.mark.slow
def test_spec_with_errors_renders_nothing(tmp_path):
    spec = tmp_path / "bad.plait"
    spec.write_text("agent a { model = nope }\n")
    out = tmp_path / "bad.svg"
    done = plait("render", str(spec), "-o", str(out))
    assert done.returncode == 1
    assert not out.exists() and done.stdout == b""
    assert b"undefined name `nope`" in done.stderr


@pytest.mark.slow
def test_unknown_entry_is_one_line_listing_names(tmp_path):
    out = tmp_path / "x.dot"
    done = plait("render", LANGUAGE, "--entry", "wirter", "-o", str(out))
    assert done.returncode == 2 and not out.exists()
    assert done.stderr.decode() == (
        "plait render: unknown entry `wirter`; expected one of: "
        "researcher, writer, translate, analyst_a, analyst_b, verdict, main, summary\n"
    )


def test_unknown_expand_is_one_line(capsys):
    assert main(["render", LANGUAGE, "--expand", "writer", "translate"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unknown agent to expand `translate`" in err


def _without_dot(tmp_path: Path) -> dict:
    """An environment whose PATH has python but no Graphviz."""
    bin = tmp_path / "bin"
    bin.mkdir()
    (bin / "python").symlink_to(sys.executable)
    return {**os.environ, "PATH": str(bin)}


@pytest.mark.slow
def test_missing_dot_is_one_line_saying_how_to_install(tmp_path):
    out = tmp_path / "x.svg"
    done = plait("render", LANGUAGE, "-o", str(out), env=_without_dot(tmp_path))
    err = done.stderr.decode()
    assert done.returncode == 2 and not out.exists()
    assert err.count("\n") == 1 and "install Graphviz" in err and "--format dot|mermaid|json" in err


@pytest.mark.slow
@pytest.mark.parametrize("format", ["dot", "mermaid", "json"])
def test_text_formats_work_without_dot(tmp_path, format):
    done = plait("render", LANGUAGE, "--format", format, env=_without_dot(tmp_path))
    assert done.returncode == 0
    assert done.stdout.decode() == render(graph("language"), format)


@pytest.mark.slow
def test_html_without_dot_says_so_on_the_page_and_on_stderr_and_exits_2(tmp_path):
    out = tmp_path / "x.html"
    done = plait("render", LANGUAGE, "-o", str(out), env=_without_dot(tmp_path))
    err = done.stderr.decode()
    assert done.returncode == 2
    assert err.count("\n") == 1 and "the HTML picture needs Graphviz" in err and "install Graphviz" in err
    page = out.read_text()
    # The page is written, says plainly what is missing, and shows no Mermaid source in the picture's place.
    assert "No picture: the HTML picture needs Graphviz" in page and "<svg" not in page and "flowchart" not in page
    assert 'id="f0-L38" data-n="38">agent writer {</span>' in page


def test_html_without_dot_in_process_writes_the_page_and_exits_2(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PATH", str(tmp_path))  # no `dot` anywhere on it
    out = tmp_path / "x.html"
    assert main(["render", LANGUAGE, "-o", str(out)]) == 2
    assert "the HTML picture needs Graphviz" in capsys.readouterr().err
    assert "No picture: the HTML picture needs Graphviz" in out.read_text()


def test_html_picture_fits_the_window_and_zooms_and_pans_without_a_network(tmp_path):
    out = tmp_path / "x.html"
    assert main(["render", LANGUAGE, "-o", str(out)]) == 0
    page = out.read_text()
    root = page.split('<div id="canvas">', 1)[1].split(">", 1)[0]
    # The SVG root keeps its viewBox but loses its fixed size, so CSS scales it to the canvas (fit to the window).
    assert root.startswith("<svg") and "viewBox=" in root and 'preserveAspectRatio="xMidYMid meet"' in root
    assert " width=" not in root and " height=" not in root
    assert "#canvas svg{width:100%;height:100%" in page
    for control in ("fit", "in", "out", "actual"):
        assert f'data-zoom="{control}"' in page
    assert "addEventListener('wheel'" in page and "addEventListener('pointermove'" in page
    assert "http://" not in page.split("<svg", 1)[0] and "https://" not in page.split("<svg", 1)[0]


def test_html_is_self_contained_with_source_and_click_map(tmp_path):
    out = tmp_path / "x.html"
    assert main(["render", LANGUAGE, "-o", str(out)]) == 0
    page = out.read_text()
    assert "<script src" not in page and "<link" not in page and "@import" not in page
    assert 'id="plait:writer"' in page  # the SVG node the click handler finds
    spans = json.loads(page.split('<script type="application/json" id="spans">')[1].split("</script>")[0])
    assert spans["writer"] == [0, 38, 47] and spans["main/parallel#1"] == [0, 64, 64]
    assert 'id="f0-L38" data-n="38">agent writer {</span>' in page


def test_graph_json_prints_the_documented_json(capsys):
    assert main(["graph", LANGUAGE, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data == graph("language").to_json()
    assert [n["id"] for n in data["nodes"]][:3] == ["fast", "strong", "judge"]
    assert data["nodes"][0]["span"] == {
        "file": "language.plait",
        "line": 3,
        "column": 7,
        "end_line": 3,
        "end_column": 11,
    }


def test_graph_of_a_broken_spec_exits_1(tmp_path, capsys):
    spec = tmp_path / "bad.plait"
    spec.write_text("agent a {\n")
    assert main(["graph", str(spec)]) == 1
    assert capsys.readouterr().out == ""


@pytest.mark.slow
def test_render_never_imports_user_code(tmp_path):
    # The function exists (the static module check reads the file), but importing the module would exit.
    (tmp_path / "evil.py").write_text("raise SystemExit('imported!')\n\n\ndef go():\n    pass\n")
    spec = tmp_path / "s.plait"
    spec.write_text(
        'model m = "openai/gpt-4o"\ntool t "x" { run = python("evil:go") }\nagent a { model = m, tools = [t] }\n'
    )
    for format in ("dot", "json", "html"):
        done = plait("render", str(spec), "--format", format)
        assert done.returncode == 0 and b"imported!" not in done.stderr


_DOM = """
const els = {}; const lit = new Set();
function el(id){ return els[id] = els[id] || {id, classList: {add(){ lit.add(id) }, remove(){ lit.delete(id) }},
                                              scrollIntoView(){}, addEventListener(){}}; }
const document = {
  getElementById(id){ return id === 'spans' ? {textContent: SPANS} : (/^(f\\d+-L|plait:)/.test(id) ? el(id) : null); },
  querySelectorAll(sel){ return sel === '.hl' ? [...lit].map(el) : []; },
};
"""


@pytest.mark.slow
def test_html_click_highlights_the_declaration_lines(tmp_path):
    """The page's script, run by node against a minimal DOM: showing a node lights its lines and only those."""
    import shutil

    if shutil.which("node") is None:
        pytest.skip("node is not installed")
    page = render(graph("language"), "html", sources=compiled(Path(LANGUAGE)).sources)
    spans = page.split('<script type="application/json" id="spans">')[1].split("</script>")[0]
    script = page.split("<script>")[1].split("</script>")[0]
    test = f"const SPANS = {json.dumps(spans)};\n{_DOM}\n{script}\n"
    test += "show('writer'); console.log([...lit].sort().join(' ')); show('summary'); console.log([...lit].sort().join(' '));"
    (tmp_path / "t.js").write_text(test)
    done = subprocess.run(["node", str(tmp_path / "t.js")], capture_output=True, text=True, check=True)
    writer, summary = done.stdout.splitlines()
    assert writer.split() == sorted([f"f0-L{n}" for n in range(38, 48)] + ["plait:writer"])
    assert summary.split() == sorted([f"f0-L{n}" for n in range(66, 70)] + ["plait:summary"])


@pytest.mark.slow
def test_graph_json_and_render_json_are_the_same_bytes():
    graph_out = plait("graph", LANGUAGE, "--json")
    render_out = plait("render", LANGUAGE, "--format", "json")
    assert graph_out.returncode == render_out.returncode == 0
    assert graph_out.stdout == render_out.stdout and graph_out.stdout.endswith(b"}\n")


_CANVAS = """
const handlers = {};
const rect = {left: 40, top: 30, width: 800, height: 500};
const svgEl = {box: VIEWBOX, getAttribute(){ return this.box }, setAttribute(_, v){ this.box = v }};
const canvasEl = {getBoundingClientRect(){ return rect }, querySelector(){ return svgEl },
                  addEventListener(type, f){ handlers['canvas:' + type] = f }, classList: {add(){}, remove(){}}};
const window = {addEventListener(type, f){ handlers['window:' + type] = f }};
const document = {
  getElementById(id){ return id === 'spans' ? {textContent: '{}'} : id === 'canvas' ? canvasEl : null; },
  querySelectorAll(){ return []; },
};
// Where a screen point lands in the drawing, as a browser maps an SVG with preserveAspectRatio="xMidYMid meet".
function drawingPoint(cx, cy){
  const [x, y, w, h] = svgEl.box.split(' ').map(Number);
  const s = Math.min(rect.width / w, rect.height / h);
  const ox = (rect.width - w * s) / 2, oy = (rect.height - h * s) / 2;
  return [x + (cx - rect.left - ox) / s, y + (cy - rect.top - oy) / s];
}
"""


@pytest.mark.slow
@pytest.mark.parametrize("viewbox", ["0.00 0.00 1031.00 300.00", "0.00 0.00 300.00 1012.00"])
def test_html_wheel_zoom_keeps_the_point_under_the_cursor_and_fit_fills_the_pane(tmp_path, viewbox):
    """The page's script under node: the box takes the pane's shape, so nothing is letterboxed and zoom does not drift."""
    import shutil

    if shutil.which("node") is None:
        pytest.skip("node is not installed")
    page = render(graph("language"), "html", sources=compiled(Path(LANGUAGE)).sources)
    script = page.split("<script>")[1].split("</script>")[0]
    test = f"const VIEWBOX = {json.dumps(viewbox)};\n{_CANVAS}\n{script}\n"
    test += """
const [bx, by, bw, bh] = svgEl.box.split(' ').map(Number);
console.log(JSON.stringify({aspect: bw / bh}));
const cursor = [40 + 700, 30 + 60];
const before = drawingPoint(...cursor);
for (const deltaY of [-1, -1, -1, 1]) handlers['canvas:wheel']({preventDefault(){}, deltaY, clientX: cursor[0], clientY: cursor[1]});
console.log(JSON.stringify({before, after: drawingPoint(...cursor)}));
"""
    (tmp_path / "t.js").write_text(test)
    done = subprocess.run(["node", str(tmp_path / "t.js")], capture_output=True, text=True, check=True)
    fitted, zoomed = (json.loads(line) for line in done.stdout.splitlines())
    # Fit gives the box the canvas's shape (800 x 500): the drawing fills the pane in its longer direction.
    assert fitted["aspect"] == pytest.approx(800 / 500)
    assert zoomed["after"] == pytest.approx(zoomed["before"], abs=1e-6)
