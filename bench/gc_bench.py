"""Relaxed GC during runs (src/plait/runtime/gc_scope.py) → its cost and benefit, measured against the host's own thresholds.

    python bench/gc_bench.py            # 7 paired repetitions
    python bench/gc_bench.py --quick    # 3

1,000 concurrent runs of a 10-round tool loop whose model waits 5 ms per call
(the shape where the collector's older-generation passes walk every live
history), once with plait's relaxed thresholds and once with the process's
defaults (`gc_scope.enabled = False`), alternating repetition by repetition so
load changes hit both. Reported per model call: CPU time, and the time spent in
collections (summed with `gc.callbacks`); medians; the ratio relaxed/default.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import platform
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from runtime_bench import ROUNDS, loop_engine  # noqa: E402

from plait.runtime import gc_scope  # noqa: E402

RUNS = 1_000
LATENCY = 0.005


class CollectionTimer:
    """CPU seconds spent inside cyclic collections while installed (CPU, so a busy machine does not inflate it)."""

    def __init__(self) -> None:
        self.total = 0.0
        self._start = 0.0

    def __call__(self, phase: str, info: dict) -> None:
        if phase == "start":
            self._start = time.process_time()
        else:
            self.total += time.process_time() - self._start


def one(relaxed: bool) -> tuple[float, float]:
    """(CPU µs, GC µs) per model call for one batch."""
    gc_scope.enabled = relaxed
    engine = loop_engine(LATENCY)
    timer = CollectionTimer()

    async def main() -> tuple[float, float]:
        gc.collect()
        gc.callbacks.append(timer)
        try:
            c0 = time.process_time()
            results = await asyncio.gather(*(engine.run("go") for _ in range(RUNS)))
            cpu = time.process_time() - c0
        finally:
            gc.callbacks.remove(timer)
        assert all(r.output == "done" for r in results)
        calls = RUNS * (ROUNDS + 1)
        return cpu / calls * 1e6, timer.total / calls * 1e6

    return asyncio.run(main())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    reps = 3 if parser.parse_args().quick else 7
    gc.set_threshold(700, 10, 10)  # CPython's defaults: what a host that never touched them runs with
    samples: dict[bool, list[tuple[float, float]]] = {True: [], False: []}
    one(True)  # warm up imports and caches
    for _ in range(reps):
        for relaxed in (True, False):
            samples[relaxed].append(one(relaxed))
    gc_scope.enabled = True
    print(
        f"# gc_bench  {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}  {platform.processor() or platform.machine()}"
        f"  python {platform.python_version()}  load {os.getloadavg()[0]:.1f}  reps {reps}"
    )
    print("| per model call, 1,000 runs in flight | relaxed (plait) | default thresholds | relaxed / default |")
    print("|---|---|---|---|")
    for index, label in ((0, "CPU (µs)"), (1, "in cyclic GC (µs)")):
        mine = statistics.median(s[index] for s in samples[True])
        theirs = statistics.median(s[index] for s in samples[False])
        print(f"| {label} | {mine:.1f} | {theirs:.1f} | {mine / theirs:.2f}x |")


if __name__ == "__main__":
    main()
