"""The journal: a run is admitted before its first step, every call is a row committed before the next side effect,
values are JSON, the schema is versioned, a resume replays instead of re-calling, unknown outcomes are a person's call,
and one process at a time may write a run."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from dataclasses import replace

import pytest

from durable_helpers import call, engine, go, kinds, rows, tool
from plait.runtime.errors import AgentError
from plait.runtime.store import (
    SCHEMA_VERSION,
    JournalVersionError,
    LeaseHeld,
    SQLiteJournal,
    idempotency_key,
    journal_path,
)
from plait.runtime.store.schema import MIGRATIONS


def committed(backend, run_id):
    """What another process would see of a run right now: its row's status and the kinds of its durable rows."""
    other = backend.open()
    try:
        row = other.run(run_id)
        return (row["status"] if row else None), [e["kind"] for e in other.events(run_id)]
    finally:
        other.close()


def test_a_run_is_admitted_and_each_tool_intent_is_committed_before_the_tool_runs(backend):
    seen = []
    eng = engine(backend, [call("add", a=1), call("add", a=2), {"text": "3"}], {})
    eng.program.tools["add"] = tool(
        "add", lambda a: seen.append(committed(backend, run.id)) or a, props={"a": "integer"}
    )
    eng.program.agents["main"] = replace(eng.program.agents["main"], tools=("add",))
    run = eng.start("go")
    result = go(run)
    assert (result.stop_reason, result.output) == ("done", "3")
    # Seen from another connection while the tool ran: the run's row, and this call's intent as the last row.
    assert seen[0] == ("running", ["admit", "model_request", "model_reply", "tool_intent"])
    assert seen[1] == (
        "running",
        [
            "admit",
            "model_request",
            "model_reply",
            "tool_intent",
            "tool_completed",
            "model_request",
            "model_reply",
            "tool_intent",
        ],
    )
    assert kinds(backend, run.id) == [
        "admit",
        "model_request",
        "model_reply",
        "tool_intent",
        "tool_completed",
        "model_request",
        "model_reply",
        "tool_intent",
        "tool_completed",
        "model_request",
        "model_reply",
        "stop",
    ]
    assert committed(backend, run.id)[0] == "done"


def test_rows_are_json_text_named_by_position_and_state_writes_are_rows(backend):
    from plait.runtime.tools import ToolResult

    eng = engine(
        backend,
        [call("note", text="hi"), {"text": "ok"}],
        {"note": tool("note", lambda text: ToolResult("noted", state={"last": text}), props={"text": "string"})},
    )
    result = go(eng.run("go"))
    stored = rows(backend, result.run_id)
    typeof = "typeof(data)" if backend.name == "sqlite" else "pg_typeof(data)::text"
    assert {t for (t,) in backend.sql(f"SELECT DISTINCT {typeof} FROM events")} == {"text"}  # never a pickled blob
    data = {kind: (key, json.loads(d)) for _, _, kind, key, d in stored}
    assert data["model_request"][0] == "main#2" and data["tool_intent"][0] == "main#1:m-1-1"
    assert data["tool_completed"][1]["content"] == "noted" and data["state"] == ("main", {"last": "hi"})
    reply = data["model_reply"][1]
    assert (
        reply["message"]["content"] == [{"text": "ok"}]
        and all(isinstance(n, int) for n in reply["usage"])
        and "latency_ms" in reply
    )
    assert data["tool_intent"][1]["idempotency_key"] == idempotency_key(result.run_id, "main#1:m-1-1")


def test_the_schema_is_versioned_and_a_newer_journal_is_refused(backend):
    journal = backend.open()
    journal.open()  # creates and migrates
    journal.close()
    assert backend.sql("SELECT version FROM schema_version") == [(SCHEMA_VERSION,)] and SCHEMA_VERSION == len(
        MIGRATIONS
    )
    if backend.name == "sqlite":
        assert backend.sql("PRAGMA journal_mode") == [("wal",)]
    else:  # timestamps keep their sub-second digits (PostgreSQL's REAL would round them to whole seconds)
        # Only this test's schema: the session's server also holds other tests' journals (a batch test's, in public).
        at = "SELECT data_type FROM information_schema.columns WHERE column_name = 'at' AND table_schema = current_schema()"
        assert backend.sql(at) == [("double precision",)]
    backend.sql("UPDATE schema_version SET version = 99")
    with pytest.raises(JournalVersionError, match="schema version 99"):
        backend.open().conn  # noqa: B018


def test_a_resume_after_a_provider_failure_replays_what_finished(backend):
    ran = []
    replies = [call("add", a=2), {"error": {"kind": "server_error", "message": "overloaded"}}, {"text": "done"}]
    eng = engine(backend, replies, {"add": tool("add", lambda a: ran.append(a) or a, props={"a": "integer"})})
    failed = go(eng.run("go"))
    assert failed.stop_reason == "error" and ran == [2]
    fresh = engine(backend, replies, {"add": tool("add", lambda a: ran.append(a) or a, props={"a": "integer"})})
    result = go(fresh.restore(failed.run_id).resume())
    assert (result.stop_reason, result.output, ran) == ("done", "done", [2])  # the tool is not run again
    # The failed call is the only one asked again: the first reply came from the journal.
    assert kinds(backend, failed.run_id).count("model_request") == 3 and result.report.model_calls == 2


async def cut_off_during(run, started: asyncio.Event) -> None:
    """Cancel the run while its tool is running: like a kill, the call's outcome is unknown."""
    task = asyncio.ensure_future(run._wait())
    await started.wait()
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)


def blocking_tool(keys: list, idempotent: bool):
    started = asyncio.Event()

    async def send(to: str, idempotency_key: str = "") -> str:
        keys.append(idempotency_key)
        if len(keys) == 1:
            started.set()
            await asyncio.Event().wait()  # never finishes: the run is cut off here
        return f"sent to {to}"

    return tool("send", send, props={"to": "string"}, idempotent=idempotent), started


def cut_off_send(backend, idempotent: bool, final: str):
    """A run cut off inside its one `send` call; returns (its id, the keys send saw, a resumer in a fresh engine)."""
    keys: list = []
    send, started = blocking_tool(keys, idempotent)
    replies = [call("send", to="ann"), {"text": final}]
    run = engine(backend, replies, {"send": send}).start("go")
    go(cut_off_during(run, started))
    return run.id, keys, lambda: engine(backend, replies, {"send": send}).restore(run.id)


def test_an_idempotent_call_of_unknown_outcome_runs_again_with_the_same_key(backend):
    run_id, keys, resumer = cut_off_send(backend, True, "sent")
    result = go(resumer().resume())
    assert (result.stop_reason, result.output) == ("done", "sent")
    assert len(keys) == 2 and keys[0] == keys[1] == idempotency_key(run_id, "main#1:m-1-1")


def test_a_non_idempotent_call_of_unknown_outcome_waits_for_retry_or_skip(backend):
    run_id, keys, resumer = cut_off_send(backend, False, "sent")
    resumed = resumer()
    paused = go(resumed.resume())
    assert paused.stop_reason == "pause" and len(keys) == 1
    assert (
        "main:m-1-1" in paused.pause_reason
        and "`send`" in paused.pause_reason
        and "--decide main:m-1-1=retry" in paused.pause_reason
    )
    with pytest.raises(AgentError, match="retry and skip answer"):
        go(resumed.resume({"main:m-1-1": "approve"}))
    # A later process sees the same question, and the person's answer is kept with the run.
    result = go(resumer().resume({"main:m-1-1": "retry"}))
    assert (result.stop_reason, result.output, len(keys)) == ("done", "sent", 2) and keys[0] == keys[1]
    assert "decision" in kinds(backend, run_id)


def test_skip_tells_the_model_the_call_may_not_have_run(backend):
    _, keys, resumer = cut_off_send(backend, False, "maybe sent")
    resumed = resumer()
    assert go(resumed.resume()).stop_reason == "pause"
    result = go(resumed.resume({"main:m-1-1": "skip"}))
    assert (result.stop_reason, len(keys)) == ("done", 1)
    [told] = [m for m in resumed.ctx.runs["main"].messages if m.role == "tool"]
    assert told.is_error and "chose not to run it again" in told.text


def test_one_process_at_a_time_writes_a_run(backend):
    eng = engine(
        backend,
        [call("add", a=1), {"error": {"kind": "auth", "message": "no"}}],
        {"add": tool("add", lambda a: a, props={"a": "integer"})},
    )
    failed = go(eng.run("go"))
    other = backend.open()
    other.acquire(failed.run_id)  # someone else (live: this very process) is resuming it
    with pytest.raises(AgentError) as locked:
        engine(backend, [], {}).restore(failed.run_id)
    assert locked.value.kind == "run_locked" and "another process" in str(locked.value)
    other.close()


def test_two_resumers_at_once_exactly_one_wins(backend):
    """Each trial: a stopped run, two journals (two connections, as two processes have) acquiring it at the same
    moment from two threads. The lease is read and written in one transaction the other cannot interleave with."""
    import threading

    setup = backend.open()
    for trial in range(10):
        setup.admit(f"r{trial}", "main", None, "")
        setup.stopped(f"r{trial}", "error", {}, 0, (0, 0))
    setup.flush()
    setup.close()
    for trial in range(10):
        resumers = [backend.open(), backend.open()]
        for r in resumers:
            r.open()
        start = threading.Barrier(2)
        outcomes: list[str] = []

        def resume(journal, run_id=f"r{trial}", start=start, outcomes=outcomes):
            start.wait()
            try:
                journal.acquire(run_id)
                outcomes.append("won")
            except LeaseHeld:
                outcomes.append("held")

        threads = [threading.Thread(target=resume, args=(r,)) for r in resumers]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=30)
        for r in resumers:
            r.close()
        assert sorted(outcomes) == ["held", "won"], f"trial {trial}: {outcomes}"


def test_a_lease_whose_holder_died_is_taken_over(backend):
    journal = backend.open()
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    journal.admit("r1", "main", None, "")
    journal.flush()
    backend.sql("UPDATE leases SET pid = ?, owner = 'elsewhere'", (dead.pid,))
    backend.open().acquire("r1")  # no LeaseHeld: the holder is gone
    backend.sql("UPDATE leases SET pid = ?, owner = 'elsewhere', host = 'another-host'", (dead.pid,))
    with pytest.raises(LeaseHeld):  # on another host liveness is unknowable: only expiry frees it
        backend.open().acquire("r1")
    journal.close()


def test_a_finished_code_step_is_replayed_not_run_again(backend):
    from plait.core.kinds import StepNode
    from plait.core.kinds import ChainNode

    project = backend.project
    (project / "durable_code_step.py").write_text(
        "from pathlib import Path\n\ndef shout(input):\n"
        f"    with open({str(project / 'ran.txt')!r}, 'a') as fh:\n        fh.write('x')\n    return input.upper()\n"
    )
    replies = [{"error": {"kind": "server_error", "message": "overloaded"}}, {"text": "done"}]

    def build():
        eng = engine(backend, replies, {})
        eng.program.steps["shout"] = StepNode(
            name="shout", run={"type": "python", "target": "durable_code_step:shout", "base_dir": str(project)}
        )
        eng.program.chains["flow"] = ChainNode(name="flow", elements=("shout", "main"))
        eng.program.entry = "flow"
        return eng

    failed = go(build().run("hi"))
    assert failed.stop_reason == "error" and (project / "ran.txt").read_text() == "x"
    result = go(build().restore(failed.run_id).resume())
    assert (result.stop_reason, result.output) == ("done", "done") and (project / "ran.txt").read_text() == "x"


@pytest.mark.slow
def test_rows_a_killed_process_left_in_its_segment_are_moved_in_by_the_next_one(tmp_path):
    script = (
        "import asyncio, os, sys\n"
        "from plait.runtime.store import SQLiteJournal, journal_path\n"
        "j = SQLiteJournal(journal_path(sys.argv[1]))\n"
        "j.admit('r1', 'main', None, 'go')\n"
        "j.event('r1', 1, 'tool_intent', 'main#1:c1', {'tool': 'send'})\n"
        "asyncio.run(j.durable())\n"
        "j.admit('r2', 'main', None, 'go')\n"
        "j.stopped('r2', 'done', {'output': 'ok'}, 1, (3, 4))\n"
        "j.settle()\n"
        "os._exit(0)  # dies without moving its segment into the tables\n"
    )
    subprocess.run([sys.executable, "-c", script, str(tmp_path)], check=True)
    [segment] = (tmp_path / ".plait" / "journal.db-log").glob("*.jsonl")
    assert not journal_path(tmp_path).exists()  # neither the admissions nor the stop made a transaction
    journal = SQLiteJournal(journal_path(tmp_path))
    assert journal.exists()
    assert [(e["kind"], e["key"], e["data"]) for e in journal.events("r1")] == [
        ("tool_intent", "main#1:c1", {"tool": "send"})
    ]
    assert not segment.exists() and journal.run("r1")["status"] == "crashed"
    stopped = journal.run("r2")
    assert (stopped["status"], stopped["result"], stopped["steps"], stopped["output_tokens"]) == (
        "done",
        {"output": "ok"},
        1,
        4,
    )
    assert journal.lease("r2") is None
    journal.close()


def test_a_live_writers_segment_taken_in_again_never_undoes_a_later_resume(tmp_path):
    """Segments are read while their writer lives, again at every read: an admission and a stop applied a second
    time must not take back the lease or the status of a resume that came after them."""
    writer = SQLiteJournal(journal_path(tmp_path))
    writer.admit("r1", "main", None, "go")
    writer.stopped("r1", "error", {"result": {"error": "x"}}, 1, (0, 0))
    writer.settle()  # the stop is in the writer's segment only
    resumer = SQLiteJournal(journal_path(tmp_path))
    resumer.acquire("r1")  # takes the segment in, then the lease
    again = SQLiteJournal(journal_path(tmp_path))
    row = again.run("r1")  # takes the same segment in once more
    assert row["status"] == "running" and again.lease("r1")["owner"] == resumer.owner
    writer.close()  # the writer's own statements reach the tables: the same guards hold
    assert again.run("r1")["status"] == "running" and again.lease("r1")["owner"] == resumer.owner
    for j in (resumer, again):
        j.close()


def test_run_ids_made_in_the_same_second_do_not_collide():
    """Many runs start in the same second (a batch, a gather): a repeated id would be refused at admission."""
    from plait.runtime.engine import new_run_id

    made = [new_run_id() for _ in range(50_000)]
    assert len(set(made)) == len(made)


def test_rows_encode_as_the_standard_json_encoder_would():
    """The journal's fast encoder keeps the standard one's answers for what runs hand it: dataclasses and datetimes
    through str, non-string keys as strings, dict and str subclasses as their base type, ints beyond 64 bits."""
    import dataclasses
    import datetime

    from plait.runtime.store.base import _json_encode, encode

    @dataclasses.dataclass
    class Point:
        x: int

    class Tag(str):
        pass

    class Record(dict):
        pass

    values = [
        {"text": 'é\n\t"', "n": [1, 2.5, None, True], "t": (1, 2)},
        {1: "one", None: "none", 2.5: "x"},
        Point(1),
        datetime.datetime(2026, 1, 2, 3, 4, 5),
        2**70,
        Tag("tag"),
        Record(a=1),
        1e16,
    ]
    for value in values:
        text = encode(value)
        assert json.loads(text) == json.loads(_json_encode(value)) and "\n" not in text and "\t" not in text


def test_a_run_deleted_while_its_writer_lives_stays_deleted(tmp_path):
    """A stopped run whose process still runs others is in that process's segment; every read applies the segment's
    admission again, so deleting the run then would not last: it is left for later, and deleted once moved in."""
    writer = SQLiteJournal(journal_path(tmp_path))
    writer.admit("r1", "main", None, "go")
    writer.event("r1", 1, "admit", None, {})
    writer.stopped("r1", "done", {"result": {"output": "ok"}}, 1, (0, 0))
    writer.settle()
    other = SQLiteJournal(journal_path(tmp_path))
    assert other.run("r1")["status"] == "done" and other.busy() == {"r1"}
    gone = other.delete(["r1"])
    assert (other.run("r1") is None) == (gone == 1)  # what delete() reports deleted stays deleted
    writer.close()  # moves its segment in: nobody writes r1 any more
    assert other.busy() == set() and other.delete(["r1"]) == 1
    assert other.run("r1") is None and other.run("r1") is None  # read twice: nothing brings it back
    other.close()
