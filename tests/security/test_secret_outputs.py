"""Secret-bearing specs → every output format (check text/json/github/sarif, graph JSON, render dot/mermaid/json/
html/svg, diff text/json/mermaid) shows no run of the secret, and P501 rejects every one of them.

The graph formats are fed the graph the spec builds with P501 bypassed: every output reads the graph through
AgentGraph.protected() (core.redact.protect_record on each record), so it holds even for a secret the check missed.
"""

from __future__ import annotations

import html
import shutil

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from plait.compiler.diff import changes_to_json, changes_to_text, diff_graphs
from plait.compiler.pipeline import compile_spec
from plait.compiler.render import graph_json, render
from plait.compiler.render.diff_mermaid import diff_to_mermaid
from plait.compiler.report import FORMATS as REPORT_FORMATS
from plait.compiler.report import render as report
from plait.core.redact import REDACTED, Secret, reveal_record

from secret_specs import POSITIONS, SHAPES, Shape, compile_anyway, leaks

GRAPH_FORMATS = ("dot", "mermaid", "json", "html")
CASES = [pytest.param(shape, position, id=f"{shape.name}@{position}") for shape in SHAPES for position in POSITIONS]


def _no_leak(output: str | bytes, secret: str, where: str) -> None:
    text = output.decode("utf-8", "replace") if isinstance(output, bytes) else output
    for shown in (text, html.unescape(text)):
        piece = leaks(shown, secret)
        assert piece is None, f"{where} shows `{piece}` of the secret"


def _shift(c: str) -> str:
    for alphabet in ("0123456789", "abcdef", "ghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ"):
        if c in alphabet:
            return alphabet[(alphabet.index(c) + 1) % len(alphabet)]
    return c


def _other(shape: Shape) -> Shape:
    """The same shape with a different secret (a changed key between two versions of a spec)."""
    changed = shape.secret[:-3] + "".join(_shift(c) for c in shape.secret[-3:])
    return Shape(shape.name, shape.written.replace(shape.secret, changed), changed)


@pytest.mark.parametrize(("shape", "position"), CASES)
def test_check_rejects_and_every_format_hides_the_secret(shape, position, tmp_path):
    text = POSITIONS[position](shape.written)
    result = compile_spec(text, path=str(tmp_path / "spec.plait"))
    assert "P501" in {d.code for d in result.diagnostics}, f"P501 missed {shape.name} in {position}"
    for fmt in REPORT_FORMATS:
        _no_leak(report(result.diagnostics, result.sources, fmt), shape.secret, f"check -f {fmt}")

    graph, sources = compile_anyway(text, tmp_path)
    assert graph is not None
    _no_leak(graph_json(graph), shape.secret, "graph --json")
    for fmt in GRAPH_FORMATS:
        _no_leak(render(graph, fmt, sources=sources), shape.secret, f"render -f {fmt}")

    other = _other(shape)
    newer, _ = compile_anyway(POSITIONS[position](other.written), tmp_path)
    changes = diff_graphs(graph, newer)
    for out in (changes_to_text(changes), changes_to_json(changes), diff_to_mermaid(graph, newer, changes)):
        _no_leak(out, shape.secret, "diff")
        _no_leak(out, other.secret, "diff")


def test_a_run_still_gets_the_real_values(tmp_path):
    """Redaction is in the records' text only: the runtime's graph adapter reveals what a request must send."""
    header = "Tr0ub4dor-and-3-" + "x9"
    text = POSITIONS["model-header"](header).replace('"X-Team"', '"X-Api-Key"')
    graph, _ = compile_anyway(text, tmp_path)
    assert graph.node("m").headers["X-Api-Key"] == header  # the built records are plain; outputs read .protected()
    model = graph.protected().node("m")
    assert model.headers["X-Api-Key"] == REDACTED and isinstance(model.headers["X-Api-Key"], Secret)
    assert reveal_record(model).headers["X-Api-Key"] == header
    from plait.runtime.program import program_from_graph

    assert dict(program_from_graph(graph).models["m"].headers)["X-Api-Key"] == header


def test_diff_shows_no_header_value_or_url_password(tmp_path):
    """The issue's case: `plait diff` printed what `graph --json` showed as <redacted>."""
    old = POSITIONS["http-header"]("Bearer " + "Zq8x7WvT6sR5pQ4oN3mL").replace(
        "https://api.example.com/search", "https://bot:first-pass-1@api.example.com/s"
    )
    new = old.replace("Zq8x7WvT6sR5pQ4oN3mL", "Zq8x7WvT6sR5pQ4oN3mK").replace("first-pass-1", "other-pass-2")
    a, _ = compile_anyway(old, tmp_path)
    b, _ = compile_anyway(new, tmp_path)
    out = changes_to_text(diff_graphs(a, b)) + changes_to_json(diff_graphs(a, b))
    for secret in ("Zq8x7WvT6sR5pQ4oN3m", "first-pass-1", "other-pass-2"):
        assert secret not in out


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz is not installed")
@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)
@given(
    shape=st.sampled_from(SHAPES),
    position=st.sampled_from(sorted(POSITIONS)),
    # Text around the secret, parted from it as prose parts words (a key glued to a word is another word).
    before=st.tuples(st.text(alphabet="abc XYZ019-_.:", max_size=12), st.sampled_from(" :/(,=")).map("".join),
    after=st.tuples(st.sampled_from(" ,;)"), st.text(alphabet="abc XYZ019-_.:", max_size=12)).map("".join),
)
def test_any_placement_hides_the_secret_in_svg_and_html(shape, position, before, after, tmp_path_factory):
    folder = tmp_path_factory.mktemp("spec")
    written = shape.written if "://" in shape.written else f"{before}{shape.written}{after}"
    graph, sources = compile_anyway(POSITIONS[position](written), folder)
    for fmt in ("svg", "html", "json"):
        _no_leak(render(graph, fmt, sources=sources), shape.secret, f"render -f {fmt}")
