"""A run killed (SIGKILL) during an MCP call resumes by the journal's effects ledger: a tool the server marks
`idempotentHint` is called again on its own; any other waits for a person to say retry or skip."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path
from typing import Callable

import pytest

pytest.importorskip("mcp")

from mcp_helpers import FLAKY, new_marker, processes_with, wait_until  # noqa: E402

from plait.cli import main  # noqa: E402

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def locked(tmp_path_factory) -> tuple[Path, str]:
    """A folder with the flaky server declared and locked, shared by the module's runs: (folder, marker)."""
    folder = tmp_path_factory.mktemp("crash")
    marker = new_marker()
    command = [sys.executable, str(FLAKY), f"--marker={marker}"]
    (folder / "crash.plait").write_text(
        'model m = "scripted/m" { script = "crash.replies.json" }\n'
        f"mcp flaky {{\n  command = {json.dumps(command)}\n  timeout = 5m\n}}\n"
        "agent a { model = m, tools = [flaky] }\n"
    )
    (folder / "crash.replies.json").write_text("{}")
    assert main(["mcp", "lock", str(folder / "crash.plait")]) == 0
    return folder, marker


def _latest(capsys, folder: Path) -> str:
    capsys.readouterr()
    assert main(["runs", "--dir", str(folder), "--json"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.strip()]
    return max(rows, key=lambda r: r["started"])["id"]


def _kill_during(folder: Path, marker: str, call: dict, running: Callable[[], bool]) -> None:
    """Run a spec whose first reply makes `call`, and SIGKILL plait once `running()` says the call is under way."""
    (folder / "crash.replies.json").write_text(json.dumps({"a": [{"tool_calls": [call]}, {"text": "done"}]}))
    run = subprocess.Popen(
        [sys.executable, "-m", "plait", "run", "crash.plait", "--input", "go"],
        cwd=folder,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        assert wait_until(running, timeout=90), "the call never got under way"
        run.send_signal(signal.SIGKILL)
        run.wait(30)
    finally:
        if run.poll() is None:
            run.kill()
    # Nothing can stop the servers of a SIGKILLed plait: a server is left to notice its closed stdin. Here, not wait.
    for pid in processes_with(marker):
        subprocess.run(["kill", str(pid)], check=False)
    assert wait_until(lambda: not processes_with(marker))


def test_an_idempotent_mcp_call_cut_off_is_called_again_on_resume(locked, capsys, tmp_path):
    folder, marker = locked
    flag = tmp_path / "flag"
    flag.write_text("hold")
    started = Path(f"{flag}.started")
    _kill_during(folder, marker, {"name": "wait_while", "arguments": {"path": str(flag)}}, started.exists)
    flag.unlink()
    run_id = _latest(capsys, folder)
    code = main(["resume", run_id, "--dir", str(folder), "--json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 0 and report["output"] == "done", report
    assert [(c["name"], c["is_error"]) for c in report["tool_calls"]] == [("wait_while", False)]


def test_a_non_idempotent_mcp_call_cut_off_waits_for_a_person(locked, capsys):
    folder, marker = locked

    def journaled() -> bool:  # the intent is written just before the call goes to the server
        if not processes_with(marker):
            return False
        main(["trace", _latest(capsys, folder), "--dir", str(folder), "--json"])
        return any(e["kind"] == "tool_call" for e in json.loads(capsys.readouterr().out)["timeline"])

    _kill_during(folder, marker, {"name": "hang", "arguments": {"seconds": 600}}, journaled)
    run_id = _latest(capsys, folder)
    code = main(["resume", run_id, "--dir", str(folder)])
    err = capsys.readouterr().err
    assert code == 3 and "`hang` is not idempotent" in err, err
    pending = err.split("--decide ")[1].split("=")[0]
    code = main(["resume", run_id, "--dir", str(folder), "--decide", f"{pending}=skip", "--json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 0 and report["output"] == "done", report
