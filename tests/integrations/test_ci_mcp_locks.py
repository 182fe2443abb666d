"""The two CI paths for MCP locks (docs/integrations.md): `plait check --strict` fails on a missing lock and starts
nothing; `plait mcp lock --check` starts every declared server's command, which is why the docs keep it off untrusted
code."""

from __future__ import annotations

import sys

import pytest

from plait.cli import main


def _project(tmp_path):
    # The server's command leaves a file behind when it is started, then exits (it is no MCP server at all).
    spec = tmp_path / "spec.plait"
    marker = tmp_path / "started"
    command = f'["{sys.executable}", "-c", "open(\'started\', \'w\').close()"]'
    spec.write_text(
        'model fast = "openai/gpt-4o-mini"\n'
        f'mcp files "Files." {{ command = {command}, tools = [read_text_file] }}\n'
        "agent main { model = fast, tools = [files] }\n"
    )
    return spec, marker


def test_check_strict_fails_on_a_missing_lock_without_starting_the_server(tmp_path, capsys):
    spec, marker = _project(tmp_path)
    assert main(["check", "--strict", str(spec)]) == 1
    assert "P332" in capsys.readouterr().out
    assert not marker.exists()


@pytest.mark.slow
def test_mcp_lock_check_starts_the_declared_command(tmp_path, capsys):
    spec, marker = _project(tmp_path)
    assert main(["mcp", "lock", "--check", str(spec)]) == 1
    assert marker.exists()


def test_mcp_lock_check_says_in_its_help_that_it_starts_the_servers(capsys):
    with pytest.raises(SystemExit):
        main(["mcp", "lock", "--help"])
    shown = " ".join(capsys.readouterr().out.split())
    assert "--check start every server" in shown and "plait check --strict` starts none" in shown
