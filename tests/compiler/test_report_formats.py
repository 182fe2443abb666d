"""One shared list of diagnostics → every report format, checked for shape, escaping and masking."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from plait.core.codes import CODES, make
from plait.compiler.report import FORMATS, render
from plait.compiler.report.github import escape_data, escape_property
from plait.compiler.report.sarif import SARIF_SCHEMA, to_uri
from plait.core.diagnostics import Fix, Label
from plait.core.source import SourceFile

SECRET = "sk-proj-Zx81kQ2mWv7RtY5uPa3LdN9bC4eF6gH0jK"
SPEC = (
    'model fast = "openai/gpt-4o-mini"\n'
    "agent main {\n"
    "\tmodel = fsat\n"
    f'  api_key = "{SECRET}"\n'
    '  system = """\n'
    "    You write.\n"
    '  """\n'
    "}\n"
)
OTHER = "agent main { model = fast }\n"


def _at(source: SourceFile, needle: str, occurrence: int = 0):
    start = -1
    for _ in range(occurrence + 1):
        start = source.text.index(needle, start + 1)
    return source.span(start, start + len(needle))


@pytest.fixture
def report():
    spec = SourceFile("spec.plait", SPEC)
    other = SourceFile("lib/other.plait", OTHER)
    secret_span = _at(spec, f'"{SECRET}"')
    diagnostics = [
        make(
            "P101",
            "undefined name `fsat`",
            _at(spec, "fsat"),
            notes=["`model` takes a model"],
            fix=Fix("did you mean `fast`?", _at(spec, "fsat"), "fast"),
        ),
        make(
            "P102",
            "`main` is declared twice",
            _at(spec, "main"),
            labels=[Label(_at(spec, "fast"), "a model of that file"), Label(_at(other, "main"), "first declared here")],
        ),
        make(
            "P501",
            f"literal secret `{SECRET}`",
            secret_span,
            redact=(secret_span,),
            fix=Fix("use env()", secret_span, SECRET),
        ),
        make("P201", "unknown attribute `api_key` for agent `main`", _at(spec, "api_key")),
        make("P203", "`system` must be a number, found a string", _at(spec, '"""\n    You write.\n  """')),
        make("P601", "model `fast` is never used", _at(spec, "fast")),
    ]
    return diagnostics, {"spec.plait": spec, "lib/other.plait": other}


# --- text ---------------------------------------------------------------------------------


def test_text_header_location_snippet_and_help(report):
    out = render(*report)
    assert out.startswith(
        "error[P101]: undefined name `fsat`\n"
        " --> spec.plait:3:10\n"
        "  |\n"
        "3 |     model = fsat\n"  # the tab is shown as four spaces ...
        "  |             ^^^^\n"  # ... and the carets still sit under `fsat`
        "  |\n"
        "  = note: `model` takes a model\n"
        "help: did you mean `fast`?\n"
    )


def test_text_labels_same_file_join_the_snippet_other_files_get_their_own(report):
    out = render(*report)
    block = out.split("\n\n")[1]
    assert block == (
        "error[P102]: `main` is declared twice\n"
        " --> spec.plait:2:7\n"
        "  |\n"
        '1 | model fast = "openai/gpt-4o-mini"\n'
        "  |       ---- a model of that file\n"
        "2 | agent main {\n"
        "  |       ^^^^\n"
        " ::: lib/other.plait:1:7\n"
        "  |\n"
        "1 | agent main { model = fast }\n"
        "  |       ---- first declared here"
    )


def test_text_multiline_span_shows_first_line_then_ellipsis(report):
    block = render(*report).split("\n\n")[4]
    assert block.splitlines()[3:6] == ['5 |   system = """', "  |            ^^^", "..."]


def test_text_summary_counts_errors_warnings_and_files(report):
    assert render(*report).endswith("\nFound 5 errors and 1 warning in 1 file.\n")
    assert render(report[0][-1:], report[1]).endswith("\nFound 1 warning in 1 file.\n")
    assert render([], report[1]) == "No problems found in 2 files.\n"
    assert "Found" not in render(*report, summary=False)


def test_text_colour_only_when_asked(report):
    assert "\x1b[" not in render(*report)
    coloured = render(*report, color=True)
    assert "\x1b[1;31merror[P101]\x1b[0m" in coloured and "\x1b[1;33mwarning[P601]\x1b[0m" in coloured


def test_text_file_without_source_shows_the_path_only():
    d = make("P005", "no such file `gone.plait`", SourceFile("gone.plait", "").span(0, 0))
    assert render([d], {}) == "error[P005]: no such file `gone.plait`\n --> gone.plait\n\nFound 1 error in 1 file.\n"


def test_text_long_line_is_windowed_around_the_span():
    text = "x = " + "a" * 1_000_000 + " fsat " + "b" * 1000
    source = SourceFile("long.plait", text)
    start = text.index("fsat")
    d = make("P101", "undefined name `fsat`", source.span(start, start + 4))
    began = time.perf_counter()
    out = render([d], {"long.plait": source})
    assert time.perf_counter() - began < 1.0
    assert max(len(line) for line in out.splitlines()) < 250
    shown, carets = out.splitlines()[3:5]
    assert shown.index("fsat") == carets.index("^^^^") and "…" in shown


def test_text_control_and_bidi_characters_cannot_reach_the_terminal():
    text = 'agent a { system = "\x1b[2J\u202eevil" , modle = x }'
    source = SourceFile("t.plait", text)
    start = text.index("modle")
    d = make("P201", "unknown attribute `mod\x1ble`", source.span(start, start + 5))
    out = render([d], {"t.plait": source})
    assert "\x1b" not in out and "\u202e" not in out
    shown, carets = out.splitlines()[3:5]
    assert shown.index("modle") == carets.index("^^^^^")


def test_text_wide_characters_keep_carets_aligned():
    text = 'agent a { system = "日本語", modle = x }'
    source = SourceFile("w.plait", text)
    start = text.index("modle")
    out = render([make("P201", "unknown attribute `modle`", source.span(start, start + 5))], {"w.plait": source})
    shown, carets = out.splitlines()[3:5]
    # Each of the three wide characters takes two columns: the carets move three further right.
    assert carets.index("^") == shown.index("modle") + 3


# --- json ---------------------------------------------------------------------------------


def test_json_shape_and_key_order(report):
    doc = json.loads(render(*report, "json"))
    assert list(doc) == ["diagnostics", "summary"]
    first = doc["diagnostics"][0]
    assert list(first) == [
        "code",
        "name",
        "severity",
        "message",
        "file",
        "line",
        "column",
        "end_line",
        "end_column",
        "labels",
        "notes",
        "fix",
    ]
    assert first["fix"] == {
        "message": "did you mean `fast`?",
        "replacement": "fast",
        "file": "spec.plait",
        "line": 3,
        "column": 10,
        "end_line": 3,
        "end_column": 14,
    }
    assert doc["diagnostics"][1]["labels"][1] == {
        "message": "first declared here",
        "file": "lib/other.plait",
        "line": 1,
        "column": 7,
        "end_line": 1,
        "end_column": 11,
    }
    assert doc["diagnostics"][3]["fix"] is None
    assert doc["summary"] == {"errors": 5, "warnings": 1, "files": 2, "files_with_problems": 1, "checked": 2}


# --- github -------------------------------------------------------------------------------


def test_github_escaping_rules():
    assert escape_data("100% done\r\nnext") == "100%25 done%0D%0Anext"
    assert escape_property("a,b:c%\n") == "a%2Cb%3Ac%25%0A"


def test_github_annotation_lines(report):
    lines = render(*report, "github").splitlines()
    assert lines[0] == (
        "::error file=spec.plait,line=3,col=10,endLine=3,endColumn=14,title=P101 undefined-name::"
        "undefined name `fsat`%0Anote: `model` takes a model%0Ahelp: did you mean `fast`?"
    )
    assert lines[4].startswith("::error file=spec.plait,line=5,endLine=7,title=P203 wrong-type::")
    assert lines[5].startswith("::warning ")


def test_github_escapes_file_names_and_messages():
    source = SourceFile("dir,a:b.plait", "agent a {}\n")
    d = make("P202", "50% of `a`:\nmissing, model", source.span(6, 7))
    line = render([d], {source.path: source}, "github")
    assert line == (
        "::error file=dir%2Ca%3Ab.plait,line=1,col=7,endLine=1,endColumn=8,title=P202 missing-attribute::"
        "50%25 of `a`:%0Amissing, model\n"
    )


# --- sarif --------------------------------------------------------------------------------


def test_sarif_structure(report):
    log = json.loads(render(*report, "sarif"))
    assert log["version"] == "2.1.0" and log["$schema"] == SARIF_SCHEMA
    run = log["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    assert run["tool"]["driver"]["name"] == "plait"
    assert [r["id"] for r in rules] == list(CODES)
    for rule in rules:
        assert rule["name"] == CODES[rule["id"]].name
        assert rule["shortDescription"]["text"] and rule["fullDescription"]["text"] and rule["help"]["text"]
        assert rule["defaultConfiguration"]["level"] in ("error", "warning", "note")
    assert run["columnKind"] == "unicodeCodePoints"
    results = run["results"]
    assert [r["ruleId"] for r in results] == ["P101", "P102", "P501", "P201", "P203", "P601"]
    for result in results:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
        assert result["message"]["text"]
    assert results[5]["level"] == "warning" and results[0]["level"] == "error"
    location = results[0]["locations"][0]["physicalLocation"]
    assert location == {
        "artifactLocation": {"uri": "spec.plait", "uriBaseId": "%SRCROOT%"},
        "region": {"startLine": 3, "startColumn": 10, "endLine": 3, "endColumn": 14},
    }
    related = results[1]["relatedLocations"]
    assert related[1]["physicalLocation"]["artifactLocation"]["uri"] == "lib/other.plait"
    assert related[1]["message"]["text"] == "first declared here" and related[1]["id"] == 2
    fix = results[0]["fixes"][0]["artifactChanges"][0]["replacements"][0]
    assert fix["insertedContent"]["text"] == "fast" and fix["deletedRegion"]["startColumn"] == 10


def test_sarif_uris_are_relative_inside_the_working_directory(tmp_path):
    assert to_uri("specs/a b.plait", tmp_path) == ("specs/a%20b.plait", "%SRCROOT%")
    assert to_uri(str(tmp_path / "x" / "y.plait"), tmp_path) == ("x/y.plait", "%SRCROOT%")
    outside = Path("/elsewhere/z.plait")
    assert to_uri(str(outside), tmp_path) == ("file:///elsewhere/z.plait", None)


# --- secrets, in every format -------------------------------------------------------------


@pytest.mark.parametrize("fmt", FORMATS)
def test_secret_never_echoed_in_full(report, fmt):
    out = render(*report, fmt)
    assert SECRET not in out
    assert SECRET[8:20] not in out  # not even a long piece of it
    assert "sk-p…" in out


@pytest.mark.parametrize("fmt", FORMATS)
def test_secret_looking_text_masked_without_a_redact_span(fmt):
    token = "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    source = SourceFile("s.plait", f'agent a {{ system = "use {token}", modle = x }}\n')
    start = source.text.index("modle")
    d = make("P201", f"unknown attribute near {token}", source.span(start, start + 5), notes=[token])
    out = render([d], {"s.plait": source}, fmt)
    assert token not in out and token[4:] not in out


def test_text_after_a_closing_backtick_is_not_read_as_a_long_quote():
    from plait.core.codes import make
    from plait.compiler.report.mask import Redactor
    from plait.core.source import Span

    message = "script `r.json` of model `m` is not valid JSON: Expecting value: line 1 column 1 (char 0)"
    diagnostic = make("P307", message, Span("s.plait", 1, 1, 1, 2, 0, 1))
    assert Redactor(diagnostic, {}).text(message) == message
    long_name = "x" * 200
    shortened = Redactor(diagnostic, {}).text(f"undefined name `{long_name}` here")
    assert shortened == f"undefined name `{'x' * 60}…` here"
