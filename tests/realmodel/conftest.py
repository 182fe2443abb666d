"""The real local model for tests/realmodel: one llama-server per test session (per xdist worker), or a skip.

Outside CI a missing binary or model skips with how to get them (scripts/local-model); under CI
(PLAIT_CI=1) .ci/run builds them first, and tests/conftest.py turns any skip into a failure.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from realmodel.llama import HOW_TO_GET, Server, locate

#: Bytecode for the many short plait processes, kept out of the source tree.
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
ENV["PYTHONPYCACHEPREFIX"] = os.path.join(tempfile.gettempdir(), "plait-realmodel-pycache")


def new_server() -> Server:
    found = locate()
    if found is None:
        pytest.skip(HOW_TO_GET)
    return Server(*found)


@pytest.fixture(scope="session")
def llama() -> Iterator[Server]:
    server = new_server().start()
    yield server
    server.stop()


@dataclass
class Ran:
    code: int
    stdout: str
    stderr: str

    @property
    def report(self) -> dict[str, Any]:
        """The --json report (the last line of stdout)."""
        assert self.stdout.strip(), f"no report; exit {self.code}, stderr:\n{self.stderr}"
        return json.loads(self.stdout.strip().splitlines()[-1])

    @property
    def events(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.stdout.splitlines() if line.startswith("{")]


def plait(folder: Path, *argv: str, stdin: str | None = None) -> Ran:
    done = subprocess.run(
        [sys.executable, "-m", "plait", *argv],
        cwd=folder,
        input=stdin,
        capture_output=True,
        text=True,
        env=ENV,
        timeout=600,  # a hung server fails the test instead of the whole suite
    )
    return Ran(done.returncode, done.stdout, done.stderr)


#: The model every spec uses: temperature 0 makes llama.cpp's sampling greedy, so replies repeat exactly.
MODEL = """model local = "openai-compatible/smollm2" {{
  base_url    = "{base_url}"
  temperature = 0
  retries     = 0
  timeout     = 5m
}}
"""


def write_spec(folder: Path, server: Server, body: str, name: str = "spec.plait") -> Path:
    path = folder / name
    path.write_text("plait 0.2\n\n" + MODEL.format(base_url=server.base_url) + body)
    return path
