"""MCP failures a run must survive, against a real server (tests/mcp/flaky_server.py, the SDK's MCPServer).

A failing call is an error result the model reads plus a `mcp_tool_error`
warning; a server that cannot start is one clear error naming it and its
stderr; drift from the lock is a warning naming the tools; and no server
process outlives the pool that started it.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
from dataclasses import replace
from typing import Any

import pytest

pytest.importorskip("mcp")

from mcp_helpers import new_marker, FLAKY, flaky, free_port, processes_with, wait_until  # noqa: E402

from plait.core.kinds import McpNode  # noqa: E402
from plait.runtime.mcp import McpPool, McpStartError  # noqa: E402
from plait.runtime.mcp.drift import offered_tool  # noqa: E402
from plait.runtime.mcp.locking import lock_server  # noqa: E402

pytestmark = pytest.mark.slow

TOKEN_ENV = "PLAIT_TEST_FLAKY_TOKEN"


class Loop:
    """One event loop in a thread for the module, so one server serves many tests."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def run(self, coro: Any, timeout: float = 90.0) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
        self.loop.close()


class Warnings(list):
    def __call__(self, code: str, message: str, path: tuple[str, ...], *_: Any, **details: Any) -> None:
        self.append({"code": code, "message": message, **details})

    def codes(self) -> list[str]:
        return [w["code"] for w in self]


@pytest.fixture(scope="module")
def loop():
    running = Loop()
    yield running
    running.close()


@pytest.fixture(scope="module")
def offered(loop) -> tuple[dict[str, Any], ...]:
    """What the server offers, as a fresh lock records it (the lock command's own path)."""
    locked = loop.run(lock_server(flaky(new_marker()), "fp"))
    return tuple(offered_tool(t) for t in locked.tools)


@pytest.fixture(scope="module")
def shared(loop, offered):
    """One started server for the module's well-behaved tests: (pool, warnings, marker)."""
    marker = new_marker()
    warnings = Warnings()
    config = flaky(marker, env={"FLAKY_TOKEN": {"env": TOKEN_ENV}}, offered=offered, lock_state="fresh")
    pool = McpPool({"flaky": config}, warnings)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(TOKEN_ENV, "tok-123")
        loop.run(pool.start("flaky"))
    yield pool, warnings, marker
    loop.run(pool.aclose())
    assert wait_until(lambda: not processes_with(marker)), "the server outlived its pool"


def test_a_call_returns_the_tool_text(loop, shared):
    pool, warnings, _ = shared
    result = loop.run(pool.call("flaky", "echo", {"text": "hi"}, 5))
    assert (result.content, result.is_error) == ("echo: hi", False)
    assert "mcp_tool_drift" not in warnings.codes()


def test_env_values_are_read_when_the_server_starts(loop, shared):
    pool, _, _ = shared
    result = loop.run(pool.call("flaky", "secret", {}, 5))
    assert result.content == "tok-123"


def test_an_is_error_result_is_an_error_the_model_reads_with_a_warning(loop, shared):
    pool, warnings, _ = shared
    result = loop.run(pool.call("flaky", "fail", {"reason": "disk full"}, 5))
    assert result.is_error and "disk full" in result.content
    assert warnings[-1]["code"] == "mcp_tool_error" and warnings[-1]["tool"] == "fail"


def test_a_hang_past_the_timeout_is_an_error_and_the_server_stays_usable(loop, shared):
    pool, warnings, _ = shared
    result = loop.run(pool.call("flaky", "hang", {"seconds": 30}, 0.5))
    assert result.is_error and "timed out after 0.5s" in result.content
    assert warnings[-1]["reason"] == "timeout"
    assert loop.run(pool.call("flaky", "echo", {"text": "still here"}, 5)).content == "echo: still here"


def test_an_unknown_tool_is_an_error_result(loop, shared):
    pool, _, _ = shared
    result = loop.run(pool.call("flaky", "no_such_tool", {}, 5))
    assert result.is_error and "no_such_tool" in result.content


def test_parallel_callers_share_one_server(loop, shared):
    pool, _, marker = shared

    async def many() -> list[Any]:
        return await asyncio.gather(*(pool.call("flaky", "echo", {"text": str(i)}, 5) for i in range(8)))

    results = loop.run(many())
    assert [r.content for r in results] == [f"echo: {i}" for i in range(8)]
    assert len(processes_with(marker)) == 1


def test_a_crash_mid_call_is_an_error_naming_it_and_leaves_no_process(loop, offered):
    marker = new_marker()
    warnings = Warnings()
    pool = McpPool({"flaky": flaky(marker, offered=offered)}, warnings)
    try:
        result = loop.run(pool.call("flaky", "crash", {}, 10))
        assert result.is_error and "closed the connection" in result.content
        assert "crashing on purpose" in result.content  # the server's stderr tail
        assert loop.run(pool.call("flaky", "echo", {"text": "x"}, 5)).is_error  # no silent restart
    finally:
        loop.run(pool.aclose())
    assert wait_until(lambda: not processes_with(marker))


def test_a_server_that_fails_to_start_names_itself_and_its_stderr(loop):
    marker = new_marker()
    pool = McpPool({"flaky": flaky(marker, "fail-start")}, Warnings())
    with pytest.raises(McpStartError) as caught:
        loop.run(pool.start("flaky"))
    message = caught.value.message
    assert "MCP server `flaky`" in message and "cannot open the database" in message
    assert caught.value.kind == "mcp_start_failed"
    loop.run(pool.aclose())
    assert not processes_with(marker)


def test_a_command_that_does_not_exist_is_a_start_error():
    pool = McpPool({"gone": McpNode(name="gone", command=("no-such-mcp-server-3f9c",))}, Warnings())
    with pytest.raises(McpStartError, match=r"`gone`.*command not found"):
        asyncio.run(pool.start("gone"))


def test_an_unset_variable_is_a_start_error_naming_it_and_nothing_starts(monkeypatch):
    monkeypatch.delenv(TOKEN_ENV, raising=False)
    marker = new_marker()
    pool = McpPool({"flaky": flaky(marker, env={"FLAKY_TOKEN": {"env": TOKEN_ENV}})}, Warnings())
    with pytest.raises(McpStartError, match=TOKEN_ENV):
        asyncio.run(pool.start("flaky"))
    assert not processes_with(marker)


def test_drift_from_the_lock_is_a_warning_and_a_vanished_tool_an_error_result(loop, offered, monkeypatch):
    monkeypatch.setenv("FLAKY_DRIFT", "1")  # the SDK passes only PATH, HOME, ... and the declared env on
    marker = new_marker()
    warnings = Warnings()
    config = flaky(marker, env={"FLAKY_DRIFT": "1"}, offered=offered, lock_state="fresh")
    pool = McpPool({"flaky": config}, warnings)
    try:
        result = loop.run(pool.call("flaky", "secret", {}, 5))
        drift = next(w for w in warnings if w["code"] == "mcp_tool_drift")
        assert drift["added"] == ["shout"] and drift["removed"] == ["secret"]
        assert "added: shout; removed: secret" in drift["message"]
        assert result.is_error and "no longer offers `secret`" in result.content
    finally:
        loop.run(pool.aclose())


def test_the_allow_list_keeps_unlisted_tools_out_of_the_drift(loop, offered):
    marker = new_marker()
    warnings = Warnings()
    kept = tuple(t for t in offered if t["name"] == "echo")
    pool = McpPool({"flaky": flaky(marker, tools=("echo",), offered=kept, lock_state="fresh")}, warnings)
    try:
        assert loop.run(pool.call("flaky", "echo", {"text": "a"}, 5)).content == "echo: a"
        assert "mcp_tool_drift" not in warnings.codes()
    finally:
        loop.run(pool.aclose())


def test_streamable_http_on_loopback(loop, offered, monkeypatch):
    monkeypatch.setenv(TOKEN_ENV, "Bearer t0k")
    port = free_port()
    marker = new_marker()
    process = subprocess.Popen(
        [sys.executable, str(FLAKY), "http", str(port), f"--marker={marker}"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        url = f"http://127.0.0.1:{port}/mcp"
        headers = {"X-Plait-Test": "1", "Authorization": {"env": TOKEN_ENV}}
        config = McpNode(name="flaky", url=url, headers=headers, offered=offered, lock_state="fresh")
        warnings = Warnings()
        pool = McpPool({"flaky": config}, warnings)
        started = None
        for _ in range(100):  # the server takes a moment to listen
            try:
                started = loop.run(pool.start("flaky"))
                break
            except McpStartError:
                pool = McpPool({"flaky": replace(config)}, warnings)
                loop.run(asyncio.sleep(0.2))
        assert started is not None and started.info is not None and started.info.name == "flaky"
        assert loop.run(pool.call("flaky", "echo", {"text": "over http"}, 5)).content == "echo: over http"
        # Header values, literal or read from the environment when the server started, go with every request.
        assert loop.run(pool.call("flaky", "header", {"name": "X-Plait-Test"}, 5)).content == "1"
        assert loop.run(pool.call("flaky", "header", {"name": "Authorization"}, 5)).content == "Bearer t0k"
        assert loop.run(pool.call("flaky", "hang", {"seconds": 30}, 0.5)).is_error
        loop.run(pool.aclose())
    finally:
        process.terminate()
        process.wait(10)


def test_a_server_that_never_answers_the_handshake_is_stopped_and_named(monkeypatch):
    from plait.runtime.mcp import server

    monkeypatch.setattr(server, "START_TIMEOUT", 4.0)
    marker = new_marker()
    script = (
        "import sys, time; print('silent: waiting for a licence server', file=sys.stderr, flush=True); time.sleep(120)"
    )
    silent = McpNode(name="silent", command=(sys.executable, "-c", script, marker))
    pool = McpPool({"silent": silent}, Warnings())
    with pytest.raises(McpStartError, match=r"`silent`.*did not answer within 4s") as caught:
        asyncio.run(pool.start("silent"))
    assert "waiting for a licence server" in caught.value.message  # the stderr tail says why
    assert wait_until(lambda: not processes_with(marker), timeout=10)


def test_a_start_error_never_shows_a_credential_in_the_url():
    port = free_port()  # nothing listens there
    url = f"http://127.0.0.1:{port}/mcp?api_key=sk-proj-4f9Qz7LmX2vB8nR1tK6wY3hJ"
    pool = McpPool({"remote": McpNode(name="remote", url=url)}, Warnings())
    with pytest.raises(McpStartError) as caught:
        asyncio.run(pool.start("remote"))
    assert "`remote`" in caught.value.message and "4f9Qz7LmX2vB8nR1tK6wY3hJ" not in caught.value.message


def test_cancelled_while_a_server_starts_leaves_no_process():
    marker = new_marker()
    silent = McpNode(name="silent", command=(sys.executable, "-c", "import time; time.sleep(120)", marker))
    pool = McpPool({"silent": silent}, Warnings())

    async def cancel_the_start() -> None:
        start = asyncio.ensure_future(pool.start("silent"))
        while not processes_with(marker):
            await asyncio.sleep(0.05)
        start.cancel()  # Ctrl-C reaches a run as a cancellation
        with pytest.raises(asyncio.CancelledError):
            await start
        await pool.aclose()  # what the run's end does

    asyncio.run(asyncio.wait_for(cancel_the_start(), 60))
    assert wait_until(lambda: not processes_with(marker), timeout=10)
