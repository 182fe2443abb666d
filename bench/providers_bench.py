"""Provider HTTP stack → timings against bare aiohttp, with the fake server in its own process.

    python bench/providers_bench.py            # about a minute
    python bench/providers_bench.py --httpcore # also httpx's default transport (adds ~30 s per round)

Three measurements, each repeated and reported as a median (targets from issue 5):
1. 1,000 concurrent model calls, server latency 50 ms: plait ≤ 1.0 s.
2. one sequential ~5 KB request: plait ≤ 1.5 × bare aiohttp.
3. one streamed reply (400 deltas): consuming plait's events ≤ 1.1 × reading the raw bytes,
   sent as one burst (the worst case: pure parsing) and paced at one delta per millisecond.
   Beside the burst, two diagnostics: the same bytes read unparsed through plait's own transport,
   and the decoding of the events' JSON alone (no I/O), the floor of any per-event parser.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Awaitable, Callable

import aiohttp
import httpx

from plait.runtime.providers import make_provider
from plait.core.kinds import ModelNode
from plait.runtime.providers.base import Message, ModelRequest
from plait.runtime.providers.sse import SSEDecoder, loads
from plait.runtime.providers.transport import client_timeout, direct_transport, make_client

CONCURRENT = 1000
SEQUENTIAL = 200
STREAMS = 10
STREAM_WORDS = 400
KEY_ENV = "PLAIT_BENCH_KEY"

SCRIPT = {
    "latency": [{"text": "ok", "delay": "50ms"}],
    "small": [{"text": "A short answer of a sentence or two, as a model gives after a tool result."}],
    "stream": [{"text": " ".join(f"word{i}" for i in range(STREAM_WORDS))}],
    # The same reply paced like a fast model (one delta per millisecond).
    "paced": [{"text": " ".join(f"word{i}" for i in range(STREAM_WORDS)), "chunk_delay": "1ms"}],
}


def start_server(script: dict[str, Any]) -> tuple[subprocess.Popen[str], str]:
    path = Path(tempfile.mkdtemp()) / "bench.replies.json"
    path.write_text(json.dumps(script))
    proc = subprocess.Popen(
        [sys.executable, "-m", "plait", "fake-server", str(path), "--cycle", "--port", "0"],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    return proc, proc.stdout.readline().strip()


def body(model: str, text: str, stream: bool = False) -> bytes:
    payload: dict[str, Any] = {"model": model, "messages": [{"role": "user", "content": text}]}
    if stream:
        payload.update(stream=True, stream_options={"include_usage": True})
    return json.dumps(payload).encode()


async def timed(coro: Awaitable[Any]) -> float:
    started = time.perf_counter()
    await coro
    return time.perf_counter() - started


async def interleaved(rounds: int, per: int, **runs: Callable[[], Awaitable[Any]]) -> dict[str, tuple[float, float]]:
    """(median wall, median client CPU) seconds per unit of each run, alternating runs round by round.

    Alternating gives both sides the same machine load; client CPU (this
    process only) is reported beside wall time because it is much less
    sensitive to other processes on a shared machine.
    """
    for run in runs.values():
        await run()  # warm-up: connections open, caches filled
    walls: dict[str, list[float]] = {name: [] for name in runs}
    cpus: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(rounds):
        for name, run in runs.items():
            cpu, wall = time.process_time(), time.perf_counter()
            await run()
            walls[name].append((time.perf_counter() - wall) / per)
            cpus[name].append((time.process_time() - cpu) / per)
    return {name: (statistics.median(walls[name]), statistics.median(cpus[name])) for name in runs}


class Bench:
    def __init__(self, url: str, session: aiohttp.ClientSession) -> None:
        self.url = url
        self.session = session
        self.chat_url = f"{url}/v1/chat/completions"
        self.headers = {"content-type": "application/json", "authorization": "Bearer bench"}

    def provider(self, client: httpx.AsyncClient) -> Any:
        config = ModelNode(
            name="bench", provider="openai", model_id="bench", base_url=self.url + "/v1", api_key_env=KEY_ENV
        )
        return make_provider(config, client=client)

    async def aiohttp_call(self, data: bytes) -> Any:
        async with self.session.post(self.chat_url, data=data, headers=self.headers) as response:
            return json.loads(await response.read())

    # 1. concurrency: seconds for CONCURRENT calls at once

    def concurrent_plait(self, client: httpx.AsyncClient) -> Callable[[], Awaitable[Any]]:
        provider, req = self.provider(client), ModelRequest("latency", [Message.user("hi")])
        return lambda: asyncio.gather(*[provider.complete(req) for _ in range(CONCURRENT)])

    def concurrent_aiohttp(self) -> Callable[[], Awaitable[Any]]:
        data = body("latency", "hi")
        return lambda: asyncio.gather(*[self.aiohttp_call(data) for _ in range(CONCURRENT)])

    # 2. one sequential ~5 KB request: seconds per call

    def sequential_plait(self, client: httpx.AsyncClient, text: str) -> Callable[[], Awaitable[None]]:
        provider, req = self.provider(client), ModelRequest("small", [Message.user(text)])

        async def run() -> None:
            for _ in range(SEQUENTIAL):
                await provider.complete(req)

        return run

    def sequential_aiohttp(self, text: str) -> Callable[[], Awaitable[None]]:
        async def run() -> None:
            for _ in range(SEQUENTIAL):
                await self.aiohttp_call(body("small", text))  # the body is built per call on both sides

        return run

    # 3. one streamed reply: seconds per stream

    def stream_plait(self, client: httpx.AsyncClient, model: str = "stream") -> Callable[[], Awaitable[None]]:
        provider, req = self.provider(client), ModelRequest(model, [Message.user("write")])

        async def run() -> None:
            for _ in range(STREAMS):
                async for _event in provider.stream(req):
                    pass

        return run

    def stream_raw_aiohttp(self, model: str = "stream") -> Callable[[], Awaitable[None]]:
        data = body(model, "write", stream=True)

        async def run() -> None:
            for _ in range(STREAMS):
                async with self.session.post(self.chat_url, data=data, headers=self.headers) as response:
                    async for _chunk in response.content.iter_any():
                        pass

        return run


def transport_post(bench: Bench, client: httpx.AsyncClient) -> Callable[[], Awaitable[Any]]:
    """The burst reply's request as the providers send it: calls on a `make_client` client go
    straight to its transport's `post` (`direct_transport`), not through `client.stream`."""
    transport = direct_transport(client)
    assert transport is not None
    data = body("stream", "write", stream=True)
    headers = {**bench.headers, "accept-encoding": "identity"}  # as the providers ask for streams
    timeout = client_timeout(client.timeout.as_dict())
    return lambda: transport.post(bench.chat_url, headers, data, timeout)


def stream_raw_transport(bench: Bench, client: httpx.AsyncClient) -> Callable[[], Awaitable[None]]:
    """The same bytes through plait's own transport, unparsed: parsing cost apart from transport cost."""
    post = transport_post(bench, client)

    async def run() -> None:
        for _ in range(STREAMS):
            response = await post()
            try:
                async for _chunk in response.aiter_raw():
                    pass
            finally:
                await response.aclose()

    return run


async def stream_json_only(bench: Bench, client: httpx.AsyncClient) -> Callable[[], Awaitable[None]]:
    """Only the JSON decoding of the reply's events, as the providers do it, no I/O: the floor of per-event parsing."""
    response = await transport_post(bench, client)()
    raw = b"".join([chunk async for chunk in response.aiter_raw()])
    await response.aclose()
    payloads = [data for _name, data in SSEDecoder().feed(raw) if data.startswith("{")]

    async def run() -> None:
        for _ in range(STREAMS):
            for data in payloads:
                loads(data)

    return run


def aiohttp_transport_client() -> httpx.AsyncClient | None:
    try:
        from httpx_aiohttp import AiohttpTransport
    except ImportError:
        return None
    return httpx.AsyncClient(transport=AiohttpTransport(limits=httpx.Limits(max_connections=None)), timeout=600)


async def main(args: argparse.Namespace) -> dict[str, Any]:
    os.environ.setdefault(KEY_ENV, "bench")
    proc, url = start_server(SCRIPT)
    results: dict[str, Any] = {}
    try:
        session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0))
        bench = Bench(url, session)
        client = make_client()
        text = "Summarise the following notes. " + "lorem ipsum dolor sit amet " * 180  # ~5 KB body
        runs = {"plait": bench.concurrent_plait(client), "aiohttp": bench.concurrent_aiohttp()}
        other = aiohttp_transport_client()
        if other is not None:
            runs["httpx_aiohttp_package"] = bench.concurrent_plait(other)
        measured = {
            "concurrent": await interleaved(args.rounds, 1, **runs),
            "sequential": await interleaved(
                args.rounds,
                SEQUENTIAL,
                plait=bench.sequential_plait(client, text),
                aiohttp=bench.sequential_aiohttp(text),
            ),
            "stream": await interleaved(
                args.rounds,
                STREAMS,
                plait=bench.stream_plait(client),
                aiohttp_raw=bench.stream_raw_aiohttp(),
                plait_transport_raw=stream_raw_transport(bench, client),
                json_only=await stream_json_only(bench, client),
            ),
            "paced_stream": await interleaved(
                3, STREAMS, plait=bench.stream_plait(client, "paced"), aiohttp_raw=bench.stream_raw_aiohttp("paced")
            ),
        }
        for target, by_run in measured.items():
            for name, (wall, cpu) in by_run.items():
                results[f"{target}_{name}_wall_ms"] = 1000 * wall
                results[f"{target}_{name}_cpu_ms"] = 1000 * cpu
        if other is not None:
            await other.aclose()
        if args.httpcore:
            default = httpx.AsyncClient(timeout=600, limits=httpx.Limits(max_connections=None))
            results["concurrent_httpx_default_wall_ms"] = 1000 * await timed(
                asyncio.gather(
                    *[
                        bench.provider(default).complete(ModelRequest("latency", [Message.user("hi")]))
                        for _ in range(CONCURRENT)
                    ]
                )
            )
            await default.aclose()
        await client.aclose()
        await session.close()
    finally:
        proc.terminate()
        proc.wait(10)
    pairs = (
        ("sequential", "aiohttp"),
        ("stream", "aiohttp_raw"),
        ("paced_stream", "aiohttp_raw"),
        ("concurrent", "aiohttp"),
    )
    for target, baseline in pairs:
        for measure in ("wall", "cpu"):
            results[f"{target}_ratio_{measure}"] = (
                results[f"{target}_plait_{measure}_ms"] / results[f"{target}_{baseline}_{measure}_ms"]
            )
    return results


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7, help="timed repetitions per measurement (median reported)")
    parser.add_argument("--httpcore", action="store_true", help="also time httpx's default transport (slow)")
    results = asyncio.run(main(parser.parse_args()))
    width = max(map(len, results))
    for name, value in results.items():
        print(f"{name:<{width}}  {value:10.3f}")
    checks = {
        "1,000 concurrent ≤ 1.0 s": results["concurrent_plait_wall_ms"] <= 1000,
        "sequential ≤ 1.5× aiohttp": results["sequential_ratio_wall"] <= 1.5,
        "stream ≤ 1.1× raw bytes": results["stream_ratio_wall"] <= 1.1,
    }
    for name, ok in checks.items():
        print(f"{'PASS' if ok else 'MISS'}  {name}")
