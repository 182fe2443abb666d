"""Observers are fire-and-forget: a failing one (function, coroutine or agent) never changes the run it watches,
and always leaves a warning (`observer_failed`, `observer_agent_failed`) in the report and in the events."""

from __future__ import annotations

import asyncio

from runtime_helpers import call, drain, fn_tool, go, make

from plait.core.kinds import AgentNode


def _codes(result) -> list[str]:
    return [w["code"] for w in result.report.warnings]


def test_a_plain_function_observer_that_raises_does_not_end_the_run():
    engine = make([call("t"), {"text": "done"}], tools={"t": fn_tool("t", lambda: "r")})
    seen = []

    def broken(event):
        raise ValueError("observer bug")

    engine.observe("tool_call_end", broken)
    engine.observe("tool_call_end", lambda e: seen.append(e.data["name"]))  # the next observer still hears it
    result = go(engine.run("go"))
    assert (result.stop_reason, result.output) == ("done", "done")
    assert seen == ["t"] and _codes(result) == ["observer_failed"]
    warning = result.report.warnings[0]
    assert "broken" in warning["message"] and "ValueError: observer bug" in warning["message"]
    assert warning["details"]["event"] == "tool_call_end"


def test_an_async_observer_that_raises_is_reported_not_dropped():
    engine = make([{"text": "done"}])

    async def broken(event):
        await asyncio.sleep(0)
        raise RuntimeError("late failure")

    engine.observe("agent_end", broken)
    result = go(engine.run("go"))
    assert result.output == "done" and _codes(result) == ["observer_failed"]
    assert "RuntimeError: late failure" in result.report.warnings[0]["message"]


def test_a_failing_observer_agent_leaves_a_warning_in_the_report_and_the_events():
    # The watcher's script is empty: its one model call fails.
    engine = make(
        models={"m": {"main": [{"text": "done"}], "watcher": []}},
        agents={"main": AgentNode(name="main", model="m"), "watcher": AgentNode(name="watcher", model="m")},
    )
    engine.observe("agent_end", "watcher")
    run = engine.start("go")
    events = go(drain(run))
    result = run.result
    assert (result.stop_reason, result.output) == ("done", "done")
    assert _codes(result) == ["observer_agent_failed"]
    assert result.report.warnings[0]["details"]["agent"] == "watcher"
    warnings = [e for e in events if e.type == "warning"]
    assert [w.data["code"] for w in warnings] == ["observer_agent_failed"]


def test_an_observer_that_fails_on_run_end_is_in_the_stored_report(tmp_path):
    from plait.runtime.store import SQLiteJournal, journal_path

    engine = make([{"text": "done"}])
    engine.store = SQLiteJournal(journal_path(tmp_path))
    engine.observe("run_end", lambda e: 1 / 0)
    result = go(engine.run("go"))
    stored = engine.store.run(result.run_id)
    engine.store.close()
    assert [w["code"] for w in stored["result"]["warnings"]] == ["observer_failed"]


def test_an_observer_of_warnings_that_fails_does_not_loop():
    engine = make([{"text": "done"}])
    engine.observe("agent_end", lambda e: 1 / 0)
    engine.observe("warning", lambda e: 1 / 0)
    result = go(engine.run("go"))
    # The first failure's warning wakes the second observer, which fails too: recorded once, then quiet.
    assert result.output == "done" and _codes(result) == ["observer_failed", "observer_failed"]
