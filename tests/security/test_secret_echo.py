"""A key the run read with `env()`, echoed back by a server's error body → `<redacted>` in every sink.

The key here matches no format of the secret catalogue (src/plait/core/redact.py): only the run's own record of the values it
resolved (src/plait/runtime/secret_values.py) can hide it. The sinks: stderr, `--json`, `--events`, `plait trace` (text and
JSON), `plait runs export`, the journal's files, the OpenTelemetry span status, and what a tool hands the model.
"""

from __future__ import annotations

import asyncio
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

import plait
from plait.cli import main
from plait.runtime import secret_values
from plait.runtime.function_tool import FunctionTool
from plait.runtime.mcp.server import resolve
from plait.runtime.providers.base import ProviderError
from plait.runtime.tools import ToolRunner

#: Random-looking but of no known format: no catalogue pattern hides it.
KEY = "q7Vw2Lz9Kx4Pb8Nm3Rt6"


class _Echo(BaseHTTPRequestHandler):
    """Every request fails with a body quoting the credentials it was sent, as some servers do."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length") or 0))
        sent = self.headers.get("authorization") or self.headers.get("x-api-key") or ""
        body = json.dumps({"error": {"message": f"key rejected: {sent}", "type": "invalid_request_error"}}).encode()
        self.send_response(400)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args) -> None:
        pass


@pytest.fixture()
def echo():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Echo)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield httpd.server_address[1]
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture()
def spec(tmp_path, echo, monkeypatch) -> Path:
    monkeypatch.setenv("ECHOED_KEY", KEY)
    path = tmp_path / "spec.plait"
    path.write_text(
        f'model m = "openai-compatible/x" {{ base_url = "http://127.0.0.1:{echo}/v1", api_key = env("ECHOED_KEY") }}\n'
        "agent main { model = m }\n"
    )
    return path


def _run(capsys, *argv: str) -> str:
    main(list(argv))
    out, err = capsys.readouterr()
    return out + err


def _run_id(tmp_path: Path, capsys) -> str:
    main(["runs", "--dir", str(tmp_path), "--json"])
    listed = json.loads(capsys.readouterr().out.splitlines()[0])  # one run per line, or one list
    return (listed[0] if isinstance(listed, list) else listed)["id"]


def test_an_echoed_key_reaches_no_sink_of_the_cli(spec, tmp_path, capsys):
    shown = _run(capsys, "run", str(spec), "--input", "hi", "--json")
    assert "key rejected: Bearer <redacted>" in shown  # the server's words are kept, the key is not
    shown += _run(capsys, "run", str(spec), "--input", "hi", "--events")
    shown += _run(capsys, "run", str(spec), "--input", "hi")
    run_id = _run_id(tmp_path, capsys)
    shown += _run(capsys, "trace", run_id, "--dir", str(tmp_path))
    shown += _run(capsys, "trace", run_id, "--dir", str(tmp_path), "--json")
    shown += _run(capsys, "runs", "export", run_id, "--dir", str(tmp_path))
    assert "key rejected" in shown and KEY not in shown
    stored = b"".join(f.read_bytes() for f in (tmp_path / ".plait").rglob("*") if f.is_file())
    assert stored and KEY.encode() not in stored


@pytest.fixture()
def replying(tmp_path, monkeypatch):
    """A spec whose model (plait's fake server on loopback) answers every call with a reply quoting the key."""
    from plait.runtime.providers.fake import FakeServer

    monkeypatch.setenv("ECHOED_KEY", KEY)
    server = FakeServer()
    server.start()
    try:
        for _ in range(4):
            server.push({"text": f"your key is {KEY}, keep it safe"})
        path = tmp_path / "spec.plait"
        path.write_text(
            f'model m = "openai-compatible/x" {{ base_url = "{server.base_url("openai")}", api_key = env("ECHOED_KEY") }}\n'
            "agent main { model = m }\n"
        )
        (tmp_path / "rows.jsonl").write_text('"hi"\n')
        yield path
    finally:
        server.stop()


def test_a_reply_quoting_the_key_is_masked_in_the_output_the_cli_prints(replying, tmp_path, capsys):
    # The journal, --events and trace masked it already; the output printed on stdout, in --json and by batch did not.
    shown = _run(capsys, "run", str(replying), "--input", "hi")
    assert "your key is <redacted>, keep it safe" in shown
    as_json = _run(capsys, "run", str(replying), "--input", "hi", "--json")
    assert json.loads(as_json.splitlines()[0])["output"] == "your key is <redacted>, keep it safe"
    batch = _run(capsys, "batch", str(replying), str(tmp_path / "rows.jsonl"))
    assert json.loads(batch.splitlines()[0])["output"] == "your key is <redacted>, keep it safe"
    shown += as_json + batch + _run(capsys, "run", str(replying), "--input", "hi", "--events")
    assert KEY not in shown
    stored = b"".join(f.read_bytes() for f in (tmp_path / ".plait").rglob("*") if f.is_file())
    assert stored and KEY.encode() not in stored


def test_an_echoed_key_is_not_in_the_span_status(spec):
    pytest.importorskip("opentelemetry.sdk")
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    with pytest.raises(ProviderError) as raised:  # plait.run raises the run's error
        plait.run(spec, "hi", tracer_provider=provider)
    assert KEY not in str(raised.value)
    statuses = [s.status.description or "" for s in exporter.get_finished_spans()]
    assert any("key rejected" in d for d in statuses)
    assert not any(KEY in d for d in statuses)
    everything = json.dumps([json.loads(s.to_json()) for s in exporter.get_finished_spans()])
    assert KEY not in everything


def test_a_provider_error_is_masked_where_it_is_created(monkeypatch):
    monkeypatch.setenv("ECHOED_KEY", KEY)
    from plait.core.kinds import ModelNode
    from plait.runtime.providers.keys import resolve_key

    resolve_key(ModelNode(name="m", provider="openai", model_id="x", api_key_env="ECHOED_KEY"))
    error = ProviderError("auth", f"bad key {KEY}")
    assert KEY not in str(error) and KEY not in repr(error) and "<redacted>" in error.message


def test_mcp_env_and_header_values_are_masked_in_what_a_tool_hands_the_model(monkeypatch):
    other = "mcp-Zq3Wx8Lv1Nt5Bb7Yc"
    monkeypatch.setenv("TRACKER_TOKEN", other)
    assert resolve("tracker", "header", {"Authorization": {"env": "TRACKER_TOKEN"}}) == {"Authorization": other}

    def fails() -> str:
        raise RuntimeError(f"server said: token {other} is expired")

    def quotes() -> str:
        return f"signed in with {other}"

    async def call(fn):
        runner = ToolRunner()
        try:
            return await runner.execute(FunctionTool(name="t", fn=fn), {}, 10)
        finally:
            await runner.aclose()

    outcome = asyncio.run(call(fails))
    assert outcome.is_error and "token <redacted> is expired" in outcome.content and other not in outcome.content
    outcome = asyncio.run(call(quotes))  # a result that quotes the value, not only an error
    assert not outcome.is_error and outcome.content == "signed in with <redacted>"


def test_short_values_are_not_remembered():
    before = secret_values.mask("a dev build")
    secret_values.remember("dev")
    assert secret_values.mask("a dev build") == before == "a dev build"


@pytest.mark.slow
def test_an_mcp_servers_stderr_quoting_its_env_value_is_masked_in_every_sink(tmp_path, monkeypatch, capsys):
    # A locked server that fails to start at run time, saying on stderr the token plait handed it with env().
    pytest.importorskip("mcp")
    token = "mcp-Hq4Rt7Wz2Lp9Xc5Vb"
    monkeypatch.setenv("TRACKER_TOKEN", token)
    flag = tmp_path / "fail"
    (tmp_path / "srv.py").write_text(
        "import os, sys\n"
        f"if os.path.exists({str(flag)!r}):\n"
        "    print(f\"fatal: token {os.environ['TRACKER_TOKEN']} rejected\", file=sys.stderr)\n"
        "    sys.exit(1)\n"
        "from mcp.server.mcpserver import MCPServer\n"
        "server = MCPServer('tracker')\n"
        "@server.tool()\n"
        "def echo(text: str) -> str:\n"
        "    return text\n"
        "server.run()\n"
    )
    (tmp_path / "replies.json").write_text(json.dumps([{"tool_calls": [{"name": "echo", "arguments": {"text": "a"}}]}]))
    spec = tmp_path / "spec.plait"
    spec.write_text(
        'model m = "scripted/demo" { script = "replies.json" }\n'
        f'mcp tracker "Tracker." {{ command = [{json.dumps(sys.executable)}, {json.dumps(str(tmp_path / "srv.py"))}],'
        ' env = { TRACKER_TOKEN = env("TRACKER_TOKEN") } }\n'
        "agent main { model = m, tools = [tracker] }\n"
    )
    assert main(["mcp", "lock", str(spec)]) == 0, capsys.readouterr()
    flag.touch()
    shown = _run(capsys, "run", str(spec), "--input", "hi") + _run(capsys, "run", str(spec), "--input", "hi", "--json")
    assert "fatal: token <redacted> rejected" in shown and token not in shown
    stored = b"".join(f.read_bytes() for f in (tmp_path / ".plait").rglob("*") if f.is_file())
    assert stored and token.encode() not in stored

    pytest.importorskip("opentelemetry.sdk")
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    with pytest.raises(Exception) as raised:
        plait.run(spec, "hi", tracer_provider=provider)
    assert "fatal: token <redacted> rejected" in str(raised.value) and token not in str(raised.value)
    spans = json.dumps([json.loads(s.to_json()) for s in exporter.get_finished_spans()])
    assert "<redacted> rejected" in spans and token not in spans
