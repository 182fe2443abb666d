"""`plait batch` throughput: N inputs at 50 ms per model call → wall time, its ratio to ideal, and Ray's cost.

    python bench/batch_bench.py                       # 10,000 rows, concurrency 100, in-process and Ray (1, 2 actors)
    python bench/batch_bench.py --rows 2000 --no-ray  # a quicker look

Each row is one run of a one-agent spec whose model is in-process and answers
after `--latency` (asyncio.sleep), journaled in a fresh project's SQLite
journal, as `plait batch` runs it (src/plait/runtime/batch.py). Ideal = rows × latency /
concurrency: the time the model calls alone would take at that bound. The Ray
executor (src/plait/runtime/executors/ray.py) runs the same rows on 1 and 2 actors of a
local instance; its ratio is to the in-process executor of the same run.
Ray's start-up (ray.init of a local instance) is timed on its own; the Ray
batch times include starting the actors (each compiles the spec). The same
in-process batch with the journal off is printed as a reference: the rest of
the distance to ideal is the runtime's own per-run cost on this machine.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import subprocess
import sys
import tempfile
import time
from importlib import metadata
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from plait.runtime.batch import Row, RowResult, read_rows, run_batch  # noqa: E402
from plait.runtime.engine import Engine  # noqa: E402
from plait.runtime.providers.base import Message, ModelResponse, TextPart, Usage  # noqa: E402

SPEC = """plait 0.2
model m = "scripted/m" { script = "unused.json" }
agent main "answers each row" {
  model = m
}
"""


class SleepModel:
    """An in-process model: answers with the row's text after `latency` seconds."""

    name = "m"

    def __init__(self, latency: float) -> None:
        self.latency = latency

    async def complete(self, request: Any) -> ModelResponse:
        await asyncio.sleep(self.latency)
        text = request.messages[-1].content[0].text if request.messages and request.messages[-1].content else ""
        return ModelResponse(Message("assistant", [TextPart(text.upper())]), "stop", usage=Usage(4, 2))

    async def aclose(self) -> None:
        return None


def make_engine(spec: str, latency: float, journal: bool = True) -> Engine:
    """Picklable for Ray: each actor builds its own engine (and journal connection) from the spec."""
    options: dict[str, Any] = {} if journal else {"store": None}
    return Engine.from_spec(Path(spec), providers={"m": SleepModel(latency)}, **options)


def project(rows: int) -> tuple[str, list[Row]]:
    root = Path(tempfile.mkdtemp(prefix="plait-batch-bench-"))
    (root / "spec.plait").write_text(SPEC)
    (root / "unused.json").write_text("[]")
    data = "".join(f'"row {i}"\n' for i in range(rows)).encode()
    return str(root / "spec.plait"), read_rows(data, None, "batch-bench")


def in_process(rows: int, concurrency: int, latency: float, journal: bool = True) -> float:
    spec, todo = project(rows)
    engine = make_engine(spec, latency, journal)
    got: list[RowResult] = []

    async def main() -> float:
        t0 = time.perf_counter()
        await run_batch(engine, todo, got.append, concurrency=concurrency)
        elapsed = time.perf_counter() - t0
        await engine.aclose()
        return elapsed

    elapsed = asyncio.run(main())
    check(got, rows)
    return elapsed


def on_ray(rows: int, concurrency: int, latency: float, actors: int) -> float:
    from functools import partial

    from plait.runtime.executors import ray as ray_executor

    spec, todo = project(rows)
    got: list[RowResult] = []

    async def main() -> float:
        t0 = time.perf_counter()
        await ray_executor.run_batch(
            partial(make_engine, spec, latency), todo, got.append, concurrency=concurrency, actors=actors
        )
        return time.perf_counter() - t0

    elapsed = asyncio.run(main())
    check(got, rows)
    return elapsed


def check(got: list[RowResult], rows: int) -> None:
    assert len(got) == rows and all(r.stop_reason == "done" for r in got), {r.stop_reason for r in got}
    assert sorted(r.output for r in got)[:1] == ["ROW 0"]


def ray_footprint() -> str:
    """Ray's installed size (its files and its own new dependencies' files), from the package metadata."""
    total = 0
    for name in ("ray", "msgpack"):
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue
        for file in dist.files or ():
            try:
                total += os.path.getsize(Path(str(dist.locate_file(file))))
            except OSError:
                pass
    return f"ray {metadata.version('ray')}: {total / 2**20:.0f} MB installed (ray + msgpack)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--concurrency", type=int, default=100)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--no-ray", action="store_true")
    args = parser.parse_args()
    uptime = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    print(f"# {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} · {platform.machine()} · {os.cpu_count()} CPUs")
    print(f"# load: {uptime}")
    ideal = args.rows * args.latency / args.concurrency
    print(f"rows {args.rows}, concurrency {args.concurrency}, {args.latency * 1000:.0f} ms per model call")
    print(f"ideal (rows x latency / concurrency): {ideal:.2f} s")
    local = in_process(args.rows, args.concurrency, args.latency)
    print(f"in-process: {local:.2f} s = {local / ideal:.2f}x ideal ({args.rows / local:.0f} rows/s)")
    bare = in_process(args.rows, args.concurrency, args.latency, journal=False)
    print(
        f"in-process, journal off (reference): {bare:.2f} s = {bare / ideal:.2f}x ideal; journal on = {local / bare:.2f}x"
    )
    if args.no_ray:
        return
    import ray

    print(ray_footprint())
    t0 = time.perf_counter()
    ray.init(num_cpus=2, include_dashboard=False, logging_level="warning")
    print(f"ray.init (a local instance): {time.perf_counter() - t0:.2f} s")
    try:
        for actors in (1, 2):
            elapsed = on_ray(args.rows, args.concurrency, args.latency, actors)
            print(
                f"ray, {actors} actor{'s' if actors > 1 else ''}: {elapsed:.2f} s = {elapsed / local:.2f}x in-process, "
                f"{elapsed / ideal:.2f}x ideal"
            )
    finally:
        ray.shutdown()


if __name__ == "__main__":
    main()
