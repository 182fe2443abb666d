"""The shared aiohttp transport across event loops: a client used under one asyncio.run() and then another
closes the first loop's connections (no socket left open, no ResourceWarning) and works in the second."""

from __future__ import annotations

import asyncio
import gc
import socket
import threading
import warnings

from plait.runtime.providers.transport import make_client

REPLY = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: keep-alive\r\n\r\nok"


def _server() -> tuple[int, list[str], threading.Thread]:
    """A keep-alive HTTP server in a thread; `events` gets "open" and "closed" per connection."""
    events: list[str] = []
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()

    def serve_one(conn: socket.socket) -> None:
        events.append("open")
        with conn:
            while True:
                data = conn.recv(65536)
                if not data:
                    events.append("closed")
                    return
                conn.sendall(REPLY)

    def accept() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            threading.Thread(target=serve_one, args=(conn,), daemon=True).start()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    return listener.getsockname()[1], events, thread


def test_a_client_reused_under_a_second_asyncio_run_closes_the_first_loops_connections():
    port, events, _ = _server()
    client = make_client()
    url = f"http://127.0.0.1:{port}/"

    async def get() -> str:
        return (await client.get(url)).text

    with warnings.catch_warnings():
        warnings.simplefilter("error", ResourceWarning)
        assert asyncio.run(get()) == "ok"  # asyncio.run ends its loop with the connection still pooled
        for _ in range(50):  # the server thread sees the close once the loop's teardown ran
            if events.count("closed") == 1:
                break
            threading.Event().wait(0.02)
        assert events == ["open", "closed"]

        async def second() -> str:
            try:
                return await get()
            finally:
                await client.aclose()

        assert asyncio.run(second()) == "ok"
        gc.collect()
    assert events.count("open") == 2


def test_closing_the_client_in_its_loop_leaves_no_task_behind():
    port, _, _ = _server()

    async def go() -> set[asyncio.Task]:
        client = make_client()
        assert (await client.get(f"http://127.0.0.1:{port}/")).status_code == 200
        await client.aclose()
        return {t for t in asyncio.all_tasks() if t is not asyncio.current_task()}

    assert asyncio.run(go()) == set()
