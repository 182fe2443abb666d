"""The offline example runs end to end, through the CLI and the Python API (copied, so runs are stored in tmp)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import plait
from plait.cli import main
from runtime_helpers import Recorder, call

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "briefing"


def test_briefing_example_runs_offline(tmp_path, capsys):
    shutil.copytree(EXAMPLE, tmp_path / "briefing")
    spec = str(tmp_path / "briefing" / "briefing.plait")
    code = main(["run", spec, "--input", "the Lisbon office move", "--json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 0 and report["stop_reason"] == "done" and "Lisbon" in report["output"]
    names = [c["name"] for c in report["tool_calls"]]
    assert names.count("submit_report") == 1 and "lookup" in names and "researcher" in names


def test_briefing_state_reaches_the_summary_system_prompt(tmp_path):
    shutil.copytree(EXAMPLE, tmp_path / "briefing")
    from plait.runtime.engine import Engine

    engine = Engine.from_spec(tmp_path / "briefing" / "briefing.plait")
    seen = []
    fast = engine._make_provider("fast")
    for_run = fast.for_run  # each run reads the script through its own view of the model

    def spied(**options):
        view = for_run(**options)
        original = view.complete

        async def spy(request):
            seen.append((request.agent, request.system))
            return await original(request)

        view.complete = spy
        return view

    fast.for_run = spied
    result = plait.run(engine, "the Lisbon office move")
    assert result.stop_reason == "done"
    assert ("summary", "You close briefings about Lisbon office.") in seen


# -- the plait 0.2 examples: each runs offline and passes `plait check --strict` -------------------------------------

EXAMPLES = EXAMPLE.parent


def copied(tmp_path, name):
    shutil.copytree(EXAMPLES / name, tmp_path / name)
    return tmp_path / name


def run_json(capsys, *argv):
    code = main(["run", *map(str, argv), "--json"])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, json.loads(out)


def test_the_0_2_examples_pass_check_strict(capsys):
    for name in ("triage", "polish", "report", "approve", "support"):
        code = main(["check", "--strict", str(EXAMPLES / name)])
        assert code == 0, f"{name}: {capsys.readouterr()}"


def test_triage_routes_on_the_classified_category(tmp_path, capsys):
    folder = copied(tmp_path, "triage")
    code, report = run_json(capsys, folder / "triage.plait", "--input-file", folder / "ticket.json")
    assert code == 0 and report["output"].startswith("Hi Ann, you were charged twice")
    [route] = report["decisions"]
    assert (route["name"], route["value"], route["target"]) == ("triage", "billing", "billing")
    assert [s["agent"] for s in report["steps"]] == ["classify", "billing"]


def test_polish_loops_until_the_reviewer_accepts(tmp_path, capsys):
    folder = copied(tmp_path, "polish")
    code, report = run_json(capsys, folder / "polish.plait", "--input", "My order arrived broken.")
    assert code == 0 and report["output"].endswith("The support team")
    assert [(d["iteration"], d["holds"]) for d in report["decisions"]] == [(1, False), (2, True)]
    assert report["warnings"] == []


def test_report_maps_over_the_planned_sections_in_order(tmp_path, capsys):
    folder = copied(tmp_path, "report")
    code, report = run_json(capsys, folder / "report.plait", "--input", "heat pumps")
    assert code == 0 and report["output"].startswith("1. A heat pump moves heat")
    assert [line[:2] for line in report["output"].split("\n\n")] == ["1.", "2.", "3."]
    assert sorted(d["index"] for d in report["decisions"]) == [0, 1, 2]


def test_approve_asks_a_person_and_routes_on_the_answer(tmp_path, capsys):
    folder = copied(tmp_path, "approve")
    spec = folder / "approve.plait"
    code, report = run_json(capsys, spec, "--input-file", folder / "request.json")
    assert code == 3 and report["pending"][0]["question"].startswith(
        "Approve buying a 4K monitor for 640.0 EUR? Risk: high"
    )
    code, done = run_json(
        capsys, spec, "--resume", report["run_id"], "--answer", 'approval={"decision": "reject", "note": "get a quote"}'
    )
    assert code == 0 and done["output"] == "Your request was declined. Please attach a quote and ask again."
    assert done["decisions"][-1]["target"] == "decline"


def test_support_passes_the_typed_label_to_the_agent(tmp_path):
    from plait.core.kinds import ModelNode
    from plait.runtime.engine import Engine
    from plait.runtime.function_tool import FunctionTool
    from plait.runtime.providers.scripted import ScriptedProvider

    folder = copied(tmp_path, "support")
    replies = {
        "classify": [{"output": {"label": "refund", "summary": "The kettle arrived broken."}}],
        "support": [call("hand_off", summary="Broken kettle; wants a refund.", priority=2)],
    }
    quick = Recorder(ScriptedProvider(ModelNode(name="quick", provider="scripted", model_id="quick"), replies=replies))
    engine = Engine.from_spec(folder / "support.plait", providers={"quick": quick})
    # The declared tool's body swapped for a Python function, as a caller would: a record with a callable.
    declared = engine.program.tools["hand_off"]
    engine.program.tools["hand_off"] = FunctionTool(
        name="hand_off",
        description=declared.description,
        parameters=declared.parameters,
        fn=lambda summary, priority=2: "ticket T-1",
    )
    result = plait.run(engine, "My kettle arrived broken, I want my money back.")
    assert result.stop_reason == "until" and result.until_result == "ticket T-1"
    classify, support = quick.requests
    assert classify["agent"] == "classify" and support["system"].startswith("You resolve support cases (refund).")
    assert json.loads(support["messages"][0].text) == {"label": "refund", "summary": "The kettle arrived broken."}


def test_approve_places_the_order_its_with_binds(tmp_path, capsys):
    folder = copied(tmp_path, "approve")
    spec = folder / "approve.plait"
    code, report = run_json(capsys, spec, "--input-file", folder / "request.json")
    code, done = run_json(capsys, spec, "--resume", report["run_id"], "--answer", 'approval={"decision": "approve"}')
    assert code == 0 and done["output"].endswith("placed: a 4K monitor for 640.00 EUR.")


def test_digest_declares_what_each_runnable_receives_and_runs_offline(tmp_path, capsys):
    folder = copied(tmp_path, "digest")
    spec = folder / "digest.plait"
    code, report = run_json(capsys, spec, "--input-file", folder / "request.json")
    assert code == 3 and report["pending"][0]["question"].startswith(
        'Publish "Heat pumps, plainly"?\n\nHeat pumps move'
    )
    code, done = run_json(
        capsys, spec, "--resume", report["run_id"], "--answer", 'publish={"decision": "publish", "note": "March"}'
    )
    assert code == 0 and {k: done["output"][k] for k in ("title", "words", "note")} == {
        "title": "Heat pumps, plainly",
        "words": 26,
        "note": "March",
    }
    given = {d["name"]: d["record"] for d in done["decisions"] if d["kind"] == "with"}
    assert given["gather"] == {
        "title": "Heat pumps, plainly",
        "items": [
            "A heat pump moves heat instead of making it. It works like a fridge run backwards.",
            "Installing one costs more than a boiler. Running it usually costs less.",
        ],
        "audience": "homeowners",
    }
    assert given["file"]["note"] == "March" and set(given["editor"]) == {"digest", "topic"}
