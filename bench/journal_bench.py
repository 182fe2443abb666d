"""Journal benchmark → what durable runs cost: the journal on over the journal off, in the same process and run.

    python bench/journal_bench.py            # both measures, 7 repetitions each
    python bench/journal_bench.py --quick    # 3 repetitions
    python bench/journal_bench.py --store postgresql://...   # the journal in PostgreSQL (a scratch database)

1. A 10-round tool loop (10 tool calls, then the answer; 11 model calls) with an
   in-process model that answers at once and a trivial tool, the journal on
   (SQLite in a temporary project, WAL, every row durable before the next
   side effect) over the same loop with it off. Target: at most 1.3x.
2. 1,000 concurrent runs of that loop, the model waiting 50 ms per call: wall
   time with the journal over without. Target: within 1.1x. Group commit makes
   this cheap: every run that reaches a side effect in the same loop iteration
   shares one commit.

On and off take turns, repetition by repetition, so a change in the machine's
load falls on both; medians are reported, with CPU time beside wall time.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from runtime_bench import LATENCY, ROUNDS, loop_engine  # noqa: E402

from plait.runtime.store import open_store  # noqa: E402

#: --store: a PostgreSQL URL for the journal instead of SQLite in a temporary project.
STORE: str | None = None


def engine(journal: bool, latency: float, root: str):
    built = loop_engine(latency)
    if journal:
        built.program.base_dir = root
        built.store = open_store(STORE, root)
    return built


def loop_once(journal: bool, runs: int) -> tuple[float, float]:
    """(wall µs per round, CPU µs per round): `runs` sequential loops after a warm-up, on one engine."""
    with tempfile.TemporaryDirectory() as root:
        eng = engine(journal, 0.0, root)

        async def main() -> tuple[float, float]:
            for _ in range(10):
                await eng.run("go")
            t0, c0 = time.perf_counter(), time.process_time()
            for _ in range(runs):
                result = await eng.run("go")
                assert result.output == "done" and result.report.model_calls == ROUNDS + 1
            wall, cpu = time.perf_counter() - t0, time.process_time() - c0
            await eng.aclose()
            return wall / runs / ROUNDS * 1e6, cpu / runs / ROUNDS * 1e6

        return asyncio.run(main())


def concurrent_once(journal: bool, runs: int) -> tuple[float, float]:
    """(wall s, CPU s) of `runs` concurrent loops at LATENCY per model call."""
    with tempfile.TemporaryDirectory() as root:
        eng = engine(journal, LATENCY, root)

        async def main() -> tuple[float, float]:
            t0, c0 = time.perf_counter(), time.process_time()
            results = await asyncio.gather(*(eng.run("go") for _ in range(runs)))
            wall, cpu = time.perf_counter() - t0, time.process_time() - c0
            assert all(r.output == "done" for r in results)
            await eng.aclose()
            return wall, cpu

        return asyncio.run(main())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="3 repetitions instead of 7")
    parser.add_argument("--store", metavar="URL", help="journal in this PostgreSQL database (its tables fill up)")
    args = parser.parse_args()
    global STORE
    STORE = args.store
    reps = 3 if args.quick else 7
    print(
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}  Python {platform.python_version()}  {platform.machine()}  "
        f"{os.cpu_count()} CPUs  load {' '.join(f'{x:.1f}' for x in os.getloadavg())}"
    )

    loop = {True: [], False: []}
    for _ in range(reps):
        for journal in (False, True):
            loop[journal].append(loop_once(journal, 200))
    off = statistics.median(w for w, _ in loop[False])
    on = statistics.median(w for w, _ in loop[True])
    cpu_off = statistics.median(c for _, c in loop[False])
    cpu_on = statistics.median(c for _, c in loop[True])
    print(
        f"10-round tool loop, per round: off {off:.1f} µs, on {on:.1f} µs -> {on / off:.2f}x (target <= 1.3x); "
        f"CPU {cpu_off:.1f} / {cpu_on:.1f} µs"
    )

    many = {True: [], False: []}
    for _ in range(max(3, reps // 2)):
        for journal in (False, True):
            many[journal].append(concurrent_once(journal, 1000))
    off = statistics.median(w for w, _ in many[False])
    on = statistics.median(w for w, _ in many[True])
    ideal = (ROUNDS + 1) * LATENCY
    print(
        f"1,000 concurrent runs at {LATENCY * 1000:.0f} ms per call: off {off:.3f} s ({off / ideal:.2f}x ideal), "
        f"on {on:.3f} s -> {on / off:.2f}x (target <= 1.1x); CPU {statistics.median(c for _, c in many[False]):.2f} / "
        f"{statistics.median(c for _, c in many[True]):.2f} s"
    )


if __name__ == "__main__":
    main()
