"""Inline suppressions `# plait: ignore[CODE, ...]`: on a line, on a declaration's header, and P610 for idle ones."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from conftest import WARNING

FIXTURES = Path(__file__).parent.parent / "fixtures" / "integrations"


def test_a_suppression_on_the_line_silences_that_warning(project, check):
    project("spec.plait", WARNING.replace('"openai/gpt-4o"\n', '"openai/gpt-4o"  # plait: ignore[P601]\n'))
    status, out, _ = check("spec.plait", "--strict")
    assert status == 0 and "P601" not in out and "P610" not in out


def test_a_suppression_by_name_and_in_a_list_works_too(project, check):
    project(
        "spec.plait", WARNING.replace('"openai/gpt-4o"\n', '"openai/gpt-4o" # plait: ignore[P101,unused-declaration]\n')
    )
    _, out, _ = check("spec.plait")
    assert "P601" not in out
    assert "warning[P610]: P101 is an error, and errors cannot be suppressed" in out


def test_on_a_declarations_header_it_covers_the_whole_declaration(project, check):
    text = (
        'model fast = "openai/gpt-4o-mini"\n'
        "agent main { model = fast }\n"
        "agent draft {  # plait: ignore[P601]\n"
        "  model = fast\n"
        "}\n"
    )
    project("spec.plait", text)
    status, out, _ = check("spec.plait", "--strict")
    assert status == 0, out


def test_a_suppression_elsewhere_covers_nothing_and_says_so(project, check):
    text = WARNING + "# plait: ignore[P601]\n"
    project("spec.plait", text)
    status, out, _ = check("spec.plait")
    assert "warning[P601]" in out
    assert "warning[P610]: P601 is not reported on this line" in out and "spec.plait:4:1" in out


def test_errors_are_never_suppressed(project, check):
    project("spec.plait", "agent main { model = fsat }  # plait: ignore[P101]\n")
    status, out, _ = check("spec.plait")
    assert status == 1 and "error[P101]" in out


def test_a_file_with_a_syntax_error_reports_no_idle_suppressions(project, check):
    project("spec.plait", 'model fast = "openai/gpt-4o-mini"  # plait: ignore[P601]\nagent main {\n')
    _, out, _ = check("spec.plait")
    assert "P001" in out and "P610" not in out


def test_p610_can_itself_be_ignored(project, check):
    project(
        "spec.plait",
        WARNING.replace("agent main { model = fast }", "agent main { model = fast }  # plait: ignore[P601]"),
    )
    assert "P610" in check("spec.plait")[1]
    assert "P610" not in check("spec.plait", "--ignore", "P610")[1]


def test_golden_text_report(tmp_path, monkeypatch, check):
    monkeypatch.chdir(tmp_path)
    shutil.copy(FIXTURES / "suppressions.plait", "suppressions.plait")
    _, out, _ = check("suppressions.plait", "--no-color")
    golden = FIXTURES / "suppressions.txt"
    if os.environ.get("UPDATE_GOLDENS") == "1":
        golden.write_text(out)
    assert out == golden.read_text()
