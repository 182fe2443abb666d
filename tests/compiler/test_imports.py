"""`import`: relative paths, the root directory boundary (P006), missing files (P007),
harmless cycles, one namespace across files, and unused imported declarations."""

from __future__ import annotations

import textwrap

from checks_helpers import assert_at, clean, compile_text, only

ROOT = """
import "lib/models.plait"
agent main { model = fast, tools = [helper] }
"""
LIB = {
    "lib/models.plait": 'import "agents.plait"\nmodel fast = "openai/gpt-4o-mini"\n',
    "lib/agents.plait": 'import "models.plait"\nagent helper "Helps." { model = fast }\n',
}


def test_names_from_imports_resolve_relative_to_the_importer_and_cycles_are_harmless(tmp_path):
    result = compile_text(ROOT, tmp_path, files=LIB)
    clean(result)
    assert result.graph.out("helper", "calls") == ["fast"]
    assert str(tmp_path / "lib" / "agents.plait") == result.graph.node("helper").file


def test_import_leaving_the_root(tmp_path):
    (tmp_path / "outside.plait").write_text('model fast = "openai/gpt-4o-mini"\n')
    text = 'import "../outside.plait"\nagent main { model = fast }\n'
    result = compile_text(text, tmp_path / "proj")
    d = only(result, "P006")
    assert_at(d, text, '"../outside.plait"')
    assert d.message == "import `../outside.plait` leaves the spec's directory"


def test_missing_import(tmp_path):
    text = 'import "nope.plait"\nmodel fast = "openai/gpt-4o-mini"\nagent main { model = fast }\n'
    d = only(compile_text(text, tmp_path), "P007")
    assert_at(d, text, '"nope.plait"')
    assert "no such file" in d.message and "nope.plait" in d.message


def test_duplicate_across_files(tmp_path):
    files = {"lib/models.plait": 'model fast = "openai/gpt-4o-mini"\nagent helper { model = fast }\n'}
    text = 'import "lib/models.plait"\nmodel fast = "openai/gpt-4o"\nagent main { model = fast, tools = [helper] }\n'
    d = only(compile_text(text, tmp_path, files=files), "P102")
    # The root is loaded first, so the imported declaration is the duplicate.
    assert d.span.file.endswith("models.plait") and d.labels[0].span.file.endswith("spec.plait")


def test_unused_imported_declarations_warn_in_their_file(tmp_path):
    files = {"lib/models.plait": 'model fast = "openai/gpt-4o-mini"\nmodel spare = "openai/gpt-4o"\n'}
    text = 'import "lib/models.plait"\nagent main { model = fast }\n'
    d = only(compile_text(text, tmp_path, files=files), "P601")
    assert d.message == "model `spare` is never used"
    assert d.span.file.endswith("models.plait") and (d.span.line, d.span.column) == (2, 7)


def test_errors_inside_imported_files_point_there(tmp_path):
    files = {
        "lib/models.plait": textwrap.dedent("""
        model fast = "openai/gpt-4o-mini"
        step helper { model = fast, prompt = "{{inptu}}" }
    """)
    }
    text = 'import "lib/models.plait"\nagent writer { model = fast }\nchain main = writer -> helper\n'
    result = compile_text(text, tmp_path, files=files)
    d = only(result, "P401")
    assert d.span.file.endswith("models.plait") and (d.span.line, d.span.column) == (3, 41)
