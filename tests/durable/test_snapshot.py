"""Durable formats do not depend on code order: resume points are step names, snapshots are versioned, and a
snapshot plait 0.1 wrote (fixtures/v1, committed before the change) still loads and resumes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from durable_helpers import Backend, go, kinds
from plait.runtime.engine import Engine
from plait.runtime.pipeline import TURN_STEPS
from plait.runtime.store import SNAPSHOT_VERSION, SnapshotError, upgrade
from plait.runtime.store.snapshot import V1_TURN_STEPS

FIXTURE = Path(__file__).parent / "fixtures" / "v1"
RUN_ID = "20261201-143522-471213"


def project(tmp_path: Path) -> Path:
    """The fixture spec, tools and script, with the v1 snapshot where plait 0.1 kept it."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    for name in ("spec.plait", "durable_v1_tools.py", "demo.json"):
        shutil.copy(FIXTURE / name, tmp_path / name)
    runs = tmp_path / ".plait" / "runs"
    runs.mkdir(parents=True)
    shutil.copy(FIXTURE / "snapshot-v1.json", runs / f"{RUN_ID}.json")
    return tmp_path


def test_a_v1_resume_index_becomes_the_name_of_the_step_it_pointed_at():
    snapshot = json.loads((FIXTURE / "snapshot-v1.json").read_text())
    assert snapshot["version"] == 1 and snapshot["context"]["runs"]["main"]["resume_at"] == 3
    upgraded = upgrade(snapshot)
    assert upgraded["version"] == SNAPSHOT_VERSION == 2
    assert upgraded["context"]["runs"]["main"]["resume_at"] == "check_interrupts"
    assert snapshot["context"]["runs"]["main"]["resume_at"] == 3  # the input is not changed in place
    # The frozen v1 order must never follow the live pipeline: it is what old files meant.
    assert V1_TURN_STEPS[3] == "check_interrupts" and "check_interrupts" in [s.__name__ for s in TURN_STEPS]


def test_snapshots_from_a_newer_plait_or_a_broken_index_are_refused():
    with pytest.raises(SnapshotError, match="newer"):
        upgrade({"version": 99})
    with pytest.raises(SnapshotError, match="resume point 42"):
        upgrade({"version": 1, "context": {"runs": {"main": {"resume_at": 42}}}})


def test_a_run_stored_by_plait_0_1_resumes_from_its_file_and_goes_on_in_the_journal(tmp_path):
    root = project(tmp_path)
    engine = Engine.from_spec(root / "spec.plait")
    run = engine.restore(RUN_ID)
    result = go(run.resume({"main:demo-2-1": "approve"}))
    assert (result.stop_reason, result.output) == ("done", "sent and added")
    # The add that ran before the snapshot is not run again; the approved send runs once.
    assert [c["name"] for c in result.report.tool_calls] == ["add", "send"]
    go(engine.aclose())
    # It came into the journal as one row (its snapshot) and resumed from the journal, as every stored run does.
    assert (
        kinds(Backend(root), RUN_ID)[:3] == ["base", "resume", "decision"]
        and kinds(Backend(root), RUN_ID)[-1] == "stop"
    )


def test_an_export_is_the_runs_rows_and_resumes_in_another_project_without_redoing_anything(tmp_path, capsys):
    from plait.cli import main

    first = project(tmp_path / "a")
    engine = Engine.from_spec(first / "spec.plait")
    paused = go(engine.restore(RUN_ID).resume())  # stops again on the send's approval
    go(engine.aclose())
    assert paused.stop_reason == "interrupt"
    assert main(["runs", "export", RUN_ID, "--dir", str(first), "-o", str(tmp_path / "run.json")]) == 0
    exported = json.loads((tmp_path / "run.json").read_text())
    # Derived from the journal, nothing else: the run's row and every history row, in order.
    assert exported["version"] == 3 and exported["result"]["stop_reason"] == "interrupt"
    assert [e["kind"] for e in exported["events"]] == kinds(Backend(first), RUN_ID)
    second = project(tmp_path / "b")
    (second / ".plait" / "runs" / f"{RUN_ID}.json").unlink()
    other = Engine.from_spec(second / "spec.plait")
    result = go(other.restore(exported).resume({"main:demo-2-1": "approve"}))
    go(other.aclose())
    assert (result.stop_reason, result.output) == ("done", "sent and added")
    # Replayed from the exported rows: the add is not run again; the send runs once.
    assert [c["name"] for c in result.report.tool_calls] == ["add", "send"]
    assert kinds(Backend(second), RUN_ID)[: len(exported["events"])] == [e["kind"] for e in exported["events"]]
    # Brought in twice is refused: the first copy is resumed by its id.
    again = Engine.from_spec(second / "spec.plait")
    with pytest.raises(Exception, match="already in the journal"):
        again.restore(exported)
    go(again.aclose())


def test_the_journal_keeps_a_stopped_run_once_its_rows_and_an_index_row_with_its_result(tmp_path):
    root = project(tmp_path)
    engine = Engine.from_spec(root / "spec.plait")
    paused = go(engine.restore(RUN_ID).resume())
    go(engine.aclose())
    row = Backend(root).open().run(RUN_ID)
    assert row["result"]["stop_reason"] == paused.stop_reason == "interrupt"
    assert set(row["snapshot"]) == {"result"}  # no second copy of the run's context beside its rows


def test_a_v1_snapshot_given_as_a_dict_loads_too(tmp_path):
    root = project(tmp_path)
    snapshot = json.loads((FIXTURE / "snapshot-v1.json").read_text())
    engine = Engine.from_spec(root / "spec.plait")
    engine.store = None  # restored from the dict alone
    result = go(engine.restore(snapshot).resume({"main:demo-2-1": "reject"}))
    assert result.stop_reason == "done" and [c["name"] for c in result.report.tool_calls] == ["add", "send"]


def test_a_stored_run_resumes_by_step_name_after_the_turn_changes(tmp_path, monkeypatch):
    """Insert a step before the stop point: a name-keyed resume point still lands on check_interrupts."""
    import plait.runtime.agent as agent_module
    from plait.runtime import pipeline

    async def audit(run, ctx):
        from plait.runtime.outcomes import CONTINUE

        return CONTINUE

    changed = (pipeline.TURN_STEPS[0], audit, *pipeline.TURN_STEPS[1:])
    original = pipeline.run_turn

    async def run_turn(run, ctx, start=None, steps=changed):
        return await original(run, ctx, start, steps)

    monkeypatch.setattr(agent_module, "run_turn", run_turn)
    root = project(tmp_path)
    engine = Engine.from_spec(root / "spec.plait")
    engine.store = None
    snapshot = json.loads((FIXTURE / "snapshot-v1.json").read_text())
    result = go(engine.restore(snapshot).resume({"main:demo-2-1": "approve"}))
    assert (result.stop_reason, result.output) == ("done", "sent and added")
    assert [c["name"] for c in result.report.tool_calls] == ["add", "send"]


def test_a_run_stopped_under_plait_0_2_0_with_its_snapshot_in_the_run_row_lists_exports_and_resumes(tmp_path):
    """Journals written before a run was stored once keep the whole snapshot in `runs.snapshot`: it is read for its
    result only, and the export and the resume come from the rows, as for any run."""
    import sqlite3

    from plait.runtime.store import journal_path
    from plait.runtime.store.export import export

    root = project(tmp_path)
    engine = Engine.from_spec(root / "spec.plait")
    run = engine.restore(RUN_ID)
    paused = go(run.resume())
    old_form = json.dumps({"version": 2, "run_id": RUN_ID, "result": paused.to_dict(), "context": {"runs": {}}})
    go(engine.aclose())
    with sqlite3.connect(journal_path(root)) as conn:
        conn.execute("UPDATE runs SET snapshot = ? WHERE id = ?", (old_form, RUN_ID))
    journal = Backend(root).open()
    row = journal.run(RUN_ID)
    assert row["result"]["stop_reason"] == "interrupt"
    assert export(journal, row)["events"] == list(journal.events(RUN_ID))
    again = Engine.from_spec(root / "spec.plait")
    result = go(again.restore(RUN_ID).resume({"main:demo-2-1": "approve"}))
    go(again.aclose())
    assert (result.stop_reason, result.output) == ("done", "sent and added")
