"""`plait diff`: one test per kind of change, formatting-only edits, git:REV:path, exit codes."""

from __future__ import annotations

import json
import re
import subprocess

import pytest
from render_helpers import FIXTURES

from plait.cli import main
from plait.compiler.diff import Change, diff_graphs
from plait.compiler.pipeline import compile_spec

BASE = (FIXTURES / "contracts.plait").read_text()


def _diff(old: str, new: str) -> list[Change]:
    a, b = compile_spec(old, path="old.plait"), compile_spec(new, path="new.plait")
    assert a.graph is not None and b.graph is not None, [str(d) for d in a.diagnostics + b.diagnostics]
    return diff_graphs(a.graph, b.graph)


def _edit(old: str, new: str, count: int = 1) -> str:
    assert BASE.count(old) >= 1, old
    return BASE.replace(old, new, count)


def _only(changes: list[Change]) -> Change:
    assert len(changes) == 1, [c.describe() for c in changes]
    return changes[0]


def test_identical_specs_have_no_changes():
    assert _diff(BASE, BASE) == []


def test_formatting_and_comments_only_is_no_diff():
    import plait

    reformatted = "# a new comment at the top\n" + plait.format(BASE).replace("\n", "\n\n", 3)
    assert reformatted != BASE
    assert _diff(BASE, reformatted) == []


def test_reordering_declarations_is_no_diff():
    moved = BASE.replace('step draft { model = fast, prompt = "Draft: {{input}}", temperature = 0.7 }\n', "")
    moved += 'step draft { model = fast, prompt = "Draft: {{input}}", temperature = 0.7 }\n'
    assert _diff(BASE, moved) == []


def test_node_added():
    changes = _diff(BASE, BASE + 'tool extra "Unused." { run = python("tools:extra") }\n')
    assert _only(changes) == Change("node", "added", "extra", "tool")


def test_node_removed():
    new = BASE.replace('model backup = "google/gemini-2.0-flash"\n', "").replace("[strong, backup]", "[strong]")
    kinds = {(c.what, c.op, c.subject) for c in _diff(BASE, new)}
    assert ("node", "removed", "backup") in kinds
    assert ("edge", "removed", "scout -> backup") in kinds


def test_edge_added_and_removed():
    added = _diff(BASE, _edit("tools           = [search]", "tools           = [search, notify]"))
    assert ("edge", "added", "scout -> notify", "uses") in {(c.what, c.op, c.subject, c.kind) for c in added}
    removed = _diff(BASE, _edit("tools           = [scout, publish, notify]", "tools           = [publish, notify]"))
    assert ("edge", "removed", "editor -> scout", "delegates") in {(c.what, c.op, c.subject, c.kind) for c in removed}


def test_max_steps_raised():
    change = _only(_diff(BASE, _edit("max_steps       = 5", "max_steps       = 12")))
    assert (change.what, change.subject, change.field, change.old, change.new) == (
        "contract",
        "scout",
        "max_steps",
        5,
        12,
    )
    assert "max_steps raised 5 → 12" in change.describe()


def test_tool_gains_approval():
    new = _edit('run = python("tools:notify")', 'run = python("tools:notify")\n  approval = required')
    change = _only(_diff(BASE, new))
    assert (change.what, change.subject, change.field, change.old, change.new) == (
        "contract",
        "notify",
        "approval",
        False,
        True,
    )


def test_fallback_removed():
    changes = _diff(BASE, _edit("fallback        = [strong, backup]", "fallback        = [strong]"))
    described = [c.describe() for c in changes]
    assert any("fallback removed" in d and "backup" in d for d in described)
    assert ("edge", "removed", "scout -> backup") in {(c.what, c.op, c.subject) for c in changes}


def test_fallback_reordered_changes_the_edge_order():
    changes = _diff(BASE, _edit("[strong, backup]", "[backup, strong]"))
    assert any(c.field == "fallback" and "reordered" in c.describe() for c in changes)
    assert {(c.subject, c.field, c.old, c.new) for c in changes if c.kind == "fallback edge"} == {
        ("scout -> strong", "order", 1, 2),
        ("scout -> backup", "order", 2, 1),
    }


def test_model_id_changed():
    change = _only(_diff(BASE, _edit('"openai/gpt-4o-mini"', '"openai/gpt-4.1-mini"')))
    assert (change.subject, change.field, change.old, change.new) == ("fast", "model_id", "gpt-4o-mini", "gpt-4.1-mini")


def test_until_and_on_error_and_rounds_changed():
    until = _diff(BASE, _edit("until           = [publish, notify]", "until           = publish"))
    assert [(c.what, c.field or c.kind) for c in until] == [("contract", "until"), ("edge", "until")]
    assert _only(_diff(BASE, _edit("{ on_error = collect }", ""))).describe() == (
        "~ parallel fanout: on_error changed collect → fail  [contract]"
    )
    assert _only(_diff(BASE, _edit("rounds = 2", "rounds = 4"))).field == "rounds"


def test_non_contract_attribute_is_reported_as_attribute():
    change = _only(_diff(BASE, _edit('"Argue for."', '"Argue for, loudly."')))
    assert (change.what, change.field) == ("attribute", "system")


def test_entry_change_is_reported():
    changes = _diff(BASE, BASE.replace("chain main =", "chain pipeline ="))
    # Without `main` the entry is the spec's only root (LANGUAGE.md, Entry point): here the renamed chain.
    assert changes[0] == Change("entry", "changed", "", "entry", "entry", "main", "pipeline")


@pytest.fixture
def specs(tmp_path):
    old, new = tmp_path / "old.plait", tmp_path / "new.plait"
    old.write_text(BASE)
    new.write_text(_edit("max_steps       = 5", "max_steps       = 6"))
    (tmp_path / "demo.replies.json").write_text("[]")
    return old, new


def test_cli_exit_codes_and_text(specs, capsys):
    old, new = specs
    assert main(["diff", str(old), str(old)]) == 0
    assert capsys.readouterr().out == "no semantic differences\n"
    assert main(["diff", str(old), str(new)]) == 1
    assert capsys.readouterr().out == (
        "~ agent scout: max_steps raised 5 → 6  [contract]\n1 change: 0 added, 0 removed, 1 changed\n"
    )


def test_cli_json(specs, capsys):
    old, new = specs
    assert main(["diff", str(old), str(new), "--format", "json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["summary"] == {"added": 0, "removed": 0, "changed": 1}
    assert data["changes"][0]["field"] == "max_steps"


def test_cli_mermaid_highlights_changes(tmp_path, capsys):
    old, new = tmp_path / "old.plait", tmp_path / "new.plait"
    old.write_text(BASE)
    text = _edit("max_steps       = 5", "max_steps       = 6").replace(
        "tools           = [scout, publish, notify]", "tools           = [publish, notify]"
    )
    new.write_text(text + 'tool extra "Unused." { run = python("tools:extra") }\n')
    assert main(["diff", str(old), str(new), "--format", "mermaid"]) == 1
    out = capsys.readouterr().out
    assert re.match(r"flowchart (LR|TB)\n", out)
    assert "classDef added" in out and "class n_extra added" in out
    assert re.search(r"class [^\n]*\bn_scout\b[^\n]* changed", out)
    lines = out.splitlines()
    edges = [line for line in lines if " -" in line or " =" in line or "~~~" in line]
    removed = [i for i, e in enumerate(edges) if e.strip().startswith("n_editor") and e.strip().endswith("n_scout")]
    assert removed and f"linkStyle {removed[0]} stroke:#c0392b,stroke-width:3px,stroke-dasharray:6 4" in out


def test_cli_a_side_with_errors_exits_1_as_check_does(specs, tmp_path, capsys):
    old, _ = specs
    bad = tmp_path / "bad.plait"
    bad.write_text("agent a { model = nope }\n")
    assert main(["diff", str(old), str(bad)]) == 1
    assert "undefined name `nope`" in capsys.readouterr().err


@pytest.mark.slow
def test_git_revisions(tmp_path, monkeypatch, capsys):
    def git(*args):
        subprocess.run(["git", *args], cwd=tmp_path, check=True, capture_output=True)

    git("init", "-q")
    git("config", "user.email", "t@example.com")
    git("config", "user.name", "t")
    spec = tmp_path / "spec.plait"
    spec.write_text(BASE)
    git("add", "spec.plait")
    git("commit", "-q", "-m", "one")
    spec.write_text(_edit('"openai/gpt-4o-mini"', '"openai/gpt-4o"'))
    git("commit", "-q", "-am", "two")
    monkeypatch.chdir(tmp_path)
    assert main(["diff", "git:HEAD~1:spec.plait", "git:HEAD:spec.plait"]) == 1
    assert "model_id changed gpt-4o-mini → gpt-4o" in capsys.readouterr().out
    assert main(["diff", "git:HEAD:spec.plait", "spec.plait"]) == 0
    assert main(["diff", "git:HEAD:missing.plait", "spec.plait"]) == 1  # unreadable, like a missing file: P005
    err = capsys.readouterr().err
    assert "error[P005]: cannot read `git:HEAD:missing.plait`" in err


def test_mermaid_draws_removed_nodes_dashed_red(tmp_path, capsys):
    old, new = tmp_path / "old.plait", tmp_path / "new.plait"
    old.write_text(BASE)
    new.write_text(
        BASE.replace('model backup = "google/gemini-2.0-flash"\n', "").replace("[strong, backup]", "[strong]")
    )
    assert main(["diff", str(old), str(new), "--format", "mermaid"]) == 1
    out = capsys.readouterr().out
    assert "n_backup[(" in out  # still drawn, so the reader sees what went
    assert "classDef removed fill:#fadbd8,stroke:#c0392b,stroke-width:3px,stroke-dasharray:6 4" in out
    assert re.search(r"class [^\n]*\bn_backup\b[^\n]* removed", out)
