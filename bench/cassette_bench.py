"""A replayed run against a scripted run of the same length: the cost of serving model replies from a cassette.

Usage: python bench/cassette_bench.py [--quick]

One spec, an agent that makes 10 tool calls then answers (11 model calls), run
in one process on one engine, without a journal: first with its scripted
model, then with the same replies recorded into a cassette and served from it
(`plait run --cassette`). The replay computes each request's key (canonical
JSON and SHA-256 of the whole conversation so far) where the scripted model
only moves a cursor. Target: a replayed run costs at most 1.2x a scripted one.
Prints the median of the per-run time over repeated batches, their ratio, and the median of the
ratios of batches run back to back (less moved by the machine's load changing during the run).
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROUNDS = 10

SPEC = """
model m = "scripted/m" { script = "replies.json" }

tool add "Add two numbers." {
  params {
    a: int
    b: int
  }
  run = python("bench_cassette_tools:add")
}

agent main {
  model = m
  system = "You add numbers, one tool call at a time, and report the total."
  tools = [add]
  max_steps = 20
}
"""


def project(folder: Path) -> Path:
    replies = [{"tool_calls": [{"name": "add", "arguments": {"a": i, "b": i + 1}}]} for i in range(ROUNDS)]
    replies.append({"text": "The totals are in."})
    (folder / "replies.json").write_text(json.dumps(replies))
    (folder / "bench_cassette_tools.py").write_text("async def add(a, b):\n    return a + b\n")
    (folder / "bench.plait").write_text(SPEC)
    sys.path.insert(0, str(folder))
    return folder / "bench.plait"


async def batch(engine, runs: int) -> float:
    started = time.perf_counter()
    for _ in range(runs):
        result = await engine.run("Add them up.")
        assert result.stop_reason == "done", result.error
    return (time.perf_counter() - started) / runs


def main() -> None:
    from plait.runtime import cassettes
    from plait.runtime.engine import Engine

    quick = "--quick" in sys.argv
    runs, repeats = (50, 5) if quick else (200, 21)
    with tempfile.TemporaryDirectory() as tmp:
        spec = project(Path(tmp))
        scripted = Engine.from_spec(spec, store=None)
        recording = Engine.from_spec(spec, store=None)
        recorder = cassettes.record(recording)
        asyncio.run(recording.run("Add them up."))
        assert len(recorder.interactions) == ROUNDS + 1
        path = Path(tmp) / "bench.cassette.json"
        recorder.cassette().save(path)
        replayed = Engine.from_spec(spec, store=None)
        cassettes.replay(replayed, cassettes.Cassette.load(path))

        async def measure() -> tuple[list[float], list[float]]:
            a, b = [], []
            await batch(scripted, 5)  # warm both: imports, validators, the tool's module
            await batch(replayed, 5)
            for n in range(repeats):  # interleaved, each first in turn, so load and heap growth fall on both alike
                if n % 2:
                    b.append(await batch(replayed, runs))
                    a.append(await batch(scripted, runs))
                else:
                    a.append(await batch(scripted, runs))
                    b.append(await batch(replayed, runs))
            return a, b

        a, b = asyncio.run(measure())
    sa, sb = statistics.median(a), statistics.median(b)
    load = os.getloadavg()[0]
    print(f"{ROUNDS + 1} model calls per run, {runs} runs per batch, {repeats} batches, load {load:.2f}")
    print(f"scripted run: {sa * 1000:8.3f} ms (median)")
    print(f"replayed run: {sb * 1000:8.3f} ms (median)")
    print(f"ratio       : {sb / sa:8.2f}x of the medians (target <= 1.2x)")
    paired = statistics.median(y / x for x, y in zip(a, b))
    print(f"paired      : {paired:8.2f}x (median of each batch's replayed/scripted, run back to back)")


if __name__ == "__main__":
    main()
