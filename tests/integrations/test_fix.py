"""`plait check --fix` and `--diff`: the fixes diagnostics carry, applied without overlap, atomically, and reported."""

from __future__ import annotations

import os

from plait.compiler.fixes import Edit, apply, plan
from plait.core.codes import make
from plait.core.diagnostics import Fix
from plait.core.source import SourceFile

TYPOS = 'model fast = "openai/gpt-4o-mini"\nagent main {\n  model = fsat\n  max_stepz = 3\n}\n'
FIXED = 'model fast = "openai/gpt-4o-mini"\nagent main {\n  model = fast\n  max_steps = 3\n}\n'


def test_fix_rewrites_the_file_says_what_changed_and_reports_what_is_left(project, check):
    path = project("spec.plait", TYPOS)
    status, out, err = check("spec.plait", "--fix")
    assert path.read_text() == FIXED
    assert "fixed spec.plait:3:11: P101 `fsat` → `fast`" in err
    assert "fixed spec.plait:4:3: P201 `max_stepz` → `max_steps`" in err
    assert "2 fixes applied in 1 file" in err
    assert status == 0 and "No problems found" in out  # the report is of the fixed file


def test_fix_keeps_problems_without_an_edit_and_exits_by_them(project, check):
    path = project("spec.plait", TYPOS + "agent other { model = nothing_like_it }\n")
    status, out, _ = check("spec.plait", "--fix")
    assert "model = fast" in path.read_text()
    assert status == 1 and "error[P101]: undefined name `nothing_like_it`" in out


def test_diff_shows_the_fixes_and_writes_nothing(project, check):
    path = project("spec.plait", TYPOS)
    status, out, err = check("spec.plait", "--diff")
    assert path.read_text() == TYPOS
    assert status == 1
    assert "--- a/spec.plait\n+++ b/spec.plait\n" in out
    assert "-  model = fsat\n-  max_stepz = 3\n+  model = fast\n+  max_steps = 3\n" in out
    assert "2 fixes would change 1 file" in err


def test_diff_with_nothing_to_fix_exits_0(project, check):
    project("spec.plait", FIXED)
    status, out, err = check("spec.plait", "--diff")
    assert (status, out) == (0, "") and "0 fixes would change 0 files" in err


def test_fix_removes_an_idle_suppression(project, check):
    path = project(
        "spec.plait", 'model fast = "openai/gpt-4o-mini"  # plait: ignore[P601]\nagent main { model = fast }\n'
    )
    status, _, err = check("spec.plait", "--fix", "--strict")
    assert path.read_text() == 'model fast = "openai/gpt-4o-mini"\nagent main { model = fast }\n'
    assert status == 0 and "P610 removed" in err


def test_fix_keeps_the_file_mode_and_leaves_no_temporary_file(project, check, tmp_path):
    path = project("spec.plait", TYPOS)
    path.chmod(0o640)
    check("spec.plait", "--fix")
    assert path.stat().st_mode & 0o777 == 0o640
    assert sorted(os.listdir(tmp_path)) == ["spec.plait"]


def test_a_secret_is_never_printed_by_diff(project, check):
    secret = "sk-proj-Zx81kQ2mWv7RtY5uPa3LdN9bC4eF6gH0jK"
    project(
        "spec.plait", f'model fast = "openai/gpt-4o-mini" {{ api_key = "{secret}" }}\nagent main {{ model = fsat }}\n'
    )
    status, out, err = check("spec.plait", "--diff")
    assert "+agent main { model = fast }" in out
    assert secret not in out + err


def _edit(source: SourceFile, start: int, end: int, text: str, code: str = "P101"):
    return make(code, "x", source.span(start, end), fix=Fix("m", source.span(start, end), text))


def test_overlapping_fixes_are_skipped_and_identical_ones_made_once():
    source = SourceFile("f.plait", "abcdef")
    diagnostics = [
        _edit(source, 0, 2, "X"),
        _edit(source, 1, 3, "Y"),  # overlaps the first: skipped
        _edit(source, 4, 5, "Z"),
        _edit(source, 4, 5, "Z", "P201"),  # the same edit again: made once
        make("P601", "advice only", source.span(5, 6), fix=Fix("just advice")),
    ]
    result = plan(diagnostics)
    assert [(e.span.offset, e.replacement) for e in result.edits["f.plait"]] == [(0, "X"), (4, "Z")]
    assert [e.replacement for e in result.skipped] == ["Y"]
    assert apply(source.text, result.edits["f.plait"]) == "XcdZf"


def test_two_insertions_at_one_point_conflict_but_touching_edits_do_not():
    source = SourceFile("f.plait", "abcd")
    result = plan(
        [_edit(source, 2, 2, "1"), _edit(source, 2, 2, "2"), _edit(source, 0, 2, "AB"), _edit(source, 2, 4, "CD")]
    )
    assert apply(source.text, result.edits["f.plait"]) == "AB1CD"
    assert [e.replacement for e in result.skipped] == ["2"]
    assert isinstance(result.skipped[0], Edit)


ROUTE = """plait 0.2

model fast = "openai/gpt-4o-mini"

step classify {
  model  = fast
  prompt = "{{input}}"
  output {
    category: "billing" | "tech"
  }
}

step billing { model = fast, prompt = "b" }

step tech { model = fast, prompt = "t" }

route triage on input.category {
  "biling" -> billing
  "tech"   -> tech
}

chain main = classify -> triage
"""


def test_fix_keeps_a_formatted_file_formatted(project, check):
    import plait

    assert plait.format(ROUTE) == ROUTE  # the spec is in fmt's layout, arrows aligned under the typo
    path = project("spec.plait", ROUTE)
    status, _, err = check("spec.plait", "--fix")
    assert status == 0 and 'P309 `"biling"` → `"billing"`' in err
    fixed = path.read_text()
    assert '  "billing" -> billing\n  "tech"    -> tech\n' in fixed
    assert plait.format(fixed) == fixed


def test_fix_leaves_a_hand_made_layout_as_it_is(project, check):
    hand = ROUTE.replace('  "tech"   -> tech', '  "tech" -> tech')
    path = project("spec.plait", hand)
    check("spec.plait", "--fix")
    assert path.read_text() == hand.replace('"biling" ->', '"billing" ->')
