"""A stored run resumes mid-loop at the right iteration and mid-map at the right items; the snapshot holds where they stood."""

from __future__ import annotations

import json

from plait.runtime.conditions import Field
from plait.core.kinds import StepNode
from plait.core.types import BOOL, FieldType, ObjectType
from plait.core.kinds import AskNode, LoopNode, MapNode
from runtime_helpers import go, make, program

OK = ObjectType((FieldType("ok", BOOL),))


def test_a_run_stopped_inside_a_loop_resumes_at_that_iteration_with_its_history():
    p = program(
        loops=[LoopNode(name="main", body=("draft", "check"), max_iterations=3, until=Field(("ok",)))],
        steps=[StepNode(name="draft", model="m", prompt="try {{loop.iteration}} after {{loop.history}}")],
        asks=[AskNode(name="check", question="Good? {{input}}", output=OK)],
    )
    engine = make(models={"m": {"draft": [{"text": "d1"}, {"text": "d2"}]}}, agents={}, program=p)
    run = engine.start("x")
    assert go(run).pending[0].id == "main/#1/check"
    assert go(run.resume(answers={"check": {"ok": False}})).pending[0].id == "main/#2/check"
    snapshot = json.loads(json.dumps(run.snapshot()))  # what a store keeps
    assert snapshot["context"]["progress"]["main"] == {"kind": "loop", "history": [{"ok": False}]}

    restored = engine.restore(snapshot)
    result = go(restored.resume(answers={"check": {"ok": True}}))
    assert result.stop_reason == "done" and result.output == {"ok": True}
    drafts = [r["messages"][0].text for r in engine.providers["m"].requests]
    assert drafts == ["try 1 after []", 'try 2 after [{"ok": false}]']  # iteration 1 is not run again
    assert [(d["iteration"], d["holds"]) for d in result.report.decisions if d["kind"] == "loop"] == [
        (1, False),
        (2, True),
    ]
    assert result.to_dict()["decisions"].count(result.report.decisions[0]) == 1  # nothing recorded twice
    assert "main" not in restored.ctx.progress  # a finished loop leaves no progress behind


def test_a_run_stopped_inside_a_map_resumes_only_the_unfinished_items():
    p = program(
        maps=[MapNode(name="main", body=("write", "check"), over=("input",), concurrency=2)],
        steps=[StepNode(name="write", model="m", prompt="write {{map.item}}")],
        asks=[AskNode(name="check", question="Keep {{map.index}}: {{input}}?", output=OK)],
    )
    engine = make(models={"m": {"write": [{"text": f"w{i}"} for i in range(3)]}}, agents={}, program=p)
    run = engine.start(["a", "b", "c"])
    result = go(run)
    ids = sorted(x.id for x in result.pending)
    assert ids == ["main/[0]/check", "main/[1]/check", "main/[2]/check"]
    assert sorted(x.question for x in result.pending) == ["Keep 0: w0?", "Keep 1: w1?", "Keep 2: w2?"]
    result = go(run.resume(answers={"main/[0]/check": {"ok": True}, "main/[2]/check": {"ok": False}}))
    assert [x.id for x in result.pending] == ["main/[1]/check"]
    snapshot = json.loads(json.dumps(run.snapshot()))
    assert snapshot["context"]["progress"]["main"] == {"kind": "map", "done": {"0": {"ok": True}, "2": {"ok": False}}}

    restored = engine.restore(snapshot)
    result = go(restored.resume(answers={"check": {"ok": True}}))  # one pending: its name is enough
    assert result.stop_reason == "done" and result.output == [{"ok": True}, {"ok": True}, {"ok": False}]
    assert len(engine.providers["m"].requests) == 3  # each item written once, over three legs
    assert sorted(d["index"] for d in result.report.decisions if d["kind"] == "map") == [0, 1, 2]
