"""`plait serve` under load: 1,000 runs submitted at once over HTTP, and 200 SSE subscribers, against `plait batch`.

    python bench/serve_bench.py                 # 1,000 runs, 200 subscribers, 3 repetitions
    python bench/serve_bench.py --runs 200 --reps 1

Each run is a one-step scripted spec whose model answers after `--latency`
(50 ms), journaled in a fresh project's SQLite journal. The server is a real
`plait serve` process on loopback (started once per repetition, timed from its
start line); every run is `POST /runs?wait=300s` from one aiohttp client (the `bench`
extra) with no connection limit, all at once: wall time is the first request to the last
answer, latency each request's submit-to-answer. The reference is the same
runs through `plait batch --concurrency N` (N = the runs) in one process, timed
as a whole process minus its start-up (a `plait batch` of one row). Target:
serve ≤ 1.5x batch. CPU seconds are printed beside wall time (the server
process's, from /proc; the batch process's, from its rusage, start-up
subtracted alike): on a shared machine they are far steadier than wall time.

SSE: `--subscribers` clients each follow one of `--subscribers / 10` runs
(ten to a run) from its start, each run three tool rounds at `--latency` a
model call; every subscriber must see every event of its run exactly once, in
order (checked against the run's full stream read afterwards).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import re
import resource
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp

TOKEN = "bench-token"

SPEC = """plait 0.2
model m = "scripted/m" { script = "replies.json" }

tool echo "Echo a word." {
  params { word: string }
  run = python("bench_tools:echo")
}

agent main "answers each input" {
  model = m
}

agent rounds "three tool rounds, then an answer" {
  model = m
  tools = [echo]
}
"""
TOOLS = "def echo(word):\n    return word\n"


def replies(latency: str) -> dict[str, Any]:
    call = {"tool_calls": [{"name": "echo", "arguments": {"word": "w"}}], "delay": latency}
    return {
        "main": [{"text": "ok", "delay": latency}],
        "rounds": [call, call, call, {"text": "done", "delay": latency}],
    }


def project(root: Path, latency: str) -> Path:
    root.mkdir(parents=True)
    (root / "bench.plait").write_text(SPEC)
    (root / "bench_tools.py").write_text(TOOLS)
    (root / "replies.json").write_text(json.dumps(replies(latency)))
    return root / "bench.plait"


class Server:
    def __init__(self, spec: Path) -> None:
        env = dict(os.environ, PLAIT_SERVE_TOKEN=TOKEN)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "plait", "serve", str(spec), "--port", "0"],
            env=env,
            stderr=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            text=True,
        )
        line = self.proc.stderr.readline()  # type: ignore[union-attr]
        found = re.search(r"on (http://\S+)", line)
        if found is None:
            raise SystemExit(f"plait serve did not start: {line}{self.proc.stderr.read()}")  # type: ignore[union-attr]
        self.url = found.group(1)

    def cpu(self) -> float:
        """The server process's CPU seconds so far (user + system), from /proc."""
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait()
        self.proc.stderr.close()  # type: ignore[union-attr]


def session() -> aiohttp.ClientSession:
    """The load's client: aiohttp, no connection limit (httpx's pool scans every connection per request, so at
    1,000 connections the client, not the server, is what a benchmark would time)."""
    return aiohttp.ClientSession(
        headers={"Authorization": f"Bearer {TOKEN}"},
        connector=aiohttp.TCPConnector(limit=0),
        timeout=aiohttp.ClientTimeout(total=600),
    )


async def submit_raw(url: str, runs: int) -> tuple[float, list[float], list[str]]:
    """All runs at once over plain asyncio streams, one connection each, the requests built beforehand: a load
    client with next to no CPU of its own, so the wall time is the server's (it shares the machine's cores)."""
    host, port = url.removeprefix("http://").rsplit(":", 1)
    requests = []
    for i in range(runs):
        body = json.dumps({"spec": "bench", "entry": "main", "input": f"row {i}"}).encode()
        head = (
            f"POST /runs?wait=300s HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {TOKEN}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n"
        )
        requests.append(head.encode() + body)
    latencies: list[float] = []
    errors: list[str] = []

    async def one(request: bytes) -> None:
        t0 = time.perf_counter()
        try:
            reader, writer = await asyncio.open_connection(host, int(port))
            writer.write(request)
            answer = await reader.read()  # Connection: close: the answer ends with the connection
            writer.close()
            status, _, rest = answer.partition(b"\r\n")
            view = json.loads(rest.split(b"\r\n\r\n", 1)[1])
            if b" 200 " not in status or view.get("status") != "done":
                errors.append(f"{status!r} {view}")
        except (OSError, ValueError, IndexError) as exc:
            errors.append(repr(exc))
        latencies.append(time.perf_counter() - t0)

    t0 = time.perf_counter()
    await asyncio.gather(*(one(r) for r in requests))
    return time.perf_counter() - t0, latencies, errors


async def submit_all(url: str, runs: int) -> tuple[float, list[float], list[str]]:
    """All runs at once: (wall seconds, per-run latency seconds, errors)."""
    latencies: list[float] = []
    errors: list[str] = []
    async with session() as c:

        async def one(i: int) -> None:
            t0 = time.perf_counter()
            try:
                body = {"spec": "bench", "entry": "main", "input": f"row {i}"}
                async with c.post(f"{url}/runs?wait=300s", json=body) as r:
                    view = await r.json()
                    if r.status != 200 or view.get("status") != "done":
                        errors.append(f"{r.status} {view}")
            except aiohttp.ClientError as exc:
                errors.append(repr(exc))
            latencies.append(time.perf_counter() - t0)

        t0 = time.perf_counter()
        await asyncio.gather(*(one(i) for i in range(runs)))
        return time.perf_counter() - t0, latencies, errors


async def subscribers(url: str, count: int) -> tuple[float, list[str]]:
    """`count` SSE clients, ten per run, each from the run's start: (wall seconds, problems)."""
    problems: list[str] = []
    async with session() as c:
        run_ids = []
        for _ in range(max(1, count // 10)):
            async with c.post(f"{url}/runs", json={"spec": "bench", "entry": "rounds", "input": "go"}) as r:
                run_ids.append((await r.json())["id"])

        async def follow(run_id: str) -> list[int]:
            seqs = []
            async with c.get(f"{url}/runs/{run_id}/events") as response:
                async for raw in response.content:
                    line = raw.decode().rstrip("\r\n")
                    if line.startswith("id: "):
                        seqs.append(int(line[4:]))
            return seqs

        t0 = time.perf_counter()
        seen = await asyncio.gather(*(follow(run_ids[i % len(run_ids)]) for i in range(count)))
        wall = time.perf_counter() - t0
        for i, seqs in enumerate(seen):
            run_id = run_ids[i % len(run_ids)]
            full = await follow(run_id)  # the run has ended: its whole stream
            if seqs != full or len(set(seqs)) != len(seqs):
                problems.append(f"subscriber {i} of {run_id}: {len(seqs)} events, the run has {len(full)}")
        return wall, problems


def batch(spec: Path, runs: int) -> tuple[float, float]:
    """`plait batch` of the runs in one process, minus the process's start-up (a batch of one row): (wall, CPU)."""

    def timed(rows: int) -> tuple[float, float]:
        inputs = spec.parent / f"rows{rows}.jsonl"
        inputs.write_text("".join(json.dumps(f"row {i}") + "\n" for i in range(rows)))
        t0 = time.perf_counter()
        cpu0 = _children_cpu()
        done = subprocess.run(
            [sys.executable, "-m", "plait", "batch", str(spec), str(inputs), "--entry", "main"]
            + ["--concurrency", str(rows), "-o", str(spec.parent / "out.jsonl")],
            capture_output=True,
            text=True,
        )
        wall = time.perf_counter() - t0
        cpu = _children_cpu() - cpu0
        if done.returncode != 0:
            raise SystemExit(f"plait batch failed: {done.stderr}")
        return wall, cpu

    many, one = timed(runs), timed(1)
    return many[0] - one[0], many[1] - one[1]


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--subscribers", type=int, default=200)
    parser.add_argument("--latency", default="50ms")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument(
        "--client",
        choices=("raw", "aiohttp"),
        default="raw",
        help="the load client: plain asyncio streams (default; next to no CPU of its own) or aiohttp",
    )
    args = parser.parse_args()
    print(f"# {platform.processor() or platform.machine()}, {os.cpu_count()} cpu, Python {platform.python_version()}")
    print(f"# load average {os.getloadavg()[0]:.1f}; {args.runs} runs at {args.latency} a model call")
    serve_walls, batch_walls, p50s, p99s, sse_walls, serve_cpus, batch_cpus = [], [], [], [], [], [], []
    for rep in range(args.reps):
        with tempfile.TemporaryDirectory() as tmp:
            spec = project(Path(tmp) / "serve", args.latency)
            server = Server(spec)
            try:
                cpu0 = server.cpu()
                submit = submit_raw if args.client == "raw" else submit_all
                wall, latencies, errors = asyncio.run(submit(server.url, args.runs))
                serve_cpus.append(server.cpu() - cpu0)
                sse_wall, problems = asyncio.run(subscribers(server.url, args.subscribers))
            finally:
                server.stop()
            if errors or problems:
                raise SystemExit(f"errors: {errors[:3]} {problems[:3]} ({len(errors)} + {len(problems)} in all)")
            latencies.sort()
            p50s.append(statistics.median(latencies))
            p99s.append(latencies[int(len(latencies) * 0.99) - 1])
            serve_walls.append(wall)
            sse_walls.append(sse_wall)
            batch_wall, batch_cpu = batch(project(Path(tmp) / "batch", args.latency), args.runs)
            batch_walls.append(batch_wall)
            batch_cpus.append(batch_cpu)
        print(
            f"rep {rep + 1}: serve {serve_walls[-1]:.2f} s, batch {batch_walls[-1]:.2f} s, "
            f"ratio {serve_walls[-1] / batch_walls[-1]:.2f}x; CPU serve {serve_cpus[-1]:.2f} s "
            f"batch {batch_cpus[-1]:.2f} s; p50 {p50s[-1] * 1000:.0f} ms, "
            f"p99 {p99s[-1] * 1000:.0f} ms, {args.subscribers} SSE subscribers {sse_walls[-1]:.2f} s, all events once"
        )
    med = statistics.median
    print(
        f"median: serve {med(serve_walls):.2f} s, batch {med(batch_walls):.2f} s, "
        f"ratio {med(serve_walls) / med(batch_walls):.2f}x (target ≤ 1.5x); server CPU {med(serve_cpus):.2f} s, "
        f"batch CPU {med(batch_cpus):.2f} s ({med(serve_cpus) / med(batch_cpus):.2f}x); p50 {med(p50s) * 1000:.0f} ms, "
        f"p99 {med(p99s) * 1000:.0f} ms, SSE {med(sse_walls):.2f} s; no errors"
    )


if __name__ == "__main__":
    main()
