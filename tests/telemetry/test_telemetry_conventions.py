"""A traced run against the GenAI semantic conventions as the conventions package publishes them, not as
src/plait/runtime/telemetry.py spells them: every `gen_ai.*` attribute a span carries is one the registry defines, every
`gen_ai.operation.name` is one of its operations, and each span is named `{operation} {what}` from the attribute
the conventions name it by.

The registry is `opentelemetry-semantic-conventions` (installed with opentelemetry-sdk, so with the `otel`
extra), which publishes the development-stability GenAI conventions under `opentelemetry.semconv._incubating`.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from types import ModuleType

import pytest
from opentelemetry.semconv._incubating.attributes import code_attributes, gen_ai_attributes
from opentelemetry.semconv.attributes import error_attributes
from telemetry_helpers import memory_provider

import plait
from plait.runtime.telemetry import CAPTURE_ENV

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

#: operation → the attribute whose value completes the span name, per the conventions' span definitions.
SPAN_NAMED_BY = {
    "invoke_workflow": "gen_ai.workflow.name",
    "invoke_agent": "gen_ai.agent.name",
    "chat": "gen_ai.request.model",
    "execute_tool": "gen_ai.tool.name",
}


def _defined(module: ModuleType) -> set[str]:
    return {v for k, v in vars(module).items() if k.isupper() and isinstance(v, str) and "." in v}


def _operations() -> set[str]:
    return {member.value for member in gen_ai_attributes.GenAiOperationNameValues}


@pytest.fixture(scope="module")
def spans(tmp_path_factory):
    """Every span of the briefing example (agents, a delegated agent, tools, parallel branches), content captured."""
    folder = tmp_path_factory.mktemp("conventions")
    shutil.copytree(EXAMPLES / "briefing", folder / "briefing")
    provider, exporter = memory_provider()
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(CAPTURE_ENV, "true")
        result = plait.run(folder / "briefing" / "briefing.plait", "the Lisbon office move", tracer_provider=provider)
    assert result.stop_reason == "done"
    return exporter.get_finished_spans()


def test_every_gen_ai_attribute_is_one_the_registry_defines(spans):
    known = _defined(gen_ai_attributes) | _defined(code_attributes) | _defined(error_attributes)
    emitted = {key for span in spans for key in span.attributes or {} if not key.startswith("plait.")}
    assert {"gen_ai.workflow.name", "gen_ai.agent.name", "gen_ai.tool.name", "gen_ai.input.messages"} <= emitted
    assert emitted - known == set()


def test_every_operation_is_one_of_the_registrys_and_names_its_span(spans):
    operations = _operations()
    seen = set()
    for span in spans:
        attributes = span.attributes or {}
        operation = attributes.get("gen_ai.operation.name")
        if operation is None:
            assert span.name.split(" ", 1)[0] not in operations, span.name  # a plait element span
            continue
        assert operation in operations, span.name
        seen.add(operation)
        assert span.name == f"{operation} {attributes[SPAN_NAMED_BY[operation]]}"
    assert seen == set(SPAN_NAMED_BY)
