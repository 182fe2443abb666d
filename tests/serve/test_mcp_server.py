"""The served specs' entries as MCP tools, driven by the MCP SDK's client: streamable HTTP (`plait serve --mcp`)
and stdio (`plait mcp serve SPEC`)."""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("mcp")
pytest.importorskip("uvicorn")

import httpx2  # noqa: E402
from mcp import Client, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402
from protocol_server import TOKEN, serving, write_specs  # noqa: E402

pytestmark = pytest.mark.slow

AUTH = {"Authorization": f"Bearer {TOKEN}"}


async def over_http(base: str, calls: list[tuple[str, dict]]):
    async with httpx2.AsyncClient(headers=AUTH, timeout=httpx2.Timeout(30.0, read=120.0)) as http:
        async with Client(streamable_http_client(f"{base}/mcp", http_client=http), mode="auto") as client:
            tools = (await client.list_tools()).tools
            results = [await client.call_tool(name, arguments) for name, arguments in calls]
    return tools, results


def test_each_entry_is_a_tool_with_its_input_and_output_schema_over_streamable_http(tmp_path):
    specs = write_specs(tmp_path, "triage", "grade")
    calls = [("grade.grade", {"input": "42"}), ("triage.main", {"ticket": "broken", "customer": "Ann"})]
    with serving(specs, mcp=True) as base:
        tools, (graded, waiting) = asyncio.run(over_http(base, calls))
        refused = httpx2.post(f"{base}/mcp", json={}).status_code
    by_name = {t.name: t for t in tools}
    assert set(by_name) == {"grade.grade", "triage.main"}
    assert by_name["grade.grade"].input_schema["properties"] == {"input": {"type": "string"}}
    assert by_name["grade.grade"].output_schema["properties"]["verdict"]["enum"] == ["accept", "revise"]
    assert by_name["triage.main"].input_schema["required"] == ["ticket", "customer"]
    assert by_name["triage.main"].output_schema is None
    assert not graded.is_error and graded.structured_content == {"verdict": "accept", "score": 9}
    # A run that waits for a person is an error naming the run and how to answer it; the run waits in the journal.
    assert waiting.is_error
    text = waiting.content[0].text
    run_id = re.search(r"run (\S+) is waiting for a person", text).group(1)
    assert "ask `confirm`: Send this reply?" in text and f"`plait resume {run_id}`" in text
    assert refused == 401


def test_a_bad_argument_is_a_tool_error_naming_the_field(tmp_path):
    specs = write_specs(tmp_path, "triage")
    with serving(specs, mcp=True) as base:
        _, [bad] = asyncio.run(over_http(base, [("main", {"ticket": "broken"})]))
    assert bad.is_error and "customer" in bad.content[0].text


def test_plait_mcp_serve_speaks_stdio_and_a_waiting_run_resumes_with_plait_resume(tmp_path: Path):
    [spec] = write_specs(tmp_path, "triage")

    async def go():
        params = StdioServerParameters(command=sys.executable, args=["-m", "plait", "mcp", "serve", str(spec)])
        with open(tmp_path / "stderr.txt", "w") as errlog:
            async with Client(stdio_client(params, errlog=errlog), mode="auto") as client:
                tools = (await client.list_tools()).tools
                waiting = await client.call_tool("main", {"ticket": "broken", "customer": "Ann"})
        return tools, waiting

    tools, waiting = asyncio.run(go())
    assert [t.name for t in tools] == ["main"]
    run_id = re.search(r"run (\S+) is waiting for a person", waiting.content[0].text).group(1)
    resumed = subprocess.run(
        [sys.executable, "-m", "plait", "resume", run_id, "--answer", 'confirm={"decision": "send"}'],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert resumed.returncode == 0, resumed.stderr
    assert "sent" in resumed.stdout


def test_plait_mcp_serve_refuses_a_missing_spec_in_one_line(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "plait", "mcp", "serve", str(tmp_path / "nope.plait")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.strip() == f"plait mcp serve: no such spec: {tmp_path / 'nope.plait'}"


def test_plait_mcp_serve_prints_a_broken_spec_s_diagnostics_on_stderr_and_exits_1(tmp_path):
    spec = tmp_path / "bad.plait"
    spec.write_text("plait 0.2\nagent main { model = nope }\n")
    done = subprocess.run(
        [sys.executable, "-m", "plait", "mcp", "serve", str(spec)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 1 and done.stdout == ""
    assert "error[P101]: undefined name `nope`" in done.stderr and "Traceback" not in done.stderr
