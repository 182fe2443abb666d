"""The code registry: every code declared beside its raiser, gathered into one catalogue, read only on demand."""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path

import pytest

from plait.cli import main
from plait.core import codes
from plait.core.codes import CODES, HOMES, Code, declare
from plait.core.source import SourceFile

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "explain"
# Where codes are raised: the stages a check runs (the runtime and the commands declare none).
STAGES = ("plait.core", "plait.dsl", "plait.compiler")


def _declarations() -> dict[str, str]:
    """code → the module that declares it, over every module of those stages."""
    found: dict[str, str] = {}
    for stage in STAGES:
        package = importlib.import_module(stage)
        for info in pkgutil.walk_packages(package.__path__, f"{stage}."):
            module = importlib.import_module(info.name)
            for name, value in vars(module).items():
                if isinstance(value, Code) and name == value.code:
                    assert found.setdefault(value.code, info.name) == info.name, f"{value.code} has two homes"
    return found


DECLARED = _declarations()


def test_every_declaration_is_in_the_catalogue_from_a_listed_home():
    assert sorted(DECLARED) == list(CODES)
    assert set(DECLARED.values()) == set(HOMES)


@pytest.mark.parametrize("code", sorted(DECLARED))
def test_each_code_is_documented_beside_the_module_that_declares_it(code):
    module = importlib.import_module(DECLARED[code])
    doc = Path(module.__file__).parent / "explain" / f"{code}.md"
    assert doc.read_text(encoding="utf-8").strip() == CODES[code].explanation != ""


@pytest.mark.parametrize("code", sorted(CODES))
def test_explain_prints_what_it_printed_when_the_catalogue_was_one_file(capsys, code):
    # The fixtures are `plait explain CODE` as printed by the one-file catalogue this registry replaced.
    assert main(["explain", code]) == 0
    assert capsys.readouterr().out == (FIXTURES / f"{code}.txt").read_text(encoding="utf-8")


def test_a_check_reads_declarations_but_no_documentation(tmp_path, capsys):
    spec = tmp_path / "app.plait"
    spec.write_text('model fast = "openai/gpt-4o-mini"\nagent a { model = fst, system = "x" }\n', encoding="utf-8")
    codes.catalogue.cache_clear()
    try:
        assert main(["check", str(spec)]) == 1
        assert "error[P101]" in capsys.readouterr().out
        assert codes.catalogue.cache_info().misses == 0
    finally:
        codes.catalogue()


def test_a_code_declared_again_differently_is_refused():
    entry = CODES["P101"]
    assert declare("P101", entry.name, entry.severity, entry.summary).name == "undefined-name"
    with pytest.raises(ValueError, match="P101 is declared twice"):
        declare("P101", "some-other-name", entry.severity, "something else")


def test_make_takes_name_and_severity_from_the_declaration():
    span = SourceFile("a.plait", "x").span(0, 1)
    made = codes.make("P601", "`x` is never used", span)
    assert (made.code, made.name, made.severity) == ("P601", "unused-declaration", CODES["P601"].severity)
