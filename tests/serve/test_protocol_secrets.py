"""No secret value the server resolved reaches a client through A2A, MCP or AG-UI (card, tools, results, events)."""

from __future__ import annotations

import asyncio

import pytest

pytest.importorskip("a2a")
pytest.importorskip("ag_ui")
pytest.importorskip("mcp")
pytest.importorskip("uvicorn")

import httpx  # noqa: E402
import httpx2  # noqa: E402
from a2a.client import ClientConfig, create_client  # noqa: E402
from a2a.helpers.proto_helpers import new_message, new_text_part  # noqa: E402
from a2a.types.a2a_pb2 import Role, SendMessageRequest  # noqa: E402
from google.protobuf.json_format import MessageToJson  # noqa: E402
from mcp import Client  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402
from protocol_server import TOKEN, serving  # noqa: E402
from serve_helpers import VAULT, VAULT_TOOLS  # noqa: E402

from plait.runtime.providers.fake import FAKE_KEY_ENV  # noqa: E402
from plait.testing import plait_fake_server  # noqa: E402, F401  (the fixture)

pytestmark = pytest.mark.slow

AUTH = {"Authorization": f"Bearer {TOKEN}"}
SECRET = "sk-serve-7f3a9c1e5b2d8046aa91"


def test_a_key_the_run_resolved_is_masked_in_every_protocol(plait_fake_server, tmp_path, monkeypatch):  # noqa: F811
    monkeypatch.setenv(FAKE_KEY_ENV, SECRET)
    for _ in range(3):  # one run per protocol: the model calls the tool, then answers
        plait_fake_server.push({"tool_calls": [{"name": "peek", "arguments": {"what": "key"}}]}, {"text": "done"})
    (tmp_path / "vault.plait").write_text(VAULT.format(url=plait_fake_server.base_url("openai"), env=FAKE_KEY_ENV))
    (tmp_path / "vault_tools.py").write_text(VAULT_TOOLS)

    async def a2a_and_mcp(base):
        seen = []
        async with httpx.AsyncClient(headers=AUTH, timeout=60) as http:
            seen.append((await http.get(f"{base}/.well-known/agent-card.json")).text)
            client = await create_client(base, ClientConfig(httpx_client=http, streaming=True))
            request = SendMessageRequest(message=new_message([new_text_part("open it")], role=Role.ROLE_USER))
            seen.extend([MessageToJson(r) async for r in client.send_message(request)])
        async with httpx2.AsyncClient(headers=AUTH, timeout=60) as http2:
            async with Client(streamable_http_client(f"{base}/mcp", http_client=http2), mode="auto") as mcp:
                seen.append((await mcp.list_tools()).model_dump_json())
                seen.append((await mcp.call_tool("main", {"input": "open it"})).model_dump_json())
        return seen

    with serving([tmp_path / "vault.plait"], mcp=True) as base:
        seen = asyncio.run(a2a_and_mcp(base))
        run_id = httpx.post(f"{base}/runs?wait=30s", json={"spec": "vault", "input": "x"}, headers=AUTH).json()["id"]
        with httpx.stream("GET", f"{base}/runs/{run_id}/events?format=ag-ui", headers=AUTH, timeout=60) as stream:
            seen.append("".join(stream.iter_text()))
    everything = "\n".join(seen)
    # The tool's result reached a client (AG-UI's TOOL_CALL_RESULT), masked: the check below is not vacuous.
    assert "the key is <redacted>" in everything and "done" in everything
    assert SECRET not in everything
