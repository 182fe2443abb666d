"""`plait completion bash|zsh|fish` (from the argparse tree) and `-V/--version`."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from plait import __version__
from plait.cli import COMMANDS, main
from plait.cli.completion import tree


def _script(capsys, shell: str) -> str:
    assert main(["completion", shell]) == 0
    return capsys.readouterr().out


def test_version_short_and_long(capsys):
    for flag in ("-V", "--version"):
        with pytest.raises(SystemExit) as stop:
            main([flag])
        assert stop.value.code == 0
        assert capsys.readouterr().out == f"plait {__version__}\n"


def test_the_tree_has_every_command_and_its_real_options():
    root = tree()
    assert [c.name for c in root.commands] == list(COMMANDS)
    check = next(c for c in root.commands if c.name == "check")
    by_flag = {f: o for o in check.options for f in o.flags}
    assert by_flag["--format"].values == ("text", "json", "github", "sarif")
    assert by_flag["--strict"].values is None
    assert by_flag["--config"].files and check.takes_files
    runs = next(c for c in root.commands if c.name == "runs")
    assert {c.name for c in runs.commands} >= {"export", "prune"}  # nested sub-commands are walked too


def _complete(script: str, *words: str) -> list[str]:
    """What bash offers for `plait WORDS...` (the last word is the one being completed)."""
    line = " ".join(f"'{w}'" for w in ("plait", *words))
    program = f"""{script}
COMP_WORDS=({line}); COMP_CWORD={len(words)}
_plait
printf '%s\\n' "${{COMPREPLY[@]}}"
complete -p plait >&2
"""
    done = subprocess.run(["bash", "--norc", "--noprofile", "-c", program], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stderr.strip() == "complete -F _plait plait"
    return [w for w in done.stdout.splitlines() if w]


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("bash") is None, reason="no bash on this machine")
def test_bash_completion_completes_commands_options_and_values(capsys, tmp_path, monkeypatch):
    script = _script(capsys, "bash")
    assert sorted(_complete(script, "ch")) == ["chat", "check"]
    assert _complete(script, "check", "--st") == ["--strict"]
    assert _complete(script, "check", "--format", "s") == ["sarif"]
    assert _complete(script, "completion", "") == ["bash", "zsh", "fish"]
    assert "export" in _complete(script, "runs", "")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "agents.plait").write_text("")
    assert _complete(script, "check", "ag") == ["agents.plait"]
    assert "-V" in _complete(script, "-")


def test_zsh_script_defines_a_function_per_command_with_the_options(capsys):
    script = _script(capsys, "zsh")
    assert script.startswith("#compdef plait\n")
    for name in COMMANDS:
        assert f"_plait_{name.replace('-', '_')}() {{" in script
    assert "'--format[output format (default: text)]:value:(text json github sarif)'" in script
    assert "compdef _plait plait" in script


def test_fish_script_completes_commands_and_option_values(capsys):
    script = _script(capsys, "fish")
    assert "complete -c plait -n '__fish_use_subcommand; and not __fish_seen_subcommand_from check" in script
    assert "-l format -d 'output format (default: text)' -x -a 'text json github sarif'" in script
    assert "-s V -l version" in script


@pytest.mark.slow
def test_completion_runs_as_a_command(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "plait", "completion", "bash"], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0 and "complete -F _plait plait" in done.stdout


def test_an_unknown_shell_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["completion", "tcsh"])
    assert stop.value.code == 2 and "invalid choice: 'tcsh'" in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("zsh") is None, reason="zsh is not installed (.ci/run installs it)")
def test_zsh_script_parses(capsys, tmp_path):
    path = tmp_path / "_plait"
    path.write_text(_script(capsys, "zsh"))
    done = subprocess.run(["zsh", "-n", str(path)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("fish") is None, reason="fish is not installed (.ci/run installs it)")
def test_fish_completes_commands_and_option_values(capsys, tmp_path):
    path = tmp_path / "plait.fish"
    path.write_text(_script(capsys, "fish"))

    def offered(line: str) -> list[str]:
        done = subprocess.run(
            ["fish", "--no-config", "-c", f"source {path}; complete -C '{line}'"],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        return [row.split("\t")[0] for row in done.stdout.splitlines()]

    assert offered("plait ch") == ["chat", "check"]
    assert offered("plait check --format ") == ["github", "json", "sarif", "text"]
    assert {"export", "prune", "rm"} <= set(offered("plait runs "))
