"""One exit-code table (src/plait/cli/__init__.py), followed by every command and printed by every `--help`.
A spec error and a missing file mean the same to `check`, `fmt`, `diff`, `render`, `graph` and `run`: exit 1."""

from __future__ import annotations

import pytest

from plait.cli import COMMANDS, EXIT_CODES, exit_code_table, main

BAD = 'model fast = "openai/gpt-4o-mini"\nagent main { model = fsat }\n'  # compiles to P101
BROKEN = "agent main {\n  model = \n"  # a syntax error: what `fmt` can see
CLEAN = 'model fast = "openai/gpt-4o-mini"\n\nagent main { model = fast }\n'  # as `plait fmt` writes it


@pytest.fixture
def here(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bad.plait").write_text(BAD)
    (tmp_path / "broken.plait").write_text(BROKEN)
    (tmp_path / "clean.plait").write_text(CLEAN)
    return tmp_path


def test_the_table_has_every_documented_code():
    assert sorted(EXIT_CODES) == [0, 1, 2, 3, 4, 5, 6, 7, 130, 143]


@pytest.mark.parametrize("command", [None, *COMMANDS])
def test_every_help_prints_the_table(command, capsys):
    with pytest.raises(SystemExit) as exc:
        main([command, "--help"] if command else ["--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert exit_code_table() in out
    for code in EXIT_CODES:
        assert f"\n  {code:<3} " in out


MISSING = [
    ["check", "gone.plait"],
    ["fmt", "gone.plait"],
    ["fmt", "--check", "gone.plait"],
    ["diff", "gone.plait", "clean.plait"],
    ["diff", "clean.plait", "gone.plait"],
    ["render", "gone.plait", "--format", "dot"],
    ["graph", "gone.plait", "--json"],
]
SPEC_ERRORS = [
    ["check", "bad.plait"],
    ["check", "broken.plait"],
    ["fmt", "broken.plait"],
    ["fmt", "--check", "broken.plait"],
    ["diff", "bad.plait", "clean.plait"],
    ["diff", "clean.plait", "broken.plait"],
    ["render", "bad.plait", "--format", "dot"],
    ["graph", "bad.plait", "--json"],
]


@pytest.mark.parametrize("argv", MISSING, ids=" ".join)
def test_a_missing_file_is_a_p005_spec_error_everywhere(argv, here, capsys):
    assert main(argv) == 1
    captured = capsys.readouterr()
    assert "error[P005]: no such file `gone.plait`" in captured.out + captured.err
    assert "Traceback" not in captured.err


@pytest.mark.parametrize("argv", SPEC_ERRORS, ids=" ".join)
def test_a_spec_error_exits_1_everywhere(argv, here, capsys):
    assert main(argv) == 1
    captured = capsys.readouterr()
    assert "error[P" in captured.out + captured.err


@pytest.mark.parametrize("command", ["run", "chat"])
def test_run_and_chat_follow_the_table_on_a_missing_file_and_a_spec_error(command, here, capsys):
    assert main([command, "gone.plait"]) == 1
    assert main([command, "bad.plait"]) == 1
    err = capsys.readouterr().err
    assert "error[P005]" in err and "error[P101]" in err


@pytest.mark.parametrize(
    "argv",
    [["diff", "git:HEAD", "clean.plait"], ["explain", "P999"], ["fmt", "empty"], ["check", "empty"]],
    ids=" ".join,
)
def test_usage_errors_exit_2(argv, here, capsys):
    (here / "empty").mkdir()
    assert main(argv) == 2
    assert capsys.readouterr().err.count("\n") >= 1


def test_fmt_and_diff_succeed_and_find_differences_as_the_table_says(here, capsys):
    assert main(["fmt", "--check", "clean.plait"]) == 0
    assert main(["diff", "clean.plait", "clean.plait"]) == 0
    (here / "other.plait").write_text(CLEAN.replace("gpt-4o-mini", "gpt-4o"))
    assert main(["diff", "clean.plait", "other.plait"]) == 1
    (here / "messy.plait").write_text(CLEAN.replace("{ model", "{   model"))
    assert main(["fmt", "--check", "messy.plait"]) == 1


def test_fmt_with_no_path_formats_the_current_directory(here, capsys):
    (here / "broken.plait").unlink()
    (here / "bad.plait").write_text(BAD.replace("{ model", "{   model"))
    assert main(["fmt", "--check"]) == 1
    assert capsys.readouterr().out == "would reformat bad.plait\n"


@pytest.mark.parametrize("command", [c for c in COMMANDS if c != "fake-server"])
def test_an_unknown_option_prints_the_commands_usage_and_exits_2(command, capsys):
    with pytest.raises(SystemExit) as exc:
        main([command, "--bogus"])
    err = capsys.readouterr().err
    # A command with a required argument may complain of that first: either way it is the command's own usage.
    assert exc.value.code == 2 and err.startswith(f"usage: plait {command} ") and f"\nplait {command}: error: " in err


def test_an_unknown_option_is_named_under_the_commands_usage(here, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["check", "clean.plait", "--bogus"])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and err.startswith("usage: plait check ")
    assert err.endswith("plait check: error: unrecognized arguments: --bogus\n")
