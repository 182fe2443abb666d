"""One version everywhere a user reads one, and install instructions that work from a clone.

The package's major.minor is the newest language version it reads (docs/decisions.md, "Versions"): `plait -V`,
pyproject.toml, the VS Code extension's manifest and lock, the .vsix names the docs install, and the `plait -V`
output they show must all say the same; every `pip install` in the docs installs from a clone (plait is not on
PyPI) and names only extras pyproject.toml declares.
"""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import pytest

import plait
from plait.cli import main

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
VERSION = PYPROJECT["project"]["version"]
#: Every user-facing document that may show a version or an install command.
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "editors" / "vscode" / "README.md"]


def _text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def test_the_package_says_the_pyproject_version(capsys):
    assert plait.__version__ == VERSION
    with pytest.raises(SystemExit):
        main(["-V"])
    assert capsys.readouterr().out == f"plait {VERSION}\n"


def test_the_package_version_follows_the_language_version():
    title = _text(ROOT / "docs" / "language.md").splitlines()[0]
    language = re.fullmatch(r"# The plait language, v(\d+\.\d+)", title)
    assert language, title
    assert VERSION.startswith(language.group(1) + "."), (VERSION, title)
    # The title is the newest version line the reference documents (a section "(plait 0.3)", an example's
    # `plait 0.3`): a package that reads 0.3 specs is not 0.2.
    lines = re.findall(r"^plait (\d+)\.(\d+)\b|\(plait (\d+)\.(\d+)\)", _text(ROOT / "docs" / "language.md"), re.M)
    documented = {(int(a or c), int(b or d)) for a, b, c, d in lines}
    assert max(documented) == tuple(map(int, language.group(1).split("."))), (sorted(documented), title)


def test_the_vscode_extension_has_the_same_version():
    vscode = ROOT / "editors" / "vscode"
    assert json.loads(_text(vscode / "package.json"))["version"] == VERSION
    lock = json.loads(_text(vscode / "package-lock.json"))
    assert (lock["version"], lock["packages"][""]["version"]) == (VERSION, VERSION)


def test_every_version_the_docs_show_is_the_package_version():
    shown = []
    for doc in DOCS:
        text = _text(doc)
        shown += [(doc.name, v) for v in re.findall(r"plait-(\d+\.\d+\.\d+)\.vsix", text)]
        shown += [(doc.name, v) for v in re.findall(r"^plait (\d+\.\d+\.\d+)$", text, re.M)]  # `plait -V` output
    assert shown, "the docs show no version at all: this test would check nothing"
    assert {v for _, v in shown} == {VERSION}, shown


def test_no_doc_pins_a_tag_that_does_not_exist():
    # No release is tagged yet: a `rev:` or `uses: ...@` pin must be a placeholder for a commit, not a made-up tag.
    for doc in [*DOCS, ROOT / ".pre-commit-hooks.yaml"]:
        pins = re.findall(r"(?:rev: |/plait@)(v\d[\w.]*)", _text(doc))
        assert not pins, (doc.name, pins)


def test_every_pip_install_in_the_docs_installs_from_a_clone():
    extras = set(PYPROJECT["project"]["optional-dependencies"])
    commands = [
        (doc.name, m.group(1))
        for doc in DOCS
        if doc.name != "decisions.md"  # it quotes what messages say, it gives no instructions
        for m in re.finditer(r"pip install ([^`\n#]+)", _text(doc), re.M)
    ]
    assert commands
    for name, args in commands:
        target = args.strip().split(maxsplit=1)[-1] if args.startswith("-e ") else args.strip()
        target = target.strip("'\"")
        # `.`, `.[mcp]`, a path to a clone (`./plait[lsp]`) or a git URL (`plait[mcp] @ git+URL@SHA`):
        # never the bare name `plait`, which is not on PyPI.
        local = re.fullmatch(
            r"(?:\.|[./~][^\[\s]*|plait(?=\[?[\w,-]*\]? @ git\+))(?:\[(?P<extra>[\w,-]+)\])?(?: @ git\+.+)?", target
        )
        assert local, (name, args)
        for extra in (local.group("extra") or "").split(","):
            assert not extra or extra in extras, (name, args, extra)
