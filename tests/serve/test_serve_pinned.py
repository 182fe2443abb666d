"""`plait serve` and runs pinned to their spec: a decision under an edited spec is refused with HTTP 409 and the
changes listed unless it accepts them; recovery leaves a run whose spec changed in ways that can affect what is left
to run where it is, and says why in its view; harmless edits go on and re-pin the run.

The server is the app in a thread on a loopback socket (tests/serve/protocol_server.py); every step synchronises on
its responses and events, never on time.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("uvicorn")

import httpx  # noqa: E402
from protocol_server import TOKEN, TRIAGE, TRIAGE_REPLIES, serving, write_specs  # noqa: E402

from plait.runtime.engine import Engine  # noqa: E402
from plait.runtime.store import open_store  # noqa: E402

pytestmark = pytest.mark.slow

AUTH = {"Authorization": f"Bearer {TOKEN}"}
TICKET = {"ticket": "broken", "customer": "Ann"}
SEND_EDITED = TRIAGE.replace('prompt = "Send it. {{input.note}}"', 'prompt = "Send it now. {{input.note}}"')
ANSWER = [{"id": "confirm", "action": "answer", "answer": {"decision": "send"}}]


def only(changes: list[str], start: str) -> bool:
    """One change listed, the one described as `start` (the description goes on with the old and new values)."""
    return len(changes) == 1 and changes[0].startswith(start)


def client(base: str) -> httpx.Client:
    return httpx.Client(base_url=base, headers=AUTH, timeout=120)


def waiting_run(spec: Path) -> str:
    """A triage run started and stopped at its ask (`confirm`)."""
    with serving([spec]) as base, client(base) as c:
        view = c.post("/runs?wait=60s", json={"spec": "triage", "input": TICKET}).json()
        assert view["status"] == "waiting" and [p["name"] for p in view["pending"]] == ["confirm"], view
        return view["id"]


def pinned_digest(spec: Path, run_id: str) -> str | None:
    store = open_store(None, str(spec.parent))
    try:
        pin = store.pinned(run_id)
        return None if pin is None else pin[0]
    finally:
        store.close()


def test_a_decision_under_an_edit_that_can_affect_the_rest_is_409_until_accepted(tmp_path):
    (spec,) = write_specs(tmp_path, "triage")
    run_id = waiting_run(spec)
    spec.write_text(SEND_EDITED)  # `send` has not run yet: its prompt edit can reach what is left
    with serving([spec]) as base, client(base) as c:
        refused = c.post(f"/runs/{run_id}/decisions", json={"decisions": ANSWER})
        assert refused.status_code == 409
        body = refused.json()
        assert only(body["changes"], "~ step send: prompt changed Send it. {{input.note}} → Send it now.")
        assert "accept_changes" in body["error"] and run_id in body["error"]
        # Nothing happened to the run: it still waits on its ask.
        view = c.get(f"/runs/{run_id}").json()
        assert view["status"] == "waiting" and [p["name"] for p in view["pending"]] == ["confirm"]
        bad = c.post(f"/runs/{run_id}/decisions", json={"decisions": ANSWER, "accept_changes": "yes"})
        assert bad.status_code == 400 and "accept_changes" in bad.json()["error"]
        taken = c.post(f"/runs/{run_id}/decisions", json={"decisions": ANSWER, "accept_changes": True})
        assert taken.status_code == 202, taken.text
        done = c.get(f"/runs/{run_id}?wait=60s").json()
        assert done["status"] == "done" and done["output"] == "sent"
        assert "409" in c.get("/openapi.json").json()["paths"]["/runs/{id}/decisions"]["post"]["responses"]
    # It went on under the served spec, and is pinned to it now.
    assert pinned_digest(spec, run_id) == Engine.from_spec(spec).pinned[0]  # type: ignore[index]


def test_a_decision_under_a_harmless_edit_goes_on_and_re_pins_the_run(tmp_path):
    (spec,) = write_specs(tmp_path, "triage")
    run_id = waiting_run(spec)
    before = pinned_digest(spec, run_id)
    # `draft` ran already (its reply is replayed as recorded): an edit to its prompt cannot reach the rest.
    spec.write_text(TRIAGE.replace("Reply to {{input.customer}}", "Answer {{input.customer}}"))
    with serving([spec]) as base, client(base) as c:
        taken = c.post(f"/runs/{run_id}/decisions", json={"decisions": ANSWER})
        assert taken.status_code == 202, taken.text
        done = c.get(f"/runs/{run_id}?wait=60s").json()
        assert done["status"] == "done" and done["output"] == "sent"
    after = pinned_digest(spec, run_id)
    assert before is not None and after != before and after == Engine.from_spec(spec).pinned[0]  # type: ignore[index]


def cut_off_run(spec: Path) -> str:
    """A triage run stopped by the server's shutdown while its first model call is in flight."""
    folder = spec.parent
    (folder / "triage.replies.json").write_text(
        json.dumps(TRIAGE_REPLIES | {"draft": [{"text": "Dear Ann", "delay": "1h"}]})
    )
    with serving([spec]) as base, client(base) as c:
        run_id = c.post("/runs", json={"spec": "triage", "input": TICKET}).json()["id"]
        with c.stream("GET", f"/runs/{run_id}/events") as stream:
            for line in stream.iter_lines():
                if line == "event: step_start":
                    break
    (folder / "triage.replies.json").write_text(json.dumps(TRIAGE_REPLIES))
    return run_id


def test_recovery_leaves_a_run_whose_spec_changed_where_it_is_and_says_why(tmp_path, caplog):
    (spec,) = write_specs(tmp_path, "triage")
    run_id = cut_off_run(spec)
    # `draft` was cut off mid-call: it runs again, so an edit to its prompt can affect it.
    spec.write_text(TRIAGE.replace("Reply to {{input.customer}}", "Answer {{input.customer}}"))
    with caplog.at_level("WARNING", logger="plait.serve"):
        with serving([spec]) as base, client(base) as c:
            view = c.get(f"/runs/{run_id}").json()
            assert (view["status"], view["stop_reason"]) == ("waiting", "spec_changed")
            assert only(view["spec_changes"], "~ step draft: prompt changed")
            assert "accept_changes" in view["error"]
            listed = c.get("/runs?status=waiting").json()
            assert [v["id"] for v in listed] == [run_id] and listed[0]["spec_changes"] == view["spec_changes"]
            # A client that accepts the changes takes it up: it goes on to its ask under the served spec.
            empty = c.post(f"/runs/{run_id}/decisions", json={"decisions": []})
            assert empty.status_code == 409 and empty.json()["changes"] == view["spec_changes"]
            taken = c.post(f"/runs/{run_id}/decisions", json={"decisions": [], "accept_changes": True})
            assert taken.status_code == 202, taken.text
            view = c.get(f"/runs/{run_id}?wait=60s").json()
            assert view["status"] == "waiting" and [p["name"] for p in view["pending"]] == ["confirm"]
            assert view["spec_changes"] == []
    assert any(run_id in r.getMessage() and "step draft: prompt changed" in r.getMessage() for r in caplog.records)


def test_recovery_takes_up_a_run_whose_spec_changed_harmlessly(tmp_path):
    (spec,) = write_specs(tmp_path, "triage")
    run_id = cut_off_run(spec)
    # A step the entry never reaches cannot affect the run.
    spec.write_text(TRIAGE + '\nstep extra { model = fast, prompt = "Unrelated." }\n')
    with serving([spec]) as base, client(base) as c:
        view = c.get(f"/runs/{run_id}?wait=60s").json()
        assert view["status"] == "waiting" and [p["name"] for p in view["pending"]] == ["confirm"], view
        assert view["spec_changes"] == []
    assert pinned_digest(spec, run_id) == Engine.from_spec(spec).pinned[0]  # type: ignore[index]


def test_a_held_run_taken_up_by_another_process_is_listed_as_its_view_says(tmp_path):
    """The server held a run back at start-up; `plait resume --accept-changes` elsewhere then finishes it. The
    listing's status filter agrees with the run's view: done, not still waiting."""
    (spec,) = write_specs(tmp_path, "triage")
    run_id = cut_off_run(spec)
    spec.write_text(TRIAGE.replace("Reply to {{input.customer}}", "Answer {{input.customer}}"))
    with serving([spec]) as base, client(base) as c:
        assert c.get(f"/runs/{run_id}").json()["stop_reason"] == "spec_changed"
        for extra in (["--accept-changes"], ["--answer", 'confirm={"decision": "send"}']):
            resumed = subprocess.run(
                [sys.executable, "-m", "plait", "resume", run_id, *extra],
                cwd=spec.parent,
                capture_output=True,
                text=True,
                timeout=120,
            )
            assert resumed.returncode in (0, 3), resumed.stderr  # 3: stopped at the ask, then done
        assert c.get(f"/runs/{run_id}").json()["status"] == "done"
        assert [v["id"] for v in c.get("/runs?status=done").json()] == [run_id]
        assert c.get("/runs?status=waiting").json() == []
