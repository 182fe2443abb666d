"""The studio and budgets, in a real browser: a run paused on its budget shows a budget card with what was spent
and a form of new limits; raising it there finishes the run, and each model call's cost is on the timeline."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_studio import TOKEN, Server, sign_in, snapshot
from test_studio import page as page  # noqa: F401 - a fixture, used by name

pytestmark = pytest.mark.slow

SPEC = """\
model m = "scripted/m" { script = "priced.replies.json", price = { input = 1.0, output = 2.0 } }

tool look "Look something up." { run = python("priced_tools:look") }

agent worker { model = m, tools = [look], budget = { usd = 0.02 } }

step sum { model = m, prompt = "Sum: {{input}}" }

chain main = worker -> sum
"""
REPLIES = [
    {"tool_calls": [{"name": "look", "arguments": {}}], "usage": {"input_tokens": 10000, "output_tokens": 5000}},
    {"text": "worker done", "usage": {"input_tokens": 1000, "output_tokens": 100}},
    {"text": "summed", "usage": {"input_tokens": 1000, "output_tokens": 100}},
]


@pytest.fixture
def served(tmp_path: Path) -> Iterator[str]:
    folder = tmp_path / "specs"
    folder.mkdir()
    (folder / "priced.plait").write_text(SPEC)
    (folder / "priced.replies.json").write_text(json.dumps(REPLIES))
    (folder / "priced_tools.py").write_text("def look(**kw):\n    return 'found'\n")
    running = Server(folder, 0)
    running.start()
    try:
        yield running.url
    finally:
        running.stop()


def start_over_http(served: str) -> dict[str, Any]:
    request = urllib.request.Request(
        served + "/runs?wait=60s",
        data=json.dumps({"spec": "priced", "input": "hi"}).encode(),
        headers={"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=60) as reply:
        return json.loads(reply.read())


def test_raise_a_budget_in_the_browser(served: str, page: Any, tmp_path: Path):
    run = start_over_http(served)
    assert run["status"] == "waiting" and run["pending"][0]["kind"] == "budget"
    sign_in(page, f"{served}/#spec=priced&run={run['id']}")
    card = page.wait_for_selector(".pending[data-kind=budget]")
    assert "$0.0200 spent of $0.0200" in card.text_content()
    page.wait_for_selector('[id="plait:worker"].waiting')  # the graph marks the runnable whose budget it is
    snapshot(page, tmp_path, "budget-waiting")
    card.query_selector("input[name=usd]").fill("0.05")
    card.query_selector("button[type=submit]").click()
    page.wait_for_selector("#run .pill.done")
    page.wait_for_selector("#timeline li.model_call >> nth=2")
    calls = page.eval_on_selector_all("#timeline li.model_call", "ls => ls.map(l => l.textContent)")
    assert any("$0.0200" in c for c in calls) and any("$0.0012" in c for c in calls), calls
    decisions = page.eval_on_selector_all("#timeline li.decision", "ls => ls.map(l => l.textContent)")
    assert any("budget" in d and "0.05" in d for d in decisions), decisions
    snapshot(page, tmp_path, "budget-raised-done")
    assert page.errors == []  # type: ignore[attr-defined]
