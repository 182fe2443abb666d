"""`plait serve` and budgets: a run paused on its budget waits with a `budget` pending item, a `raise_budget`
decision resumes it with new limits, and every view of a run carries its cost. A real server on loopback."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from serve_helpers import Server

pytestmark = pytest.mark.slow

SPEC = """\
model m = "scripted/m" { script = "replies.json", price = { input = 1.0, output = 2.0 } }

tool look "Look something up." { run = python("budget_tools:look") }

agent worker { model = m, tools = [look], budget = { usd = 0.02 } }

step sum { model = m, prompt = "Sum: {{input}}" }

chain main = worker -> sum
"""
REPLIES = [
    {"tool_calls": [{"name": "look", "arguments": {}}], "usage": {"input_tokens": 10000, "output_tokens": 5000}},
    {"text": "worker done", "usage": {"input_tokens": 1000, "output_tokens": 100}},
    {"text": "summed", "usage": {"input_tokens": 1000, "output_tokens": 100}},
]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory):
    root: Path = tmp_path_factory.mktemp("serve-budget")
    (root / "priced.plait").write_text(SPEC)
    (root / "replies.json").write_text(json.dumps(REPLIES))
    (root / "budget_tools.py").write_text("def look(**kw):\n    return 'found'\n")
    started = Server(str(root / "priced.plait"), cwd=root)
    yield started
    started.stop()


def decide(client: httpx.Client, run_id: str, *decisions: dict) -> httpx.Response:
    return client.post(f"/runs/{run_id}/decisions", json={"decisions": list(decisions)})


def test_a_run_paused_on_its_budget_is_raised_over_http_and_costs_are_reported(server: Server) -> None:
    with server.client() as client:
        response = client.post("/runs?wait=60s", json={"spec": "priced", "input": "hi"})
        assert response.status_code in (200, 201), response.text
        run = response.json()
        assert run["status"] == "waiting" and run["stop_reason"] == "pause"
        assert run["cost"] == pytest.approx(0.02)
        (item,) = run["pending"]
        assert item["id"] == "budget" and item["kind"] == "budget" and item["name"] == "worker"
        assert item["limit"] == "usd" and item["limits"]["usd"] == 0.02 and item["spent"] == pytest.approx(0.02)
        assert set(item["answer_schema"]["properties"]) == {"usd", "tokens", "model_calls"}

        # New limits that are not limits are refused, and nothing changes.
        bad = decide(client, run["id"], {"id": "budget", "action": "raise_budget", "budget": {"dollars": 5}})
        assert bad.status_code == 400 and "dollars" in bad.json()["error"]
        missing = decide(client, run["id"], {"id": "budget", "action": "raise_budget"})
        assert missing.status_code == 400 and "budget" in missing.json()["error"]
        wrong = decide(client, run["id"], {"id": "budget", "action": "approve"})
        assert wrong.status_code == 400
        assert client.get(f"/runs/{run['id']}").json()["status"] == "waiting"

        ok = decide(client, run["id"], {"id": "budget", "action": "raise_budget", "budget": {"usd": 0.05}})
        assert ok.status_code == 202, ok.text
        done = client.get(f"/runs/{run['id']}", params={"wait": "60s"}).json()
        assert done["status"] == "done" and done["output"] == "summed" and done["pending"] == []
        assert done["cost"] == pytest.approx(0.0224)

        listed = client.get("/runs", params={"spec": "priced"}).json()
        assert [r["cost"] for r in listed if r["id"] == run["id"]] == [pytest.approx(0.0224)]
        trace = client.get(f"/runs/{run['id']}/trace").json()
        assert trace["run"]["cost_usd"] == pytest.approx(0.0224)
        calls = [i for i in trace["timeline"] if i["kind"] == "model_call"]
        assert [c["cost_usd"] for c in calls] == pytest.approx([0.02, 0.0012, 0.0012])
        raised = [i for i in trace["timeline"] if i["kind"] == "decision" and i.get("of") == "budget"]
        assert raised and raised[0]["decision"]["items"] == {"usd": 0.05}
        spec = client.get("/openapi.json").json()["components"]["schemas"]
        assert "budget" in spec["Pending"]["properties"]["kind"]["enum"]
        assert spec["Decision"]["properties"]["budget"]["properties"]["usd"]["type"] == "number"
