"""`plait run` on bad arguments: one line naming what to do instead, exit 2."""

from __future__ import annotations

import pytest

from plait.cli import main

SPEC = 'model m = "scripted/m" { script = "r.json" }\nstep s1 { model = m, prompt = "{{input}}" }\nagent a { model = m }\nchain main = s1 -> a\n'


@pytest.fixture
def spec(tmp_path):
    (tmp_path / "r.json").write_text('{"s1": [{"text": "one"}], "a": [{"text": "two"}]}')
    path = tmp_path / "s.plait"
    path.write_text(SPEC)
    return path


def run(capsys, *argv):
    status = main(["run", *map(str, argv)])
    out, err = capsys.readouterr()
    return status, out, err


def test_unknown_entry_lists_the_runnables(spec, capsys):
    status, out, err = run(capsys, spec, "--entry", "nope")
    assert status == 2 and out == ""
    assert err.strip().splitlines() == [
        "plait: unknown_runnable: `nope` is not a runnable declared in the spec; expected one of: a, s1, main"
    ]


def test_missing_input_file_is_one_line(spec, tmp_path, capsys):
    status, _, err = run(capsys, spec, "--input-file", tmp_path / "missing.txt")
    assert status == 2
    assert err.strip() == f"plait: cannot read the input file `{tmp_path / 'missing.txt'}`: No such file or directory"


def test_input_file_that_is_not_text_is_one_line(spec, tmp_path, capsys):
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"\xff\xfe")
    status, _, err = run(capsys, spec, "--input-file", bad)
    assert status == 2
    assert err.strip() == f"plait: the input file `{bad}` is not UTF-8 text"


def test_the_named_entry_runs(spec, capsys):
    status, out, _ = run(capsys, spec, "--entry", "s1", "--input", "hi")
    assert (status, out.strip()) == (0, "one")
