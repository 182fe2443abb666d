"""A traced run's spans (in-memory exporter): GenAI names and attributes, parentage along the spec's composition,
the declaration's file and line on every span, errors as ERROR status with the error kind, content only on opt-in."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from telemetry_helpers import line_of, memory_provider, named, parent_of, write_spec

import plait
from plait.runtime.telemetry import CAPTURE_ENV

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.fixture(autouse=True)
def _no_opt_in(monkeypatch):
    monkeypatch.delenv(CAPTURE_ENV, raising=False)


def traced(spec, input, **options):
    provider, exporter = memory_provider()
    result = plait.run(spec, input, tracer_provider=provider, raise_on_error=False, **options)
    return result, exporter.get_finished_spans()


def briefing(tmp_path):
    shutil.copytree(EXAMPLES / "briefing", tmp_path / "briefing")
    return tmp_path / "briefing" / "briefing.plait"


def test_the_briefing_run_is_one_trace_shaped_like_the_spec(tmp_path):
    spec = briefing(tmp_path)
    result, spans = traced(spec, "the Lisbon office move")
    assert result.stop_reason == "done"
    assert len({s.context.trace_id for s in spans}) == 1
    [root] = [s for s in spans if s.parent is None]
    assert root.name == "invoke_workflow main" and root.attributes["gen_ai.operation.name"] == "invoke_workflow"
    [chain] = named(spans, "chain main")
    [writer] = named(spans, "invoke_agent writer")
    [parallel] = named(spans, "parallel main/parallel#1")
    [verdict] = named(spans, "consolidate verdict")
    assert parent_of(spans, chain) is root
    assert parent_of(spans, writer) is chain and parent_of(spans, parallel) is chain
    assert parent_of(spans, verdict) is parallel
    assert {parent_of(spans, s).name for s in named(spans, "invoke_agent optimist")} == {"consolidate verdict"}
    # A delegated agent runs inside the tool call that delegated to it.
    [delegation] = named(spans, "execute_tool researcher")
    [researcher] = named(spans, "invoke_agent researcher")
    assert parent_of(spans, delegation) is writer and parent_of(spans, researcher) is delegation
    assert {parent_of(spans, s).name for s in named(spans, "execute_tool lookup")} == {"invoke_agent researcher"}
    # An element span covers its children.
    assert chain.start_time <= writer.start_time and writer.end_time <= chain.end_time


def test_chat_spans_carry_the_gen_ai_attributes(tmp_path):
    spec = briefing(tmp_path)
    _, spans = traced(spec, "the Lisbon office move")
    writer_chats = [s for s in named(spans, "chat strong") if parent_of(spans, s).name == "invoke_agent writer"]
    assert len(writer_chats) == 2
    first = writer_chats[0].attributes
    assert first["gen_ai.operation.name"] == "chat"
    assert first["gen_ai.provider.name"] == "scripted"
    assert first["gen_ai.request.model"] == "strong"
    assert first["gen_ai.response.model"] == "strong"
    assert first["gen_ai.response.finish_reasons"] == ("tool_calls",)
    assert first["gen_ai.usage.input_tokens"] > 0 and first["gen_ai.usage.output_tokens"] > 0
    [writer] = named(spans, "invoke_agent writer")
    assert writer.attributes["gen_ai.agent.name"] == "writer"
    assert writer.attributes["gen_ai.agent.description"] == "Write the briefing."
    [submit] = named(spans, "execute_tool submit_report")
    assert submit.attributes["gen_ai.tool.name"] == "submit_report"
    assert submit.attributes["gen_ai.tool.call.id"]
    assert submit.attributes["gen_ai.operation.name"] == "execute_tool"


def test_every_span_names_the_line_of_its_declaration(tmp_path):
    spec = briefing(tmp_path)
    _, spans = traced(spec, "the Lisbon office move")
    expected = {
        "invoke_workflow main": "chain main",
        "chain main": "chain main",
        "invoke_agent writer": "agent writer",
        "execute_tool submit_report": "tool submit_report",
        "execute_tool lookup": "tool lookup",
        "consolidate verdict": "consolidate verdict",
        "chat strong": "model strong",  # an agent's model call links to the model that served it
    }
    for span_name, declaration in expected.items():
        for span in named(spans, span_name):
            assert span.attributes["code.file.path"] == str(spec), span_name
            assert span.attributes["code.line.number"] == line_of(spec, declaration), span_name
    # A one-shot step's call is the step's own span: it links to the step.
    translate = [s for s in named(spans, "chat fast") if parent_of(spans, s).name == "parallel main/parallel#1"]
    assert [s.attributes["code.line.number"] for s in translate] == [line_of(spec, "step translate")]
    assert all("code.file.path" in s.attributes for s in spans)


SPEC_02 = """plait 0.2

model fast = "scripted/fast" { script = "replies.json" }

step plan {
  model  = fast
  prompt = "Plan {{input}}"
  output {
    kind: "a" | "b"
    items: list[string]
  }
}

step write {
  model  = fast
  prompt = "Write {{input}}"
}

map each = write { over = input.items }

route pick on input.kind {
  "a" -> each
  else -> write
}

chain main = plan -> pick
"""


def test_route_and_map_elements_are_parent_spans(tmp_path):
    replies = {
        "plan": [{"output": {"kind": "a", "items": ["x", "y"]}}],
        "write": [{"text": "wrote x"}, {"text": "wrote y"}],
    }
    spec = write_spec(tmp_path, SPEC_02, replies)
    result, spans = traced(spec, "things")
    assert result.stop_reason == "done", result.error
    [route] = named(spans, "route pick")
    [mapped] = named(spans, "map each")
    assert parent_of(spans, route).name == "chain main" and parent_of(spans, mapped) is route
    assert route.attributes["plait.route.target"] == "each"
    writes = [s for s in spans if s.attributes.get("code.line.number") == line_of(spec, "step write")]
    assert len(writes) == 2 and all(parent_of(spans, s) is mapped for s in writes)
    assert mapped.attributes["code.line.number"] == line_of(spec, "map each")


def test_a_loop_is_a_parent_span_with_its_iteration_count(tmp_path):
    shutil.copytree(EXAMPLES / "polish", tmp_path / "polish")
    _, spans = traced(tmp_path / "polish" / "polish.plait", "My order arrived broken.")
    [loop] = named(spans, "loop polish")
    children = [s for s in spans if parent_of(spans, s) is loop]
    assert len(children) == 4 and loop.attributes["plait.loop.iterations"] == 2


BREAK_SPEC = """plait 0.3

model fast = "scripted/fast" { script = "replies.json" }

step review { model = fast, prompt = "Grade {{input}}", output { verdict: "accept" | "revise" } }
step note { model = fast, prompt = "Note {{input}}" }

route gate on input.verdict {
  "accept" -> break
  "revise" -> note
}

loop polish = review -> gate { max_iterations = 3 }
"""


def test_a_loop_left_by_break_says_so_on_its_span_and_the_routes(tmp_path):
    replies = {
        "review": [{"output": {"verdict": "revise"}}, {"output": {"verdict": "accept"}}],
        "note": [{"text": "n"}],
    }
    result, spans = traced(write_spec(tmp_path, BREAK_SPEC, replies), "a draft")
    assert result.stop_reason == "done", result.error
    [loop] = named(spans, "loop polish")
    assert loop.attributes["plait.loop.iterations"] == 2 and loop.attributes["plait.loop.exit"] == "break"
    first, second = named(spans, "route gate")
    assert first.attributes["plait.route.target"] == "note" and "plait.route.leaves" not in first.attributes
    assert second.attributes["plait.route.leaves"] == "polish" and "plait.route.target" not in second.attributes


AGENT_SPEC = """plait 0.1

model m = "scripted/m" { script = "replies.json" }

tool explode "Always fails." {
  run = python("spec_tools:explode")
}

agent helper "Helps." {
  model = m
  tools = [explode]
  label = "Helper Bot"
  source = "team-support"
  attributes = { tier = "gold", priority = 2 }
}

chain main = helper
"""

TOOLS = """def explode() -> str:
    raise RuntimeError("kaboom")
"""


def test_agent_label_source_and_attributes_reach_its_span_and_a_failing_tool_is_an_error(tmp_path):
    replies = {"helper": [{"tool_calls": [{"name": "explode", "arguments": {}}]}, {"text": "sorry"}]}
    spec = write_spec(tmp_path, AGENT_SPEC, replies, TOOLS)
    result, spans = traced(spec, "help me")
    assert result.stop_reason == "done", result.error
    [agent] = named(spans, "invoke_agent Helper Bot")
    assert agent.attributes["gen_ai.agent.name"] == "Helper Bot"
    assert agent.attributes["plait.agent.source"] == "team-support"
    assert agent.attributes["tier"] == "gold" and agent.attributes["priority"] == 2
    [tool] = named(spans, "execute_tool explode")
    assert tool.status.status_code.name == "ERROR" and tool.attributes["error.type"] == "tool_error"
    assert agent.status.status_code.name == "UNSET"


def test_a_failed_model_call_marks_its_spans_up_to_the_run_with_the_error_kind(tmp_path):
    replies = {"helper": []}  # the script runs dry on the first call
    spec = write_spec(tmp_path, AGENT_SPEC, replies, TOOLS)
    result, spans = traced(spec, "help me")
    assert result.stop_reason == "error"
    kind = result.error.kind
    for name in ("chat m", "invoke_agent Helper Bot", "chain main", "invoke_workflow main"):
        [span] = named(spans, name)
        assert span.status.status_code.name == "ERROR", name
        assert span.attributes["error.type"] == kind, name


def test_message_content_is_recorded_only_when_the_user_opts_in(tmp_path, monkeypatch):
    spec = briefing(tmp_path)
    content_keys = (
        "gen_ai.input.messages",
        "gen_ai.output.messages",
        "gen_ai.tool.call.arguments",
        "gen_ai.tool.call.result",
    )
    _, spans = traced(spec, "the Lisbon office move")
    assert not [k for s in spans for k in s.attributes if k in content_keys]
    assert not [s for s in spans for v in s.attributes.values() if isinstance(v, str) and "Lisbon office move" in v]

    monkeypatch.setenv(CAPTURE_ENV, "true")
    _, spans = traced(briefing(tmp_path / "again"), "the Lisbon office move")
    [writer] = named(spans, "invoke_agent writer")
    assert "the Lisbon office move" in writer.attributes["gen_ai.input.messages"]
    [lookup] = named(spans, "execute_tool lookup")
    assert '"topic"' in lookup.attributes["gen_ai.tool.call.arguments"]
    assert "Avenida da Liberdade" in lookup.attributes["gen_ai.tool.call.result"]
    [root] = [s for s in spans if s.parent is None]
    assert "gen_ai.output.messages" in root.attributes


FALLBACK_SPEC = """plait 0.1

model primary = "scripted/primary" { script = "replies.json" }
model backup = "scripted/backup" { script = "backup.json" }

agent helper {
  model = primary
  fallback = [backup]
}
"""


def test_a_call_a_fallback_answered_is_named_after_the_model_that_served_it(tmp_path):
    spec = write_spec(tmp_path, FALLBACK_SPEC, {"helper": [{"error": {"kind": "rate_limit", "message": "slow down"}}]})
    (tmp_path / "backup.json").write_text('{"helper": [{"text": "from the backup"}]}', encoding="utf-8")
    result, spans = traced(spec, "hi")
    assert result.output == "from the backup", result.error
    [chat] = [s for s in spans if s.name.startswith("chat ")]
    assert chat.name == "chat backup"
    assert chat.attributes["gen_ai.request.model"] == "backup" and chat.attributes["plait.model"] == "backup"
    assert chat.attributes["code.line.number"] == line_of(spec, "model backup")


def test_a_provider_error_kind_is_the_error_type(tmp_path):
    replies = {"helper": [{"error": {"kind": "rate_limit", "message": "slow down"}}]}
    spec = write_spec(tmp_path, FALLBACK_SPEC.replace("  fallback = [backup]\n", ""), replies)
    (tmp_path / "backup.json").write_text('{"helper": []}', encoding="utf-8")
    result, spans = traced(spec, "hi")
    assert result.stop_reason == "error"
    [chat] = named(spans, "chat primary")
    [agent] = named(spans, "invoke_agent helper")
    assert chat.attributes["error.type"] == agent.attributes["error.type"] == "rate_limit"
    assert chat.status.status_code.name == "ERROR" and chat.status.description == result.error.message
