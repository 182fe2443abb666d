"""The offline example runs end to end, through the CLI and the Python API (copied, so runs are stored in tmp)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import plait
from plait.cli import main

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
    original = fast.complete

    async def spy(request):
        seen.append((request.agent, request.system))
        return await original(request)

    fast.complete = spy
    result = plait.run(engine, "the Lisbon office move")
    assert result.stop_reason == "done"
    assert ("summary", "You close briefings about Lisbon office.") in seen
