"""Threads (plait 0.3): a conversation agents and model steps continue in turn, cut pair-aware to `keep_last`,
journaled, and restored exactly when a run cut off mid-thread is resumed."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import plait
from plait.runtime.engine import Engine
from plait.runtime.history import to_json
from spec_helpers import write_spec

LOOP = """
plait 0.3
thread session { keep_last = 40 }
agent writer { model = m, system = "You write.", thread = session }
step coach {
  model  = m
  system = "You grade."
  prompt = "Grade your last draft."
  thread = session
  output { verdict: "accept" | "revise" }
}
loop improve = writer -> coach { until = verdict == "accept", max_iterations = 3 }
step sign_off { model = m, prompt = "Sign it off.", thread = session }
chain main = improve -> sign_off
"""
REPLIES = {
    "writer": [{"text": "draft one"}, {"text": "draft two"}],
    "coach": [{"output": {"verdict": "revise"}}, {"output": {"verdict": "accept"}}],
    "sign_off": [{"text": "signed: draft two"}],
}


def spied(engine: Engine, model: str = "m") -> list[dict[str, Any]]:
    """Every request the engine's runs send to `model`: who sent it, its system prompt and its messages as JSON."""
    seen: list[dict[str, Any]] = []
    provider = engine._make_provider(model)
    for_run = provider.for_run

    def view(**options: Any) -> Any:
        made = for_run(**options)
        original = made.complete

        async def spy(request: Any) -> Any:
            seen.append({"by": request.agent, "system": request.system, "messages": to_json(list(request.messages))})
            return await original(request)

        made.complete = spy
        return made

    provider.for_run = view
    return seen


def said(request: dict[str, Any]) -> list[tuple[str, str]]:
    return [(m["role"], "".join(p["text"] for p in m["content"])) for m in request["messages"]]


def test_an_agent_in_a_loop_and_the_steps_around_it_continue_one_conversation(tmp_path):
    engine = Engine.from_spec(write_spec(tmp_path, LOOP, REPLIES))
    seen = spied(engine)
    result = plait.run(engine, "a kettle")
    assert result.output == "signed: draft two"
    by = [r["by"] for r in seen]
    assert by == ["writer", "coach", "writer", "coach", "sign_off"]
    # The second draft is written with the first, and the coach's grade of it, in view.
    assert said(seen[2]) == [
        ("user", "a kettle"),
        ("assistant", "draft one"),
        ("user", "Grade your last draft."),
        ("assistant", '{"verdict": "revise"}'),
        ("user", "a kettle"),  # each iteration of the loop is given the loop's input
    ]
    # The last step continues the same transcript: every earlier turn, then its own prompt.
    assert [m for m in said(seen[4])][-2:] == [("assistant", '{"verdict": "accept"}'), ("user", "Sign it off.")]
    assert len(seen[4]["messages"]) == 9
    # Each runnable keeps its own system prompt: a thread holds the conversation, not who speaks in it.
    assert [r["system"] for r in seen[:2]] == ["You write.", "You grade."]


def test_without_a_thread_each_iteration_starts_a_new_conversation(tmp_path):
    engine = Engine.from_spec(write_spec(tmp_path, LOOP.replace("thread = session", ""), REPLIES))
    seen = spied(engine)
    plait.run(engine, "a kettle")
    assert said(seen[2]) == [("user", "a kettle")]


TOOLS = """
plait 0.3
thread talk { keep_last = 2 }
tool look "Look something up." {
  params { q: string }
  run = python("looks:look")
}
agent researcher { model = m, tools = [look], thread = talk }
step summary { model = m, prompt = "Summarise.", thread = talk }
chain main = researcher -> summary
"""


def test_keep_last_never_keeps_a_tool_result_without_its_call(tmp_path):
    replies = {
        "researcher": [{"tool_calls": [{"name": "look", "arguments": {"q": "kettles"}}]}, {"text": "found it"}],
        "summary": [{"text": "short"}],
    }
    spec = write_spec(tmp_path, TOOLS, replies, **{"looks.py": "def look(q):\n    return 'a fact about ' + q\n"})
    engine = Engine.from_spec(spec)
    seen = spied(engine)
    result = plait.run(engine, "kettles")
    assert result.output == "short"
    # The researcher's turn was four messages (prompt, call, result, answer); the last two would be the result
    # and the answer, but the result's call was cut, so only the answer is kept.
    assert said(seen[2]) == [("assistant", "found it"), ("user", "Summarise.")]
    for request in seen:
        calls = {c["id"] for m in request["messages"] for c in m.get("tool_calls", ())}
        assert all(m["tool_call_id"] in calls for m in request["messages"] if m["role"] == "tool")


def test_a_reader_without_the_tool_sees_another_agents_calls_as_text_and_the_thread_keeps_them(tmp_path):
    replies = {
        "researcher": [{"tool_calls": [{"name": "look", "arguments": {"q": "kettles"}}]}, {"text": "found it"}],
        "summary": [{"text": "short"}],
    }
    spec = write_spec(
        tmp_path,
        TOOLS.replace(" { keep_last = 2 }", ""),
        replies,
        **{"looks.py": "def look(q):\n    return 'a fact about ' + q\n"},
    )
    engine = Engine.from_spec(spec)
    seen = spied(engine)
    run = engine.start("kettles")
    asyncio.run(_wait(run))
    # The step has no tools: a provider would refuse a call of one it was not given, so the call is told as text.
    assert said(seen[2]) == [
        ("user", "kettles"),
        ("assistant", '(called `look` with {"q": "kettles"})'),
        ("user", "(`look` answered: a fact about kettles)"),
        ("assistant", "found it"),
        ("user", "Summarise."),
    ]
    assert not any(m.get("tool_calls") for m in seen[2]["messages"])
    # The thread keeps every message as it was: the call, its result, then the step's turn.
    assert [m.role for m in run.ctx.threads["talk"]] == ["user", "assistant", "tool", "assistant", "user", "assistant"]
    assert run.ctx.threads["talk"][1].tool_calls[0].name == "look"


# --- the journal, and a resume after a crash mid-thread ------------------------------------------------------


def thread_rows(engine: Engine, run_id: str) -> list[tuple[str, dict[str, Any]]]:
    rows = []
    for e in engine.store.events(run_id):
        if e["kind"] == "decision" and e["data"].get("kind") == "thread":
            rows.append((e["key"], e["data"]))
    return rows


def test_each_write_to_a_thread_is_journaled_with_the_messages_it_leaves(tmp_path):
    engine = Engine.from_spec(write_spec(tmp_path, LOOP, REPLIES))
    run = engine.start("a kettle")
    result = asyncio.run(_wait(run))
    rows = thread_rows(engine, result.run_id)
    assert [(key, d["by"], d["added"]) for key, d in rows] == [
        ("main/improve/#1/writer#thread", "writer", 2),
        ("main/improve/#1/coach#thread", "coach", 2),
        ("main/improve/#2/writer#thread", "writer", 2),
        ("main/improve/#2/coach#thread", "coach", 2),
        ("main/sign_off#thread", "sign_off", 2),
    ]
    assert rows[-1][1]["messages"] == to_json(run.ctx.threads["session"])
    assert len(rows[-1][1]["messages"]) == 10


async def _wait(run: Any) -> Any:
    return await run


def test_keep_last_drops_the_oldest_messages_and_the_journal_says_how_many(tmp_path):
    engine = Engine.from_spec(write_spec(tmp_path, LOOP.replace("keep_last = 40", "keep_last = 3"), REPLIES))
    run = engine.start("a kettle")
    result = asyncio.run(_wait(run))
    rows = thread_rows(engine, result.run_id)
    assert [d["dropped"] for _, d in rows] == [0, 1, 2, 2, 2]
    assert [(m.role, m.text) for m in run.ctx.threads["session"]] == [
        ("assistant", '{"verdict": "accept"}'),
        ("user", "Sign it off."),
        ("assistant", "signed: draft two"),
    ]


def _replies_file(tmp_path: Path, hold: bool) -> None:
    """The script, with the coach's second grade held for an hour when `hold` (the run is cut off there)."""
    replies = json.loads(json.dumps(REPLIES))
    if hold:
        replies["coach"][1]["delay"] = "1h"
    (tmp_path / "replies.json").write_text(json.dumps(replies))


def test_a_run_cut_off_mid_thread_resumes_with_exactly_the_conversation_it_had(tmp_path):
    # The run as it goes uninterrupted, in a project of its own: what the resumed one must equal.
    whole_dir = tmp_path / "whole"
    whole_dir.mkdir()
    whole = Engine.from_spec(write_spec(whole_dir, LOOP, REPLIES))
    whole_seen = spied(whole)
    whole_run = whole.start("a kettle")
    asyncio.run(_wait(whole_run))

    spec = write_spec(tmp_path, LOOP, REPLIES)
    _replies_file(tmp_path, hold=True)
    first = Engine.from_spec(spec)
    starts: list[str] = []
    held: list[asyncio.Event] = []

    def on_start(event: Any) -> None:
        starts.append(event.agent)
        if starts.count("coach") == 2:
            held[0].set()

    first.observe("step_start", on_start)
    run = first.start("a kettle")

    async def cut_off() -> None:
        """Cancel the run while the coach's second call is in flight: like a kill, mid-thread."""
        held.append(asyncio.Event())
        task = asyncio.ensure_future(run._wait())
        await held[0].wait()
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)

    asyncio.run(cut_off())
    run_id = run.id
    written = thread_rows(first, run_id)
    assert [d["by"] for _, d in written] == ["writer", "coach", "writer"]  # cut off inside the fourth turn
    first.store.close()

    _replies_file(tmp_path, hold=False)
    again = Engine.from_spec(spec)
    seen = spied(again)
    resumed = again.restore(run_id)
    result = asyncio.run(resumed.resume())
    assert (result.stop_reason, result.output) == ("done", "signed: draft two")
    # Only the call cut off and the ones after it are made again, and they are sent what the whole run sent.
    assert [r["by"] for r in seen] == ["coach", "sign_off"]
    assert [said(r) for r in seen] == [said(r) for r in whole_seen[3:]]
    assert [said(r) for r in seen][0] == said(whole_seen[3])
    # The conversation it went on with is the one the first attempt journaled, to the message (timestamps too).
    before = written[-1][1]["messages"]
    assert to_json(resumed.ctx.threads["session"])[: len(before)] == before
    assert len(resumed.ctx.threads["session"]) == len(whole_run.ctx.threads["session"]) == 10
    # Every write is journaled once, however often the run walked through it.
    keys = [key for key, _ in thread_rows(again, run_id)]
    assert len(keys) == len(set(keys)) == 5


def test_a_step_with_messages_continues_its_thread_with_them(tmp_path):
    spec = """
    plait 0.3
    thread talk
    agent first { model = m, thread = talk }
    step second {
      model    = m
      thread   = talk
      messages = [system("Be brief."), user("Example?"), assistant("Sure."), user("Now {{input}}")]
    }
    chain main = first -> second
    """
    engine = Engine.from_spec(write_spec(tmp_path, spec, {"first": [{"text": "hello"}], "second": [{"text": "done"}]}))
    seen = spied(engine)
    run = engine.start("hi")
    asyncio.run(_wait(run))
    assert said(seen[1]) == [
        ("user", "hi"),
        ("assistant", "hello"),
        ("user", "Example?"),
        ("assistant", "Sure."),
        ("user", "Now hello"),
    ]
    assert seen[1]["system"] == "Be brief."
    assert [m.text for m in run.ctx.threads["talk"]] == ["hi", "hello", "Example?", "Sure.", "Now hello", "done"]


def test_an_agent_with_the_tool_sees_its_earlier_calls_as_calls(tmp_path):
    spec = """
    plait 0.3
    thread talk
    tool look "Look something up." {
      params { q: string }
      run = python("looks:look")
    }
    agent researcher { model = m, tools = [look], thread = talk }
    step check { model = m, prompt = "Done? {{input}}", output { done: bool } }
    loop again = researcher -> check { until = done == true, max_iterations = 2 }
    """
    replies = {
        "researcher": [
            {"tool_calls": [{"name": "look", "arguments": {"q": "kettles"}}]},
            {"text": "found it"},
            {"text": "still found"},
        ],
        "check": [{"output": {"done": False}}, {"output": {"done": True}}],
    }
    looks = {"looks.py": "def look(q):\n    return 'a fact about ' + q\n"}
    engine = Engine.from_spec(write_spec(tmp_path, spec, replies, **looks))
    seen = spied(engine)
    run = engine.start("kettles")
    asyncio.run(_wait(run))
    second = [r for r in seen if r["by"] == "researcher"][2]
    assert [m["role"] for m in second["messages"]] == ["user", "assistant", "tool", "assistant", "user"]
    assert second["messages"][1]["tool_calls"][0]["name"] == "look"


def test_plait_trace_shows_each_write_to_a_thread(tmp_path, capsys):
    from plait.cli import main

    engine = Engine.from_spec(write_spec(tmp_path, LOOP.replace("keep_last = 40", "keep_last = 3"), REPLIES))
    result = asyncio.run(_wait(engine.start("a kettle")))
    engine.store.close()
    capsys.readouterr()
    assert main(["trace", result.run_id, "--dir", str(tmp_path)]) == 0
    lines = [line for line in capsys.readouterr().out.splitlines() if "thread session:" in line]
    assert len(lines) == 5
    assert "writer added 2 message(s), 2 kept → 'draft one'" in lines[0]
    assert "coach added 2 message(s), 3 kept, 1 dropped by keep_last" in lines[1]
    assert lines[1].endswith("@ main/improve/#1/coach#thread")


CHAT = """
plait 0.3
thread session { keep_last = 2 }
agent writer { model = m, system = "You write.", thread = session }
"""


def test_a_chat_through_the_agent_api_continues_its_thread_cut_to_keep_last(tmp_path):
    # Each turn of `engine.agent(...)` is a turn of the thread, as in a run: it starts from the thread's
    # messages, and what the thread keeps between turns is its keep_last, not the whole chat.
    engine = Engine.from_spec(write_spec(tmp_path, CHAT, {"writer": [{"text": "one"}, {"text": "two"}, {"text": "3"}]}))
    seen = spied(engine)
    agent = engine.agent("writer")
    asyncio.run(agent.complete("first"))
    asyncio.run(agent.complete("second"))
    snap = json.loads(json.dumps(agent.snapshot()))
    asyncio.run(agent.complete("third"))
    assert said(seen[1]) == [("user", "first"), ("assistant", "one"), ("user", "second")]
    assert said(seen[2]) == [("user", "second"), ("assistant", "two"), ("user", "third")]
    assert [(m.role, m.text) for m in agent.history] == [
        ("user", "second"),
        ("assistant", "two"),
        ("user", "third"),
        ("assistant", "3"),
    ]

    # A restored chat continues the thread it had.
    again = Engine.from_spec(write_spec(tmp_path, CHAT, {"writer": [{"text": "one"}, {"text": "two"}, {"text": "3"}]}))
    seen_again = spied(again)
    restored = type(agent).restore(snap, again.new_context())
    asyncio.run(restored.complete("third"))
    assert said(seen_again[0]) == said(seen[2])
