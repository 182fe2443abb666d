"""A run that stops at its budget, seen through each protocol `plait serve` speaks: an A2A task is input-required and
a follow-up message with new limits raises it; AG-UI ends the run with a `budget` interrupt and the raise reads as the
thread's next run; an MCP tool call is an error naming the spent budget and how to go on. The budget is a chain's
(`chain main = a -> b { budget = ... }`), with priced scripted calls, on a real server on loopback."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import pytest

pytest.importorskip("uvicorn")

import httpx  # noqa: E402
from protocol_server import TOKEN, serving  # noqa: E402

pytestmark = pytest.mark.slow

AUTH = {"Authorization": f"Bearer {TOKEN}"}

SPEC = """plait 0.2

model m = "scripted/m" { script = "priced.replies.json", price = { input = 1.0, output = 2.0 } }

step a { model = m, prompt = "A: {{input}}" }
step b { model = m, prompt = "B: {{input}}" }

chain main = a -> b { budget = { model_calls = 1 } }  # two calls, one allowed
"""


def write_spec(folder: Path) -> list[Path]:
    (folder / "priced.plait").write_text(SPEC)
    usage = {"input_tokens": 1000, "output_tokens": 100}
    replies = {"a": [{"text": "one", "usage": usage}] * 3, "b": [{"text": "two", "usage": usage}] * 3}
    (folder / "priced.replies.json").write_text(json.dumps(replies))
    return [folder / "priced.plait"]


def test_a2a_a_budget_stop_is_input_required_and_a_reply_with_new_limits_finishes_the_task(tmp_path):
    pytest.importorskip("a2a")
    from a2a.client import ClientConfig, create_client
    from a2a.helpers.proto_helpers import get_artifact_text, get_data_parts, new_message, new_text_part
    from a2a.types.a2a_pb2 import Role, SendMessageRequest, TaskState

    async def last(client, request):
        out = None
        async for response in client.send_message(request):
            out = response
        return out.task

    def user(text, task_id=None):
        return SendMessageRequest(message=new_message([new_text_part(text)], task_id=task_id, role=Role.ROLE_USER))

    async def go(base):
        async with httpx.AsyncClient(headers=AUTH, timeout=60) as http:
            client = await create_client(base, ClientConfig(httpx_client=http, streaming=False))
            stopped = await last(client, user("hi"))
            done = await last(client, user('{"model_calls": 2}', task_id=stopped.id))
            return stopped, done

    with serving(write_spec(tmp_path)) as base:
        stopped, done = asyncio.run(go(base))
    assert stopped.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
    text = stopped.status.message.parts[0].text
    assert "The budget of `main` is spent (model_calls: 1 of 1)" in text and '{"usd": 5}' in text
    [pending] = get_data_parts(stopped.status.message.parts)[0]["pending"]
    assert pending["kind"] == "budget" and pending["limit"] == "model_calls"
    assert done.id == stopped.id and done.status.state == TaskState.TASK_STATE_COMPLETED
    assert get_artifact_text(done.artifacts[0]) == "two"


def test_ag_ui_a_budget_stop_is_an_interrupt_and_the_raise_is_the_threads_next_run(tmp_path):
    pytest.importorskip("ag_ui")
    from ag_ui.core import Event, EventType
    from pydantic import TypeAdapter

    events = TypeAdapter(Event)

    def read(base, run_id, last_id=None):
        headers = dict(AUTH, **({"Last-Event-ID": last_id} if last_id else {}))
        out = []
        url = f"{base}/runs/{run_id}/events?format=ag-ui"
        with httpx.stream("GET", url, headers=headers, timeout=60) as response:
            frame_id = None
            for line in response.iter_lines():
                if line.startswith("id: "):
                    frame_id = line[4:]
                elif line.startswith("data: "):
                    out.append((frame_id, events.validate_python(json.loads(line[6:]))))
        return out

    with serving(write_spec(tmp_path)) as base:
        run_id = httpx.post(f"{base}/runs", json={"spec": "priced", "input": "hi"}, headers=AUTH).json()["id"]
        first = read(base, run_id)
        [interrupt] = first[-1][1].outcome.interrupts
        httpx.post(
            f"{base}/runs/{run_id}/decisions",
            json={"decisions": [{"id": interrupt.id, "action": "raise_budget", "budget": {"model_calls": 2}}]},
            headers=AUTH,
        ).raise_for_status()
        second = read(base, run_id, last_id=first[-1][0])

    finished = first[-1][1]
    assert finished.type == EventType.RUN_FINISHED and finished.outcome.type == "interrupt"
    assert interrupt.reason == "budget" and "the budget of `main` is spent (model_calls)" in interrupt.message
    assert set(interrupt.response_schema["properties"]) == {"usd", "tokens", "model_calls"}
    resumed, end = second[0][1], second[-1][1]
    assert resumed.type == EventType.RUN_STARTED and resumed.parent_run_id == run_id
    assert end.type == EventType.RUN_FINISHED and end.result == "two"


def test_mcp_a_budget_stop_is_a_tool_error_naming_the_budget_and_the_run(tmp_path):
    pytest.importorskip("mcp")
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    async def go(base):
        async with httpx2.AsyncClient(headers=AUTH, timeout=httpx2.Timeout(30.0, read=120.0)) as http:
            async with Client(streamable_http_client(f"{base}/mcp", http_client=http), mode="auto") as client:
                return await client.call_tool("main", {"input": "hi"})

    with serving(write_spec(tmp_path), mcp=True) as base:
        result = asyncio.run(go(base))
        text = result.content[0].text
        run_id = re.search(r"run (\S+) is waiting for a person", text).group(1)
        stored = httpx.get(f"{base}/runs/{run_id}", headers=AUTH).json()
    assert result.is_error
    assert "the budget of `main` is spent (model_calls; id budget)" in text and f"plait resume {run_id}" in text
    assert stored["status"] == "waiting" and stored["pending"][0]["kind"] == "budget"
