"""A check lists at most MAX_PROBLEMS diagnostics; P008, last, counts the rest and points at the first left out.

Before the cap a generated spec listing one tool 20,000 times made 20,000 P306 diagnostics (500 bytes of memory
per byte of input, and minutes to print at the size cap).
"""

from __future__ import annotations

import json

import plait
from plait.cli import main
from plait.core.diagnostics import MAX_PROBLEMS, Diagnostic, Findings, Severity
from plait.core.source import Span

HEAD = 'model m = "openai/gpt-4o-mini"\nagent a "A." { model = m }\n'


def _tools(count: int) -> str:
    return HEAD + 'agent b "B." {\n  model = m\n  tools = [' + ", ".join(["a"] * count) + "]\n}\n"


def _problem(code: str, severity: Severity, offset: int) -> Diagnostic:
    return Diagnostic(code, "x", severity, f"problem at {offset}", Span("<string>", 1, 1, 1, 1, offset, offset))


def test_past_the_cap_problems_are_counted_in_one_last_p008():
    extra = 250
    result = plait.compile(_tools(MAX_PROBLEMS + 1 + extra))  # the first `a` is no repeat
    *listed, last = result.diagnostics
    assert [d.code for d in listed] == ["P306"] * MAX_PROBLEMS
    assert last.code == "P008" and last.is_error and not result.ok
    assert last.message == f"{extra} more problems ({extra} errors) found and not listed"
    # It points at the first problem left out: the 1,002nd `a` of the list, one past the last listed.
    assert last.span.offset > listed[-1].span.offset
    assert "the first not listed is here: error[P306] agent `b` lists `a` twice in `tools`" in last.notes[0]


def test_a_spec_at_the_cap_has_no_p008():
    result = plait.compile(_tools(MAX_PROBLEMS + 1))
    assert [d.code for d in result.diagnostics] == ["P306"] * MAX_PROBLEMS


def test_p008_is_a_warning_when_only_warnings_were_left_out(tmp_path):
    # Unused models (P601, a warning) past the cap: the check still passes, as it would with all of them listed.
    models = "".join(f'model m{i} = "openai/gpt-4o-mini"\n' for i in range(MAX_PROBLEMS + 6))  # m0 is used
    path = tmp_path / "spec.plait"
    path.write_text(models + 'agent main "A." { model = m0 }\n')
    result = plait.compile(path)
    assert result.ok and result.graph is not None
    assert result.diagnostics[-1].code == "P008" and result.diagnostics[-1].severity == "warning"
    assert "(5 warnings)" in result.diagnostics[-1].message
    assert main(["check", "--quiet", str(path)]) == 0


def test_check_reports_p008_last_in_json_and_text(tmp_path, capsys):
    path = tmp_path / "spec.plait"
    path.write_text(_tools(MAX_PROBLEMS + 3))
    assert main(["check", "--format", "json", str(path)]) == 1
    found = json.loads(capsys.readouterr().out)["diagnostics"]
    assert len(found) == MAX_PROBLEMS + 1 and found[-1]["code"] == "P008"
    assert main(["check", "--no-color", str(path)]) == 1
    text = capsys.readouterr().out
    assert text.count("error[P306]: ") == MAX_PROBLEMS and "error[P008]: 2 more problems (2 errors)" in text


def test_an_omitted_error_keeps_the_compile_failed_after_warnings_filled_the_cap():
    found = Findings(_problem("P601", Severity.WARNING, i) for i in range(MAX_PROBLEMS))
    found.append(_problem("P101", Severity.ERROR, 5000))
    found.append(_problem("P601", Severity.WARNING, 5001))
    assert len(found) == MAX_PROBLEMS and found.has_errors
    summary = found.left_out()
    assert summary is not None and summary.is_error
    assert summary.message == "2 more problems (1 error, 1 warning) found and not listed"
    assert summary.span.offset == 5000
    # A copy (the compile's, from the loader's) keeps the count.
    assert Findings(found).left_out() == summary


# --- P009: names used more often than a check follows -----------------------------------------------------


def test_past_the_reference_limit_the_check_stops_after_naming(monkeypatch):
    from plait.compiler.passes import resolve_names

    monkeypatch.setattr(resolve_names, "MAX_REFERENCES", 50)
    # 1 model use + 60 chain elements = 61 uses; the 51st (the 50th element) is the first past the limit.
    text = HEAD + "chain c = " + " -> ".join(["a"] * 60) + "\n"
    result = plait.compile(text)
    (found,) = result.diagnostics
    assert found.code == "P009" and found.is_error and result.graph is None
    assert found.message == "the spec uses declared names 61 times; plait checks at most 50"
    assert found.span.offset == text.index("chain c = ") + len("chain c = ") + 49 * len("a -> ")
    # Undefined names are still reported (naming ran to the end); the graph and its checks were skipped.
    broken = plait.compile(text.replace("a -> a\n", "a -> nope\n"))
    assert [d.code for d in broken.diagnostics] == ["P009", "P101"]  # in text order


def test_at_the_reference_limit_the_spec_is_checked(monkeypatch):
    from plait.compiler.passes import resolve_names

    monkeypatch.setattr(resolve_names, "MAX_REFERENCES", 61)
    result = plait.compile(HEAD + "chain c = " + " -> ".join(["a"] * 60) + "\n")
    assert result.ok and result.graph is not None


def test_the_default_reference_limit_leaves_room_for_the_densest_spec_people_write():
    # The front-end benchmark's spec (the groups people write) at the 8 MiB cap uses ~91,000 names.
    import sys
    from pathlib import Path

    from plait.compiler.passes.resolve_names import MAX_REFERENCES

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
    from limits_gen import normal

    text = normal(200_000)
    from plait.compiler.context import CompileContext
    from plait.compiler.pipeline import PASSES
    from plait.dsl.loader import load_text

    loaded = load_text(text, "<string>", None)
    ctx = CompileContext(load=loaded, diagnostics=Findings(loaded.diagnostics))
    for run in PASSES[:2]:  # symbols, names
        run(ctx)
    per_byte = len(ctx.references) / len(text.encode())
    assert per_byte * 8 * 1024 * 1024 * 2 < MAX_REFERENCES
