"""`plait test`: discovery, selection, the report formats, the exit codes, offline by default, escaped output."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from plait.cli import EXIT_ERRORS, EXIT_OK, EXIT_USAGE, main

SPEC = """plait 0.2

model fast = "openai/gpt-4o-mini"

step greet { model = fast, prompt = "Greet {{input}}." }
"""

TESTS = """plait 0.2
import "greet.plait"

test hello {
  input   = "Ann"
  replies = { greet = [{ text = "Hello, Ann!" }] }
  expect output == "Hello, Ann!"
}

test wrong {
  input   = "Bo"
  replies = { greet = [{ text = "Hi, Bo." }] }
  expect output matches "^Hello"
}

test empty {
  input   = "Cy"
  replies = { greet = [{ text = "Hey." }] }
}
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "greet.plait").write_text(SPEC, encoding="utf-8")
    (tmp_path / "greet.test.plait").write_text(TESTS, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_a_failing_expectation_is_shown_against_its_line(project, capsys):
    assert main(["test", "--no-color"]) == EXIT_ERRORS
    out = capsys.readouterr().out
    assert "greet.test.plait .F." in out
    assert "___ greet.test.plait::wrong ___" in out
    assert '  greet.test.plait:13:3\n  13 |   expect output matches "^Hello"\n' in out
    assert '     |   ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n  failed: it is "Hi, Bo."' in out
    assert "2 passed, 1 failed in " in out


def test_all_passing_exits_0(project, capsys):
    assert main(["test", "-k", "not wrong"]) == EXIT_OK
    assert "2 passed in " in capsys.readouterr().out


def test_k_selects_with_and_or_not_and_list_runs_nothing(project, capsys):
    assert main(["test", "--list", "-k", "hello or (empty and not wrong)"]) == EXIT_OK
    assert capsys.readouterr().out.splitlines() == ["greet.test.plait::hello", "greet.test.plait::empty"]
    assert main(["test", "-k", "hello and"]) == EXIT_USAGE
    assert "-k: cannot read `hello and`" in capsys.readouterr().err
    assert main(["test", "-k", "nothing_matches"]) == EXIT_USAGE
    assert "no tests found under `.` matching -k" in capsys.readouterr().err


def test_fail_on_missing_fails_a_test_that_expects_nothing(project, capsys):
    assert main(["test", "-k", "empty"]) == EXIT_OK
    capsys.readouterr()
    assert main(["test", "-k", "empty", "--fail-on-missing", "--no-color"]) == EXIT_ERRORS
    assert "failed: the test expects nothing (--fail-on-missing)" in capsys.readouterr().out


def test_json_report(project, capsys):
    assert main(["test", "--format", "json"]) == EXIT_ERRORS
    data = json.loads(capsys.readouterr().out)
    assert data["summary"]["passed"] == 2 and data["summary"]["failed"] == 1
    [wrong] = [t for t in data["tests"] if t["name"] == "wrong"]
    assert wrong["status"] == "failed"
    assert wrong["failures"] == [
        {"message": 'it is "Hi, Bo."', "expect": 'expect output matches "^Hello"', "line": 13, "column": 3}
    ]
    assert wrong["run_id"]


def test_junit_report(project, capsys):
    assert main(["test", "--format", "junit"]) == EXIT_ERRORS
    suite = ET.fromstring(capsys.readouterr().out).find("testsuite")
    assert suite is not None and suite.get("tests") == "3" and suite.get("failures") == "1"
    [failure] = suite.iter("failure")
    assert failure.get("message") == 'it is "Hi, Bo."'
    assert 'greet.test.plait:13: expect output matches "^Hello"' in (failure.text or "")


def test_github_annotations(project, capsys):
    assert main(["test", "--format", "github"]) == EXIT_ERRORS
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == '::error file=greet.test.plait,line=13,col=3,title=plait test::wrong: it is "Hi, Bo."'
    assert lines[-1].startswith("2 passed, 1 failed in ")


def test_offline_by_default_a_real_model_is_never_called(tmp_path, monkeypatch, capsys):
    (tmp_path / "greet.plait").write_text(SPEC, encoding="utf-8")
    (tmp_path / "live.test.plait").write_text(
        'plait 0.2\nimport "greet.plait"\n'
        'test declared { input = "Ann"\n  expect output == "x" }\n'
        'test live { input = "Ann"\n  replies = live\n  expect output == "x" }\n',
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path)
    assert main(["test", "--no-color"]) == EXIT_ERRORS
    out = capsys.readouterr().out
    assert "model `fast` is a real model (openai/gpt-4o-mini) and `plait test` runs offline" in out
    assert "SKIPPED live.test.plait::live: it calls real models (`replies = live`): run `plait test --live`" in out
    assert "1 failed, 1 skipped in " in out


def test_a_spec_with_errors_is_reported_and_fails(tmp_path, monkeypatch, capsys):
    (tmp_path / "greet.plait").write_text(SPEC, encoding="utf-8")
    (tmp_path / "bad.test.plait").write_text(
        'plait 0.2\nimport "greet.plait"\ntest t { input = "x"\n  expect greet.nope == 1 }\n', encoding="utf-8"
    )
    monkeypatch.chdir(tmp_path)
    assert main(["test"]) == EXIT_ERRORS
    captured = capsys.readouterr()
    assert "error[P702]" in captured.err and "bad.test.plait:4:10" in captured.err


def test_no_tests_is_a_usage_error(tmp_path, monkeypatch, capsys):
    (tmp_path / "greet.plait").write_text(SPEC, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert main(["test"]) == EXIT_USAGE
    assert "plait test: no tests found under `.`" in capsys.readouterr().err
    assert main(["test", "missing.plait"]) == EXIT_USAGE
    assert "no such file or directory: `missing.plait`" in capsys.readouterr().err


def test_text_from_a_run_is_escaped(tmp_path, monkeypatch, capsys):
    (tmp_path / "greet.plait").write_text(SPEC, encoding="utf-8")
    (tmp_path / "esc.test.plait").write_text(
        'plait 0.2\nimport "greet.plait"\ntest t {\n  input = "x"\n'
        '  replies = { greet = [{ text = "\x1b]52;c;cHduZWQ=\x07" }] }\n  expect output == "y"\n}\n',
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path)
    assert main(["test", "--no-color"]) == EXIT_ERRORS
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out
    assert "\\u001b]52;c;cHduZWQ=\\u0007" in out  # shown as JSON shows it, never sent raw


def test_the_examples_tests_pass_and_reach_every_route_case_and_loop_exit(capsys, monkeypatch):
    root = Path(__file__).resolve().parents[2]
    monkeypatch.chdir(root)
    status = main(["test", "examples", "--no-color", "--min-coverage", "100"])
    captured = capsys.readouterr()
    assert status == EXIT_OK, captured.out + captured.err


def test_the_projects_exclude_applies_to_the_search_not_to_a_file_named(project, capsys):
    (project / "pyproject.toml").write_text('[tool.plait]\nexclude = ["fixtures/*"]\n', encoding="utf-8")
    (project / "fixtures").mkdir()
    (project / "fixtures" / "broken.plait").write_text("test t {\n  expect nothing(x)\n}\n", encoding="utf-8")
    assert main(["test", "--list"]) == EXIT_OK
    assert "broken" not in capsys.readouterr().out
    assert main(["test", "fixtures/broken.plait"]) == EXIT_ERRORS
    assert "error[P701]: test `t` has nothing to run: the spec declares no runnable" in capsys.readouterr().err


def test_plait_test_at_the_repository_root_runs_the_examples_and_skips_test_data(capsys, monkeypatch):
    monkeypatch.chdir(Path(__file__).resolve().parents[2])
    assert main(["test", "--list"]) == EXIT_OK
    listed = capsys.readouterr().out.splitlines()
    assert listed and all(line.startswith("examples/") for line in listed)


@pytest.mark.slow
def test_workers_share_the_files_out_and_report_what_one_process_does(project, capsys):
    (project / "again.test.plait").write_text(TESTS.replace("test ", "test again_"), encoding="utf-8")
    assert main(["test", "--format", "json"]) == EXIT_ERRORS
    alone = json.loads(capsys.readouterr().out)["tests"]
    assert main(["test", "--format", "json", "--workers", "2"]) == EXIT_ERRORS
    shared = json.loads(capsys.readouterr().out)["tests"]

    def verdicts(tests: list[dict]) -> list[tuple]:
        return [(t["id"], t["status"], [f["message"] for f in t["failures"]], bool(t["run_id"])) for t in tests]

    assert verdicts(shared) == verdicts(alone)
    assert len(shared) == 6


@pytest.mark.slow
def test_workers_measure_coverage_as_one_process_does(capsys, monkeypatch):
    monkeypatch.chdir(Path(__file__).resolve().parents[2])
    status = main(["test", "examples", "--no-color", "--workers", "2", "--min-coverage", "100"])
    captured = capsys.readouterr()
    assert status == EXIT_OK, captured.out + captured.err
    assert "total: 100.0%" in captured.out
