"""docs/api.md's example runs as written and shows approve, edit and reject; `dir(plait)` is the public API only."""

from __future__ import annotations

import pytest
import re
import subprocess
import sys
from pathlib import Path

import plait

DOC = Path(__file__).resolve().parents[2] / "docs" / "api.md"


def test_the_approval_example_runs_and_each_decision_does_what_the_page_says(capsys, tmp_path, monkeypatch):
    [code] = re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S)
    monkeypatch.chdir(tmp_path)
    exec(compile(code, str(DOC), "exec"), {"__name__": "__main__"})
    out = capsys.readouterr().out.splitlines()
    pending = 'pending: send_email {"to": "ann@example.com", "body": "Build is red."}'
    assert out == [
        pending,
        'done Done. {"to": "ann@example.com", "body": "Build is red."} ran',
        pending,
        'done Done. {"to": "ann@example.com", "body": "Build is green."} ran',
        pending,
        'done Done. {"to": "ann@example.com", "body": "Build is red."} failed',
    ]


def test_dir_shows_only_the_public_names():
    assert dir(plait) == sorted(plait.__all__)
    for name in plait.__all__:
        assert getattr(plait, name) is not None
    # Nothing a module merely imported for itself is public.
    assert not {"Any", "TYPE_CHECKING", "annotations", "typing"} & set(dir(plait))


@pytest.mark.slow
def test_the_public_classes_load_on_first_use_only():
    code = "import sys, plait; a = sorted(m for m in sys.modules if m.startswith('plait.')); plait.Decision; print(a)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
    assert plait.Decision("approve").action == "approve" and plait.Engine.__name__ == "Engine"


def test_every_public_name_has_a_docstring_and_a_row_in_the_api_page():
    page = DOC.read_text()
    for name in plait.__all__:
        if name.startswith("__"):
            continue
        assert getattr(plait, name).__doc__, name
        assert f"`plait.{name}" in page, name
