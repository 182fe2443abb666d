"""Shared fixtures for the provider tests: the fake server (from plait.testing) and instant retries."""

from __future__ import annotations

import asyncio

import pytest

from plait.runtime.providers import retry
from plait.testing import plait_fake_server  # noqa: F401  (re-exported fixture)

#: Every provider flavour the fake server speaks, as FakeServer.config() names them.
FLAVOURS = ["openai", "openai-responses", "anthropic", "google", "openai-compatible"]


@pytest.fixture
def sleeps(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """Make retry waits instant and record how long each would have been."""
    waited: list[float] = []

    async def fake_sleep(seconds: float) -> None:
        waited.append(seconds)
        await asyncio.sleep(0)

    monkeypatch.setattr(retry, "sleep", fake_sleep)
    return waited
