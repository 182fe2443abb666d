"""`plait serve`'s A2A endpoint driven by the A2A SDK's own client: the card, send, stream, get, cancel, an ask."""

from __future__ import annotations

import asyncio
import json

import pytest

pytest.importorskip("a2a")
pytest.importorskip("uvicorn")

import httpx  # noqa: E402
from a2a.client import A2ACardResolver, ClientConfig, create_client  # noqa: E402
from a2a.helpers.proto_helpers import get_artifact_text, get_data_parts, new_data_part, new_message  # noqa: E402
from a2a.helpers.proto_helpers import new_text_part  # noqa: E402
from a2a.types.a2a_pb2 import (  # noqa: E402
    CancelTaskRequest,
    GetTaskRequest,
    ListTasksRequest,
    Role,
    SendMessageRequest,
    SubscribeToTaskRequest,
    TaskState,
)
from a2a.utils.errors import A2AError  # noqa: E402
from protocol_server import TOKEN, serving, write_specs  # noqa: E402

pytestmark = pytest.mark.slow

AUTH = {"Authorization": f"Bearer {TOKEN}"}
TICKET = {"ticket": "broken", "customer": "Ann"}


def user(*parts, skill=None, task_id=None):
    message = new_message(list(parts), task_id=task_id, role=Role.ROLE_USER)
    if skill:
        message.metadata.update({"skill": skill})
    return SendMessageRequest(message=message)


async def last(client, request):
    """The last StreamResponse of a send (the task, as it stands when the run stopped)."""
    out = None
    async for response in client.send_message(request):
        out = response
    return out


def test_the_card_lists_each_entry_as_a_skill_with_its_schemas_and_no_secret(tmp_path):
    specs = write_specs(tmp_path, "triage", "grade")

    async def go(base):
        async with httpx.AsyncClient(headers=AUTH) as http:
            card = await A2ACardResolver(http, base).get_agent_card()
            raw = (await http.get(f"{base}/.well-known/agent-card.json")).text
            async with httpx.AsyncClient() as anonymous:
                refused = await anonymous.get(f"{base}/.well-known/agent-card.json")
        return card, raw, refused

    with serving(specs) as base:
        card, raw, refused = asyncio.run(go(base))
    assert {s.id for s in card.skills} == {"triage.main", "grade.grade"}
    grade = next(s for s in card.skills if s.id == "grade.grade")
    assert "grade" in grade.description and list(grade.input_modes) == ["text/plain"]
    assert list(grade.output_modes) == ["application/json"]
    assert card.supported_interfaces[0].url == f"{base}/a2a"
    assert card.supported_interfaces[0].protocol_binding == "JSONRPC"
    schemas = json.loads(raw)["capabilities"]["extensions"][0]["params"]
    assert schemas["triage.main"]["input"]["required"] == ["ticket", "customer"]
    assert schemas["grade.grade"]["output"]["properties"]["score"] == {"type": "integer"}
    assert "bearer" in card.security_schemes and TOKEN not in raw
    assert refused.status_code == 401


def test_an_ask_is_input_required_and_the_follow_up_message_answers_it(tmp_path):
    specs = write_specs(tmp_path, "triage")

    async def go(base):
        async with httpx.AsyncClient(headers=AUTH, timeout=60) as http:
            client = await create_client(base, ClientConfig(httpx_client=http, streaming=False))
            first = (await last(client, user(new_data_part(TICKET)))).task
            got = await client.get_task(GetTaskRequest(id=first.id))
            streaming = await create_client(base, ClientConfig(httpx_client=http, streaming=True))
            watched = [r async for r in streaming.subscribe(SubscribeToTaskRequest(id=first.id))]
            assert watched[0].task.id == first.id
            assert watched[-1].status_update.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
            reply = user(new_text_part('{"decision": "send"}'), task_id=first.id)
            done = (await last(client, reply)).task
            again = None
            try:
                await last(client, user(new_text_part("send"), task_id=first.id))
            except A2AError as exc:
                again = str(exc)
            try:
                await client.cancel_task(CancelTaskRequest(id=first.id))
            except A2AError as exc:
                again += f" | {exc}"
            return first, got, done, again

    with serving(specs) as base:
        first, got, done, again = asyncio.run(go(base))
    assert first.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
    assert "Send this reply?\nDear Ann" in first.status.message.parts[0].text
    [pending] = get_data_parts(first.status.message.parts)[0]["pending"]
    assert pending["id"] == "main/confirm" and pending["kind"] == "ask"
    assert got.id == first.id and got.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
    assert done.id == first.id and done.status.state == TaskState.TASK_STATE_COMPLETED
    assert get_artifact_text(done.artifacts[0]) == "sent"
    assert again is not None and "is completed: only an input-required task takes a follow-up" in again
    assert f"task {first.id} is already completed" in again


def test_streaming_a_typed_entry_ends_completed_with_its_output_as_data(tmp_path):
    specs = write_specs(tmp_path, "triage", "grade")

    async def go(base):
        async with httpx.AsyncClient(headers=AUTH, timeout=60) as http:
            client = await create_client(base, ClientConfig(httpx_client=http, streaming=True))
            return [r async for r in client.send_message(user(new_text_part("42"), skill="grade.grade"))]

    with serving(specs) as base:
        responses = asyncio.run(go(base))
    kinds = [r.WhichOneof("payload") for r in responses]
    assert kinds[0] == "task" and kinds[-1] == "status_update", kinds
    updates = [r.status_update for r in responses if r.HasField("status_update")]
    seen = [u.metadata["plait"]["type"] for u in updates if "plait" in u.metadata]
    assert seen[:3] == ["run_start", "step_start", "step_end"]
    [artifact] = [r.artifact_update.artifact for r in responses if r.HasField("artifact_update")]
    assert get_data_parts(artifact.parts) == [{"verdict": "accept", "score": 9}]
    assert responses[-1].status_update.status.state == TaskState.TASK_STATE_COMPLETED


def test_an_approval_rejected_by_text_and_a_waiting_task_cancelled(tmp_path):
    specs = write_specs(tmp_path, "desk")

    async def go(base):
        async with httpx.AsyncClient(headers=AUTH, timeout=60) as http:
            client = await create_client(base, ClientConfig(httpx_client=http, streaming=False))
            first = (await last(client, user(new_text_part("add 2 and 3")))).task
            reply = user(new_text_part("maybe"), task_id=first.id)
            unclear = None
            try:
                await last(client, reply)
            except A2AError as exc:
                unclear = str(exc)
            other = (await last(client, user(new_text_part("add again")))).task
            cancelled = await client.cancel_task(CancelTaskRequest(id=other.id))
            waiting = await client.list_tasks(ListTasksRequest(status=TaskState.TASK_STATE_INPUT_REQUIRED))
            assert [t.id for t in waiting.tasks] == [first.id]
            rejected = (await last(client, user(new_text_part("reject not now"), task_id=first.id))).task
            return first, unclear, cancelled, rejected

    with serving(specs) as base:
        first, unclear, cancelled, rejected = asyncio.run(go(base))
    assert first.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
    [pending] = get_data_parts(first.status.message.parts)[0]["pending"]
    assert pending["kind"] == "approval" and pending["name"] == "send" and pending["arguments"] == {"to": "ann"}
    assert unclear is not None and "reply `approve`, `approve same` or `reject [reason]`" in unclear
    assert cancelled.status.state == TaskState.TASK_STATE_CANCELED
    assert rejected.status.state == TaskState.TASK_STATE_COMPLETED
    assert get_artifact_text(rejected.artifacts[0]) == "The sum is 5."


def test_bad_input_and_an_unknown_task_are_errors_that_say_why(tmp_path):
    specs = write_specs(tmp_path, "triage", "grade")

    async def go(base):
        errors = []
        async with httpx.AsyncClient(headers=AUTH, timeout=60) as http:
            client = await create_client(base, ClientConfig(httpx_client=http, streaming=False))
            for request in (
                user(new_data_part({"ticket": "x"}), skill="triage.main"),
                user(new_text_part("hi"), skill="nope"),
                user(new_text_part("hi")),
            ):
                try:
                    await last(client, request)
                except A2AError as exc:
                    errors.append(str(exc))
            try:
                await client.get_task(GetTaskRequest(id="no-such-run"))
            except A2AError as exc:
                errors.append(str(exc))
        return errors

    with serving(specs) as base:
        errors = asyncio.run(go(base))
    assert len(errors) == 4, errors
    assert "customer" in errors[0]
    assert "no skill named 'nope'" in errors[1] and "grade.grade, triage.main" in errors[1]
    assert "metadata.skill" in errors[2]
    assert "no task no-such-run" in errors[3]


def test_the_v0_3_json_rpc_method_names_reach_the_same_runs(tmp_path):
    specs = write_specs(tmp_path, "grade")
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "message/send",
        "params": {
            "message": {"role": "user", "messageId": "m1", "kind": "message", "parts": [{"kind": "text", "text": "42"}]}
        },
    }
    with serving(specs) as base:
        sent = httpx.post(f"{base}/a2a", json=body, headers=AUTH, timeout=60).json()
        got = httpx.post(
            f"{base}/a2a",
            json={"jsonrpc": "2.0", "id": 2, "method": "tasks/get", "params": {"id": sent["result"]["id"]}},
            headers=AUTH,
            timeout=60,
        ).json()
    assert sent["result"]["status"]["state"] == "completed", sent
    assert got["result"]["artifacts"][0]["parts"][0]["data"] == {"verdict": "accept", "score": 9}
