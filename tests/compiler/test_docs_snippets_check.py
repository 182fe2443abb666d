"""The docs' plait examples compile: a reader who copies one from README.md, docs/language.md or
docs/integrations.md meets no error but the declarations the text says live elsewhere (P101), and a
suppression example suppresses something (no P610)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from plait.cli import main

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", ROOT / "docs" / "language.md", ROOT / "docs" / "integrations.md"]
_SNIPPET = re.compile(r"^```plait\n(.*?)^```", re.S | re.M)
#: A snippet is a fragment: the models and runnables it names may be declared in the prose around it.
ALLOWED_ERRORS = {"P101"}


def _snippets() -> list[tuple[str, str]]:
    return [
        (f"{doc.relative_to(ROOT)}#{i}", match.group(1))
        for doc in DOCS
        for i, match in enumerate(_SNIPPET.finditer(doc.read_text(encoding="utf-8")), 1)
    ]


SNIPPETS = _snippets()


def test_every_doc_has_a_snippet():
    assert {name.split("#")[0] for name, _ in SNIPPETS} == {"README.md", "docs/language.md", "docs/integrations.md"}


@pytest.mark.parametrize("name, text", SNIPPETS, ids=[name for name, _ in SNIPPETS])
def test_a_copied_snippet_has_no_error_but_missing_declarations(name, text, tmp_path, capsys):
    spec = tmp_path / "snippet.plait"
    spec.write_text(text, encoding="utf-8")
    main(["check", "--format", "json", str(spec)])  # as a reader runs it: suppressions applied
    problems = [
        f"{d['code']} {d['message']}"
        for d in json.loads(capsys.readouterr().out)["diagnostics"]
        if (d["severity"] == "error" and d["code"] not in ALLOWED_ERRORS) or d["code"] == "P610"
    ]
    assert not problems, (name, problems)
