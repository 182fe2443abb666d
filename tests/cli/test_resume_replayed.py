"""`plait resume` → the model replies and tool results it read back from the journal are marked `(replayed)`.

At a terminal (through a pseudo-terminal) and as plain lines: what ran before
is not shown as if it ran again, and the summary counts the replayed calls.
"""

from __future__ import annotations

import json
import os
import re

import pytest
from pty_terminal import Terminal

from plait.cli import main
from test_live_view import call, plait_argv, project


@pytest.mark.slow
def test_a_resume_at_a_terminal_marks_what_it_replayed(tmp_path, capsys):
    spec = project(tmp_path, [call("add", a=2, b=3), {"error": {"kind": "server_error", "message": "down"}}])
    assert main(["run", str(spec), "--json"]) == 1
    run_id = json.loads(capsys.readouterr().out)["run_id"]
    replies = json.loads((tmp_path / "demo.json").read_text())
    (tmp_path / "demo.json").write_text(json.dumps([*replies, {"text": "5"}]))  # the next reply, after the failed one
    env = {**os.environ, "TERM": "xterm", "COLUMNS": "120"}
    terminal = Terminal(plait_argv("resume", run_id, "--dir", str(tmp_path)), tmp_path, env)
    code, screen = terminal.finish()
    assert code == 0
    assert "main: step 1 (demo) tool_calls (replayed)" in screen
    assert "main: tool add ok (replayed)" in screen
    assert re.search(r"main: step 2 \(demo\) stop\r?\n", screen)  # the call that runs now is not marked
    assert "2 model calls (1 replayed)" in screen


def test_resume_off_a_terminal_marks_replayed_lines_and_draws_nothing(tmp_path, capsys):
    spec = project(tmp_path, [call("add", a=2, b=3), {"error": {"kind": "server_error", "message": "down"}}])
    assert main(["run", str(spec), "--json"]) == 1
    run_id = json.loads(capsys.readouterr().out)["run_id"]
    replies = json.loads((tmp_path / "demo.json").read_text())
    (tmp_path / "demo.json").write_text(json.dumps([*replies, {"text": "5"}]))  # the next reply, after the failed one
    assert main(["resume", run_id, "--dir", str(tmp_path)]) == 0
    out, err = capsys.readouterr()
    assert out == "5\n"
    assert err.splitlines() == [
        "main: step 1 (demo) tool_calls (replayed)",
        "main: tool add ok (replayed)",
        "main: step 2 (demo) stop",
    ]
    assert "\x1b" not in err
