"""src/plait/ide/refs.py and workspace.py: references, rename and unsaved buffers, without a server."""

from __future__ import annotations

import json

import pytest

from plait.ide import analysis as ide
from plait.ide.refs import RenameError, references, rename, rename_target, target_at
from plait.ide.workspace import Workspace
from plait.compiler.pipeline import compile_spec

MODELS = 'model fast = "openai/gpt-4o-mini"\n'
MAIN = """plait 0.2
import "models.plait"

tool lookup "Look up a topic." {
  params { topic: string }
  run = http(GET, "https://kb.example.com/?q={{topic}}")
  approval = required
}

step review {
  model  = fast
  prompt = "Review: {{input}}"
  output { verdict: "ok" | "redo" }
}

agent writer "Writes things." {
  model  = fast
  tools  = [lookup]
  system = "The review said {{review.verdict}}."
  until  = lookup succeeded
}

chain main = review -> writer
"""
#: Its own `fast`, not the one main sees: never a reference of it.
OTHER = 'model fast = "openai/gpt-4o"\nagent solo { model = fast }\n'


@pytest.fixture
def workspace(project):
    project("models.plait", MODELS)
    main = project("main.plait", MAIN)
    other = project("other/solo.plait", OTHER)
    ws = Workspace((main.parent,))
    return ws, main.resolve(), (main.parent / "models.plait").resolve(), other.resolve()


def _places(found) -> list[tuple[str, int, int]]:
    return [(file.name, occ.span.line, occ.span.column) for file, occ in found]


def test_references_cross_files_and_follow_the_namespace_not_the_spelling(workspace):
    ws, main, models, _ = workspace
    project = ws.project()
    target = target_at(project, main, MAIN.index("model  = fast") + 10)
    assert (target.file, target.declaration.kind) == (models, "model")
    # Both uses in main and the declaration in models.plait; other/solo.plait's `fast` is another model.
    assert _places(references(project, target)) == [
        ("main.plait", 11, 12),
        ("main.plait", 17, 12),
        ("models.plait", 1, 7),
    ]
    assert _places(references(project, target, include_declaration=False)) == [
        ("main.plait", 11, 12),
        ("main.plait", 17, 12),
    ]


def test_references_include_template_reads_and_succeeded_targets(workspace):
    ws, main, _, _ = workspace
    project = ws.project()
    review = target_at(project, main, MAIN.index("review.verdict") + 1)
    assert _places(references(project, review)) == [
        ("main.plait", 10, 6),
        ("main.plait", 19, 31),
        ("main.plait", 23, 14),
    ]
    lookup = target_at(project, main, MAIN.index("tool lookup") + 6)
    assert _places(references(project, lookup)) == [
        ("main.plait", 4, 6),
        ("main.plait", 18, 13),
        ("main.plait", 20, 12),
    ]
    # The tool's own `{{topic}}` reads its parameter, and `GET` is an argument: neither names anything.
    assert target_at(project, main, MAIN.index("{{topic}}") + 3) is None


def _applied(ws: Workspace, edits) -> dict:
    out = {}
    for file, found in edits.items():
        text = ws.text(file)
        for occ, new in sorted(found, key=lambda item: -item[0].span.offset):
            text = text[: occ.span.offset] + new + text[occ.span.end_offset :]
        out[file] = text
    return out


def test_rename_edits_every_file_and_the_result_compiles(workspace):
    ws, main, models, other = workspace
    edits = rename(ws.project(), main, MAIN.index("model  = fast") + 10, "quick")
    assert set(edits) == {main, models}  # not other/solo.plait
    for file, text in _applied(ws, edits).items():
        file.write_text(text)
    assert "fast" not in main.read_text() and "model quick" in models.read_text()
    result = compile_spec(main)
    assert result.ok, [str(d) for d in result.errors]


def test_rename_of_a_step_rewrites_its_template_reads(workspace):
    ws, main, _, _ = workspace
    [(file, text)] = _applied(ws, rename(ws.project(), main, MAIN.index("step review") + 6, "critique")).items()
    assert "{{critique.verdict}}" in text and "chain main = critique -> writer" in text
    file.write_text(text)
    assert compile_spec(main).ok


@pytest.mark.parametrize(
    "where, message",
    [
        ("agent writer", "`agent` is a keyword"),
        ("required", "`required` is built into the language"),
        ("{{input}}", "`input` is a keyword"),
        ("http(", "`http` is built into the language"),
        ("Writes", "`Writes` does not name a declaration"),
    ],
)
def test_rename_refuses_keywords_and_builtins_with_a_reason(workspace, where, message):
    ws, main, _, _ = workspace
    offset = MAIN.index(where) + (2 if where.startswith("{{") else 1)
    with pytest.raises(RenameError, match=message.replace("`", ".").replace("(", r"\(")):
        rename_target(ws.project(), main, offset)


def test_rename_refuses_bad_and_clashing_names(workspace):
    ws, main, _, _ = workspace
    at = MAIN.index("model  = fast") + 10
    with pytest.raises(RenameError, match="is a keyword"):
        rename(ws.project(), main, at, "agent")
    with pytest.raises(RenameError, match="is not a name"):
        rename(ws.project(), main, at, "2fast")
    with pytest.raises(RenameError, match="`lookup` is already declared"):
        rename(ws.project(), main, at, "lookup")


def test_an_unsaved_imported_buffer_is_what_the_importer_is_checked_against(workspace):
    ws, main, models, _ = workspace
    ws.set(main, MAIN)
    assert ide.document(ws, str(main)).diagnostics[str(main)] == []
    ws.set(models, 'model quick = "openai/gpt-4o-mini"\n')  # renamed in the editor, not saved
    codes = [d.code for d in ide.document(ws, str(main)).diagnostics[str(main)]]
    assert codes == ["P101", "P101"]
    ws.close(models)  # closed without saving: the disk is the truth again
    assert ide.document(ws, str(main)).diagnostics[str(main)] == []


def test_an_unchanged_import_is_parsed_once(workspace, monkeypatch):
    import plait.dsl.parser as parser

    ws, main, _, _ = workspace
    ws.set(main, MAIN)
    ide.document(ws, str(main))
    parsed = []
    real = parser.parse_module
    monkeypatch.setattr(parser, "parse_module", lambda source: parsed.append(source.path) or real(source))
    ws.set(main, MAIN.replace("Writes things.", "Writes more things."))
    ide.document(ws, str(main))
    assert parsed == [str(main)]  # models.plait's text did not change: its module was reused


def test_diagnostics_match_plait_check_codes_and_spans(workspace, check):
    ws, main, _, _ = workspace
    broken = MAIN.replace("tools  = [lookup]", "tools  = [lokup]")
    main.write_text(broken)
    ws.set(main, broken)
    found = ide.document(ws, str(main)).diagnostics[str(main)]
    status, out, _ = check("--format", "json", str(main))
    spans = ("line", "column", "end_line", "end_column")
    reported = [(d["code"], *(d[k] for k in spans)) for d in json.loads(out)["diagnostics"]]
    assert status == 1 and "P101" in [code for code, *_ in reported]
    assert [(d.code, *d.span[1:5]) for d in found] == reported


MCP = """plait 0.2
mcp files "The file system." {
  command = ["npx", "-y", "@modelcontextprotocol/server-filesystem", "."]
  tools   = [read_text_file]
}
model fast = "openai/gpt-4o-mini"
tool read_text_file "A tool of the spec's own, named like the server's." { run = python("kb:read") }
agent main {
  model = fast
  tools = [files.read_text_file, read_text_file]
}
"""


def test_an_mcp_server_is_used_by_its_dotted_tools_and_its_own_list_names_no_declaration(project):
    path = project("spec.plait", MCP).resolve()
    ws = Workspace()
    ws.set(path, MCP)
    project_ = ws.project()
    server = target_at(project_, path, MCP.index("mcp files") + 5)
    assert _places(references(project_, server)) == [("spec.plait", 2, 5), ("spec.plait", 10, 12)]
    tool = target_at(project_, path, MCP.index("tool read_text_file") + 6)
    # The server's allow-list and `files.read_text_file` name the server's tool, not the spec's.
    assert _places(references(project_, tool)) == [("spec.plait", 7, 6), ("spec.plait", 10, 34)]
    [(_, text)] = _applied(ws, rename(project_, path, MCP.index("mcp files") + 5, "docs")).items()
    assert "mcp docs" in text and "tools = [docs.read_text_file, read_text_file]" in text
