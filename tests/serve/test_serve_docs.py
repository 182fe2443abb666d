"""The httpx client in docs/serve.md runs as printed against a real `plait serve`: start, follow the events, answer
the ask, and print the output."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from protocol_server import write_specs
from serve_helpers import TOKEN, Server

pytestmark = pytest.mark.slow

DOC = Path(__file__).resolve().parents[2] / "docs" / "serve.md"


def client_example() -> str:
    text = DOC.read_text()
    section = text[text.index("## A client in plain httpx") :]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def test_the_documented_client_runs_a_spec_to_its_end(tmp_path: Path) -> None:
    (spec,) = write_specs(tmp_path, "triage")
    server = Server(str(spec), cwd=tmp_path)
    try:
        code = client_example()
        assert '"http://127.0.0.1:8000"' in code
        script = tmp_path / "client.py"
        script.write_text(code.replace("http://127.0.0.1:8000", server.url))
        done = subprocess.run(
            [sys.executable, str(script)],
            env=dict(os.environ, PLAIT_SERVE_TOKEN=TOKEN),
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        server.stop()
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "1 run_start main", lines
    assert any(line.endswith(" run_resume main") for line in lines), lines  # it answered the ask and read on
    assert lines[-1] == "done sent"
