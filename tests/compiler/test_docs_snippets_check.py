"""The docs' plait examples check clean: a reader who copies one from README.md or any page of docs/ meets no
error, no warning but an unlocked MCP server's, and no suppression that suppresses nothing (P610).

An example is a complete spec, or is marked `<!-- fragment: completed with FILE -->` (and says so in its prose):
it is then checked in a copy of FILE's folder (where its python modules, scripts and locks live), with the
declarations of FILE it names but does not declare added, as a reader who follows the prose would.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

import plait
from plait.cli import main

ROOT = Path(__file__).resolve().parents[2]
#: Every page a reader copies plait from; docs/tutorial.md writes its files and runs them (tests/docs/test_tutorial.py).
DOCS = [ROOT / "README.md", *sorted(p for p in (ROOT / "docs").glob("*.md") if p.name != "tutorial.md")]
_SNIPPET = re.compile(r"^```plait\n(.*?)^```", re.S | re.M)
_FRAGMENT = re.compile(r"<!-- fragment: completed with (\S+) -->\n+$")
#: A doc cannot ship an MCP server's lock: "not locked" (P332) and "lock out of date" (P333) are expected.
ALLOWED_WARNINGS = {"P332", "P333"}


def _snippets() -> list[tuple[str, str, str | None]]:
    out = []
    for doc in DOCS:
        text = doc.read_text(encoding="utf-8")
        for i, match in enumerate(_SNIPPET.finditer(text), 1):
            completed = _FRAGMENT.search(text[max(0, match.start() - 300) : match.start()])
            out.append((f"{doc.relative_to(ROOT)}#{i}", match.group(1), completed.group(1) if completed else None))
    return out


SNIPPETS = _snippets()


def _diagnostics(spec: Path, capsys) -> list[dict]:
    main(["check", "--format", "json", str(spec)])  # as a reader runs it: suppressions applied
    return json.loads(capsys.readouterr().out)["diagnostics"]


def _declarations(path: Path) -> dict[str, str]:
    """name → source text of each named declaration in `path`."""
    text = path.read_text(encoding="utf-8")
    module, _ = plait.parse(text, str(path))
    assert module is not None, path
    return {
        decl.name.name: text[decl.span.offset : decl.span.end_offset]
        for decl in module.declarations
        if getattr(decl, "name", None) is not None
    }


def _undefined(diagnostics: list[dict]) -> set[str]:
    return {m.group(1) for d in diagnostics if d["code"] == "P101" for m in [re.search(r"`(\w+)`", d["message"])] if m}


def test_every_doc_has_a_snippet():
    assert {name.split("#")[0] for name, _, _ in SNIPPETS} >= {
        "README.md",
        "docs/language.md",
        "docs/integrations.md",
        "docs/cost.md",
        "docs/local-models.md",
    }


@pytest.mark.parametrize("name, text, completed_with", SNIPPETS, ids=[name for name, _, _ in SNIPPETS])
def test_a_copied_snippet_checks_clean(name, text, completed_with, tmp_path, capsys):
    folder = tmp_path / "project"
    if completed_with:
        source = ROOT / completed_with
        assert source.is_file(), f"{name}: completed with {completed_with}, which does not exist"
        shutil.copytree(source.parent, folder, ignore=shutil.ignore_patterns(".plait"))
        available = _declarations(source)
    else:
        folder.mkdir()
        available = {}
    spec = folder / "snippet.plait"
    spec.write_text(text, encoding="utf-8")
    diagnostics = _diagnostics(spec, capsys)
    # Add what the example names from FILE until nothing more is missing (a step added may name a model).
    while wanted := sorted(_undefined(diagnostics) & set(available)):
        text += "".join(f"\n{available.pop(n)}\n" for n in wanted)
        spec.write_text(text, encoding="utf-8")
        diagnostics = _diagnostics(spec, capsys)
    problems = [
        f"{d['code']} {d['message']}"
        for d in diagnostics
        if d["severity"] == "error" or (d["severity"] == "warning" and d["code"] not in ALLOWED_WARNINGS)
    ]
    assert not problems, (name, problems)
