"""The `--otel` flag and the OTEL_* environment → whether a run is traced, and the provider that exports its spans.

Deciding costs no import: `opentelemetry` is loaded only once tracing is on.
The exporter is OTLP over HTTP (protobuf); it reads the standard variables
itself (OTEL_EXPORTER_OTLP_[TRACES_]ENDPOINT, _HEADERS, _TIMEOUT...), and
the resource reads OTEL_SERVICE_NAME / OTEL_RESOURCE_ATTRIBUTES.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Mapping
from typing import Any

__all__ = ["ENDPOINT_VARS", "INSTALL_HINT", "exporting_provider", "missing", "requested"]

ENDPOINT_VARS = ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
INSTALL_HINT = "tracing needs the otel extra: pip install -e '.[otel]' in plait's clone"
_NEEDED = ("opentelemetry.sdk", "opentelemetry.exporter.otlp.proto.http")


def requested(flag: bool, env: Mapping[str, str] | None = None) -> bool:
    """`--otel`, or an OTLP endpoint in the environment; OTEL_SDK_DISABLED=true turns both off."""
    env = os.environ if env is None else env
    if env.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    return flag or any(env.get(name, "").strip() for name in ENDPOINT_VARS)


def missing() -> str | None:
    """Why tracing cannot run here (the extra is not installed), or None."""
    for module in _NEEDED:
        try:
            found = importlib.util.find_spec(module)
        except (ImportError, ValueError):
            found = None
        if found is None:
            return INSTALL_HINT
    return None


def exporting_provider() -> Any:
    """A TracerProvider that batches spans to the OTLP/HTTP endpoint the environment names (default localhost:4318)."""
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    named = os.environ.get("OTEL_SERVICE_NAME") or "service.name=" in os.environ.get("OTEL_RESOURCE_ATTRIBUTES", "")
    attrs = {} if named else {"service.name": "plait"}
    provider = TracerProvider(resource=Resource.create(attrs))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    return provider
