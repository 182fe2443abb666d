"""`plait fmt` leaves the docs' own examples as written (issue 9, item 17): a
reader who copies a snippet from README.md or docs/language.md and runs
`plait fmt` on it sees nothing change."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from plait.dsl.formatter import format_text

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", ROOT / "docs" / "language.md"]
_SNIPPET = re.compile(r"^```plait\n(.*?)^```", re.S | re.M)


def _snippets() -> list[tuple[str, str]]:
    found = []
    for doc in DOCS:
        for i, match in enumerate(_SNIPPET.finditer(doc.read_text(encoding="utf-8")), 1):
            found.append((f"{doc.relative_to(ROOT)}#{i}", match.group(1)))
    return found


SNIPPETS = _snippets()


def test_the_docs_have_plait_snippets():
    assert {name.split("#")[0] for name, _ in SNIPPETS} == {"README.md", "docs/language.md"}


@pytest.mark.parametrize("name, text", SNIPPETS, ids=[name for name, _ in SNIPPETS])
def test_fmt_leaves_each_snippet_unchanged(name, text):
    formatted, diagnostics = format_text(text, name)
    assert not diagnostics, [str(d) for d in diagnostics]
    assert formatted == text
