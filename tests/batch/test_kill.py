"""An interrupted `plait batch` (SIGKILL, SIGTERM, Ctrl-C) run again finishes without redoing a finished row.

Each row's one model call (after a delay) calls a python tool that appends its idempotency key (stable per run and
call position) to effects.txt: a non-idempotent effect, so a row redone would show its key twice. The process is
stopped from outside once some rows have acted, as a person or a supervisor would, then the same command runs again.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from batch_helpers import results, write_effects

pytestmark = pytest.mark.slow

ROWS = 30
CONCURRENCY = 4


def command(root: Path) -> list[str]:
    return [
        sys.executable,
        "-m",
        "plait",
        "batch",
        str(root / "spec.plait"),
        str(root / "in.jsonl"),
        "-o",
        str(root / "out.jsonl"),
        "--concurrency",
        str(CONCURRENCY),
    ]


def effects(root: Path) -> list[str]:
    path = root / "effects.txt"
    return path.read_text().split() if path.exists() else []


def stop_midway(root: Path, signum: int, after: int = 10) -> subprocess.CompletedProcess[str]:
    """Start the batch, send `signum` once `after` rows have acted, and wait for the process to end."""
    proc = subprocess.Popen(command(root), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while len(effects(root)) < after and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)
    assert proc.poll() is None, f"the batch ended before it was stopped: {proc.communicate()}"
    proc.send_signal(signum)
    out, err = proc.communicate(timeout=60)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


@pytest.mark.parametrize("signum", [signal.SIGKILL, signal.SIGTERM, signal.SIGINT], ids=["kill", "term", "int"])
def test_a_stopped_batch_resumes_without_redoing_finished_rows(tmp_path: Path, signum: int) -> None:
    root = write_effects(tmp_path / "kill", rows=ROWS, delay="40ms")
    stopped = stop_midway(root, signum)
    before = effects(root)
    written = results(root / "out.jsonl") if (root / "out.jsonl").exists() else []
    if signum == signal.SIGKILL:
        assert stopped.returncode == -signal.SIGKILL
    else:
        assert stopped.returncode == (143 if signum == signal.SIGTERM else 130), stopped.stderr
        assert "run the same command again to continue" in stopped.stderr
        assert "Traceback" not in stopped.stderr
    assert 0 < len(before) < ROWS  # it really stopped midway
    assert all(r["stop_reason"] == "until" for r in written)  # what it wrote before stopping is finished rows

    again = subprocess.run(command(root), capture_output=True, text=True, timeout=120)
    rows = results(root / "out.jsonl")
    after = effects(root)
    assert [r["index"] for r in rows] == list(range(ROWS))
    assert len(after) == len(set(after)), "a non-idempotent effect happened twice"
    assert set(before) <= set(after)
    # Rows the first process finished are read back as they were, not redone.
    assert all(rows[r["index"]] == r for r in written)
    # A row cut off between a tool call's intent and its completion waits for a person (its outcome is
    # unknown); the first Ctrl-C lets the runs in flight finish, so none is cut off then.
    paused = [r for r in rows if r["stop_reason"] == "pause"]
    assert len(paused) <= (0 if signum == signal.SIGINT else CONCURRENCY)
    assert all("unknown" in r["waiting"] for r in paused)
    assert again.returncode == (3 if paused else 0), again.stderr
    finished = [r for r in rows if r["stop_reason"] == "until"]
    assert len(finished) == ROWS - len(paused)
    assert all(after.count(r["output"]) == 1 for r in finished)  # each finished row acted exactly once
    assert f"{ROWS} rows" in again.stderr and "from an earlier run" in again.stderr


def test_a_batch_can_run_from_another_folder(tmp_path: Path) -> None:
    """The journal lives beside the spec, wherever the command runs from."""
    root = write_effects(tmp_path / "here", rows=3, delay="1ms")
    other = tmp_path / "elsewhere"
    other.mkdir()
    done = subprocess.run(command(root), capture_output=True, text=True, timeout=120, cwd=other)
    assert done.returncode == 0, done.stderr
    assert (root / ".plait").is_dir() and not (other / ".plait").exists()
    assert os.path.getsize(root / "out.jsonl") > 0
