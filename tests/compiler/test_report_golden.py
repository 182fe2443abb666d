"""Fixture specs → `plait check` text and JSON output, compared with the goldens beside them.

Each `tests/fixtures/check/<case>.plait` has `<case>.txt` (text, no colour)
and `<case>.json`. `UPDATE_GOLDENS=1 pytest tests/compiler/test_report_golden.py`
rewrites the goldens; review the diff before committing it.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from plait.cli import main
from plait.core.codes import CODES

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "check"
CASES = sorted(p.stem for p in FIXTURES.glob("*.plait"))
UPDATE = os.environ.get("UPDATE_GOLDENS") == "1"


def _check(case: str, fmt: str, capsys, monkeypatch) -> tuple[int, str]:
    monkeypatch.chdir(FIXTURES)
    status = main(["check", "--no-color", "--format", fmt, f"{case}.plait"])
    out = capsys.readouterr().out
    # The loader names the import root by its absolute path; goldens must not depend on the checkout.
    return status, out.replace(str(FIXTURES), "<fixtures>")


def _compare(path: Path, actual: str) -> None:
    if UPDATE or not path.exists():
        path.write_text(actual, encoding="utf-8")
        if not UPDATE:
            pytest.fail(f"{path.name} did not exist and was written; review and commit it")
        return
    assert actual == path.read_text(encoding="utf-8"), f"{path.name} differs; UPDATE_GOLDENS=1 rewrites it"


@pytest.mark.parametrize("case", CASES)
def test_text_golden(case, capsys, monkeypatch):
    status, out = _check(case, "text", capsys, monkeypatch)
    _compare(FIXTURES / f"{case}.txt", out)
    # A case showing a warning or a note (P6xx, a missing or stale plait.lock) checks clean: they do not fail it.
    warns = re.match(r"p\d{3}_", case) is not None and CODES[case[:4].upper()].severity in ("warning", "info")
    assert status == (0 if case == "clean" or warns else 1)


@pytest.mark.parametrize("case", CASES)
def test_json_golden(case, capsys, monkeypatch):
    status, out = _check(case, "json", capsys, monkeypatch)
    _compare(FIXTURES / f"{case}.json", out)
    json.loads(out)


@pytest.mark.parametrize("case", [c for c in CASES if re.match(r"p\d{3}_", c)])
def test_case_reports_its_code(case, capsys, monkeypatch):
    """A case named `pNNN_<rule name>[_more]` exists to show code PNNN: make sure it still does."""
    _, out = _check(case, "json", capsys, monkeypatch)
    code = case[:4].upper()
    assert code in {d["code"] for d in json.loads(out)["diagnostics"]}
    assert case[5:].replace("_", "-").startswith(CODES[code].name)


#: Codes whose case would not fit a golden (test_problem_cap.py has theirs): P008 needs more than a thousand
#: problems, P009 more than 250,000 uses of names.
UNGOLDEN = {"P008", "P009"}


def test_every_code_has_a_case():
    covered = {c[:4].upper() for c in CASES if re.match(r"p\d{3}_", c)}
    assert set(CODES) - covered == UNGOLDEN
