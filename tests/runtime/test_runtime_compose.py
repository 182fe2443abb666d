"""Composition on the scripted provider: chain, parallel, consolidate, delegation, nested event paths."""

from __future__ import annotations

import asyncio
import json

from plait.core.kinds import AgentNode
from plait.runtime.program import Program
from plait.core.kinds import StepNode
from plait.core.kinds import ChainNode, ConsolidateNode, ParallelNode
from runtime_helpers import call, drain, fn_tool, go, make


def program(**parts) -> Program:
    p = Program()
    for kind, items in parts.items():
        getattr(p, kind).update({i.name: i for i in items})
    return p


def test_chain_feeds_output_to_next_input_and_steps_render_templates():
    p = program(
        chains=[ChainNode(name="main", elements=("summarize", "translate"))],
        steps=[
            StepNode(name="summarize", model="m", prompt="Summarize: {{input}}"),
            StepNode(name="translate", model="m", prompt="Translate to French: {{input}}", system="You translate."),
        ],
    )
    engine = make(
        models={"m": {"summarize": [{"text": "Sky is blue."}], "translate": [{"text": "Le ciel est bleu."}]}},
        agents={},
        program=p,
    )
    result = go(engine.run("Rayleigh scattering..."))
    assert result.output == "Le ciel est bleu."
    first, second = engine.providers["m"].requests
    assert first["messages"][0].text == "Summarize: Rayleigh scattering..."
    assert second["messages"][0].text == "Translate to French: Sky is blue." and second["system"] == "You translate."


def test_parallel_record_is_keyed_by_branch_and_read_downstream():
    p = program(
        chains=[ChainNode(name="main", elements=("both", "join"))],
        parallels=[ParallelNode(name="both", branches=("a", "b"))],
        steps=[
            StepNode(name="a", model="m"),
            StepNode(name="b", model="m"),
            StepNode(name="join", model="m", prompt="A={{input.a}} B={{input.b}} ALL={{input}}"),
        ],
    )
    engine = make(
        models={"m": {"a": [{"text": "x", "delay": "30ms"}], "b": [{"text": "y"}], "join": [{"text": "joined"}]}},
        agents={},
        program=p,
    )
    result = go(engine.run("in"))
    assert result.output == "joined"
    prompt = engine.providers["m"].requests[-1]["messages"][0].text
    assert prompt == 'A=x B=y ALL={"a": "x", "b": "y"}'


def test_parallel_runs_branches_at_once():
    p = program(
        parallels=[ParallelNode(name="main", branches=tuple(f"s{i}" for i in range(20)))],
        steps=[StepNode(name=f"s{i}", model="m") for i in range(20)],
    )
    engine = make(
        models={"m": {f"s{i}": [{"text": str(i), "delay": "100ms"}] for i in range(20)}}, agents={}, program=p
    )

    async def timed():
        loop = asyncio.get_running_loop()
        t0 = loop.time()
        result = await engine.run("go")
        return result, loop.time() - t0

    result, elapsed = go(timed())
    assert len(result.output) == 20 and elapsed < 0.5


def test_parallel_fail_cancels_the_rest_and_names_the_branch():
    p = program(
        parallels=[ParallelNode(name="main", branches=("ok", "bad"))],
        steps=[StepNode(name="ok", model="m"), StepNode(name="bad", model="m")],
    )
    engine = make(
        models={
            "m": {"ok": [{"text": "late", "delay": "2s"}], "bad": [{"error": {"kind": "auth", "message": "nope"}}]}
        },
        agents={},
        program=p,
    )

    async def timed():
        loop = asyncio.get_running_loop()
        t0 = loop.time()
        return await engine.run("go"), loop.time() - t0

    result, elapsed = go(timed())
    assert result.stop_reason == "error" and elapsed < 1.0
    assert result.to_dict()["error"]["branch"] == "bad" and result.error.kind == "auth"


def test_parallel_collect_keeps_going_and_attributes_failures():
    p = program(
        parallels=[ParallelNode(name="main", branches=("ok", "bad"), on_error="collect")],
        steps=[StepNode(name="ok", model="m"), StepNode(name="bad", model="m")],
    )
    engine = make(
        models={"m": {"ok": [{"text": "fine"}], "bad": [{"error": {"kind": "rate_limit"}}]}}, agents={}, program=p
    )
    result = go(engine.run("go"))
    assert result.stop_reason == "done" and result.output["ok"] == "fine"
    assert result.output["bad"]["error"]["kind"] == "rate_limit" and result.output["bad"]["error"]["branch"] == "bad"
    assert [w["code"] for w in result.report.warnings] == ["branch_failed"]


def consolidate_engine(judge_replies, rounds=3):
    p = program(consolidates=[ConsolidateNode(name="main", agents=("a", "b"), judge="judge", rounds=rounds)])
    agents = {"a": AgentNode(name="a", model="m", system="analyst"), "b": AgentNode(name="b", model="m", system="risk")}
    script = {
        "a": [{"text": f"a{i}"} for i in range(1, 4)],
        "b": [{"text": f"b{i}"} for i in range(1, 4)],
        "judge": judge_replies,
    }
    return make(models={"m": script, "judge": script}, agents=agents, program=p)


def test_consolidate_agents_see_each_others_answers_and_judge_ends_early():
    verdicts = [
        {"text": json.dumps({"agreed": False, "summary": "split"})},
        {"text": json.dumps({"agreed": True, "summary": "both say rent"})},
    ]
    engine = consolidate_engine(verdicts)
    run = engine.start("GPU or cloud?")

    events = go(drain(run))
    assert run.result.output == "both say rent"
    rounds = [(e.data["round"], e.data["agreed"]) for e in events if e.type == "consolidate_round"]
    assert rounds == [(1, False), (2, True)]
    a_round2 = next(r for r in engine.providers["m"].requests if r["agent"] == "a" and "b1" in r["messages"][0].text)
    assert "a1" in a_round2["messages"][0].text and "GPU or cloud?" in a_round2["messages"][0].text
    judge_prompt = engine.providers["judge"].requests[0]["messages"][0].text
    assert "[a]\na1" in judge_prompt and '"agreed"' in judge_prompt


def test_consolidate_without_agreement_runs_every_round_and_returns_last_summary():
    verdicts = [{"text": '{"agreed": false, "summary": "s1"}'}, {"text": "they disagree"}]
    engine = consolidate_engine(verdicts, rounds=2)
    result = go(engine.run("q"))
    assert result.output == "they disagree" and "judge_verdict_unparsed" in [w["code"] for w in result.report.warnings]
    assert len([r for r in engine.providers["m"].requests if r["agent"] == "a"]) == 2


def test_delegation_passes_task_and_returns_the_sub_agents_answer_with_nested_paths():
    agents = {
        "main": AgentNode(name="main", model="m", tools=("researcher",)),
        "researcher": AgentNode(name="researcher", model="m", tools=("look",), description="Look things up."),
    }
    script = {
        "main": [call("researcher", task="height of the Eiffel Tower"), {"text": "330 m"}],
        "researcher": [call("look"), {"text": "It is 330 metres."}],
    }
    engine = make(models={"m": script}, tools={"look": fn_tool("look", lambda: "330")}, agents=agents)
    run = engine.start("How tall?")

    events = go(drain(run))
    assert run.result.output == "330 m"
    main_tools = engine.providers["m"].requests[0]
    assert main_tools["tools"] == ["researcher"]
    assert engine.providers["m"].requests[1]["messages"][0].text == "height of the Eiffel Tower"
    tool_msg = engine.providers["m"].requests[-1]["messages"][-1]
    assert tool_msg.text == "It is 330 metres."
    nested = [e for e in events if e.agent == "researcher"]
    assert nested and all(e.path[0] == "main" and e.path[1].startswith("researcher[") for e in nested)
    assert [c["name"] for c in run.result.report.tool_calls] == ["look", "researcher"]


def test_delegated_failure_is_an_error_result_for_the_parent():
    agents = {
        "main": AgentNode(name="main", model="m", tools=("helper",)),
        "helper": AgentNode(name="helper", model="m"),
    }
    script = {"main": [call("helper", task="t"), {"text": "coped"}], "helper": [{"error": {"kind": "server_error"}}]}
    engine = make(models={"m": script}, agents=agents)
    result = go(engine.run("go"))
    assert result.output == "coped" and result.report.tool_calls[0]["is_error"]
    assert "delegate_failed" in [w["code"] for w in result.report.warnings]


def test_chain_stops_at_a_bounded_stop():
    p = program(
        chains=[ChainNode(name="main", elements=("looper", "after"))], steps=[StepNode(name="after", model="m")]
    )
    agents = {"looper": AgentNode(name="looper", model="m", tools=("t",), max_steps=1)}
    engine = make(
        models={"m": {"looper": [call("t")], "after": [{"text": "unreached"}]}},
        tools={"t": fn_tool("t", lambda: "r")},
        agents=agents,
        program=p,
    )
    result = go(engine.run("go"))
    assert result.stop_reason == "max_steps" and engine.providers["m"].requests[-1]["agent"] == "looper"


def _leftover_tasks() -> set:
    return {t for t in asyncio.all_tasks() if t is not asyncio.current_task()}


def test_parallel_fail_before_the_other_branches_start_cancels_them_without_hanging():
    names = ("bad", *(f"s{i}" for i in range(30)))
    p = program(
        parallels=[ParallelNode(name="main", branches=names)], steps=[StepNode(name=n, model="m") for n in names]
    )
    script = {
        "bad": [{"error": {"kind": "auth", "message": "nope"}}],
        **{f"s{i}": [{"text": "late", "delay": "600s"}] for i in range(30)},
    }
    engine = make(models={"m": script}, agents={}, program=p)

    async def bounded():
        # The siblings would take ten minutes: finishing at all means the failure cancelled them. The limit only
        # stops a hang, so a loaded machine cannot fail the test.
        result = await asyncio.wait_for(engine.run("go"), timeout=120.0)
        return result, _leftover_tasks()

    result, leftover = go(bounded())
    assert result.stop_reason == "error" and result.to_dict()["error"]["branch"] == "bad"
    assert not leftover


def test_cancelling_a_run_cancels_every_parallel_branch():
    names = tuple(f"s{i}" for i in range(10))
    p = program(
        parallels=[ParallelNode(name="main", branches=names)], steps=[StepNode(name=n, model="m") for n in names]
    )
    engine = make(models={"m": {n: [{"text": "late", "delay": "600s"}] for n in names}}, agents={}, program=p)

    async def cancel_midway():
        run = asyncio.ensure_future(engine.run("go"))
        await asyncio.sleep(0.05)  # wherever the run has got to, cancelling it must cancel every branch
        run.cancel()
        await asyncio.wait({run}, timeout=120.0)  # only a hang guard: the branches' replies take ten minutes
        return run.cancelled(), _leftover_tasks()

    cancelled, leftover = go(cancel_midway())
    assert cancelled and not leftover
