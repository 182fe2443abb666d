"""`plait run` with MCP servers, through the CLI: the files example on the real filesystem server (scripted
replies call its tools, a write waits for approval, the journal records every call, a resume finishes it),
a server that cannot start, and Ctrl-C in the middle of an MCP call, after which no server process is left."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("mcp")

from mcp_helpers import FLAKY, ROOT, locked_spec, new_marker, npm_server, processes_in, processes_with, wait_until  # noqa: E402

from plait.cli import main  # noqa: E402
from plait.core.mcp_lock import LOCK_FILE, Lock, LockedServer, LockedTool, dumps, fingerprint  # noqa: E402

pytestmark = pytest.mark.slow

EXAMPLE = ROOT / "examples" / "files"


@pytest.fixture
def example(tmp_path) -> Path:
    """The example copied out of the repo, with the repo's installed servers beside it, as `npm ci` leaves them
    (npx then runs the installed copy: nothing is downloaded)."""
    npm_server("mcp-server-filesystem")
    shutil.copytree(EXAMPLE, tmp_path / "files", ignore=shutil.ignore_patterns(".plait", "summary.md"))
    shutil.copy(ROOT / "package.json", tmp_path / "package.json")
    (tmp_path / "node_modules").symlink_to(ROOT / "node_modules")
    return tmp_path / "files"


def _run(capsys, *argv: str) -> tuple[int, dict, str]:
    code = main(["run", *argv, "--json"])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, json.loads(out), err


def test_the_files_example_runs_offline_with_approval_and_the_journal(example, capsys):
    spec = str(example / "files.plait")
    assert main(["check", spec]) == 0  # the committed lock is fresh: nothing started
    capsys.readouterr()
    code, report, _ = _run(capsys, spec, "--input", "Summarise this week's stand-ups")
    assert code == 3 and report["stop_reason"] == "interrupt"
    names = [c["name"] for c in report["tool_calls"]]
    assert names == ["list_directory", "read_text_file", "read_text_file"]
    assert not any(c["is_error"] for c in report["tool_calls"])
    assert [w for w in report["warnings"] if w["code"].startswith("mcp_")] == []  # the live server matches its lock
    (pending,) = report["pending"]
    assert pending["tool"] == "write_file" and not (example / "data" / "summary.md").exists()
    assert wait_until(lambda: not processes_in(example / "data") and not processes_in(example))

    code, report, _ = _run(capsys, spec, "--resume", report["run_id"], "--decide", f"{pending['id']}=approve")
    assert code == 0 and report["stop_reason"] == "until", report
    assert "Successfully wrote" in report["output"]
    assert "Chloé: 2 of 5" in (example / "data" / "summary.md").read_text()
    assert [c["name"] for c in report["tool_calls"]] == names + ["write_file"]
    # The journal holds each call with its outcome; the resume ran only the approved write.
    assert main(["trace", report["run_id"], "--dir", str(example), "--json"]) == 0
    calls = [e for e in json.loads(capsys.readouterr().out)["timeline"] if e["kind"] == "tool_call"]
    assert [(c["tool"], c["status"], c["attempt"]) for c in calls] == [
        ("list_directory", "ok", 1),
        ("read_text_file", "ok", 1),
        ("read_text_file", "ok", 1),
        ("write_file", "ok", 1),
    ]
    assert "monday.md" in calls[0]["result"]
    assert wait_until(lambda: not processes_in(example))


def test_a_server_that_cannot_start_fails_the_run_with_its_stderr(tmp_path, capsys):
    marker = new_marker()
    command = [sys.executable, str(FLAKY), "fail-start", f"--marker={marker}"]
    spec = tmp_path / "broken.plait"
    (tmp_path / "broken.replies.json").write_text(
        json.dumps({"a": [{"tool_calls": [{"name": "echo", "arguments": {"text": "hi"}}]}, {"text": "done"}]})
    )
    spec.write_text(
        'model m = "scripted/m" { script = "broken.replies.json" }\n'
        f"mcp flaky {{ command = {json.dumps(command)} }}\n"
        "agent a { model = m, tools = [flaky] }\n"
    )
    schema = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
    entry = LockedServer(
        name="flaky",
        fingerprint=fingerprint(command=command, url=None),
        tools=(LockedTool(name="echo", input_schema=schema),),
    )
    (tmp_path / LOCK_FILE).write_text(dumps(Lock().merged(entry)))
    code = main(["run", str(spec), "--input", "go"])
    _, err = capsys.readouterr()
    assert code == 1
    assert "mcp_start_failed" in err and "MCP server `flaky`" in err and "cannot open the database" in err
    assert not processes_with(marker)


def test_ctrl_c_during_an_mcp_call_leaves_no_server_process(tmp_path):
    marker = new_marker()
    command = [sys.executable, str(FLAKY), f"--marker={marker}"]
    replies = [{"tool_calls": [{"name": "hang", "arguments": {"seconds": 120}}]}, {"text": "done"}]
    mcp = f"mcp flaky {{\n  command = {json.dumps(command)}\n  timeout = 5m\n}}"
    spec = locked_spec(tmp_path, "slow", replies, mcp, "flaky")
    assert wait_until(lambda: not processes_with(marker))
    run = subprocess.Popen(
        [sys.executable, "-m", "plait", "run", str(spec), "--input", "go"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert wait_until(lambda: processes_with(marker), timeout=60), "the server never started"
        run.send_signal(signal.SIGINT)
        _, err = run.communicate(timeout=60)
    finally:
        if run.poll() is None:
            run.kill()
    assert run.returncode == 130, err
    assert wait_until(lambda: not processes_with(marker), timeout=10), "the MCP server outlived the run"
