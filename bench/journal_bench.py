"""Journal benchmark → what durable runs cost: the journal on, against the journal off and the floor, in one run.

    python bench/journal_bench.py            # both measures, 7 repetitions each
    python bench/journal_bench.py --quick    # 3 repetitions
    python bench/journal_bench.py --store postgresql://...   # the journal in PostgreSQL (a scratch database)

1. A 10-round tool loop (10 tool calls, then the answer; 11 model calls) with an
   in-process model that answers at once and a trivial tool, the journal on
   (SQLite in a temporary project, WAL, every row durable before the next
   side effect) over the same loop with it off. Target: at most 2.5x.
2. The floor: the rows one such run journals (its run row, every history row,
   its stop), written straight into a SQLite database with the journal's
   durability setting (WAL, synchronous = NORMAL) and no plait code: encoded
   with orjson, one transaction committed at each point the journal makes its
   rows durable (after the admission, each model request, each tool intent,
   and the stop). Target: the journal's own cost per round (on minus off) at
   most 2x the floor's per round.
3. 1,000 concurrent runs of that loop, the model waiting 50 ms per call: wall
   time with the journal over without. Target: within 1.5x. Group commit makes
   this cheap: every run that reaches a side effect in the same loop iteration
   shares one write.

Off, on and the floor take turns, repetition by repetition, so a change in the
machine's load falls on each; medians are reported, with CPU time beside wall time.

    python bench/journal_bench.py --only on --runs 100 [--concurrent]

runs the workload alone (after the same warm-up), timing nothing: for a profiler or
an instruction counter run from outside (bench/README.md counts instructions with
valgrind's callgrind, which a loaded machine cannot skew: the counts of `--runs 0`
subtracted from those of `--runs N` are the workload's own).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from runtime_bench import LATENCY, ROUNDS, loop_engine  # noqa: E402

import orjson  # noqa: E402

from plait.runtime.store import open_store  # noqa: E402
from plait.runtime.store.schema import migrate  # noqa: E402

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


#: The history rows after which the journal makes what it buffered durable, before the next side effect.
BARRIERS = frozenset({"admit", "model_request", "tool_intent", "stop"})


def journaled_rows() -> list[tuple[str, str | None, object]]:
    """(kind, key, data) of every history row one journaled run of the loop writes, read back from its journal."""
    with tempfile.TemporaryDirectory() as root:
        eng = engine(True, 0.0, root)

        async def main():
            result = await eng.run("go")
            rows = [(e["kind"], e["key"], e["data"]) for e in eng.store.events(result.run_id)]
            await eng.aclose()
            return rows

        return asyncio.run(main())


def floor_once(rows: list[tuple[str, str | None, object]], runs: int) -> tuple[float, float]:
    """(wall µs per round, CPU µs per round) of writing `runs` runs' rows straight into SQLite: the floor."""
    with tempfile.TemporaryDirectory() as root:
        conn = sqlite3.connect(Path(root) / "floor.db", isolation_level=None)
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("BEGIN IMMEDIATE")
        migrate(conn.execute)
        conn.execute("COMMIT")
        insert = "INSERT INTO events (run_id, seq, kind, key, at, data) VALUES (?, ?, ?, ?, ?, ?)"
        t0, c0 = time.perf_counter(), time.process_time()
        for n in range(runs):
            run_id = f"floor-{n}"
            now = time.time()
            conn.execute("BEGIN")
            conn.execute(
                "INSERT INTO runs (id, entry, spec, input, status, started, updated) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (run_id, "main", None, orjson.dumps("go").decode(), "running", now, now),
            )
            for seq, (kind, key, data) in enumerate(rows, 1):
                conn.execute(insert, (run_id, seq, kind, key, time.time(), orjson.dumps(data).decode()))
                if kind == "stop":
                    conn.execute(
                        "UPDATE runs SET status = ?, updated = ?, steps = ? WHERE id = ?",
                        ("done", time.time(), ROUNDS + 1, run_id),
                    )
                if kind in BARRIERS:
                    conn.execute("COMMIT")
                    conn.execute("BEGIN")
            conn.execute("COMMIT")
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        conn.close()
        return wall / runs / ROUNDS * 1e6, cpu / runs / ROUNDS * 1e6


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


def workload(journal: bool, runs: int, concurrent: bool) -> None:
    """`runs` loops (sequential, or all at once at LATENCY per call) after a warm-up of 10, untimed."""
    with tempfile.TemporaryDirectory() as root:
        eng = engine(journal, LATENCY if concurrent else 0.0, root)

        async def main() -> None:
            for batch in (10, runs):
                if concurrent:
                    await asyncio.gather(*(eng.run("go") for _ in range(batch)))
                else:
                    for _ in range(batch):
                        await eng.run("go")
            await eng.aclose()

        asyncio.run(main())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="3 repetitions instead of 7")
    parser.add_argument("--store", metavar="URL", help="journal in this PostgreSQL database (its tables fill up)")
    parser.add_argument("--only", choices=("on", "off"), help="run the loop alone, journal on or off, timing nothing")
    parser.add_argument("--runs", type=int, default=100, help="with --only: how many runs after the warm-up")
    parser.add_argument("--concurrent", action="store_true", help="with --only: the runs all at once, 50 ms a call")
    args = parser.parse_args()
    global STORE
    STORE = args.store
    if args.only:
        workload(args.only == "on", args.runs, args.concurrent)
        return
    reps = 3 if args.quick else 7
    print(
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}  Python {platform.python_version()}  {platform.machine()}  "
        f"{os.cpu_count()} CPUs  load {' '.join(f'{x:.1f}' for x in os.getloadavg())}"
    )

    rows = journaled_rows()
    loop: dict[str, list[tuple[float, float]]] = {"off": [], "on": [], "floor": []}
    for _ in range(reps):
        loop["off"].append(loop_once(False, 200))
        loop["on"].append(loop_once(True, 200))
        loop["floor"].append(floor_once(rows, 200))
    off, on, floor = (statistics.median(w for w, _ in loop[k]) for k in ("off", "on", "floor"))
    cpu_off, cpu_on, cpu_floor = (statistics.median(c for _, c in loop[k]) for k in ("off", "on", "floor"))
    print(
        f"10-round tool loop, per round: off {off:.1f} µs, on {on:.1f} µs -> {on / off:.2f}x (target <= 2.5x); "
        f"CPU {cpu_off:.1f} / {cpu_on:.1f} µs"
    )
    print(
        f"floor ({len(rows)} rows a run straight into SQLite, WAL, synchronous NORMAL, a commit per barrier), "
        f"per round: {floor:.1f} µs (CPU {cpu_floor:.1f}); the journal's own cost {on - off:.1f} µs -> "
        f"{(on - off) / floor:.2f}x the floor (target <= 2x); CPU {(cpu_on - cpu_off) / cpu_floor:.2f}x"
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
        f"on {on:.3f} s -> {on / off:.2f}x (target <= 1.5x); CPU {statistics.median(c for _, c in many[False]):.2f} / "
        f"{statistics.median(c for _, c in many[True]):.2f} s"
    )


if __name__ == "__main__":
    main()
