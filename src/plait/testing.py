"""pytest plugin → a `plait_fake_server` fixture: a loopback server speaking the providers' wire formats.

Enable it with `pytest -p plait.testing` (or `pytest_plugins = ["plait.testing"]`
in a conftest). The fixture yields a started FakeServer; queue replies and
build configs from it:

    def test_agent(plait_fake_server):
        plait_fake_server.push({"tool_calls": [{"name": "add", "arguments": {"a": 2}}]}, {"text": "4"})
        config = plait_fake_server.config("anthropic")   # base_url and key variable set
        ...

Replies use the scripted provider's shape plus the server knobs described in
plait.runtime.providers.fake.reply (status, headers, delay, stream_error, drop,
truncate). `plait_fake_server.requests` holds every request body received.
"""

from __future__ import annotations

from typing import Iterator

import pytest

from plait.runtime.providers.fake import FAKE_KEY_ENV, FakeServer

__all__ = ["FakeServer", "plait_fake_server"]


@pytest.fixture
def plait_fake_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeServer]:
    monkeypatch.setenv(FAKE_KEY_ENV, "fake-key")
    server = FakeServer()
    server.start()
    try:
        yield server
    finally:
        server.stop()
