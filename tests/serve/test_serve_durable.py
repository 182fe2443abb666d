"""`plait serve` is durable: SIGKILL the server mid-run, start it again, and the run goes on from its journal with no
effect done twice; two servers on one PostgreSQL store never run one run twice.

Every kill point is held by the run itself, never found by timing: a model reply scripted to take an hour, or a tool
that waits while hold.txt exists. The test sees the run arrive there in its event stream, then kills.
"""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from serve_helpers import Server, events, make_project, replies

pytestmark = pytest.mark.slow


def start_writer(client: httpx.Client) -> str:
    response = client.post("/runs", json={"spec": "app", "entry": "writer", "input": {"topic": "tea"}})
    assert response.status_code == 201, response.text
    return response.json()["id"]


def reach(client: httpx.Client, run_id: str, event: str) -> list[dict]:
    """The run's events up to (and with) the first `event`: the run is there now."""
    return list(events(client, run_id, stop=lambda e: e["event"] == event))


def settled(client: httpx.Client, run_id: str) -> dict:
    response = client.get(f"/runs/{run_id}", params={"wait": "120s"})
    assert response.status_code == 200
    view = response.json()
    assert view["status"] != "running", view
    return view


def effects(root: Path) -> list[str]:
    path = root / "effects.txt"
    return path.read_text().splitlines() if path.exists() else []


def test_sigkill_with_a_model_call_in_flight_then_restart(tmp_path: Path) -> None:
    root = tmp_path / "project"
    spec = make_project(root, hang_writer=True)
    first = Server(str(spec), cwd=tmp_path)
    with first.client() as c:
        run_id = start_writer(c)
        before = reach(c, run_id, "step_start")  # the writer's first model call is in flight, for an hour
    first.kill()
    (root / "demo.json").write_text(json.dumps(replies()))  # the reply comes at once now
    second = Server(str(spec), cwd=tmp_path)
    try:
        with second.client() as c:
            view = settled(c, run_id)
            assert view["status"] == "done" and view["output"] == "written"
            # Reconnecting with the last id seen before the kill: the rest, nothing twice, across the restart.
            rest = list(events(c, run_id, last=int(before[-1]["id"])))
            ids = [int(e["id"]) for e in before + rest]
            assert ids == list(range(1, len(ids) + 1))
            assert [e["event"] for e in rest].count("run_resume") == 1
            assert rest[-1]["event"] == "run_end"
    finally:
        second.stop()
    assert [line.split()[0] for line in effects(root)] == ["w1"]


def test_sigterm_mid_run_then_the_next_start_takes_it_up(tmp_path: Path) -> None:
    root = tmp_path / "project"
    spec = make_project(root, hang_writer=True)
    first = Server(str(spec), cwd=tmp_path)
    with first.client() as c:
        run_id = start_writer(c)
        reach(c, run_id, "step_start")
    first.stop()  # SIGTERM: the run is stopped where it is, and stored
    (root / "demo.json").write_text(json.dumps(replies()))
    second = Server(str(spec), cwd=tmp_path)
    try:
        with second.client() as c:
            view = settled(c, run_id)
            assert view["status"] == "done" and view["output"] == "written"
            stops = [e["data"]["data"]["stop_reason"] for e in events(c, run_id) if e["event"] == "run_end"]
            assert stops == ["cancelled", "done"]
    finally:
        second.stop()
    assert [line.split()[0] for line in effects(root)] == ["w1"]


def test_sigkill_with_a_tool_mid_way_then_retry_or_skip(tmp_path: Path) -> None:
    root = tmp_path / "project"
    spec = make_project(root)
    (root / "hold.txt").write_text("hold")
    first = Server(str(spec), cwd=tmp_path)
    with first.client() as c:
        retried, skipped = start_writer(c), start_writer(c)
        for run_id in (retried, skipped):
            reach(c, run_id, "tool_call_start")  # the intent is journaled; the tool waits before its effect
    first.kill()
    (root / "hold.txt").unlink()
    assert effects(root) == []
    second = Server(str(spec), cwd=tmp_path)
    try:
        with second.client() as c:
            for run_id, action in ((retried, "retry"), (skipped, "skip")):
                view = settled(c, run_id)
                assert view["status"] == "waiting", view
                (pending,) = view["pending"]
                assert pending["kind"] == "unknown_outcome" and pending["name"] == "append"
                assert pending["arguments"] == {"line": "w1"}
                wrong = c.post(
                    f"/runs/{run_id}/decisions", json={"decisions": [{"id": pending["id"], "action": "approve"}]}
                )
                assert wrong.status_code == 400
                response = c.post(
                    f"/runs/{run_id}/decisions", json={"decisions": [{"id": pending["id"], "action": action}]}
                )
                assert response.status_code == 202, response.text
                assert settled(c, run_id)["status"] == "done"
    finally:
        second.stop()
    lines = effects(root)
    assert len(lines) == 1 and lines[0].startswith("w1 ")  # the retried call acted once; the skipped one never


def test_two_servers_on_postgres_never_run_one_run_twice(tmp_path: Path, pg_url: str) -> None:
    root = tmp_path / "project"
    spec = make_project(root, hang_writer=True)
    first = Server(str(spec), "--store", pg_url, cwd=tmp_path)
    with first.client() as c:
        runs = [start_writer(c) for _ in range(4)]
        for run_id in runs:
            reach(c, run_id, "step_start")
    first.kill()
    (root / "demo.json").write_text(json.dumps(replies()))
    # Both come up on the same store and both look for the runs the killed one left.
    second = Server(str(spec), "--store", pg_url, cwd=tmp_path)
    third = Server(str(spec), "--store", pg_url, cwd=tmp_path)
    try:
        with second.client() as b, third.client() as c:
            for run_id in runs:
                assert settled(b, run_id)["status"] == "done"
                assert c.get(f"/runs/{run_id}").json()["status"] == "done"  # one store: both see every run
                stream = list(events(c, run_id))
                ids = [int(e["id"]) for e in stream]
                assert ids == list(range(1, len(ids) + 1))
                resumes = [e for e in stream if e["event"] == "run_resume"]
                assert len(resumes) == 1  # taken up by one server only
            # A run started on one server is seen, waited for and decided on the other.
            started = b.post("/runs", json={"spec": "app", "input": {"topic": "tea"}}).json()
            assert settled(c, started["id"])["status"] == "waiting"
            c.post(
                f"/runs/{started['id']}/decisions",
                json={"decisions": [{"id": "confirm", "action": "answer", "answer": {"ok": True}}]},
            )
            assert settled(b, started["id"])["pending"][0]["kind"] == "approval"
    finally:
        second.stop()
        third.stop()
    lines = effects(root)
    assert len(lines) == len(runs) and len(set(lines)) == len(runs)  # each run's call acted once


def test_a_running_server_takes_up_the_runs_of_a_replica_that_died(tmp_path: Path, pg_url: str) -> None:
    root = tmp_path / "project"
    spec = make_project(root, hang_writer=True)
    survivor = Server(str(spec), "--store", pg_url, cwd=tmp_path)  # up first: nothing to take at its start
    doomed = Server(str(spec), "--store", pg_url, cwd=tmp_path)
    try:
        with doomed.client() as c:
            run_id = start_writer(c)
            reach(c, run_id, "step_start")
        doomed.kill()
        # The survivor has made no model call yet: it reads the script when it first needs it, after this.
        (root / "demo.json").write_text(json.dumps(replies()))
        with survivor.client() as c:
            view = settled(c, run_id)  # the survivor's sweep takes the run up, no restart of anything
            assert view["status"] == "done" and view["output"] == "written"
            resumes = [e for e in events(c, run_id) if e["event"] == "run_resume"]
            assert len(resumes) == 1
    finally:
        survivor.stop()
    assert [line.split()[0] for line in effects(root)] == ["w1"]
