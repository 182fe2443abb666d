"""A slip is reported as its cause first: what follows from it is folded under it, and common slips say the fix."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from checks_helpers import compile_text, only

import plait
from plait.compiler.report import render as render_diagnostics
from plait.core.source import SourceFile

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _copy(example: str, tmp_path: Path) -> Path:
    shutil.copytree(EXAMPLES / example, tmp_path / example, ignore=shutil.ignore_patterns(".plait"))
    return tmp_path / example / f"{example}.plait"


def test_a_tool_name_typo_is_reported_before_what_follows_from_it(tmp_path):
    spec = _copy("briefing", tmp_path)
    spec.write_text(spec.read_text().replace("tools     = [lookup, get_time]", "tools     = [lookpu, get_time]"))
    result = plait.compile(spec)
    first = result.diagnostics[0]
    assert (first.code, first.message) == ("P101", "undefined name `lookpu`")
    # The replies file's calls of `lookup` (on three models' lines) and `lookup` unused all follow from the typo.
    followers = result.diagnostics[1:]
    assert sorted(d.code for d in followers) == ["P307", "P307", "P307", "P601"]
    assert all(d.follows == ("P101", first.span) for d in followers)
    text = render_diagnostics(result.diagnostics, result.sources, "text")
    assert text.index("undefined name `lookpu`") < text.index("calls `lookup`")
    assert "= note: 4 more problems follow from this one; fix it first:" in text
    # Folded: one line each under the cause, not a snippet of their own; the summary still counts them.
    assert text.count(" --> ") == 1 and "Found 4 errors and 1 warning in 1 file." in text
    listed = json.loads(render_diagnostics(result.diagnostics, result.sources, "json"))["diagnostics"]
    assert [d.get("follows", {}).get("code") for d in listed] == [None, "P101", "P101", "P101", "P101"]


def test_a_runnable_that_lost_its_place_reports_that_and_folds_its_template_errors(tmp_path):
    spec = _copy("triage", tmp_path)
    spec.write_text(spec.read_text().replace("  else      -> sales\n", ""))
    result = plait.compile(spec)
    unused, template = [d for d in result.diagnostics if d.code in ("P601", "P402")]
    assert unused.message == "step `sales` is never used" and template.follows == ("P601", unused.span)
    text = render_diagnostics(result.diagnostics, result.sources, "text")
    assert "error[P402] " in text and "error[P402]:" not in text  # folded under the unused step
    assert 'route `triage` has no case for "sales"' in text


def test_a_route_that_lost_its_else_is_the_root_and_the_handler_it_left_unused_follows(tmp_path):
    """Removing `else -> sales`: the route's missing case is the cause, listed first; `sales` unused and its
    template error (which follows from that) are folded under it."""
    spec = _copy("triage", tmp_path)
    spec.write_text(spec.read_text().replace("  else      -> sales\n", ""))
    result = plait.compile(spec)
    root, unused, template = result.diagnostics
    assert (root.code, unused.code, template.code) == ("P310", "P601", "P402")
    assert unused.follows == ("P310", root.span) and template.follows == ("P601", unused.span)
    text = render_diagnostics(result.diagnostics, result.sources, "text")
    assert text.startswith('error[P310]: route `triage` has no case for "sales"')
    assert "= note: 2 more problems follow from this one; fix it first:" in text and text.count(" --> ") == 1
    assert "Found 2 errors and 1 warning in 1 file." in text


def test_a_route_missing_a_case_does_not_claim_an_unrelated_unused_runnable(tmp_path):
    spec = _copy("triage", tmp_path)
    text = spec.read_text().replace("  else      -> sales\n", "")
    spec.write_text(text.replace("step sales ", "step leads "))
    result = plait.compile(spec)
    unused = next(d for d in result.diagnostics if d.code == "P601")
    assert unused.follows is None and result.diagnostics[0].code != "P310"


def test_an_unrelated_error_in_the_same_declaration_is_not_folded(tmp_path):
    result = compile_text(
        """
        model fast = "openai/gpt-4o-mini"
        agent writer {
          model     = fsat
          max_stepz = 4
        }
        """,
        tmp_path,
    )
    assert only(result, "P201").follows is None
    assert only(result, "P601").follows == ("P101", only(result, "P101").span)


def test_a_follower_whose_cause_is_filtered_out_is_shown_whole(tmp_path):
    spec = _copy("briefing", tmp_path)
    spec.write_text(spec.read_text().replace("tools     = [lookup, get_time]", "tools     = [lookpu, get_time]"))
    result = plait.compile(spec)
    rest = [d for d in result.diagnostics if d.code != "P101"]
    text = render_diagnostics(rest, result.sources, "text")
    assert text.count(" --> ") == 4 and "error[P307]:" in text


@pytest.mark.parametrize(
    "written,right",
    [("5sec", "5s"), ("30 seconds", "30s"), ("2mins", "2m"), ("1.5 hours", "1.5h"), ("250msec", "250ms")],
)
def test_a_duration_spelled_out_says_how_plait_writes_it(written, right):
    text = f'model m = "openai/gpt-4o" {{ timeout = {written} }}\n'
    diagnostic = only(plait.compile(text, path="x.plait"), "P001")
    assert diagnostic.message == f"`{written}` is not a duration: durations are written with ms, s, m or h"
    source = SourceFile("x.plait", text)
    assert source.text[diagnostic.span.offset : diagnostic.span.end_offset] == written
    assert diagnostic.fix is not None and diagnostic.fix.message == f"write `{right}`"
    assert diagnostic.fix.replacement == right
    assert diagnostic.labels == ()  # nothing beside the fix: not the `{` the slip happens to sit in


def test_a_fat_arrow_says_to_write_the_plait_arrow():
    text = 'model m = "openai/gpt-4o"\nstep a { model = m, prompt = "x" }\nstep b { model = m, prompt = "x" }\nchain main = a => b\n'
    diagnostic = only(plait.compile(text, path="x.plait"), "P001")
    assert diagnostic.message == "`=>` is not an arrow in plait"
    assert diagnostic.fix is not None and diagnostic.fix.replacement == "->"
    assert (diagnostic.span.line, diagnostic.span.column, diagnostic.span.end_column) == (4, 16, 18)
    assert diagnostic.labels == ()


def test_check_fix_rewrites_a_spelled_out_duration(tmp_path):
    from plait.cli import main

    spec = tmp_path / "s.plait"
    spec.write_text('model m = "openai/gpt-4o" { timeout = 15sec }\nstep a { model = m, prompt = "x" }\n')
    main(["check", "--fix", str(spec)])
    assert "timeout = 15s }" in spec.read_text()
    assert plait.compile(spec).ok


def test_a_route_on_a_bare_field_suggests_the_input_path():
    text = (
        "plait 0.2\n"
        'model m = "openai/gpt-4o"\n'
        'step c { model = m, prompt = "x"\n  output { category: "a" | "b" } }\n'
        'step a { model = m, prompt = "x" }\n'
        'step b { model = m, prompt = "x" }\n'
        'route r on category {\n  "a" -> a\n  "b" -> b\n}\n'
        "chain main = c -> r\n"
    )
    diagnostic = only(plait.compile(text, path="x.plait"), "P401")
    assert diagnostic.fix is not None and diagnostic.fix.message == "did you mean `input.category`?"
    # Named as the user wrote it: a route's subject is a bare path, not a `{{...}}` template.
    assert diagnostic.message == "`category` does not resolve in route `r`"
