"""`plait run` of an example exports its spans over OTLP/HTTP to a real endpoint on loopback (a small server here
that decodes the protobuf payload), and a run without tracing never imports `opentelemetry`."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


class Collector:
    """An OTLP/HTTP trace receiver: POST /v1/traces with a protobuf ExportTraceServiceRequest."""

    def __init__(self) -> None:
        self.requests: list[ExportTraceServiceRequest] = []
        self.paths: list[str] = []
        collector = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (the http.server protocol)
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                collector.paths.append(self.path)
                request = ExportTraceServiceRequest()
                request.ParseFromString(body)
                collector.requests.append(request)
                reply = ExportTraceServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def spans(self) -> list[tuple[object, object]]:
        return [
            (resource, span)
            for request in self.requests
            for resource in request.resource_spans
            for scope in resource.scope_spans
            for span in scope.spans
        ]

    def __enter__(self) -> "Collector":
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    env.update(extra)
    return env


def _attrs(span) -> dict[str, object]:
    out: dict[str, object] = {}
    for kv in span.attributes:
        value = kv.value
        kind = value.WhichOneof("value")
        out[kv.key] = (
            list(v.string_value for v in value.array_value.values) if kind == "array_value" else getattr(value, kind)
        )
    return out


@pytest.mark.slow
def test_plait_run_exports_the_examples_spans_over_otlp_http(tmp_path):
    shutil.copytree(EXAMPLES / "briefing", tmp_path / "briefing")
    spec = tmp_path / "briefing" / "briefing.plait"
    with Collector() as collector:
        done = subprocess.run(
            [sys.executable, "-m", "plait", "run", str(spec), "--input", "the Lisbon office move", "--otel"],
            env=_env(OTEL_EXPORTER_OTLP_ENDPOINT=collector.url),
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert done.returncode == 0, done.stderr
    assert "Lisbon" in done.stdout
    assert collector.paths and set(collector.paths) == {"/v1/traces"}
    spans = collector.spans()
    names = [span.name for _, span in spans]
    assert "invoke_workflow main" in names and "invoke_agent writer" in names and "chat strong" in names
    resource = {kv.key: kv.value.string_value for kv in spans[0][0].resource.attributes}
    assert resource["service.name"] == "plait"
    by_id = {span.span_id: span for _, span in spans}
    [writer] = [span for _, span in spans if span.name == "invoke_agent writer"]
    assert by_id[writer.parent_span_id].name == "chain main"
    attrs = _attrs(writer)
    assert attrs["code.file.path"] == str(spec)
    assert attrs["code.line.number"] == 46
    [submit] = [span for _, span in spans if span.name == "execute_tool submit_report"]
    assert _attrs(submit)["gen_ai.tool.name"] == "submit_report"
    assert len({span.trace_id for _, span in spans}) == 1


@pytest.mark.slow
def test_an_endpoint_in_the_environment_is_enough_and_otel_sdk_disabled_wins(tmp_path):
    shutil.copytree(EXAMPLES / "triage", tmp_path / "triage")
    spec = tmp_path / "triage" / "triage.plait"
    argv = [sys.executable, "-m", "plait", "run", str(spec), "--input-file", str(tmp_path / "triage" / "ticket.json")]
    with Collector() as collector:
        done = subprocess.run(
            argv,
            env=_env(OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=f"{collector.url}/v1/traces"),
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        assert "route triage" in [span.name for _, span in collector.spans()]
        before = len(collector.requests)
        done = subprocess.run(
            [*argv, "--otel"],
            env=_env(OTEL_EXPORTER_OTLP_ENDPOINT=collector.url, OTEL_SDK_DISABLED="true"),
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        assert len(collector.requests) == before


PROBE = """
import json, sys
from plait.cli import main
code = main(["run", sys.argv[1], "--input", "the Lisbon office move"])
print(json.dumps({"code": code, "otel": sorted(m for m in sys.modules if m.split(".")[0] == "opentelemetry")}))
"""


@pytest.mark.slow
def test_a_run_without_tracing_imports_no_opentelemetry_module(tmp_path):
    shutil.copytree(EXAMPLES / "briefing", tmp_path / "briefing")
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(tmp_path / "briefing" / "briefing.plait")],
        env=_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report == {"code": 0, "otel": []}
