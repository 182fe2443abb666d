"""Human in the loop: interrupts with unique path ids, approve / edit / reject, resume semantics, repair."""

from __future__ import annotations

import pytest

from plait.core.kinds import AgentNode
from plait.runtime.program import Program
from plait.core.kinds import ParallelNode
from plait.runtime.history import window
from plait.runtime.providers.base import Message, TextPart, ToolCall
from runtime_helpers import call, fn_tool, go, make, schema


def sender(log: list):
    def send(to: str) -> str:
        log.append(to)
        return f"sent to {to}"

    return fn_tool("send", send, schema(to="string"), approval=True)


def test_approval_interrupts_before_execution_and_approve_runs_the_call():
    log: list = []
    engine = make([call("send", to="ann"), {"text": "sent"}], tools={"send": sender(log)})
    run = engine.start("go")
    result = go(run)
    assert result.stop_reason == "interrupt" and log == []
    [pending] = result.pending
    assert (
        pending.id.startswith("main:")
        and pending.agent == "main"
        and pending.tool == "send"
        and pending.arguments == {"to": "ann"}
    )
    result = go(run.resume({pending.id: "approve"}))
    assert (result.stop_reason, result.output, log) == ("done", "sent", ["ann"])


def test_edit_runs_with_new_arguments_and_reject_tells_the_model():
    log: list = []
    engine = make([call("send", to="ann"), {"text": "ok"}], tools={"send": sender(log)})
    run = engine.start("go")
    pid = go(run).pending[0].id
    go(run.resume({pid: {"action": "edit", "arguments": {"to": "bob"}}}))
    assert log == ["bob"] and run.result.report.tool_calls[-1]["arguments"] == {"to": "bob"}

    engine = make([call("send", to="ann"), {"text": "ok"}], tools={"send": sender(log)})
    run = engine.start("go")
    pid = go(run).pending[0].id
    go(run.resume({pid: {"action": "reject", "message": "never email ann"}}))
    seen = engine.providers["m"].requests[-1]["messages"][-1]
    assert log == ["bob"] and seen.role == "tool" and seen.is_error and seen.text == "never email ann"


def test_agent_level_approval_list_gates_a_tool():
    tool = fn_tool("wipe", lambda: "wiped")
    engine = make([call("wipe"), {"text": "done"}], tools={"wipe": tool}, approval=("wipe",))
    assert go(engine.run("go")).stop_reason == "interrupt"


def test_resume_rejects_unknown_ids():
    engine = make([call("send", to="a")], tools={"send": sender([])})
    run = engine.start("go")
    go(run)
    with pytest.raises(Exception) as refused:
        go(run.resume({"nope:1": "approve"}))
    assert getattr(refused.value, "kind", None) == "resume_invalid"


def test_approved_results_expand_on_the_next_call_like_any_other():
    tool = fn_tool("fetch", lambda: [{"role": "user", "content": "secret doc"}], approval=True, result="messages")
    engine = make([call("fetch"), {"text": "read"}], tools={"fetch": tool})
    run = engine.start("go")
    pid = go(run).pending[0].id
    go(run.resume({pid: "approve"}))
    last = engine.providers["m"].requests[-1]["messages"]
    assert (last[-1].role, last[-1].text) == ("user", "secret doc") and last[-2].role == "tool"


def test_approved_until_tool_ends_the_run_on_resume():
    tool = fn_tool("submit", lambda: "filed", approval=True)
    engine = make([call("submit")], tools={"submit": tool}, until=("submit",))
    run = engine.start("go")
    pid = go(run).pending[0].id
    result = go(run.resume({pid: "approve"}))
    assert (result.stop_reason, result.until_result) == ("until", "filed")


def test_interrupts_from_parallel_branches_and_delegates_answered_in_one_resume():
    log: list = []
    send = sender(log)
    program = Program()
    program.parallels["main"] = ParallelNode(name="main", branches=("left", "right"))
    agents = {
        "left": AgentNode(name="left", model="m", tools=("send",)),
        "right": AgentNode(name="right", model="m", tools=("helper",)),
        "helper": AgentNode(name="helper", model="m", tools=("send",), description="sends things"),
    }
    script = {
        "left": [call("send", to="L"), {"text": "left done"}],
        "right": [call("helper", task="send to H"), {"text": "right done"}],
        "helper": [call("send", to="H"), {"text": "helper done"}],
    }
    engine = make(models={"m": script}, tools={"send": send}, agents=agents, program=program)
    run = engine.start("go")
    result = go(run)
    assert result.stop_reason == "interrupt"
    by_agent = {p.agent: p for p in result.pending}
    assert set(by_agent) == {"left", "helper"}
    assert by_agent["left"].branch == "left" and by_agent["helper"].branch == "right"
    assert by_agent["helper"].path[:2] == ("main", "right") and len({p.id for p in result.pending}) == 2
    result = go(run.resume({p.id: "approve" for p in result.pending}))
    assert result.stop_reason == "done" and result.output == {"left": "left done", "right": "right done"}
    assert sorted(log) == ["H", "L"]
    # Tool calls are counted over the whole run, nested agents included.
    assert sorted(c["name"] for c in result.report.tool_calls) == ["helper", "send", "send"]


def test_new_prompt_after_abandoned_interrupt_repairs_history():
    engine = make([call("send", to="x"), {"text": "fresh"}], tools={"send": sender([])})
    agent = engine.agent("main")
    assert go(agent.complete("first")).stop_reason == "interrupt"
    result = go(agent.complete("never mind"))
    assert result.output == "fresh"
    assert [w["code"] for w in result.report.warnings] == ["unanswered_tool_calls_repaired"]
    sent = engine.providers["m"].requests[-1]["messages"]
    assert [m.role for m in sent] == ["user", "assistant", "tool", "user"]
    assert sent[2].is_error and "never run" in sent[2].text


def _pair(i: int) -> list[Message]:
    return [
        Message("assistant", [], [ToolCall(f"c{i}", "t", {})]),
        Message("tool", [TextPart("r")], tool_call_id=f"c{i}"),
    ]


def test_keep_last_is_pair_aware():
    history = [Message.user("q")] + _pair(1) + _pair(2)
    kept = window(history, 3)
    # A count cut would keep c1's result without its call: the orphan is dropped, so it is a ceiling.
    assert [(m.role, m.tool_call_id) for m in kept] == [("assistant", None), ("tool", "c2")]
    assert window(history, None) is history


def test_keep_last_bounds_each_request():
    engine = make([call("t"), call("t"), {"text": "end"}], tools={"t": fn_tool("t", lambda: "r")}, keep_last=2)
    go(engine.run("go"))
    last = engine.providers["m"].requests[-1]["messages"]
    assert len(last) <= 2 and not (last[0].role == "tool")


from hypothesis import given, settings, strategies as st  # noqa: E402

from plait.runtime.history import repair  # noqa: E402


@st.composite
def histories(draw):
    """user / assistant-with-calls / some of their results, in order."""
    messages, n = [], 0
    for kind in draw(st.lists(st.sampled_from(["user", "calls"]), max_size=8)):
        if kind == "user":
            messages.append(Message.user("u"))
            continue
        ids = [f"c{n + i}" for i in range(draw(st.integers(1, 3)))]
        n += len(ids)
        messages.append(Message("assistant", [], [ToolCall(i, "t", {}) for i in ids]))
        messages += [Message("tool", [TextPart("r")], tool_call_id=i) for i in ids if draw(st.booleans())]
    return messages


@settings(max_examples=150, deadline=None)
@given(histories(), st.integers(0, 12))
def test_repair_answers_every_call_and_window_never_keeps_an_orphan(messages, keep):
    repair(messages)
    for i, m in enumerate(messages):
        if m.role == "assistant":
            following = set()
            for later in messages[i + 1 :]:
                if later.role != "tool":
                    break
                following.add(later.tool_call_id)
            assert {c.id for c in m.tool_calls} <= following
    kept = window(messages, keep)
    calls = {c.id for m in kept for c in m.tool_calls}
    assert len(kept) <= keep and all(m.tool_call_id in calls for m in kept if m.role == "tool")
