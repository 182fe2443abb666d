"""An MCP tool call is an `execute_tool` span like any tool's: the server's description of the tool, the
`mcp` declaration's file and line, and an error status when the tool reports an error."""

from __future__ import annotations

import asyncio
import json
import sys

import pytest

pytest.importorskip("mcp")
pytest.importorskip("opentelemetry.sdk")

from mcp_helpers import FLAKY, locked_spec, new_marker  # noqa: E402

from plait.runtime.engine import Engine  # noqa: E402
from plait.runtime.telemetry import attach  # noqa: E402

pytestmark = pytest.mark.slow


def test_mcp_tool_spans_link_to_the_mcp_declaration(tmp_path, capsys):
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    command = [sys.executable, str(FLAKY), f"--marker={new_marker()}"]
    calls = [{"name": "echo", "arguments": {"text": "hi"}}, {"name": "fail", "arguments": {"reason": "no"}}]
    mcp = f"mcp flaky {{ command = {json.dumps(command)} }}"
    spec = locked_spec(tmp_path, "spec", [{"tool_calls": calls}, {"text": "done"}], mcp, "flaky.echo, flaky.fail")
    capsys.readouterr()
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))

    async def go() -> None:
        engine = Engine.from_spec(spec)
        try:
            run = engine.start("go")
            attach(run, provider)
            assert (await run).output == "done"
        finally:
            await engine.aclose()

    asyncio.run(go())
    spans = exporter.get_finished_spans()
    (echo,) = [s for s in spans if s.name == "execute_tool echo"]
    assert echo.attributes["gen_ai.tool.description"] == "Say the text back."
    assert echo.attributes["code.file.path"] == str(spec)
    assert echo.attributes["code.line.number"] == 3  # the `mcp flaky` line
    (fail,) = [s for s in spans if s.name == "execute_tool fail"]
    assert fail.status.status_code.name == "ERROR"
