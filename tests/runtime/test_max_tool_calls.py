"""`max_tool_calls = N`: a reply's first N tool calls run, in its order; each one past them is refused with an error
result the model reads, so what one reply can set off (a delegation, a tool's side effect) is bounded."""

from __future__ import annotations

import asyncio

from plait.runtime.engine import Engine
from runtime_helpers import fn_tool, go, make
from spec_helpers import write_spec


def _reply(*names: str) -> dict:
    return {"tool_calls": [{"name": name, "arguments": {"n": i}} for i, name in enumerate(names)]}


def _engine(ran: list[int], limit: int | None):
    tool = fn_tool(
        "t", lambda n: ran.append(n) or f"ran {n}", {"type": "object", "properties": {"n": {"type": "integer"}}}
    )
    return make([_reply("t", "t", "t"), {"text": "done"}], tools={"t": tool}, max_tool_calls=limit)


def test_calls_past_max_tool_calls_are_not_run_and_the_model_reads_why():
    ran: list[int] = []
    engine = _engine(ran, 2)
    result = go(engine.run("go"))
    assert result.output == "done" and ran == [0, 1]
    sent = engine.providers["m"].requests[1]["messages"]
    results = [(m.text, m.is_error) for m in sent if m.role == "tool"]
    assert results[:2] == [("ran 0", False), ("ran 1", False)]
    refusal, is_error = results[2]
    assert is_error and "not run" in refusal and "at most 2 tool calls (max_tool_calls)" in refusal
    [warning] = [w for w in result.report.warnings if w["code"] == "tool_calls_refused"]
    assert warning["details"] == {"refused": ["t"]}


def test_without_max_tool_calls_every_call_of_a_reply_runs():
    ran: list[int] = []
    result = go(_engine(ran, None).run("go"))
    assert result.output == "done" and ran == [0, 1, 2]


def test_a_call_past_max_tool_calls_asks_no_one_and_stays_refused_after_the_approved_ones_run():
    ran: list[int] = []
    tool = fn_tool(
        "t",
        lambda n: ran.append(n) or f"ran {n}",
        {"type": "object", "properties": {"n": {"type": "integer"}}},
        approval=True,
    )
    engine = make([_reply("t", "t", "t"), {"text": "done"}], tools={"t": tool}, max_tool_calls=2)
    run = engine.start("go")
    result = go(run)
    assert result.stop_reason == "interrupt" and [p.arguments for p in result.pending] == [{"n": 0}, {"n": 1}]
    result = go(run.resume({p.id: "approve" for p in result.pending}))
    assert (result.stop_reason, result.output, ran) == ("done", "done", [0, 1])
    sent = engine.providers["m"].requests[1]["messages"]
    assert [m.is_error for m in sent if m.role == "tool"] == [False, False, True]


def test_a_run_restored_from_its_journal_keeps_the_call_past_the_limit_refused(tmp_path):
    spec = """
    tool hold "Hold a seat." {
      params { n: int }
      run      = python("seats:hold")
      approval = required
    }
    agent main { model = m, tools = [hold], max_tool_calls = 1 }
    """
    reply = {"tool_calls": [{"name": "hold", "arguments": {"n": n}} for n in (1, 2)]}
    seats = "def hold(n):\n    return f'held {n}'\n"
    path = write_spec(tmp_path, spec, [reply, {"text": "done"}], **{"seats.py": seats})
    engine = Engine.from_spec(path)

    async def main():
        run = engine.start("go")
        stopped = await run
        (pending,) = stopped.pending  # the call past the limit asks no one
        return await engine.restore(run.id).resume({pending.id: "approve"})

    result = asyncio.run(main())
    assert result.error is None and result.output == "done"
    assert [(c["arguments"], c["is_error"]) for c in result.report.tool_calls] == [({"n": 2}, True), ({"n": 1}, False)]
