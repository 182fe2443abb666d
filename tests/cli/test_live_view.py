"""The run view → what a person sees: a live tree at a terminal (through a pseudo-terminal), plain lines elsewhere.

The terminal test synchronises on output only: the spec's tool blocks on a
FIFO, the test reads the pseudo-terminal until the tree shows the tool in
flight, then opens the FIFO to let the run finish.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from pty_terminal import Terminal


SPEC = """
model demo = "scripted/demo" { script = "demo.json" }

tool hold "Wait until the test says go." {
  run = python("live_tools:hold")
}

tool add "Add two numbers." {
  params {
    a: int
    b: int
  }
  run = python("live_tools:add")
}

agent main {
  model = demo
  system = "You wait."
  tools = [hold, add]
  max_steps = 4
}
"""

TOOLS = """
import os

def hold():
    with open(os.environ["PLAIT_TEST_FIFO"]) as fifo:
        return fifo.read()

def add(a, b):
    return a + b
"""


def call(name, **arguments):
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


#: $1 per million input tokens, $2 per million output: a scripted run's few tokens cost a fraction of a cent.
PRICED = '{ script = "demo.json", price = { input = 1.0, output = 2.0 } }'


def project(tmp_path, replies, priced=False):
    spec = SPEC.replace('{ script = "demo.json" }', PRICED) if priced else SPEC
    (tmp_path / "spec.plait").write_text(spec)
    (tmp_path / "live_tools.py").write_text(TOOLS)
    (tmp_path / "demo.json").write_text(json.dumps(replies))
    return tmp_path / "spec.plait"


def plait_argv(*args):
    return [sys.executable, "-m", "plait", *args]


@pytest.mark.slow
def test_the_terminal_view_shows_what_runs_now_and_a_summary_that_stays(tmp_path):
    spec = project(tmp_path, [call("hold"), call("add", a=2, b=3), {"text": "5"}], priced=True)
    fifo = tmp_path / "go.fifo"
    os.mkfifo(fifo)
    env = {**os.environ, "PLAIT_TEST_FIFO": str(fifo), "TERM": "xterm", "COLUMNS": "120", "LINES": "40"}
    env.pop("NO_COLOR", None)
    terminal = Terminal(plait_argv("run", str(spec), "--input", "go"), tmp_path, env)
    # Before any step finished: the tree of what runs now (the entry, the agent, its tool call in flight).
    # The finished model call scrolls above the tree, which still shows the tool call in flight.
    # The counts under the tree accrue: one model call now, its tokens and its cost counted (a fraction of a
    # cent in digits, as people read money, not `$2.6e-05`).
    screen = terminal.until(
        r"main: step 1 \(demo\) tool_calls \$0\.0000\d+\r\n[\s\S]*tool hold\s+\d+\.\ds\r\n"
        r"1 model call · 0 tool calls · [1-9]\d* tokens \(\d+ in, \d+ out\) · \$0\.0000[1-9]\d\b"
    )
    assert re.search(r"main\s+run \d{8}-\d{6}-\w+", screen)
    with open(fifo, "w") as release:
        release.write("released")
    code, screen = terminal.finish()
    assert code == 0
    assert "main: tool hold ok" in screen and "main: tool add ok" in screen
    # The summary stays after the panel is erased: it is the last thing on the screen.
    tail = screen[screen.rindex("\r5\r\n") :]  # from the output line on
    assert re.search(r"run \d{8}-\d{6}-\w+ done in \d+\.\ds · 3 model calls · 2 tool calls · \d+ tokens", tail)
    assert re.search(r"tokens \(\d+ in, \d+ out\)\s·\s\$0\.0000[1-9]\d\b", tail), tail  # the run's cost stays too
    assert "e-0" not in screen
    assert "output: above (stdout)" in tail
    assert "Traceback" not in screen


@pytest.mark.slow
def test_plain_lines_when_stderr_is_not_a_terminal(tmp_path):
    spec = project(tmp_path, [call("add", a=2, b=3), {"text": "5"}])
    done = subprocess.run(
        plait_argv("run", str(spec)), cwd=tmp_path, capture_output=True, text=True, timeout=120, env=dict(os.environ)
    )
    assert done.returncode == 0 and done.stdout == "5\n"
    assert done.stderr.splitlines() == [
        "main: step 1 (demo) tool_calls",
        "main: tool add ok",
        "main: step 2 (demo) stop",
    ]


def test_the_summary_names_the_file_the_output_went_to(tmp_path, monkeypatch):
    from plait.cli import live

    target = tmp_path / "out.txt"
    with open(target, "w") as out:
        monkeypatch.setattr(sys, "stdout", out)
        assert live._stdout_target() == f"stdout, written to {Path(target).resolve()}"


def test_a_dumb_terminal_gets_plain_lines(monkeypatch):
    from plait.cli import live

    class Tty:
        def isatty(self):
            return True

    monkeypatch.setenv("TERM", "dumb")
    assert isinstance(live.view_for(Tty()), live.PlainView)
    monkeypatch.setenv("TERM", "xterm")
    assert isinstance(live.view_for(Tty()), live.LiveView)
