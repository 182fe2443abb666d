"""Provider HTTP stack → timings against bare aiohttp, with the fake server in its own process.

    python bench/providers_bench.py            # about a minute
    python bench/providers_bench.py --httpcore # also httpx's default transport (adds ~30 s per round)

Three measurements, each repeated and reported as a median (targets from issue 5):
1. 1,000 concurrent model calls, server latency 50 ms: plait ≤ 1.0 s.
2. one sequential ~5 KB request: plait ≤ 1.5 × bare aiohttp.
3. one streamed reply (400 deltas): consuming plait's events ≤ 1.1 × reading the raw bytes.
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
from plait.runtime.providers.base import Message, ModelConfig, ModelRequest
from plait.runtime.providers.transport import make_client

CONCURRENT = 1000
SEQUENTIAL = 200
STREAMS = 10
STREAM_WORDS = 400
KEY_ENV = "PLAIT_BENCH_KEY"

SCRIPT = {
    "latency": [{"text": "ok", "delay": "50ms"}],
    "small": [{"text": "A short answer of a sentence or two, as a model gives after a tool result."}],
    "stream": [{"text": " ".join(f"word{i}" for i in range(STREAM_WORDS))}],
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


async def interleaved(rounds: int, **runs: Callable[[], Awaitable[float]]) -> dict[str, float]:
    """Median of each run, alternating them round by round so both see the same machine load."""
    for run in runs.values():
        await run()  # warm-up: connections open, caches filled
    samples: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(rounds):
        for name, run in runs.items():
            samples[name].append(await run())
    return {name: statistics.median(values) for name, values in samples.items()}


class Bench:
    def __init__(self, url: str, session: aiohttp.ClientSession) -> None:
        self.url = url
        self.session = session
        self.chat_url = f"{url}/v1/chat/completions"
        self.headers = {"content-type": "application/json", "authorization": "Bearer bench"}

    def provider(self, client: httpx.AsyncClient) -> Any:
        config = ModelConfig("bench", "openai", "bench", base_url=self.url + "/v1", api_key_env=KEY_ENV)
        return make_provider(config, client=client)

    async def aiohttp_call(self, data: bytes) -> Any:
        async with self.session.post(self.chat_url, data=data, headers=self.headers) as response:
            return json.loads(await response.read())

    # 1. concurrency: seconds for CONCURRENT calls at once

    def concurrent_plait(self, client: httpx.AsyncClient) -> Callable[[], Awaitable[float]]:
        provider, req = self.provider(client), ModelRequest("latency", [Message.user("hi")])
        return lambda: timed(asyncio.gather(*[provider.complete(req) for _ in range(CONCURRENT)]))

    def concurrent_aiohttp(self) -> Callable[[], Awaitable[float]]:
        data = body("latency", "hi")
        return lambda: timed(asyncio.gather(*[self.aiohttp_call(data) for _ in range(CONCURRENT)]))

    # 2. one sequential ~5 KB request: seconds per call

    def sequential_plait(self, client: httpx.AsyncClient, text: str) -> Callable[[], Awaitable[float]]:
        provider, req = self.provider(client), ModelRequest("small", [Message.user(text)])

        async def run() -> float:
            started = time.perf_counter()
            for _ in range(SEQUENTIAL):
                await provider.complete(req)
            return (time.perf_counter() - started) / SEQUENTIAL

        return run

    def sequential_aiohttp(self, text: str) -> Callable[[], Awaitable[float]]:
        async def run() -> float:
            started = time.perf_counter()
            for _ in range(SEQUENTIAL):
                await self.aiohttp_call(body("small", text))  # the body is built per call on both sides
            return (time.perf_counter() - started) / SEQUENTIAL

        return run

    # 3. one streamed reply: seconds per stream

    def stream_plait(self, client: httpx.AsyncClient) -> Callable[[], Awaitable[float]]:
        provider, req = self.provider(client), ModelRequest("stream", [Message.user("write")])

        async def run() -> float:
            started = time.perf_counter()
            for _ in range(STREAMS):
                async for _event in provider.stream(req):
                    pass
            return (time.perf_counter() - started) / STREAMS

        return run

    def stream_raw_aiohttp(self) -> Callable[[], Awaitable[float]]:
        data = body("stream", "write", stream=True)

        async def run() -> float:
            started = time.perf_counter()
            for _ in range(STREAMS):
                async with self.session.post(self.chat_url, data=data, headers=self.headers) as response:
                    async for _chunk in response.content.iter_any():
                        pass
            return (time.perf_counter() - started) / STREAMS

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
        for name, value in (await interleaved(args.rounds, **runs)).items():
            results[f"concurrent_{name}_s"] = value
        seq = await interleaved(args.rounds, plait=bench.sequential_plait(client, text), aiohttp=bench.sequential_aiohttp(text))
        results["sequential_plait_ms"], results["sequential_aiohttp_ms"] = 1000 * seq["plait"], 1000 * seq["aiohttp"]
        streamed = await interleaved(args.rounds, plait=bench.stream_plait(client), raw=bench.stream_raw_aiohttp())
        results["stream_plait_ms"], results["stream_raw_aiohttp_ms"] = 1000 * streamed["plait"], 1000 * streamed["raw"]
        if other is not None:
            await other.aclose()
        if args.httpcore:
            default = httpx.AsyncClient(timeout=600, limits=httpx.Limits(max_connections=None))
            results["concurrent_httpx_default_s"] = await timed(
                asyncio.gather(*[bench.provider(default).complete(ModelRequest("latency", [Message.user("hi")]))
                                 for _ in range(CONCURRENT)]))
            await default.aclose()
        await client.aclose()
        await session.close()
    finally:
        proc.terminate()
        proc.wait(10)
    results["sequential_ratio"] = results["sequential_plait_ms"] / results["sequential_aiohttp_ms"]
    results["stream_ratio"] = results["stream_plait_ms"] / results["stream_raw_aiohttp_ms"]
    return results


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7, help="timed repetitions per measurement (median reported)")
    parser.add_argument("--httpcore", action="store_true", help="also time httpx's default transport (slow)")
    results = asyncio.run(main(parser.parse_args()))
    width = max(map(len, results))
    for name, value in results.items():
        print(f"{name:<{width}}  {value:8.3f}")
    checks = {
        "1,000 concurrent ≤ 1.0 s": results["concurrent_plait_s"] <= 1.0,
        "sequential ≤ 1.5× aiohttp": results["sequential_ratio"] <= 1.5,
        "stream ≤ 1.1× raw bytes": results["stream_ratio"] <= 1.1,
    }
    for name, ok in checks.items():
        print(f"{'PASS' if ok else 'MISS'}  {name}")
