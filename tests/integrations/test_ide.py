"""src/plait/ide/analysis.py: the editor answers the language server serves, without a server."""

from __future__ import annotations

from plait.ide.analysis import analyse, format_document

MAIN = 'model fast = "openai/gpt-4o-mini"\nmodel spare = "openai/gpt-4o"  # plait: ignore[P601]\nagent main { model = fast }\n'


def test_diagnostics_are_what_check_reports_suppressions_and_config_included(project):
    project("plait.toml", 'ignore = ["P101"]\n')
    path = project("spec.plait", MAIN.replace("model = fast", "model = fsat"))
    analysis = analyse(path.read_text(), str(path))
    # P101 ignored by the config, spare's P601 suppressed inline; only fast's P601 (now unused) is left.
    assert [d.code for d in analysis.diagnostics[str(path)]] == ["P601"]


def test_definition_and_hover_by_offset(project):
    path = project("spec.plait", MAIN)
    analysis = analyse(MAIN, str(path))
    at = MAIN.index("model = fast") + len("model = f")
    assert analysis.name_at(at) == "fast"
    assert analysis.definition(at).name_span.line == 1
    assert "model fast" in analysis.hover(at)
    assert analysis.hover(MAIN.index('"openai')) is None  # a string names nothing
    assert [s.name for s in analysis.outline] == ["fast", "spare", "main"]


def test_hover_on_an_attribute_key_shows_its_kind_records_schema_and_doc(project):
    text = MAIN + 'tool t "T." {\n  run = python("m:f")\n  approval = required\n}\n'
    path = project("spec.plait", text)
    analysis = analyse(text, str(path))
    shown = analysis.hover(text.index("approval") + 2)
    assert "tool t { approval }" in shown
    # The approval's values and doc line as conditional approval left them (a condition stands for `required`).
    assert (
        "approval: `required`, `never`. `required`: every call waits for a person's decision; "
        "`amount > 100`: only a call it holds for." in shown
    )
    assert analysis.hover(text.index("required") + 1) is None  # a value, not a key
    assert "agent main" in analysis.hover(MAIN.index("model = fast"))  # a key of the agent: `model`'s line
    assert "The model it calls." in analysis.hover(MAIN.index("model = fast"))


def test_format_document_is_plait_fmt():
    assert format_document("agent main {model=fast}\n", "x.plait") == "agent main { model = fast }\n"
    assert format_document("agent main {\n", "x.plait") is None


def test_plait_lsp_without_pygls_says_what_to_install(monkeypatch, capsys):
    import sys

    from plait.cli import main

    monkeypatch.setitem(sys.modules, "pygls", None)  # as if the `lsp` extra were not installed
    monkeypatch.setitem(sys.modules, "pygls.lsp", None)
    monkeypatch.setitem(sys.modules, "pygls.lsp.server", None)
    assert main(["lsp"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "pip install -e '.[lsp]'` in plait's clone" in err
