"""map: the body once per item, bounded concurrency, item order kept, on_error, map.* templates, records."""

from __future__ import annotations

import asyncio
import textwrap

from plait.core.kinds import StepNode
from plait.core.kinds import ChainNode, MapNode
from runtime_helpers import code, drain, go, make, program

ITEMS = [{"title": "Intro"}, {"title": "Body"}, {"title": "End"}]


def sections(tmp_path, body_source: str, concurrency=4, on_error="fail", body=("write",)):
    (tmp_path / "mapmod.py").write_text(textwrap.dedent(body_source))
    return program(
        chains=[ChainNode(name="main", elements=("plan", "write_all"))],
        maps=[
            MapNode(name="write_all", body=body, over=("input", "sections"), concurrency=concurrency, on_error=on_error)
        ],
        steps=[code("plan", "mapmod:plan", tmp_path), code("write", "mapmod:write", tmp_path)],
    )


PLAN = """
    import asyncio
    def plan(input):
        return {"sections": [{"title": "Intro"}, {"title": "Body"}, {"title": "End"}]}
"""


def test_results_keep_item_order_whatever_finishes_first(tmp_path):
    p = sections(
        tmp_path,
        PLAN
        + """
    async def write(title):
        await asyncio.sleep({"Intro": 0.06, "Body": 0.03, "End": 0.0}[title])
        return title.upper()
    """,
    )
    result = go(make(models={"m": []}, agents={}, program=p).run("report"))
    assert result.stop_reason == "done" and result.output == ["INTRO", "BODY", "END"]
    items = [d for d in result.report.decisions if d["kind"] == "map"]
    assert sorted((d["index"], d["status"], d["output"]) for d in items) == [
        (0, "done", "INTRO"),
        (1, "done", "BODY"),
        (2, "done", "END"),
    ]


def test_at_most_concurrency_items_run_at_once(tmp_path):
    p = sections(
        tmp_path,
        PLAN
        + """
    running = [0, 0]
    def plan(input):
        return {"sections": [{"title": str(i)} for i in range(9)]}
    async def write(title):
        running[0] += 1
        running[1] = max(running)
        await asyncio.sleep(0.01)
        running[0] -= 1
        return running[1]
    """,
        concurrency=2,
    )
    result = go(make(models={"m": []}, agents={}, program=p).run("x"))
    assert max(result.output) == 2 and len(result.output) == 9


def test_map_index_and_item_read_from_any_element_of_the_body(tmp_path):
    p = sections(
        tmp_path,
        PLAN
        + """
    def write(title):
        return {"text": title}
    """,
        body=("write", "polish"),
    )
    p.steps["polish"] = StepNode(name="polish", model="m", prompt="#{{map.index}} {{map.item.title}}: {{input.text}}")
    engine = make(models={"m": {"polish": [{"text": "p"}] * 3}}, agents={}, program=p)
    result = go(engine.run("x"))
    assert result.output == ["p", "p", "p"]
    prompts = sorted(r["messages"][0].text for r in engine.providers["m"].requests)
    assert prompts == ["#0 Intro: Intro", "#1 Body: Body", "#2 End: End"]


def test_the_first_failure_cancels_the_rest_and_leaves_no_task_behind(tmp_path):
    p = sections(
        tmp_path,
        PLAN
        + """
    finished = []
    async def write(title):
        if title == "Body":
            raise ValueError("no body")
        await asyncio.sleep(5)
        finished.append(title)
        return title
    """,
    )

    async def run():
        loop = asyncio.get_running_loop()
        t0 = loop.time()
        result = await make(models={"m": []}, agents={}, program=p).run("x")
        others = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        return result, loop.time() - t0, others

    result, elapsed, others = go(run())
    assert (
        result.stop_reason == "error" and result.error.kind == "code_step_failed" and "no body" in result.error.message
    )
    assert elapsed < 2 and others == []
    assert result.to_dict()["error"]["path"] == ["main", "write_all", "[1]", "write"]


def test_collect_keeps_going_and_puts_the_error_in_the_failed_items_slot(tmp_path):
    p = sections(
        tmp_path,
        PLAN
        + """
    def write(title):
        if title == "Body":
            raise ValueError("no body")
        return title
    """,
        on_error="collect",
    )
    result = go(make(models={"m": []}, agents={}, program=p).run("x"))
    assert result.stop_reason == "done" and result.output[0] == "Intro" and result.output[2] == "End"
    assert result.output[1]["error"]["kind"] == "code_step_failed"
    assert [w["code"] for w in result.report.warnings] == ["map_item_failed"]


def test_over_a_value_that_is_not_a_list_fails_naming_the_path(tmp_path):
    p = sections(
        tmp_path,
        """
    def plan(input):
        return {"sections": "Intro, Body"}
    def write(title):
        return title
    """,
    )
    result = go(make(models={"m": []}, agents={}, program=p).run("x"))
    assert result.error.kind == "map_over_not_list" and "`input.sections` is str" in result.error.message


def test_an_empty_list_maps_to_an_empty_list(tmp_path):
    p = sections(
        tmp_path,
        """
    def plan(input):
        return {"sections": []}
    def write(title):
        return title
    """,
    )
    assert go(make(models={"m": []}, agents={}, program=p).run("x")).output == []


def test_each_item_is_an_event(tmp_path):
    p = sections(
        tmp_path,
        PLAN
        + """
    def write(title):
        return title
    """,
    )
    events = go(drain(make(models={"m": []}, agents={}, program=p).start("x")))
    items = sorted((e.data["index"], e.data["output"]) for e in events if e.type == "map_item")
    assert items == [(0, "Intro"), (1, "Body"), (2, "End")]


def test_a_cancelled_map_cancels_its_items(tmp_path):
    p = sections(
        tmp_path,
        PLAN
        + """
    async def write(title):
        await asyncio.sleep(5)
        return title
    """,
    )

    async def run():
        task = asyncio.ensure_future(make(models={"m": []}, agents={}, program=p).run("x"))
        await asyncio.sleep(0.1)
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            pass
        return [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]

    assert go(run()) == []
