"""`plait batch --unknown retry|skip`: a batch whose process died inside a non-idempotent tool call (the call's
outcome is unknown) settles every such call with one answer when it runs again, instead of pausing each row for
its own `--decide`. The tool ends the process itself the first time (as a crash would), so no clock is involved."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from batch_helpers import results, write_effects

pytestmark = pytest.mark.slow

DIES_ONCE = """
import os

HERE = os.path.dirname(os.path.abspath(__file__))

def record(note: str, idempotency_key: str = "") -> str:
    marker = os.path.join(HERE, "died")
    if not os.path.exists(marker):
        open(marker, "w").close()
        os._exit(1)  # the process dies mid-call: the journal holds the intent, never the completion
    with open(os.path.join(HERE, "effects.txt"), "a") as fh:
        fh.write(idempotency_key + "\\n")
    return idempotency_key
"""


def batch(root: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "plait", "batch", str(root / "spec.plait"), str(root / "in.jsonl")]
    argv += ["-o", str(root / "out.jsonl"), "--concurrency", "1", *extra]
    return subprocess.run(argv, capture_output=True, text=True, timeout=120)


@pytest.fixture
def crashed(tmp_path: Path) -> Path:
    root = write_effects(tmp_path / "p", rows=2, delay="0ms")
    (root / "fx.py").write_text(DIES_ONCE)
    assert batch(root).returncode == 1  # died inside row 0's tool call
    return root


def test_by_default_a_row_with_an_unknown_outcome_pauses(crashed: Path) -> None:
    again = batch(crashed)
    rows = results(crashed / "out.jsonl")
    assert [r["stop_reason"] for r in rows] == ["pause", "until"] and again.returncode == 3
    assert "unknown" in rows[0]["waiting"]
    assert rows[0]["pending"] == [{"id": "main:m-1-1", "kind": "unknown_outcome"}]  # no id to scrape from a message


@pytest.mark.parametrize("action", ["retry", "skip"])
def test_unknown_settles_every_such_call_at_once(crashed: Path, action: str) -> None:
    again = batch(crashed, "--unknown", action)
    rows = results(crashed / "out.jsonl")
    assert [r["stop_reason"] for r in rows] == ["until", "until"], again.stderr
    assert again.returncode == 0
    effects = (crashed / "effects.txt").read_text().split()
    # retry runs row 0's call again; skip tells the model it may not have run (its `until` is then met by it).
    assert len(effects) == (2 if action == "retry" else 1)


#: Both rows' calls are in flight when the process dies: each waits in the tool for the other (a barrier, not a
#: clock), then the process ends, leaving two calls of unknown outcome, one per row.
DIE_TOGETHER = """
import os
import threading

HERE = os.path.dirname(os.path.abspath(__file__))
BOTH = threading.Barrier(2)

def record(note: str, idempotency_key: str = "") -> str:
    if not os.path.exists(os.path.join(HERE, "died")):
        BOTH.wait(timeout=120)  # a failure's bound: the other row's call never came
        open(os.path.join(HERE, "died"), "w").close()
        os._exit(1)
    with open(os.path.join(HERE, "effects.txt"), "a") as fh:
        fh.write(idempotency_key + "\\n")
    return idempotency_key
"""


@pytest.mark.parametrize("action", ["retry", "skip"])
def test_unknown_settles_the_calls_of_every_row_in_one_rerun(tmp_path: Path, action: str) -> None:
    """A crash with `--concurrency 2` leaves two rows each holding a call of unknown outcome: by default each
    pauses with its own pending call, and one rerun with `--unknown` settles both."""
    root = write_effects(tmp_path / "p", rows=2, delay="0ms")
    (root / "fx.py").write_text(DIE_TOGETHER)
    assert _batch2(root).returncode == 1  # died with both rows' calls in flight
    paused = _batch2(root)
    rows = results(root / "out.jsonl")
    assert paused.returncode == 3 and [r["stop_reason"] for r in rows] == ["pause", "pause"]
    assert [[p["kind"] for p in r["pending"]] for r in rows] == [["unknown_outcome"]] * 2
    settled = _batch2(root, "--unknown", action)
    rows = results(root / "out.jsonl")
    assert settled.returncode == 0 and [r["stop_reason"] for r in rows] == ["until", "until"], settled.stderr
    effects = root / "effects.txt"
    assert len(effects.read_text().split() if effects.exists() else []) == (2 if action == "retry" else 0)


def _batch2(root: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "plait", "batch", str(root / "spec.plait"), str(root / "in.jsonl")]
    argv += ["-o", str(root / "out.jsonl"), "--concurrency", "2", *extra]
    return subprocess.run(argv, capture_output=True, text=True, timeout=300)


def plait(root: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "plait", *argv], capture_output=True, text=True, timeout=120, cwd=root)


@pytest.fixture
def crashed_run(tmp_path: Path) -> tuple[Path, str]:
    """A plain run that died inside its tool call: stored as crashed, never paused on it."""
    root = write_effects(tmp_path / "r", rows=1, delay="0ms")
    (root / "fx.py").write_text(DIES_ONCE)
    assert plait(root, "run", "spec.plait", "--input", "ticket").returncode == 1
    listed = plait(root, "runs", "--json")
    [run] = [json.loads(line) for line in listed.stdout.splitlines()]
    return root, run["id"]


def test_a_pause_on_an_unknown_outcome_lists_the_call_in_json(crashed_run: tuple[Path, str]) -> None:
    root, run_id = crashed_run
    paused = plait(root, "resume", run_id, "--json")
    assert paused.returncode == 3, paused.stderr
    report = json.loads(paused.stdout)
    assert report["stop_reason"] == "pause"
    [pending] = report["pending"]
    assert pending["kind"] == "unknown_outcome" and pending["tool"] == "record"
    assert pending["id"] in report["pause_reason"] and pending["actions"] == ["retry", "skip"]


def test_decide_retry_works_on_a_crashed_run_without_a_plain_resume_first(crashed_run: tuple[Path, str]) -> None:
    root, run_id = crashed_run
    call = "main:m-1-1"  # the agent's path and the scripted call id of its first reply's first tool call
    done = plait(root, "resume", run_id, "--decide", f"{call}=retry", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["stop_reason"] == "until"
    assert len((root / "effects.txt").read_text().split()) == 1


@pytest.mark.parametrize("action", ["retry", "skip"])
def test_resume_unknown_settles_every_such_call(crashed_run: tuple[Path, str], action: str) -> None:
    root, run_id = crashed_run
    done = plait(root, "resume", run_id, "--unknown", action, "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["stop_reason"] == "until"
    effects = root / "effects.txt"
    assert len(effects.read_text().split() if effects.exists() else []) == (1 if action == "retry" else 0)
