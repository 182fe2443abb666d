"""`plait explain`: every code documented (what, why, example, fix), and the examples are true."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from plait.cli import main
from plait.core.codes import CODES, SECTIONS, sections
from plait.compiler.pipeline import compile_spec

PLAIT_BLOCK = re.compile(r"```plait\n(.*?)```", re.S)
# The model checks (P341-P346) read the catalogue entries `plait models lock` wrote into the plait.lock beside the
# spec: their examples are compiled beside the lock the check goldens use, as if written next to it.
LOCKED = {"P341", "P342", "P343", "P344", "P345", "P346"}
LOCK_DIR = Path(__file__).resolve().parents[1] / "fixtures" / "check"


def explain(capsys, *argv: str) -> tuple[int, str, str]:
    status = main(["explain", *argv])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


@pytest.mark.parametrize("code", list(CODES))
def test_every_code_is_explained_with_all_four_sections(capsys, code):
    status, out, err = explain(capsys, code)
    entry = CODES[code]
    assert status == 0 and err == ""
    assert out.startswith(f"{code} {entry.name} ({entry.severity})\n")
    found = sections(code)
    assert list(found) == list(SECTIONS)
    for title in SECTIONS:
        assert len(found[title]) > 20, f"{code}: section {title!r} is (nearly) empty"
        assert f"## {title}\n" in out
    assert "```" in found["Example"], f"{code}: the example shows no spec or command"


@pytest.mark.parametrize("code", list(CODES))
def test_examples_trigger_their_code_and_fixes_clear_it(code):
    doc = sections(code)
    path = str(LOCK_DIR / "example.plait") if code in LOCKED else "example.plait"
    examples = PLAIT_BLOCK.findall(doc["Example"])
    for text in examples:
        found = [d.code for d in compile_spec(text, path=path).diagnostics]
        assert code in found, f"{code}: its example reports {found}"
    for text in PLAIT_BLOCK.findall(doc["Fix"]):
        # Snippets name python modules (`kb:lookup`) that are not files beside them; in a 0.1 spec that is
        # the P317 warning, which says exactly that and is not what the snippet is about. Likewise an MCP
        # server in a snippet has no `plait.lock` beside it (the P332 warning).
        found = [
            d.code
            for d in compile_spec(text, path=path).diagnostics
            if not (d.code in ("P317", "P332") and not d.is_error and code != d.code)
        ]
        assert found == [], f"{code}: its fixed example still reports {found}"


def test_codes_that_need_files_still_show_an_example():
    # P004-P009, P307, P318, P319 and P333-P335 (a plait.lock beside the spec) are about files and input size,
    # which a spec snippet cannot show; P610 is reported by `plait check` (suppressions are read there), not by
    # compile_spec.
    runnable = {c for c in CODES if PLAIT_BLOCK.search(sections(c)["Example"])}
    files = {"P004", "P005", "P006", "P007", "P008", "P009", "P307", "P318", "P319", "P333", "P334", "P335"}
    assert set(CODES) - runnable == files | {"P610"}


@pytest.mark.parametrize("word", ["undefined-name", "UNDEFINED-NAME", "undefined_name", "p101", " P101 "])
def test_lookup_by_name_or_code_in_any_case(capsys, word):
    status, out, _ = explain(capsys, word)
    assert status == 0 and out.startswith("P101 undefined-name (error)\n")


def test_unknown_code_is_one_line_pointing_at_the_list(capsys):
    status, out, err = explain(capsys, "P999")
    assert status == 2 and out == ""
    assert err.count("\n") == 1 and "unknown code `P999`" in err and "plait explain --list" in err


def test_unknown_code_suggests_a_close_one(capsys):
    assert "did you mean `undefined-name`?" in explain(capsys, "undefined-nme")[2]


def test_missing_code_is_a_usage_error(capsys):
    status, out, err = explain(capsys)
    assert status == 2 and out == "" and "--list" in err


def test_list_shows_every_code_once(capsys):
    status, out, _ = explain(capsys, "--list")
    lines = out.splitlines()
    assert status == 0 and len(lines) == len(CODES)
    for line, entry in zip(lines, CODES.values()):
        assert line.split()[:3] == [entry.code, entry.name, str(entry.severity)]
        assert line.endswith(entry.summary)


def test_documented_limits_match_the_code():
    from plait.dsl.loader import MAX_FILE_BYTES
    from plait.dsl.parser import MAX_NESTING

    assert f"more than {MAX_NESTING} deep" in sections("P004")["What it catches"]
    assert f"larger than {MAX_FILE_BYTES // (1024 * 1024)} MB" in sections("P005")["What it catches"]
