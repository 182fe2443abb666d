"""`plait check` end to end: exit codes, formats, filters, colour, bad input, and what it must not import."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from plait.core.codes import CODES

from plait.cli import main

CLEAN = 'model fast = "openai/gpt-4o-mini"\nagent main { model = fast }\n'
ERRORS = 'model fast = "openai/gpt-4o-mini"\nagent main {\n  model = fsat\n  fallback = [fast]\n  max_stepz = 3\n}\n'
WARNING = 'model fast = "openai/gpt-4o-mini"\nmodel spare = "openai/gpt-4o"\nagent main { model = fast }\n'
SECRET = "sk-proj-Zx81kQ2mWv7RtY5uPa3LdN9bC4eF6gH0jK"
LEAKY = f'model fast = "openai/gpt-4o-mini" {{ api_key = "{SECRET}" }}\nagent main {{ model = fast }}\n'


@pytest.fixture
def spec(tmp_path, monkeypatch):
    """Write a spec into a fresh working directory and return its relative path."""
    monkeypatch.chdir(tmp_path)

    def write(text: str | bytes, name: str = "spec.plait") -> str:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text if isinstance(text, bytes) else text.encode())
        return name

    return write


def check(capsys, *argv: str) -> tuple[int, str, str]:
    status = main(["check", *argv])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


# --- exit codes ---------------------------------------------------------------------------


def test_clean_spec_exits_0(spec, capsys):
    assert check(capsys, spec(CLEAN)) == (0, "No problems found in 1 file.\n", "")


def test_errors_exit_1_and_are_all_reported(spec, capsys):
    status, out, _ = check(capsys, spec(ERRORS))
    assert status == 1
    assert "error[P101]: undefined name `fsat`" in out and "error[P201]" in out
    assert out.endswith("Found 2 errors in 1 file.\n")


def test_warnings_pass_unless_strict(spec, capsys):
    path = spec(WARNING)
    assert check(capsys, path)[0] == 0
    status, out, _ = check(capsys, "--strict", path)
    assert status == 1 and "warning[P601]" in out


def test_no_path_checks_the_current_directory_recursively(spec, capsys):
    spec(CLEAN, "a.plait")
    spec(ERRORS, "nested/deeper/b.plait")
    for ignored in (
        ".plait/runs/c.plait",
        ".venv/lib/d.plait",
        "venv/e.plait",
        "node_modules/x/f.plait",
        "env/g.plait",
    ):
        spec(ERRORS, ignored)
    spec("home = /x\n", "env/pyvenv.cfg")  # a virtual environment under any name is skipped
    status, out, _ = check(capsys, "--format", "json")
    doc = json.loads(out)
    assert status == 1 and doc["summary"]["checked"] == 2
    assert {d["file"] for d in doc["diagnostics"]} == {str(Path("nested/deeper/b.plait"))}


def test_no_path_in_a_folder_without_specs_is_a_usage_error(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    status, out, err = check(capsys)
    assert (status, out, err) == (2, "", "plait check: no .plait files found under `.`\n")


def test_a_run_store_is_never_taken_for_a_spec(spec, capsys, tmp_path):
    """`plait run` leaves `.plait/` beside a spec; its name matches `*.plait`, its contents are no specs."""
    spec(CLEAN, "examples/demo/demo.plait")
    store = tmp_path / "examples" / "demo" / ".plait"
    (store / "runs").mkdir(parents=True)
    (store / "runs" / "r1.json").write_text("{}")
    (store / "odd.plait").mkdir()  # even a folder named like a spec inside it
    (tmp_path / "examples" / "stray.plait").mkdir()  # and a folder named like a spec anywhere
    from plait.dsl.discover import spec_files

    assert spec_files(tmp_path / "examples") == [tmp_path / "examples" / "demo" / "demo.plait"]
    assert check(capsys, "examples") == (0, "No problems found in 1 file.\n", "")


def test_unknown_format_is_a_usage_error(spec, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["check", "--format", "xml", spec(CLEAN)])
    assert exc.value.code == 2


# --- paths --------------------------------------------------------------------------------


def test_directories_recurse_into_plait_files_and_skip_hidden_ones(spec, capsys):
    spec(CLEAN, "specs/a.plait")
    spec(ERRORS, "specs/deeper/b.plait")
    spec(ERRORS, "specs/.cache/c.plait")
    spec("not a spec", "specs/notes.txt")
    status, out, _ = check(capsys, "--format", "json", "specs")
    doc = json.loads(out)
    assert status == 1
    assert {d["file"] for d in doc["diagnostics"]} == {str(Path("specs/deeper/b.plait"))}
    assert doc["summary"]["checked"] == 2


def test_a_file_imported_by_another_is_checked_as_part_of_it(spec, capsys):
    spec('import "lib.plait"\nagent main { model = fast, tools = [helper] }\n', "specs/main.plait")
    spec('model fast = "openai/gpt-4o-mini"\nagent helper "Helps." { model = fast }\n', "specs/lib.plait")
    # Alone, lib.plait would warn that `helper` is unused; through main.plait it is used.
    status, out, _ = check(capsys, "--strict", "specs")
    assert (status, out) == (0, "No problems found in 2 files.\n")


def test_several_files_make_one_json_document(spec, capsys):
    a, b = spec(ERRORS, "a.plait"), spec(WARNING, "b.plait")
    status, out, _ = check(capsys, "--format", "json", a, b)
    doc = json.loads(out)  # one document, not two
    assert [d["file"] for d in doc["diagnostics"]] == ["a.plait", "a.plait", "b.plait"]
    assert doc["summary"] == {"errors": 2, "warnings": 1, "files": 2, "files_with_problems": 2, "checked": 2}


def test_the_json_summary_counts_the_files_checked_and_those_with_problems(spec, capsys):
    clean, broken = spec(CLEAN, "a.plait"), spec(ERRORS, "b.plait")
    _, out, _ = check(capsys, "--format", "json", clean)
    assert json.loads(out)["summary"] == {
        "errors": 0,
        "warnings": 0,
        "files": 1,
        "files_with_problems": 0,
        "checked": 1,
    }
    _, out, _ = check(capsys, "--format", "json", clean, broken)
    summary = json.loads(out)["summary"]
    assert (summary["files"], summary["files_with_problems"]) == (2, 1)


def test_several_files_make_one_sarif_log(spec, capsys):
    a, b = spec(ERRORS, "a.plait"), spec(WARNING, "b.plait")
    log = json.loads(check(capsys, "--format", "sarif", a, b)[1])
    assert len(log["runs"]) == 1
    uris = [r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in log["runs"][0]["results"]]
    assert uris == ["a.plait", "a.plait", "b.plait"]


def test_sarif_names_the_tools_home_page_as_pyproject_does(spec, capsys):
    import tomllib

    log = json.loads(check(capsys, "--format", "sarif", spec(ERRORS))[1])
    project = tomllib.loads((Path(__file__).resolve().parents[2] / "pyproject.toml").read_text())["project"]
    assert log["runs"][0]["tool"]["driver"]["informationUri"] == project["urls"]["Homepage"]


def test_ci_formats_name_files_relative_to_the_working_directory(spec, capsys, tmp_path):
    absolute = str(tmp_path / spec(ERRORS, "specs/a.plait"))
    annotations = check(capsys, "--format", "github", absolute)[1]
    assert annotations.startswith("::error file=specs/a.plait,line=3,")
    log = json.loads(check(capsys, "--format", "sarif", absolute)[1])
    location = log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert location == {"uri": "specs/a.plait", "uriBaseId": "%SRCROOT%"}


def test_empty_directory_is_a_one_line_error(spec, capsys, tmp_path):
    (tmp_path / "empty").mkdir()
    status, out, err = check(capsys, "empty")
    assert status == 2 and out == "" and err == "plait check: no .plait files found under `empty`\n"


def test_empty_directory_beside_real_specs_only_warns(spec, capsys, tmp_path):
    (tmp_path / "empty").mkdir()
    status, _, err = check(capsys, "empty", spec(CLEAN))
    assert status == 0 and "warning: no .plait files under `empty`" in err


# --- bad input: a diagnostic or one line, never a traceback --------------------------------


BAD_INPUTS = {
    "missing": None,
    "binary": bytes(range(256)) * 4,
    "invalid_utf8": b'model fast = "caf\xe9"\n',
    "nul": b"model fast\x00 = 1\n",
    "empty": b"",
    "one_huge_line": b"agent a { model = " + b"x" * 1_000_000 + b" }",
    "deep_brackets": b"agent a { tools = " + b"[" * 10_000 + b"]" * 10_000 + b" }",
    "garbage_text": '}{][)(\u202e\x1b[2J ->->-> = = """ '.encode(),
}


@pytest.mark.parametrize("case", sorted(BAD_INPUTS))
@pytest.mark.parametrize("fmt", ["text", "json", "github", "sarif"])
def test_bad_input_ends_in_diagnostics(spec, capsys, case, fmt):
    path = "missing.plait" if BAD_INPUTS[case] is None else spec(BAD_INPUTS[case], f"{case}.plait")
    status, out, err = check(capsys, "--format", fmt, path)
    assert status in ((0, 1) if case == "empty" else (1, 2))
    assert "Traceback" not in out + err and "internal error" not in err
    # Bounded: SARIF carries every rule's documentation (about 1.7 KB a code), the other formats only the findings.
    assert "\x1b" not in out and len(out) < (len(CODES) * 2_500 if fmt == "sarif" else 20_000)
    if fmt == "json" and case != "empty":
        assert json.loads(out)["summary"]["errors"] >= 1


def test_missing_file_prints_well(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert check(capsys, "gone.plait") == (
        1,
        "error[P005]: no such file `gone.plait`\n --> gone.plait\n\nFound 1 error in 1 file.\n",
        "",
    )


def test_a_path_too_long_for_the_file_system_is_a_diagnostic(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    status, out, err = check(capsys, "a" * 5000 + ".plait")
    assert status == 1 and out.startswith("error[P005]: ") and err == ""
    assert max(len(line) for line in out.splitlines()[:1]) < 200


def test_invalid_utf8_names_the_byte_and_place(spec, capsys):
    status, out, _ = check(capsys, spec(b'model fast = "openai/gpt-4o-mini"\nagent main { system = "caf\xe9" }\n'))
    assert status == 1 and out.startswith(
        "error[P005]: invalid UTF-8 (byte 0xe9)\n"
        " --> spec.plait:2:27\n"
        "  |\n"
        '2 | agent main { system = "caf\ufffd" }\n'  # the bad byte shown as U+FFFD, the caret under it
        "  |                           ^\n"
    )


# --- filters ------------------------------------------------------------------------------


def _codes(out: str) -> list[str]:
    return [d["code"] for d in json.loads(out)["diagnostics"]]


@pytest.mark.parametrize(
    ("argv", "codes"),
    [
        ([], ["P101", "P201", "P601"]),
        (["--select", "P1"], ["P101"]),
        (["--select", "P1,P6"], ["P101", "P601"]),
        (["--select", "undefined-name"], ["P101"]),
        (["--ignore", "P2,p601"], ["P101"]),
        (["--select", "P1,P2", "--ignore", "P201"], ["P101"]),
    ],
)
def test_select_and_ignore(spec, capsys, argv, codes):
    path = spec(ERRORS + 'model spare = "openai/gpt-4o"\n')
    assert _codes(check(capsys, "--format", "json", *argv, path)[1]) == codes


def test_filtered_out_errors_do_not_fail_the_check(spec, capsys):
    assert check(capsys, "--ignore", "P1,P2", spec(ERRORS))[0] == 0


def test_file_and_syntax_errors_cannot_be_filtered(spec, capsys):
    status, out, _ = check(capsys, "--format", "json", "--select", "P6", "--ignore", "P0", spec("agent main {"))
    assert status == 1 and _codes(out) == ["P001"]


def test_unknown_selector_is_a_usage_error(spec, capsys):
    status, out, err = check(capsys, "--select", "P9", spec(CLEAN))
    assert status == 2 and out == "" and "`P9` matches no code" in err


# --- colour and quiet ---------------------------------------------------------------------


class _Tty:
    def __init__(self, stream):
        self.stream = stream

    def isatty(self):
        return True

    def __getattr__(self, name):
        return getattr(self.stream, name)


def test_colour_only_on_a_tty(spec, capsys, monkeypatch):
    path = spec(ERRORS)
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("TERM", raising=False)
    assert "\x1b[" not in check(capsys, path)[1]  # captured output is not a terminal
    monkeypatch.setattr(sys, "stdout", _Tty(sys.stdout))
    assert "\x1b[1;31merror[P101]" in check(capsys, path)[1]
    assert "\x1b[" not in check(capsys, "--no-color", path)[1]
    monkeypatch.setenv("NO_COLOR", "1")
    assert "\x1b[" not in check(capsys, path)[1]


def test_color_flag_forces_colour_and_never_touches_other_formats(spec, capsys):
    path = spec(ERRORS)
    assert "\x1b[" in check(capsys, "--color", path)[1]
    assert "\x1b" not in check(capsys, "--color", "--format", "json", path)[1]


def test_quiet_prints_diagnostics_only(spec, capsys):
    status, out, _ = check(capsys, "-q", spec(ERRORS))
    assert status == 1 and "Found" not in out and out.startswith("error[P101]")
    assert check(capsys, "--quiet", spec(CLEAN, "ok.plait")) == (0, "", "")


# --- secrets ------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["text", "json", "github", "sarif"])
def test_literal_secret_is_never_echoed(spec, capsys, fmt):
    status, out, err = check(capsys, "--format", fmt, spec(LEAKY))
    assert status == 1 and "P501" in out
    assert SECRET not in out + err and SECRET[4:] not in out + err


# --- isolation ----------------------------------------------------------------------------


def test_check_never_imports_a_python_tool_module(spec, capsys, tmp_path):
    spec("from pathlib import Path\nPath('imported.flag').write_text('x')\ndef go():\n    return 1\n", "side_effect.py")
    path = spec(
        'model fast = "openai/gpt-4o-mini"\ntool t "T." { run = python("side_effect:go") }\n'
        "agent main { model = fast, tools = [t] }\n"
    )
    assert check(capsys, path)[0] == 0
    assert not (tmp_path / "imported.flag").exists()


def _run(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    return subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=60)


@pytest.mark.slow
def test_console_entry_in_a_subprocess(spec, tmp_path):
    path = spec(ERRORS)
    done = _run("-m", "plait", "check", path, cwd=tmp_path)
    assert done.returncode == 1 and "error[P101]" in done.stdout and "\x1b" not in done.stdout
    assert _run("-m", "plait", "check", cwd=tmp_path).returncode == 1  # no path: the working directory


@pytest.mark.slow
def test_check_never_loads_the_runtime_or_httpx(spec, tmp_path):
    path = spec(ERRORS)
    probe = (
        "import sys\nfrom plait.cli import main\n"
        f"status = main(['check', '--format', 'sarif', {path!r}])\n"
        "loaded = sorted(m for m in sys.modules if m.startswith(('plait.runtime', 'httpx', 'httpcore')))\n"
        "print('LOADED', loaded, file=sys.stderr)\nsys.exit(status)\n"
    )
    done = _run("-c", probe, cwd=tmp_path)
    assert done.returncode == 1
    assert "LOADED []" in done.stderr
