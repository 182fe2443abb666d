"""Approvals and asks at a terminal → questions per field from the declared types, through a pseudo-terminal.

An ask is answered field by field (a choice typed as its word or its number,
a number checked, y/n for a bool, an optional field skipped); an approval
takes `approve`/`reject`/`edit`, and `edit` opens $EDITOR (here a small script)
on the arguments. Off a terminal, the resume hint names the real call ids and
ask names, and the hinted command works as printed.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import sys

import pytest
from pty_terminal import Terminal

from plait.cli import main

APPROVAL_SPEC = """
model demo = "scripted/demo" { script = "demo.json" }

tool send "Send copies of a note." {
  params {
    to: string
    copies: int
  }
  run = python("prompt_tools:send")
  approval = required
}

agent main {
  model = demo
  system = "You send notes."
  tools = [send]
  max_steps = 3
}
"""

ASK_SPEC = """
ask confirm "Ship order {{input}}?" {
  answer {
    decision: "approve" | "reject"
    count:    int
    urgent:   bool
    note:     string?
  }
}

chain main = confirm
"""

TOOLS = """
import os

def send(to, copies):  # beside this module, whatever the working directory
    with open(os.path.join(os.path.dirname(__file__), "sent.txt"), "a") as out:
        out.write(f"{copies} to {to}\\n")
    return f"sent {copies} to {to}"
"""


def project(tmp_path, spec, replies=()):
    (tmp_path / "spec.plait").write_text(spec)
    (tmp_path / "prompt_tools.py").write_text(TOOLS)
    (tmp_path / "demo.json").write_text(json.dumps(list(replies)))
    return tmp_path / "spec.plait"


def terminal_env(**extra):
    env = {k: v for k, v in os.environ.items() if k not in ("EDITOR", "VISUAL", "NO_COLOR")}
    return env | {"TERM": "xterm", "COLUMNS": "120"} | extra


def send_call(**arguments):
    return {"tool_calls": [{"name": "send", "arguments": arguments}]}


@pytest.mark.slow
def test_an_ask_is_answered_field_by_field_at_a_terminal(tmp_path):
    spec = project(tmp_path, ASK_SPEC)
    run = Terminal([sys.executable, "-m", "plait", "run", str(spec), "--input", "42"], tmp_path, terminal_env())
    screen = run.until(r"choose 1-2")
    assert "Ship order 42?" in screen and "1) approve, 2) reject" in screen
    assert '"type"' not in screen  # no JSON Schema for a person to read
    os.write(run.fd, b"approve\n")  # the word itself, not JSON
    run.until(r"count \(a whole number\): ")
    os.write(run.fd, b"many\n")
    run.until(r"`many` is not a whole number")
    os.write(run.fd, b"3\n")
    run.until(r"urgent \[y/n\]: ")
    os.write(run.fd, b"y\n")
    run.until(r"note \(optional: empty skips\): ")
    os.write(run.fd, b"\n")
    code, screen = run.finish()
    assert code == 0
    answer = json.loads(screen[screen.rindex("{") : screen.rindex("}") + 1])
    assert answer == {"decision": "approve", "count": 3, "urgent": True, "note": None}


@pytest.mark.slow
def test_edit_opens_the_editor_on_the_arguments_and_checks_what_comes_back(tmp_path):
    spec = project(tmp_path, APPROVAL_SPEC, [send_call(to="ann", copies=1), {"text": "done"}])
    editor = tmp_path / "editor.sh"
    # Saves arguments that do not fit the first time (copies as text), fitting ones the second time.
    editor.write_text(
        "#!/bin/sh\n"
        'if [ -e "$(dirname "$0")/edited-once" ]; then\n'
        '  printf \'{"to": "bob", "copies": 3}\' > "$1"\n'
        "else\n"
        '  touch "$(dirname "$0")/edited-once"; printf \'{"to": "bob", "copies": "three"}\' > "$1"\n'
        "fi\n"
    )
    editor.chmod(0o755)
    env = terminal_env(EDITOR=str(editor))
    run = Terminal([sys.executable, "-m", "plait", "run", str(spec), "--input", "go"], tmp_path, env)
    screen = run.until(r"approve, same for the rest of this run, edit or reject\? \[a/s/e/r\]")
    assert "wants to call `send`" in screen and "to: ann" in screen and "copies: 1" in screen
    os.write(run.fd, b"edit\n")
    run.until(r"expected integer[\s\S]*approve, edit again or reject")
    os.write(run.fd, b"e\n")
    code, screen = run.finish()
    assert code == 0 and "done" in screen
    assert (tmp_path / "sent.txt").read_text() == "3 to bob\n"  # what the editor saved, not the model's arguments


@pytest.mark.slow
def test_typing_approve_and_reject_as_words_decides(tmp_path):
    spec = project(
        tmp_path, APPROVAL_SPEC, [send_call(to="ann", copies=1), send_call(to="cy", copies=2), {"text": "ok"}]
    )
    run = Terminal([sys.executable, "-m", "plait", "run", str(spec), "--input", "go"], tmp_path, terminal_env())
    run.until(r"to: ann[\s\S]*\[a/s/e/r\]")
    os.write(run.fd, b"approve\n")
    run.until(r"to: cy[\s\S]*\[a/s/e/r\]")
    os.write(run.fd, b"reject\n")
    run.until(r"message for the model \(optional\): ")
    os.write(run.fd, b"not cy\n")
    code, _ = run.finish()
    assert code == 0 and (tmp_path / "sent.txt").read_text() == "1 to ann\n"


@pytest.mark.slow
def test_typing_s_approves_the_same_call_again_without_asking(tmp_path):
    same = send_call(to="ann", copies=1)
    spec = project(tmp_path, APPROVAL_SPEC, [same, same, {"text": "ok"}])
    run = Terminal([sys.executable, "-m", "plait", "run", str(spec), "--input", "go"], tmp_path, terminal_env())
    run.until(r"to: ann[\s\S]*\[a/s/e/r\]")
    os.write(run.fd, b"s\n")
    code, screen = run.finish()  # the second call to ann runs unasked
    assert code == 0 and (tmp_path / "sent.txt").read_text() == "1 to ann\n1 to ann\n", screen[-800:]
    assert screen.count("wants to call") == 1


def test_the_resume_hint_names_the_pending_call_and_works_as_printed(tmp_path, capsys, monkeypatch):
    spec = project(tmp_path, APPROVAL_SPEC, [send_call(to="ann", copies=1), {"text": "done"}])
    assert main(["run", str(spec), "--input", "go"]) == 3
    err = capsys.readouterr().err
    [hint] = [line for line in err.splitlines() if line.startswith("resume with: ")]
    assert re.search(r"--decide=main:\S+=approve", hint) and "ID=approve" not in hint.split("(or")[0]
    argv = shlex.split(hint.removeprefix("resume with: ").split("  (or")[0])
    monkeypatch.chdir(tmp_path)
    assert argv[0] == "plait" and main(argv[1:]) == 0
    assert (tmp_path / "sent.txt").read_text() == "1 to ann\n"


def test_the_ask_hint_names_the_ask_with_an_answer_that_fits(tmp_path, capsys, monkeypatch):
    spec = project(tmp_path, ASK_SPEC)
    assert main(["run", str(spec), "--input", "42"]) == 3
    err = capsys.readouterr().err
    # What the answer takes, in words rather than its JSON Schema.
    assert (
        "answer: decision: approve | reject; count: a whole number; urgent: true or false; note: text (optional)" in err
    )
    assert '"properties"' not in err
    [hint] = [line for line in err.splitlines() if line.startswith("resume with: ")]
    argv = shlex.split(hint.removeprefix("resume with: "))
    assert "--answer=confirm=" + json.dumps({"decision": "approve", "count": 0, "urgent": True}) in argv
    monkeypatch.chdir(tmp_path)
    assert main(argv[1:]) == 0
    assert json.loads(capsys.readouterr().out)["decision"] == "approve"
