"""Memory bounded by the listing, not by the runs: `plait runs` reads index rows a page at a time, and a run's input
has a documented cap (core.defaults.MAX_INPUT_BYTES), refused in one line by `plait run` and the engine (batch refuses a
longer line itself, tests/batch)."""

from __future__ import annotations

import io
import json
import sys
import time
import tracemalloc

from plait.cli import main
from plait.runtime.store import open_store
from plait.core.defaults import MAX_INPUT_BYTES

SPEC = """
model demo = "scripted/demo" { script = "demo.json" }

step main {
  model = demo
  prompt = "Summarise {{input}}"
}
"""


def cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    assert "Traceback" not in err and "internal error" not in err
    return code, out, err


def project(root, replies):
    (root / "spec.plait").write_text(SPEC)
    (root / "demo.json").write_text(json.dumps([{"text": r} for r in replies]))
    return root


def test_an_input_over_the_cap_is_refused_in_one_line_and_nothing_is_stored(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(project(tmp_path, ["ok"]))
    code, _, err = cli(capsys, "run", "spec.plait", "--input", "x" * (MAX_INPUT_BYTES + 1))
    [message] = err.strip().splitlines()
    assert code == 2 and "input_too_large" in message and "16 MiB" in message
    assert open_store(None, tmp_path).runs() == []
    # Just under the cap runs (the cap counts bytes of JSON: é is two).
    code, _, err = cli(capsys, "run", "spec.plait", "--input", "é" * (MAX_INPUT_BYTES // 2 - 10))
    assert code == 0, err


def test_an_input_file_or_stdin_over_the_cap_is_refused_without_reading_it_whole(tmp_path, capsys, monkeypatch):
    """A 64 MiB input file is refused having read one character past the cap (reading it whole took four times its
    size in memory before the engine refused it)."""
    monkeypatch.chdir(project(tmp_path, ["ok"]))
    size = 4 * MAX_INPUT_BYTES
    with (tmp_path / "big.txt").open("w") as fh:
        for _ in range(size // 2**20):
            fh.write("x" * 2**20)
    tracemalloc.start()
    try:
        code, _, err = cli(capsys, "run", "spec.plait", "--input-file", "big.txt")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    [message] = err.strip().splitlines()
    assert code == 2 and "input_too_large" in message and "big.txt" in message and "16 MiB" in message
    assert peak < 2 * MAX_INPUT_BYTES + 2**20, f"{peak:,} bytes at peak for a {size:,}-byte file"
    assert open_store(None, tmp_path).runs() == []
    monkeypatch.setattr(sys, "stdin", io.StringIO("y" * (MAX_INPUT_BYTES + 1)))
    code, _, err = cli(capsys, "run", "spec.plait", "-")
    assert code == 2 and "input_too_large" in err and "stdin" in err
    # A file at the cap is read and runs.
    (tmp_path / "fits.txt").write_text("z" * (MAX_INPUT_BYTES - 2))
    code, _, err = cli(capsys, "run", "spec.plait", "--input-file", "fits.txt")
    assert code == 0, err


def test_runs_lists_100000_runs_and_large_ones_in_bounded_memory(tmp_path, monkeypatch):
    """The listing never holds every run, nor any run's input or snapshot: 100,000 small runs and three with 8 MB
    inputs and snapshots list within a few MB (loading them whole took hundreds)."""
    journal = open_store(None, tmp_path)
    journal.open()
    now = time.time()
    big = json.dumps("z" * 8_000_000)
    conn = journal.conn  # type: ignore[attr-defined]
    conn.execute("BEGIN")
    conn.executemany(
        "INSERT INTO runs (id, entry, spec, input, status, started, updated, snapshot) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (
            (f"run-{i:06d}", "main", None, '"hi"', "done", now + i, now + i, '{"result": {"output": "ok"}}')
            for i in range(100_000)
        ),
    )
    conn.executemany(
        "INSERT INTO runs (id, entry, spec, input, status, started, updated, snapshot) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        ((f"big-{i}", "main", None, big, "done", now - i - 1, now, big) for i in range(3)),
    )
    conn.execute("COMMIT")
    journal.close()
    del big
    monkeypatch.chdir(tmp_path)
    for argv in (["runs"], ["runs", "--json"]):
        out = io.StringIO()
        lines = 0

        class Counting(io.TextIOBase):
            def write(self, text: str) -> int:  # counts lines, keeps nothing
                nonlocal lines
                lines += text.count("\n")
                return len(text)

        monkeypatch.setattr(sys, "stdout", Counting())
        tracemalloc.start()
        try:
            code = main(argv)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
            monkeypatch.setattr(sys, "stdout", out)
        assert code == 0 and lines == 100_003 + (argv == ["runs"])
        assert peak < 8_000_000, f"{argv}: {peak:,} bytes at peak"


def test_a_crashed_runs_totals_are_counted_from_its_replies_alone(tmp_path, monkeypatch, capsys):
    """A run that never stopped has no totals in its row: they are counted from its model replies, without loading
    its other rows (three 8 MB tool results here; reading every row of the run took them all into memory)."""
    journal = open_store(None, tmp_path)
    journal.open()
    now = time.time()
    big = json.dumps({"value": "z" * 8_000_000})
    conn = journal.conn  # type: ignore[attr-defined]
    conn.execute("BEGIN")
    conn.execute(
        "INSERT INTO runs (id, entry, spec, input, status, started, updated) VALUES (?, ?, ?, ?, ?, ?, ?)",
        ("cut-off", "main", None, '"hi"', "running", now, now),
    )
    rows = [("model_reply", json.dumps({"usage": [5, 7], "cost_usd": 0.25}))]
    rows += [("tool_completed", big)] * 3 + [("model_reply", json.dumps({"usage": [11, 13]}))]
    conn.executemany(
        "INSERT INTO events (run_id, seq, kind, key, at, data) VALUES (?, ?, ?, ?, ?, ?)",
        (("cut-off", seq, kind, None, now, data) for seq, (kind, data) in enumerate(rows, 1)),
    )
    conn.execute("COMMIT")
    journal.close()
    del big
    monkeypatch.chdir(tmp_path)
    tracemalloc.start()
    try:
        code, out, _ = cli(capsys, "runs", "--json")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    [run] = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and run["status"] == "crashed" and run["steps"] == 2
    assert (run["input_tokens"], run["output_tokens"], run["cost_usd"]) == (16, 20, 0.25)
    assert peak < 8_000_000, f"{peak:,} bytes at peak"
