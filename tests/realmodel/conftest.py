"""The real local model for tests/realmodel: one llama-server per test session (per xdist worker), or a skip.

Outside CI a missing binary or model skips with how to get them (scripts/local-model); under CI
(PLAIT_CI=1) .ci/run builds them first, and tests/conftest.py turns any skip into a failure.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from realmodel.llama import Server
from realmodel.runner import new_server


@pytest.fixture(scope="session")
def llama() -> Iterator[Server]:
    server = new_server().start()
    yield server
    server.stop()
