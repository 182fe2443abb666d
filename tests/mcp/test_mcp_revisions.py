"""Both MCP revisions through the SDK: the stateless 2026-07-28 one (no `initialize`, no `Mcp-Session-Id`,
`server/discover` first) with a server built on the Python SDK, and the handshake one (2025-11-25) with the
npm reference server, over stdio and streamable HTTP; the lock records which one each server spoke."""

from __future__ import annotations

import asyncio
import subprocess
import sys

import pytest

pytest.importorskip("mcp")

from mcp_helpers import FLAKY, free_port, locked_spec, npm_server, wait_until  # noqa: E402
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS  # noqa: E402

from plait.core.mcp_lock import LOCK_FILE, loads  # noqa: E402
from plait.core.kinds import McpNode  # noqa: E402
from plait.runtime.mcp.server import McpConnection  # noqa: E402

pytestmark = pytest.mark.slow

STATELESS = "2026-07-28"


async def _session(config: McpNode, *calls: tuple[str, dict]) -> tuple[str, list[str]]:
    """Start a session, call each tool, close: (the revision spoken, each result's text)."""
    connection = McpConnection(config)
    await connection.start()
    try:
        texts = []
        for tool, arguments in calls:
            result = await connection.call(tool, arguments, timeout=30)
            texts.append(result.content[0].text)
        assert connection.info is not None
        return connection.info.protocol_version, texts
    finally:
        await connection.aclose()


@pytest.fixture(scope="module")
def python_sdk_http():
    """The Python SDK server over streamable HTTP on a loopback port: its /mcp URL."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, str(FLAKY), "http", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        assert wait_until(lambda: _listening(port)), "the HTTP test server did not start"
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def _listening(port: int) -> bool:
    import socket

    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
        return True
    except OSError:
        return False


def test_a_stateless_server_over_stdio_is_spoken_to_in_the_stateless_revision():
    config = McpNode(name="flaky", command=(sys.executable, str(FLAKY)))
    revision, texts = asyncio.run(_session(config, ("echo", {"text": "hi"})))
    assert (revision, texts) == (STATELESS, ["echo: hi"])


def test_a_stateless_server_over_http_gets_no_handshake_and_no_session(python_sdk_http):
    # The server reports the headers each call reached it with: no session id, the stateless revision on every call.
    config = McpNode(name="flaky", url=python_sdk_http)
    revision, texts = asyncio.run(
        _session(config, ("header", {"name": "Mcp-Session-Id"}), ("header", {"name": "MCP-Protocol-Version"}))
    )
    assert (revision, texts) == (STATELESS, ["(none)", STATELESS])


def test_a_handshake_server_over_stdio_is_spoken_to_in_its_own_revision():
    config = McpNode(name="everything", command=(npm_server("mcp-server-everything"),))
    revision, texts = asyncio.run(_session(config, ("echo", {"message": "hi"})))
    assert revision in HANDSHAKE_PROTOCOL_VERSIONS and texts == ["Echo: hi"]


@pytest.fixture(scope="module")
def npm_http():
    """The npm reference server over streamable HTTP (a handshake-revision server with sessions): its /mcp URL."""
    port = free_port()
    import os

    proc = subprocess.Popen(
        [npm_server("mcp-server-everything"), "streamableHttp"],
        env={**os.environ, "PORT": str(port)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        assert wait_until(lambda: _listening(port)), "the npm HTTP server did not start"
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_a_handshake_server_over_http_is_spoken_to_in_its_own_revision(npm_http):
    config = McpNode(name="everything", url=npm_http)
    revision, texts = asyncio.run(_session(config, ("echo", {"message": "hi"})))
    assert revision in HANDSHAKE_PROTOCOL_VERSIONS and texts == ["Echo: hi"]


def test_the_lock_records_the_revision_each_server_spoke(tmp_path):
    stateless = f'mcp flaky {{ command = ["{sys.executable}", "{FLAKY}"], tools = [echo] }}'
    handshake = f'mcp everything {{ command = ["{npm_server("mcp-server-everything")}"], tools = [echo] }}'
    locked_spec(tmp_path, "stateless", [], stateless, "flaky")
    locked_spec(tmp_path, "handshake", [], handshake, "everything")
    lock = loads((tmp_path / LOCK_FILE).read_text())
    assert lock.servers["flaky"].protocol_version == STATELESS
    assert lock.servers["everything"].protocol_version in HANDSHAKE_PROTOCOL_VERSIONS
