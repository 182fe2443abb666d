"""Running a batch again: its run ids (and so the idempotency keys its tools see) carry a random part kept by the
store, so another checkout or a store whose runs were removed runs fresh effects, while a rerun in the same store
reads what finished back; rows that failed are resumed by default (`--keep-failed` keeps them); and the inputs are
read a row at a time, a line over the input limit being that row's error."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tracemalloc
from pathlib import Path

import pytest

from batch_helpers import results, write_effects
from plait.cli import main


def batch(root: Path, *extra: str) -> int:
    return main(["batch", str(root / "spec.plait"), str(root / "in.jsonl"), "-o", str(root / "out.jsonl"), *extra])


def keys(root: Path) -> list[str]:
    return (root / "effects.txt").read_text().split()


def test_the_same_batch_in_another_store_or_after_runs_rm_presents_new_keys(tmp_path: Path) -> None:
    first = write_effects(tmp_path / "a", rows=2, delay="0ms")
    other = tmp_path / "b"
    shutil.copytree(first, other)  # another checkout: the same spec, entry and inputs
    assert batch(first) == 0 and batch(other) == 0
    ids_a = [r["run_id"] for r in results(first / "out.jsonl")]
    ids_b = [r["run_id"] for r in results(other / "out.jsonl")]
    assert len(set(keys(first))) == 2 and not set(keys(first)) & set(keys(other))
    assert not set(ids_a) & set(ids_b)

    assert batch(first) == 0  # a rerun in the same store: read back, nothing runs again
    assert [r["run_id"] for r in results(first / "out.jsonl")] == ids_a and len(keys(first)) == 2

    assert main(["runs", "rm", "--dir", str(first), *ids_a]) == 0
    assert batch(first) == 0  # the runs are gone: this is a new intended effect, with new keys
    assert len(keys(first)) == 4 and len(set(keys(first))) == 4
    assert not set(r["run_id"] for r in results(first / "out.jsonl")) & set(ids_a)


def test_a_rerun_retries_failed_rows_and_keep_failed_keeps_them(tmp_path: Path) -> None:
    root = write_effects(tmp_path / "p", rows=2, delay="0ms")
    call = {"tool_calls": [{"name": "record", "arguments": {"note": "x"}}]}
    # Every run reads this list from its start: its first model call fails as in a server outage.
    (root / "replies.json").write_text(json.dumps([{"error": {"kind": "server_error", "message": "down"}}, call]))
    assert batch(root) == 1
    assert [r["stop_reason"] for r in results(root / "out.jsonl")] == ["error", "error"]
    assert not (root / "effects.txt").exists()

    assert batch(root, "--keep-failed") == 1  # kept: reported from the journal, not run
    assert [r["stop_reason"] for r in results(root / "out.jsonl")] == ["error", "error"]
    assert not (root / "effects.txt").exists()

    assert batch(root) == 0  # the server is back: each failed row is resumed, its failed call asked again
    rows = results(root / "out.jsonl")
    assert [r["stop_reason"] for r in rows] == ["until", "until"]  # the agent called its `until` tool
    assert len(keys(root)) == 2

    assert batch(root) == 0  # finished rows are never redone
    assert len(keys(root)) == 2


def test_inputs_are_streamed_and_a_line_over_the_limit_is_that_rows_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("plait.runtime.batch.MAX_INPUT_BYTES", 1 << 20)
    root = write_effects(tmp_path / "p", rows=1, delay="0ms")
    huge = 24 << 20
    with (root / "in.jsonl").open("wb") as fh:
        fh.write(b"\xff\n" * 20_000)  # not UTF-8: each its row's error
        fh.write(b"x" * huge + b"\n")  # one line far over the limit
        fh.write(b"\xff\n")
    tracemalloc.start()
    try:
        code = batch(root)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert code == 1
    assert peak < huge // 2, f"peak {peak:,} bytes for a {huge:,}-byte line"  # the cap, not the file, bounds it
    rows = results(root / "out.jsonl")
    assert len(rows) == 20_002
    assert "not UTF-8" in rows[0]["error"]["message"]
    assert "longer than the input limit of 1,048,576 bytes" in rows[20_000]["error"]["message"]
    assert rows[20_000]["line"] == 20_001 and "not UTF-8" in rows[20_001]["error"]["message"]


@pytest.mark.slow
def test_a_batch_of_many_bad_lines_runs_in_memory_that_does_not_grow_with_them(tmp_path: Path) -> None:
    """Peak RSS of a real `plait batch` process over 300,000 lines that are not UTF-8 (each its row's error): the
    rows stream through, so it stays near the interpreter's own size (about 37 MB here; holding every row took 114
    MB for 100,000 such lines and 873 MB for 1,000,000)."""
    root = write_effects(tmp_path / "p", rows=1, delay="0ms")
    (root / "in.jsonl").write_bytes(b"\xff\n" * 300_000)
    argv = [sys.executable, "-m", "plait", "batch", str(root / "spec.plait"), str(root / "in.jsonl")]
    # Started from a small python that reports its child's peak: a child forked straight from this test process
    # would count the test process's own peak too (Linux keeps it across exec).
    done = subprocess.run([sys.executable, "-c", MEASURE, *argv, "-o", str(root / "out.jsonl")], capture_output=True)
    assert done.returncode == 1 and b"300000 rows: 300000 failed" in done.stderr, done.stderr
    peak = int(done.stdout.split()[-1])  # KiB on Linux
    assert peak < 100 * 1024, f"peak RSS {peak:,} KiB"


MEASURE = """
import resource, subprocess, sys
code = subprocess.call(sys.argv[1:])
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
sys.exit(code)
"""
