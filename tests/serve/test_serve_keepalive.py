"""A quiet event stream (a run waiting for a person) sends `: keep-alive` comments, so a proxy does not cut it; a
client that skips comments (as SSE clients do) sees only the run's events."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from protocol_server import TOKEN, serving, write_specs

import plait.serve.app as app_module

pytestmark = pytest.mark.slow


def test_a_waiting_runs_stream_sends_keep_alive_comments(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(app_module, "KEEPALIVE_SECONDS", 0.05)
    specs = write_specs(tmp_path, "triage")
    with serving(specs) as base, httpx.Client(base_url=base, headers={"Authorization": f"Bearer {TOKEN}"}) as c:
        run = c.post("/runs?wait=60s", json={"spec": "triage", "input": {"ticket": "t", "customer": "Ann"}}).json()
        assert run["status"] == "waiting"
        lines = []
        with c.stream("GET", f"/runs/{run['id']}/events", timeout=60) as stream:
            for line in stream.iter_lines():
                lines.append(line)
                if line == ": keep-alive":  # the run is quiet (it waits): the stream says it is alive
                    break
        events = [line for line in lines if line.startswith("event: ")]
        assert events[-1] == "event: run_end"  # every event first, then the comment
        assert lines.count(": keep-alive") == 1
