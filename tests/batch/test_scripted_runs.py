"""The scripted provider's replies belong to a run: every row of a batch reads the script from its first reply (the
shipped triage example, one reply per list, runs for every row), and a journaled run's recorded cursors leave out a
call still in flight in another branch, so a resume after a kill asks for that reply again instead of skipping it."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

from batch_helpers import results, write_lines
from plait.cli import main
from plait.core.kinds import ModelNode
from plait.runtime.providers.base import Message, ModelRequest, ResponseDone, TextDelta
from plait.runtime.providers.scripted import ScriptedProvider

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

#: The triage example's replies as first shipped: one reply per list, enough for one run.
ONE_RUN = {
    "classify": [{"output": {"category": "billing", "urgency": 4, "summary": "Charged twice."}}],
    "billing": [{"text": "Refunded."}],
    "tech_support": [{"text": "Restart the router."}],
    "sales": [{"text": "A rep will call."}],
}


def test_every_row_of_a_batch_gets_the_scripts_replies_from_the_first(tmp_path: Path) -> None:
    root = tmp_path / "triage"
    root.mkdir()
    shutil.copy(EXAMPLES / "triage" / "triage.plait", root / "triage.plait")
    (root / "triage.replies.json").write_text(json.dumps(ONE_RUN))
    write_lines(root / "in.jsonl", [{"ticket": f"ticket {i}", "customer": f"c{i}"} for i in range(5)])
    code = main(["batch", str(root / "triage.plait"), str(root / "in.jsonl"), "-o", str(root / "out.jsonl")])
    rows = results(root / "out.jsonl")
    assert [r["error"] for r in rows] == [None] * 5
    assert [r["output"] for r in rows] == ["Refunded."] * 5
    assert code == 0


def request(agent: str) -> ModelRequest:
    return ModelRequest("demo", [Message.user("hi")], agent=agent, step=1)


def test_a_recorded_snapshot_leaves_out_a_reply_another_branch_has_in_flight() -> None:
    script = {"left": [{"text": "left one"}, {"text": "left two"}], "right": [{"text": "right one"}]}
    engine_wide = ScriptedProvider(ModelNode(name="demo", provider="scripted", model_id="demo"), replies=script)

    async def go() -> dict:
        run = engine_wide.for_run(journaled=True)
        left = run.stream(request("left"))
        first = await asyncio.ensure_future(left.__anext__())  # the left branch's reply is taken, not yet recorded
        assert isinstance(first, TextDelta)

        async def right_branch() -> dict:
            await run.complete(request("right"))
            return run.snapshot()  # what the right branch's reply row records, as the journal does

        recorded = await asyncio.ensure_future(right_branch())
        await left.aclose()
        return recorded

    recorded = asyncio.run(go())
    assert recorded["cursors"] == {"left": 0, "right": 1}

    async def resumed() -> str:  # after a kill: the left branch's call was never recorded, so it is asked again
        run = engine_wide.for_run(journaled=True)
        run.restore(json.loads(json.dumps(recorded)))
        events = [e async for e in run.stream(request("left"))]
        assert isinstance(events[-1], ResponseDone)
        return events[-1].response.text

    assert asyncio.run(resumed()) == "left one"


def test_a_run_records_the_reply_it_took_itself() -> None:
    run = ScriptedProvider(
        ModelNode(name="demo", provider="scripted", model_id="demo"), replies=[{"text": "a"}, {"text": "b"}]
    ).for_run(journaled=True)

    async def go() -> dict:
        await run.complete(request("x"))
        return run.snapshot()

    assert asyncio.run(go())["cursors"] == {"": 1}


MAP_SPEC = """plait 0.2
model m = "scripted/m" { script = "replies.json" }

step plan {
  model = m
  prompt = "Plan {{input}}"
  output { items: list[string] }
}

agent item {
  model = m
}

map each = item { over = input.items, concurrency = 3 }

chain main = plan -> each
"""


def test_replies_keyed_by_graph_path_go_to_that_map_item_whatever_the_timing(tmp_path: Path, capsys) -> None:
    (tmp_path / "spec.plait").write_text(MAP_SPEC)
    replies = {
        "plan": [{"output": {"items": ["a", "b", "c"]}}],
        # The first item answers last: taken by arrival, its reply would go to another item.
        "main/each/[0]/item": [{"text": "first", "delay": "60ms"}],
        "main/each/[1]/item": [{"text": "second", "delay": "30ms"}],
        "main/each/[2]/item": [{"text": "third"}],
    }
    (tmp_path / "replies.json").write_text(json.dumps(replies))
    assert main(["check", str(tmp_path / "spec.plait")]) == 0
    capsys.readouterr()
    assert main(["run", str(tmp_path / "spec.plait"), "--input", "x", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["output"] == ["first", "second", "third"]


def test_a_fallback_call_records_the_reply_each_model_served() -> None:
    """The primary's error and the backup's reply were both taken by the one call: both count once it is recorded."""
    primary = ScriptedProvider(
        ModelNode(name="a", provider="scripted", model_id="a"), replies=[{"error": {"kind": "server_error"}}]
    )
    backup = ScriptedProvider(ModelNode(name="b", provider="scripted", model_id="b"), replies=[{"text": "from b"}])
    a, b = primary.for_run(journaled=True), backup.for_run(journaled=True)

    async def call() -> tuple[dict, dict]:
        try:
            await a.complete(request("x"))
        except Exception:  # the fallback loop moves on to the backup
            pass
        await b.complete(request("x"))
        return a.snapshot(), b.snapshot()  # as the reply row records every provider's state

    recorded_a, recorded_b = asyncio.run(call())
    assert recorded_a["cursors"] == {"": 1} and recorded_b["cursors"] == {"": 1}
