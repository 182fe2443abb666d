"""A spec body and a server → the spec on disk, and `plait` run on it as a user would (a subprocess).

`new_server()` skips the test when scripts/local-model's build is absent (under CI, where .ci/run
builds it, tests/conftest.py turns that skip into a failure).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
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
