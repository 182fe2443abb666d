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


def test_without_main_and_with_several_roots_the_usage_error_lists_them(tmp_path, capsys):
    (tmp_path / "r.json").write_text('{"s1": [{"text": "one"}], "a": [{"text": "two"}]}')
    path = tmp_path / "s.plait"
    path.write_text(
        'model m = "scripted/m" { script = "r.json" }\nstep s1 { model = m, prompt = "{{input}}" }\n'
        "agent a { model = m }\n"
    )
    status, out, err = run(capsys, path, "--input", "hi")
    assert status == 2 and out == ""
    assert err.strip().endswith("pass --entry NAME, one of: s1, a")


def test_the_only_root_runs_without_entry_even_when_it_delegates(tmp_path, capsys):
    (tmp_path / "r.json").write_text('{"writer": [{"text": "done"}], "helper": []}')
    path = tmp_path / "s.plait"
    path.write_text(
        'model m = "scripted/m" { script = "r.json" }\nagent helper "Helps." { model = m }\n'
        "agent writer { model = m, tools = [helper] }\n"
    )
    status, out, _ = run(capsys, path, "--input", "hi")
    assert (status, out.strip()) == (0, "done")
