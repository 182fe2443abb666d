"""`plait serve` over HTTP, as a client sees it: every endpoint, every decision kind, the event stream and its
resumption with Last-Event-ID, auth refused and accepted, the body cap. A real server process on loopback."""

from __future__ import annotations

import shutil
from pathlib import Path

import httpx
import pytest
from serve_helpers import TOKEN, Server, events, make_project, run_cli

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("serve")
    spec = make_project(root / "project")
    started = Server(str(spec), cwd=root)
    yield started
    started.stop()


@pytest.fixture
def client(server: Server):
    with server.client() as c:
        yield c


def start(client: httpx.Client, **body: object) -> dict:
    response = client.post("/runs?wait=60s", json={"spec": "app", "input": {"topic": "tea"}} | body)
    assert response.status_code in (200, 201), response.text
    return response.json()


def answer_confirm(client: httpx.Client, run: dict) -> dict:
    response = client.post(
        f"/runs/{run['id']}/decisions",
        json={"decisions": [{"id": "confirm", "action": "answer", "answer": {"ok": True}}]},
    )
    assert response.status_code == 202, response.text
    return wait(client, run["id"])


def wait(client: httpx.Client, run_id: str) -> dict:
    """The run once it stops again (done, waiting for a person, failed): `GET /runs/{id}?wait=` holds until then."""
    response = client.get(f"/runs/{run_id}", params={"wait": "60s"})
    assert response.status_code == 200
    assert response.json()["status"] != "running"
    return response.json()


def test_auth_is_required_and_a_wrong_token_is_refused(server: Server) -> None:
    with server.client(token=None) as anonymous, server.client(token="wrong") as wrong:
        for c in (anonymous, wrong):
            for path in ("/specs", "/runs", "/openapi.json", "/runs/x/events"):
                response = c.get(path)
                assert response.status_code == 401
                assert response.json() == {"error": "a bearer token is required"}
            assert c.post("/runs", json={"spec": "app", "input": {"topic": "x"}}).status_code == 401
        # The studio's page is public (it holds no data); the data behind it is not.
        assert anonymous.get("/").status_code in (200, 404)
    with server.client() as c:
        assert c.get("/specs").status_code == 200
        # CORS is closed: a page on another origin gets no header that would let it read an answer.
        cross = c.get("/specs", headers={"Origin": "https://evil.example"})
        preflight = c.options(
            "/runs", headers={"Origin": "https://evil.example", "Access-Control-Request-Method": "POST"}
        )
        for response in (cross, preflight):
            assert not any(h.lower().startswith("access-control-") for h in response.headers)
        assert preflight.status_code >= 400


def test_specs_and_openapi_come_from_the_declared_types(client: httpx.Client) -> None:
    specs = client.get("/specs").json()
    assert [s["name"] for s in specs] == ["app"]
    entries = {e["name"]: e for e in specs[0]["entries"]}
    assert entries["main"]["input_schema"]["properties"] == {"topic": {"type": "string"}}
    assert entries["grade"]["output_schema"]["properties"]["verdict"]["enum"] == ["accept", "revise"]
    doc = client.get("/openapi.json").json()
    assert doc["openapi"].startswith("3.1")
    schemas = doc["components"]["schemas"]
    assert schemas["app.main.input"]["properties"]["topic"] == {"type": "string"}
    assert schemas["app.grade.output"]["properties"]["verdict"]["enum"] == ["accept", "revise"]
    assert schemas["app.confirm.answer"]["properties"]["ok"] == {"type": "boolean"}
    assert set(doc["paths"]) >= {"/runs", "/runs/{id}", "/runs/{id}/events", "/runs/{id}/decisions", "/specs"}


def test_bad_input_is_400_naming_the_field(client: httpx.Client) -> None:
    for body, word in (
        ({"input": {"topic": "x"}}, "spec"),
        ({"spec": "nope", "input": "x"}, "nope"),
        ({"spec": "app", "input": {"topic": 3}}, "topic"),
        ({"spec": "app", "entry": "ghost", "input": {"topic": "x"}}, "ghost"),
    ):
        response = client.post("/runs", json=body)
        assert response.status_code == 400, response.text
        assert word in response.json()["error"]
    response = client.post("/runs", content=b"{not json", headers={"content-type": "application/json"})
    assert response.status_code == 400 and "JSON" in response.json()["error"]
    assert client.get("/runs/no-such-run").status_code == 404
    assert client.get("/runs/no-such-run").json()["error"].startswith("no run")
    assert client.post("/runs/no-such-run/cancel").status_code == 404


def test_a_body_over_the_cap_is_413(client: httpx.Client) -> None:
    big = {"spec": "app", "input": {"topic": "x" * (2**20 + 10)}}
    response = client.post("/runs", json=big)
    assert response.status_code == 413
    assert "over" in response.json()["error"]

    def chunks():  # no Content-Length: counted as it streams in
        yield b'{"spec": "app", "input": "'
        for _ in range(20):
            yield b"x" * 2**16
        yield b'"}'

    response = client.post("/runs", content=chunks())
    assert response.status_code == 413


def test_typed_output_waited_for(client: httpx.Client) -> None:
    run = start(client, entry="grade")
    assert run["status"] == "done"
    assert run["output"] == {"verdict": "accept"}
    assert run["tokens"]["input"] > 0
    listed = client.get("/runs", params={"spec": "app", "status": "done"}).json()
    assert run["id"] in [r["id"] for r in listed]
    assert all(r["status"] == "done" for r in listed)
    trace = client.get(f"/runs/{run['id']}/trace").json()
    assert trace["run"]["id"] == run["id"]
    assert [i["kind"] for i in trace["timeline"]][0] == "admit"
    assert any(i["kind"] == "model_call" for i in trace["timeline"])


def test_answer_then_approve_through_the_event_stream(server: Server, client: httpx.Client) -> None:
    run = start(client)
    assert run["status"] == "waiting"
    (ask,) = run["pending"]
    assert ask["kind"] == "ask" and ask["name"] == "confirm" and ask["question"] == "Go on with tea?"
    assert ask["answer_schema"]["properties"]["ok"] == {"type": "boolean"}
    # An answer that misses the declared type is refused, and nothing changes.
    bad = client.post(
        f"/runs/{run['id']}/decisions",
        json={"decisions": [{"id": "confirm", "action": "answer", "answer": {"ok": "yes"}}]},
    )
    assert bad.status_code == 400 and "ok" in bad.json()["error"]
    wrong_kind = client.post(
        f"/runs/{run['id']}/decisions", json={"decisions": [{"id": "confirm", "action": "approve"}]}
    )
    assert wrong_kind.status_code == 400 and "approve" in wrong_kind.json()["error"]
    budget = client.post(
        f"/runs/{run['id']}/decisions", json={"decisions": [{"id": "confirm", "action": "raise_budget"}]}
    )
    assert budget.status_code == 400 and "raise_budget does not answer a pending ask" in budget.json()["error"]
    assert client.get(f"/runs/{run['id']}").json()["status"] == "waiting"
    run = answer_confirm(client, run)
    assert run["status"] == "waiting"
    (call,) = run["pending"]
    assert call["kind"] == "approval" and call["name"] == "send" and call["arguments"] == {"text": "hi"}
    ok = client.post(f"/runs/{run['id']}/decisions", json={"decisions": [{"id": call["id"], "action": "approve"}]})
    assert ok.status_code == 202
    stream = list(events(client, run["id"]))  # the whole run from its start, ending after its last run_end
    seqs = [int(e["id"]) for e in stream]
    assert seqs == sorted(set(seqs)) and seqs[0] == 1
    types = [e["event"] for e in stream]
    assert types[0] == "run_start" and types[-1] == "run_end"
    assert stream[-1]["data"]["data"]["stop_reason"] == "done"
    assert "tool_result" in types and "decision" in types
    assert all(e["data"]["seq"] == int(e["id"]) and e["data"]["type"] == e["event"] for e in stream)
    final = client.get(f"/runs/{run['id']}").json()
    assert final["status"] == "done" and final["output"] == "done" and final["pending"] == []
    # Reconnecting after any event gives exactly the rest: nothing missed, nothing twice.
    for cut in (1, len(stream) // 2, len(stream) - 1):
        rest = list(events(client, run["id"], last=seqs[cut - 1]))
        assert [int(e["id"]) for e in rest] == seqs[cut:]
    after = client.get(f"/runs/{run['id']}/events", params={"after": seqs[-2]})
    assert after.text.count("event: ") == 1 and "event: run_end" in after.text


def test_reconnect_mid_run_with_last_event_id(client: httpx.Client) -> None:
    run = client.post("/runs", json={"spec": "app", "input": {"topic": "tea"}}).json()
    assert run["status"] in ("running", "waiting")
    first = list(events(client, run["id"], stop=lambda e: e["event"] == "run_end"))  # the stop at the ask
    client.post(
        f"/runs/{run['id']}/decisions",
        json={"decisions": [{"id": "confirm", "action": "answer", "answer": {"ok": True}}]},
    )
    # Reconnect where the first connection left off; read until the run waits at the approval.
    second = list(events(client, run["id"], last=int(first[-1]["id"]), stop=lambda e: e["event"] == "run_end"))
    ids = [int(e["id"]) for e in first + second]
    assert ids == list(range(1, len(ids) + 1))
    assert second[0]["event"] == "run_resume"


def test_reject_edit_and_cancel(server: Server, client: httpx.Client) -> None:
    rejected = answer_confirm(client, start(client))
    call = rejected["pending"][0]
    client.post(
        f"/runs/{rejected['id']}/decisions",
        json={"decisions": [{"id": call["id"], "action": "reject", "reason": "not today"}]},
    )
    done = wait(client, rejected["id"])
    assert done["status"] == "done"
    timeline = client.get(f"/runs/{rejected['id']}/trace").json()["timeline"]
    assert not any(i["kind"] == "tool_call" for i in timeline)  # the call never ran
    assert any(i.get("decision", {}).get("action") == "reject" for i in timeline)

    edited = answer_confirm(client, start(client))
    call = edited["pending"][0]
    bad = client.post(f"/runs/{edited['id']}/decisions", json={"decisions": [{"id": call["id"], "action": "edit"}]})
    assert bad.status_code == 400 and "arguments" in bad.json()["error"]
    client.post(
        f"/runs/{edited['id']}/decisions",
        json={"decisions": [{"id": call["id"], "action": "edit", "arguments": {"text": "edited"}}]},
    )
    assert wait(client, edited["id"])["status"] == "done"
    (tool,) = [i for i in client.get(f"/runs/{edited['id']}/trace").json()["timeline"] if i["kind"] == "tool_call"]
    assert tool["arguments"] == {"text": "edited"} and tool["result"] == "sent edited"

    waiting = start(client)
    cancelled = client.post(f"/runs/{waiting['id']}/cancel")
    assert cancelled.status_code == 202
    assert cancelled.json()["status"] == "cancelled"
    assert client.get(f"/runs/{waiting['id']}").json()["status"] == "cancelled"
    stream = list(events(client, waiting["id"]))  # a cancelled run's stream ends
    assert stream[-1]["data"]["data"]["stop_reason"] == "cancelled"
    late = client.post(
        f"/runs/{waiting['id']}/decisions",
        json={"decisions": [{"id": "confirm", "action": "answer", "answer": {"ok": True}}]},
    )
    assert late.status_code == 400 and "cancelled" in late.json()["error"]


def test_graph_svg(client: httpx.Client) -> None:
    response = client.get("/specs/app/graph.svg")
    if shutil.which("dot") is None:
        assert response.status_code == 404 and "app" in response.json()["error"]
    else:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("image/svg+xml")
        assert b"<svg" in response.content and b"confirm" in response.content
    assert client.get("/specs/nope/graph.svg").status_code == 404


def test_no_auth_only_on_loopback_and_a_token_is_needed(tmp_path: Path) -> None:
    spec = make_project(tmp_path / "p")
    refused = run_cli(str(spec), "--no-auth", "--host", "0.0.0.0", cwd=tmp_path)
    assert refused.returncode == 2 and "loopback" in refused.stderr and "Traceback" not in refused.stderr
    tokenless = run_cli(str(spec), cwd=tmp_path)
    assert tokenless.returncode == 2 and "PLAIT_SERVE_TOKEN" in tokenless.stderr
    assert tokenless.stderr.startswith("plait serve: a bearer token is needed:") and tokenless.stderr.count("\n") == 1
    broken = tmp_path / "broken.plait"
    broken.write_text("agent {")
    bad_spec = run_cli(str(broken), "--no-auth", cwd=tmp_path)
    assert bad_spec.returncode == 1 and "Traceback" not in bad_spec.stderr
    open_server = Server(str(spec), "--no-auth", cwd=tmp_path, token=None)
    try:
        with open_server.client(token=None) as c:
            assert c.get("/specs").status_code == 200
    finally:
        open_server.stop()


def test_token_file(tmp_path: Path) -> None:
    spec = make_project(tmp_path / "p")
    (tmp_path / "token").write_text("from-a-file\n")
    server = Server(str(spec), "--token-file", str(tmp_path / "token"), cwd=tmp_path, token=None)
    try:
        with server.client(token="from-a-file") as c:
            assert c.get("/specs").status_code == 200
        with server.client(token=TOKEN) as c:
            assert c.get("/specs").status_code == 401
    finally:
        server.stop()


def test_approve_same_answers_an_approval_and_is_remembered_with_the_call(client: httpx.Client) -> None:
    run = answer_confirm(client, start(client))
    call = run["pending"][0]
    ok = client.post(f"/runs/{run['id']}/decisions", json={"decisions": [{"id": call["id"], "action": "approve_same"}]})
    assert ok.status_code == 202, ok.text
    assert wait(client, run["id"])["status"] == "done"
    timeline = client.get(f"/runs/{run['id']}/trace").json()["timeline"]
    [decided] = [i["decision"] for i in timeline if i.get("decision", {}).get("action") == "approve_same"]
    assert decided["tool"] == "send" and decided["arguments"] == {"text": "hi"}
