"""Helpers for the telemetry tests: an in-memory tracer provider and a spec written to a folder with its replies."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter


def memory_provider() -> tuple[TracerProvider, InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider, exporter


def write_spec(folder: Path, text: str, replies: dict[str, Any], tools: str | None = None) -> Path:
    (folder / "replies.json").write_text(json.dumps(replies), encoding="utf-8")
    if tools is not None:
        (folder / "spec_tools.py").write_text(tools, encoding="utf-8")
    spec = folder / "spec.plait"
    spec.write_text(text, encoding="utf-8")
    return spec


def line_of(spec: Path, needle: str) -> int:
    """The 1-based line of the first line of `spec` that starts with `needle`."""
    for number, line in enumerate(spec.read_text(encoding="utf-8").splitlines(), 1):
        if line.startswith(needle):
            return number
    raise AssertionError(f"{needle!r} not in {spec}")


def named(spans: tuple[ReadableSpan, ...] | list[ReadableSpan], name: str) -> list[ReadableSpan]:
    return [s for s in spans if s.name == name]


def parent_of(spans: tuple[ReadableSpan, ...] | list[ReadableSpan], span: ReadableSpan) -> ReadableSpan | None:
    if span.parent is None:
        return None
    return next((s for s in spans if s.context.span_id == span.parent.span_id), None)
