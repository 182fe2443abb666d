"""Hostile text (model replies, tool results, inputs, server errors) → every terminal path shows it, never obeys it.

OSC 52 writes the clipboard, OSC 8 hides a link, OSC 0 retitles the window,
CSI erases the screen; a one-byte C1 CSI (0x9b) does the same on terminals
that read C1 controls. Each path must print the sequence as visible escapes,
keep newlines, and leave `--json` exact.
"""

from __future__ import annotations

import io
import json
import sys

from plait.cli import main
from plait.term import clean, json_text

HOSTILE = (
    "ok\x1b]52;c;cHduZWQ=\x07 \x1b]8;;http://evil.example/\x1b\\link\x1b]8;;\x1b\\ "
    "\x1b]0;owned\x07 \x1b[2J\x9b31m \u202egnp.exe\nsecond line\tend"
)
#: What must never reach a terminal raw.
RAW = {"\x1b", "\x07", "\x9b", "\u202e"}

SPEC = """
model demo = "scripted/demo" { script = "demo.json" }

tool fetch "Fetch a page." {
  params { url: string }
  run = python("esc_tools:fetch")
}

agent main {
  model = demo
  system = "You fetch."
  tools = [fetch]
  max_steps = 3
}
"""


def call(name, **arguments):
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


def write(tmp_path, replies):
    (tmp_path / "spec.plait").write_text(SPEC)
    (tmp_path / "esc_tools.py").write_text(f"def fetch(url):\n    return {HOSTILE!r}\n")
    (tmp_path / "demo.json").write_text(json.dumps(replies))
    return str(tmp_path / "spec.plait")


def shown(text):
    """No raw control sequence, and the hostile text visible as escapes."""
    assert not RAW & set(text), repr(text)
    assert "\\x1b]52;c;cHduZWQ=\\x07" in text


def cli(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_clean_keeps_newlines_and_tabs_and_shows_every_other_control():
    assert clean("a\nb\tc") == "a\nb\tc"
    assert clean("\x1b[2J\r\x9b\x7f\u202e") == "\\x1b[2J\\x0d\\x9b\\x7f\\u202e"
    assert clean("héllo, 世界") == "héllo, 世界"  # printable text is untouched


def test_json_text_is_the_same_json_value():
    serialized = json.dumps({"x": HOSTILE}, ensure_ascii=False)
    safe = json_text(serialized)
    assert not RAW & set(safe) and json.loads(safe) == {"x": HOSTILE}


def test_run_output_error_and_json(tmp_path, capsys):
    spec = write(tmp_path, [call("fetch", url="x"), {"text": HOSTILE}])
    code, out, err = cli(capsys, "run", spec, "--input", HOSTILE)
    assert code == 0
    shown(out)
    assert "\nsecond line\tend" in out  # newlines and tabs are kept
    assert not RAW & set(err)
    code, out, err = cli(capsys, "run", spec, "--input", HOSTILE, "--json")
    assert not RAW & set(out) and json.loads(out)["output"] == HOSTILE  # exact, and safe to print
    spec = write(tmp_path, [{"error": {"kind": "server_error", "message": HOSTILE}}])
    code, out, err = cli(capsys, "run", spec)
    assert code == 1
    shown(err)


def test_trace_shows_tool_results_input_and_errors_as_escapes(tmp_path, capsys):
    spec = write(tmp_path, [call("fetch", url=HOSTILE), {"error": {"kind": "server_error", "message": HOSTILE}}])
    code, out, _ = cli(capsys, "run", spec, "--input", HOSTILE, "--json")
    run_id = json.loads(out)["run_id"]
    code, out, err = cli(capsys, "trace", run_id, "--dir", str(tmp_path))
    assert code == 0
    assert not RAW & set(out + err)
    assert out.count("\\x1b]52;c") >= 3  # the input, the tool's arguments and result, the error
    code, out, _ = cli(capsys, "trace", run_id, "--dir", str(tmp_path), "--json")
    assert not RAW & set(out)
    [tool] = [item for item in json.loads(out)["timeline"] if item["kind"] == "tool_call"]
    assert tool["result"] == HOSTILE and tool["arguments"] == {"url": HOSTILE}  # exact


def test_chat_streams_replies_as_escapes(tmp_path, capsys, monkeypatch):
    spec = write(tmp_path, {"main": [{"text": HOSTILE}]})
    monkeypatch.setattr(sys, "stdin", io.StringIO("hello\n"))
    code, out, err = cli(capsys, "chat", spec)
    assert code == 0
    shown(out)
    assert not RAW & set(err)


def test_pending_approvals_and_asks_print_escapes(capsys):
    from types import SimpleNamespace

    from plait.cli.answers import print_asks
    from plait.cli.run import print_pending

    ask = SimpleNamespace(id="main/confirm", ask="confirm", question=HOSTILE, schema=None, branch=None)
    pending_call = SimpleNamespace(
        id=f"main:{HOSTILE}", tool="fetch", arguments={"url": HOSTILE}, agent="main", branch=None, ask=None
    )
    print_asks([ask], "spec.plait", "r1")
    print_pending([pending_call], "spec.plait", "r1")
    err = capsys.readouterr().err
    shown(err)


def test_the_last_resort_error_printer_shows_escapes(monkeypatch, capsys):
    import plait.cli.explain as explain

    def explode(args):
        raise RuntimeError(HOSTILE)

    monkeypatch.setattr(explain, "run", explode)
    code, _, err = cli(capsys, "explain", "P001")
    assert code == 2 and err.startswith("plait: internal error: RuntimeError: ")
    shown(err)


def test_runs_export_to_a_terminal_is_exact_json(tmp_path, capsys):
    spec = write(tmp_path, [{"text": HOSTILE}])
    code, out, _ = cli(capsys, "run", spec, "--input", HOSTILE, "--json")
    run_id = json.loads(out)["run_id"]
    code, out, _ = cli(capsys, "runs", "export", run_id, "--dir", str(tmp_path))
    assert code == 0 and not RAW & set(out)
    assert json.loads(out)["input"] == HOSTILE


def test_batch_failure_lines_show_escapes(tmp_path, capsys):
    spec = write(tmp_path, [])
    missing = tmp_path / f"in{HOSTILE[:12]}.jsonl"
    code, _, err = cli(capsys, "batch", spec, str(missing))
    assert code == 2 and not RAW & set(err) and "\\x1b]52" in err


def test_batch_results_on_stdout_are_exact_json_with_no_raw_controls(tmp_path, capsys):
    spec = write(tmp_path, [{"text": HOSTILE}])
    (tmp_path / "rows.jsonl").write_text(json.dumps("row one") + "\n")
    code, out, err = cli(capsys, "batch", spec, str(tmp_path / "rows.jsonl"))
    assert code == 0, err
    assert not RAW & set(out + err)
    [row] = [json.loads(line) for line in out.splitlines()]
    assert row["output"] == HOSTILE


def test_an_mcp_servers_error_at_lock_time_shows_escapes(tmp_path, capsys, monkeypatch):
    import plait.runtime.mcp.locking as locking

    async def refuse(config, fingerprint):
        raise RuntimeError(HOSTILE)  # what a server said when it failed to start

    monkeypatch.setattr(locking, "lock_server", refuse)
    spec = tmp_path / "spec.plait"
    spec.write_text(
        'model m = "openai/gpt-4o"\nmcp gone { command = ["some-server"] }\nagent a { model = m, tools = [gone] }\n'
    )
    code, out, err = cli(capsys, "mcp", "lock", str(spec))
    assert code == 1
    assert not RAW & set(out + err) and "\\x1b]52;c" in err


def test_a_lone_surrogate_is_shown_as_an_escape_and_stays_exact_in_json(tmp_path):
    """A model's `\\ud800` (or a non-UTF-8 file name a tool listed) cannot be encoded for any terminal: printed raw it
    would fail the command after the run. It is shown as `\\ud800` on the terminal and kept exact in --json."""
    import subprocess

    spec = write(tmp_path, [{"text": "name \ud800 here"}])
    env = {**__import__("os").environ, "PYTHONIOENCODING": "utf-8:strict"}
    plain = subprocess.run(
        [sys.executable, "-m", "plait", "run", spec, "--input", "go"], capture_output=True, env=env, cwd=tmp_path
    )
    assert plain.returncode == 0, plain.stderr
    assert b"name \\ud800 here" in plain.stdout
    as_json = subprocess.run(
        [sys.executable, "-m", "plait", "run", spec, "--input", "go", "--json"],
        capture_output=True,
        env=env,
        cwd=tmp_path,
    )
    assert as_json.returncode == 0, as_json.stderr
    assert json.loads(as_json.stdout)["output"] == "name \ud800 here"


def test_a_file_name_holding_escapes_is_shown_not_obeyed_in_diagnostics(tmp_path, capsys):
    # A file name is text from the filesystem (a cloned repository chooses it): the diagnostic's `-->` line and a
    # GitHub annotation's file= property carried it raw.
    spec = tmp_path / "evil\x1b]0;owned\x07\x1b[2J.plait"
    spec.write_text("agent main { model = nope }\n")
    for argv in (["check", str(spec)], ["check", str(spec), "--format", "github"], ["run", str(spec)]):
        code, out, err = cli(capsys, *argv)
        assert code == 1 and "P101" in out + err, (argv, out, err)
        assert not RAW & set(out + err), (argv, out + err)
        assert "]0;owned" in out + err  # the name is still shown, its controls replaced


def test_fmt_and_test_show_a_file_names_escapes(tmp_path, capsys):
    spec = tmp_path / "evil\x1b]0;owned\x07\x1b[2J.plait"
    spec.write_text('model   m = "openai/gpt-4o"\nagent main {   model = m }\n')
    for argv, code in ((["fmt", "--check"], 1), (["fmt"], 0), (["test"], 2)):
        got, out, err = cli(capsys, *argv, str(spec))
        assert got == code and "\\x1b]0;owned\\x07" in out + err, (argv, out, err)
        assert not RAW & set(out + err), (argv, out + err)


def test_fmt_and_check_diffs_show_a_strings_raw_controls_as_escapes(tmp_path, capsys, monkeypatch):
    # A string literal may hold a control character raw (the formatter writes it as \u001b); the diff's `-` and
    # context lines quoted it as it stands in the file.
    monkeypatch.chdir(tmp_path)
    (tmp_path / "spec.plait").write_text(
        'model fast = "openai/gpt-4o-mini"\nagent main { model = fsat, system = "hi \x1b]52;c;cHduZWQ=\x07 there" }\n'
    )
    for argv in (["fmt", "--diff", "spec.plait"], ["check", "--diff", "spec.plait"]):
        code, out, err = cli(capsys, *argv)
        assert code == 1 and out.startswith("--- a/spec.plait\n"), (argv, out, err)
        assert not RAW & set(out + err) and "\\x1b]52;c;cHduZWQ=\\x07" in out, (argv, out)


def test_a_usage_error_quotes_an_unknown_argument_as_escapes(tmp_path, capsys):
    spec = write(tmp_path, [])
    for argv in (["run", spec, "--bo\x1b]0;owned\x07"], ["runs", "export", "x", "--bo\x1b]0;owned\x07"]):
        try:
            code = main(argv)
        except SystemExit as exc:
            code = exc.code
        err = capsys.readouterr().err
        assert code == 2 and "unrecognized arguments: --bo\\x1b]0;owned\\x07" in err, (argv, err)
        assert not RAW & set(err)
