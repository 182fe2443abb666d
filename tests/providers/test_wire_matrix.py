"""Every runnable kind that calls a model × every wire format → the request settings the server receives (issue 27).

Each case is a small spec whose runnable under test, `subject`, is served by
its own model `subject_model` (model id `subject`) on the loopback fake server;
everything else talks to `other`. The requests the server recorded for the id
`subject` must carry the settings, read from the HTTP body and headers in each
wire's own words: set on the runnable (which wins over its model's), and set
only on the model; for a step's and an agent's structured-output retry too;
buffered and streamed. A step's `max_tokens` once never reached the wire at all.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

import plait
from plait.runtime.providers.fake import FAKE_KEY_ENV, FakeServer

from conftest import FLAVOURS

pytestmark = pytest.mark.slow  # 290 runs against the loopback server

#: What the model declares in both modes, and what the runnable declares in "runnable" mode (it wins).
ON_MODEL = {"temperature": 0.3, "max_tokens": 33, "tool_choice": "required"}
ON_RUNNABLE = {"temperature": 0.7, "max_tokens": 77, "tool_choice": "lookup"}

_PROVIDER = {
    "openai": "openai",
    "openai-responses": "openai",
    "anthropic": "anthropic",
    "google": "google",
    "openai-compatible": "openai-compatible",
}

ANSWER = {"output": {"answer": "x"}}
VERDICT = {"text": '{"agreed": true, "summary": "agreed"}'}

TOOL = """
tool lookup "Look a word up." {
  run = http(GET, "https://example.com/{{q}}")
  params { q: string }
}
"""


class Case:
    """One runnable kind: its spec (SETTINGS marks where the runnable's own settings go), replies and input."""

    def __init__(
        self,
        spec: str,
        replies: dict[str, list[Any]],
        *,
        input: Any = "go",
        tools: bool = True,
        output: bool = True,
        runnable: bool = True,
    ) -> None:
        self.spec, self.replies, self.input = spec, replies, input
        #: Whether the subject has tools (then tool_choice applies), declares an `output`, and can carry settings.
        self.tools, self.output, self.runnable = tools, output, runnable


#: Where the runnable's own settings go in a case's spec.
SETTINGS = "@SETTINGS@"
AGENT = "agent subject { model = subject_model\n  tools = [lookup]\n  @SETTINGS@\n  output { answer: string }\n}\n"
STEP = 'step subject { model = subject_model\n  prompt = "go {{input}}"\n  @SETTINGS@\n  output { answer: string }\n}\n'

CASES: dict[str, Case] = {
    "agent": Case(TOOL + AGENT + "chain main = subject\n", {"subject": [ANSWER]}),
    "step": Case(STEP + "chain main = subject\n", {"subject": [ANSWER]}, tools=False),
    "consolidate_agent": Case(
        TOOL + AGENT + "agent peer { model = other }\nconsolidate main { agents = [subject, peer]\n judge = other\n"
        " rounds = 1 }\n",
        {"subject": [ANSWER], "other": [{"text": "peer"}, VERDICT]},
    ),
    "consolidate_judge_model": Case(
        "agent a { model = other }\nagent b { model = other }\n"
        "consolidate main { agents = [a, b]\n judge = subject_model\n rounds = 1 }\n",
        {"subject": [VERDICT], "other": [{"text": "a"}, {"text": "b"}]},
        tools=False,
        output=False,
        runnable=False,
    ),
    "consolidate_judge_agent": Case(
        TOOL + "agent subject { model = subject_model\n  tools = [lookup]\n  @SETTINGS@\n"
        "  output { agreed: bool, summary: string }\n}\n"
        "agent a { model = other }\nagent b { model = other }\n"
        "consolidate main { agents = [a, b]\n judge = subject\n rounds = 1 }\n",
        {"subject": [{"output": {"agreed": True, "summary": "s"}}], "other": [{"text": "a"}, {"text": "b"}]},
    ),
    "delegated_agent": Case(
        TOOL + AGENT + "agent boss { model = other\n  tools = [subject] }\nchain main = boss\n",
        {
            "subject": [ANSWER],
            "other": [{"tool_calls": [{"name": "subject", "arguments": {"task": "t"}}]}, {"text": "done"}],
        },
    ),
    "map_body": Case(
        "input { items: list[string] }\n" + STEP + "map main = subject { over = input.items\n concurrency = 1 }\n",
        {"subject": [ANSWER, ANSWER]},
        input={"items": ["a", "b"]},
        tools=False,
    ),
    "loop_body": Case(TOOL + AGENT + "loop main = subject { max_iterations = 2 }\n", {"subject": [ANSWER, ANSWER]}),
    "route_case": Case(
        'input { kind: "a" | "b" }\n'
        + STEP
        + 'step other_step { model = other\n prompt = "x" }\n'
        + 'route main on input.kind {\n  "a" -> subject\n  "b" -> other_step\n}\n',
        {"subject": [ANSWER]},
        input={"kind": "a"},
        tools=False,
    ),
    "structured_retry": Case(
        STEP.replace(SETTINGS, "retry_malformed = 1\n  " + SETTINGS) + "chain main = subject\n",
        {"subject": [{"text": "not JSON"}, ANSWER]},
        tools=False,
    ),
    "agent_structured_retry": Case(
        TOOL + AGENT.replace(SETTINGS, "retry_malformed = 1\n  " + SETTINGS) + "chain main = subject\n",
        {"subject": [{"text": "not JSON"}, ANSWER]},
    ),
    "fallback_model": Case(
        TOOL + "agent subject { model = broken\n  fallback = [subject_model]\n  tools = [lookup]\n  @SETTINGS@\n"
        "  output { answer: string }\n}\nchain main = subject\n",
        {"broken": [{"error": {"kind": "server_error"}}], "subject": [ANSWER]},
    ),
}


def _model(server: FakeServer, flavour: str, name: str, model_id: str, settings: dict[str, Any]) -> str:
    provider = _PROVIDER[flavour]
    lines = [f'base_url = "{server.base_url(provider)}"', f'api_key = env("{FAKE_KEY_ENV}")', "retries = 0"]
    if flavour == "openai-responses":
        lines.append('api = "responses"')
    lines += [f"{key} = {value}" for key, value in settings.items()]
    return f'model {name} = "{provider}/{model_id}" {{\n  ' + "\n  ".join(lines) + "\n}\n"


def _spec(server: FakeServer, flavour: str, case: Case, mode: str, extra: dict[str, Any] | None = None) -> str:
    on_model = dict(ON_MODEL)  # a model's tool_choice too: a call without tools must leave it out
    model_settings = {**on_model, "headers": '{ "x-matrix" = "subject" }', **(extra or {})}
    own = {k: v for k, v in ON_RUNNABLE.items() if k != "tool_choice" or case.tools} if mode == "runnable" else {}
    body = case.spec.replace(SETTINGS, "\n  ".join(f"{k} = {v}" for k, v in own.items()))
    return (
        _model(server, flavour, "subject_model", "subject", model_settings)
        + _model(server, flavour, "other", "other", {})
        + _model(server, flavour, "broken", "broken", {})
        + body
    )


def _run(server: FakeServer, text: str, case: Case, streamed: bool = False) -> Any:
    result = plait.compile(text)
    assert not result.errors, "\n".join(str(d) for d in result.errors)

    async def go() -> Any:
        run = plait.arun(text, case.input)
        try:
            if streamed:  # reading the events streams each call (the body a stream=True request builds)
                async for _ in run:
                    pass
            return await run
        finally:
            await run.engine.aclose()

    return asyncio.run(go())


def _served(server: FakeServer, model_id: str) -> list[Any]:
    """The recorded requests for `model_id` (Gemini names it in the path, the others in the body)."""
    out = []
    for r in server.requests:
        body = r.body if isinstance(r.body, dict) else {}
        if body.get("model") == model_id or f"/models/{model_id}:" in r.path:
            out.append(r)
    return out


def _settings(flavour: str, body: dict[str, Any]) -> dict[str, Any]:
    """temperature, max_tokens and tool_choice as plait words, read from one wire's body."""
    if flavour == "google":
        generation = body.get("generationConfig", {})
        calling = body.get("toolConfig", {}).get("functionCallingConfig")
        choice = None
        if calling is not None:
            names = calling.get("allowedFunctionNames")
            choice = names[0] if names else {"ANY": "required", "AUTO": "auto", "NONE": "none"}[calling["mode"]]
        return {
            "temperature": generation.get("temperature"),
            "max_tokens": generation.get("maxOutputTokens"),
            "tool_choice": choice,
        }
    raw = body.get("tool_choice")
    if flavour == "anthropic":
        choice = raw and ({"any": "required"}.get(raw["type"], raw["type"]) if raw["type"] != "tool" else raw["name"])
        tokens = body.get("max_tokens")
    elif flavour == "openai-responses":
        choice = raw["name"] if isinstance(raw, dict) else raw
        tokens = body.get("max_output_tokens")
    else:
        choice = raw["function"]["name"] if isinstance(raw, dict) else raw
        tokens = body.get("max_tokens", body.get("max_completion_tokens"))
    return {"temperature": body.get("temperature"), "max_tokens": tokens, "tool_choice": choice}


def _schema(flavour: str, body: dict[str, Any]) -> Any:
    """The output JSON Schema the request asks for natively, in each wire's place for it."""
    if flavour == "google":
        return body.get("generationConfig", {}).get("responseJsonSchema")
    if flavour == "anthropic":
        return body.get("output_config", {}).get("format", {}).get("schema")
    if flavour == "openai-responses":
        return body.get("text", {}).get("format", {}).get("schema")
    return body.get("response_format", {}).get("json_schema", {}).get("schema")


def _cells() -> list[Any]:
    return [
        pytest.param(flavour, kind, mode, delivery, id=f"{flavour}-{kind}-{mode}-{delivery}")
        for flavour in FLAVOURS
        for kind, case in CASES.items()
        for mode in ("runnable", "model")
        for delivery in ("buffered", "streamed")
        if mode == "model" or case.runnable
    ]


@pytest.mark.parametrize(("flavour", "kind", "mode", "delivery"), _cells())
def test_the_request_carries_the_runnables_settings_else_its_models(
    plait_fake_server: FakeServer, flavour: str, kind: str, mode: str, delivery: str
) -> None:
    case = CASES[kind]
    plait_fake_server.script.extend(case.replies)
    spec = _spec(plait_fake_server, flavour, case, mode)
    result = _run(plait_fake_server, spec, case, streamed=delivery == "streamed")
    assert result.stop_reason == "done", result.error
    requests = _served(plait_fake_server, "subject")
    # One request per scripted reply: every call (each map item, loop iteration, retry) is checked.
    assert len(requests) == len(case.replies["subject"]), [r.path for r in plait_fake_server.requests]
    expected = dict(ON_RUNNABLE if mode == "runnable" else ON_MODEL)
    if not case.tools:
        expected["tool_choice"] = None
    for request in requests:
        streamed = request.body.get("stream") is True or "streamGenerateContent" in request.path
        assert streamed == (delivery == "streamed"), request.path
        assert _settings(flavour, request.body) == expected
        assert request.headers.get("x-matrix") == "subject"  # headers are the model's alone
        if case.output:
            schema = _schema(flavour, request.body)
            fields = {"agreed", "summary"} if kind == "consolidate_judge_agent" else {"answer"}
            assert schema is not None and set(schema["properties"]) == fields


@pytest.mark.parametrize("kind", list(CASES))
@pytest.mark.parametrize("flavour", FLAVOURS)
def test_the_models_timeout_bounds_each_call(plait_fake_server: FakeServer, flavour: str, kind: str) -> None:
    """`timeout` has no body field: a reply held back far past it must end the call with a timeout error that
    names the URL it called."""
    case = CASES[kind]
    replies = {key: list(items) for key, items in case.replies.items()}
    replies["subject"] = [{**reply, "delay": "30s"} for reply in replies["subject"]]
    plait_fake_server.script.extend(replies)
    result = _run(plait_fake_server, _spec(plait_fake_server, flavour, case, "model", {"timeout": "50ms"}), case)
    if kind == "delegated_agent":  # the delegate's failure is a tool result its caller reads
        [_, after] = _served(plait_fake_server, "other")
        assert "0.05s" in json.dumps(after.body)
    else:
        assert result.stop_reason == "error" and getattr(result.error, "kind", None) == "timeout", result.error
        # Like every transport failure, it names the call it gave up on.
        assert "(calling POST http://127.0.0.1:" in result.error.message, result.error.message


#: An older Claude model, asked for its `output` through a final-answer tool (no native structured output).
LEGACY = "claude-3-5-haiku-20241022"


@pytest.mark.parametrize(
    ("choice", "expected"),
    [
        (None, {"type": "any"}),  # its own tools or the answer tool, but a tool: the answer comes as a call
        ("auto", {"type": "any"}),
        ("required", {"type": "any"}),
        ("none", {"type": "tool", "name": "final_answer"}),  # none of its own tools: only the answer tool
        ("lookup", {"type": "tool", "name": "lookup"}),  # the tool it names, as on every other wire
    ],
)
def test_an_answer_tool_keeps_the_agents_tool_choice(
    plait_fake_server: FakeServer, choice: str | None, expected: dict[str, Any]
) -> None:
    """A model without native structured output answers through a tool; the agent's `tool_choice` still holds."""
    plait_fake_server.script.extend({LEGACY: [ANSWER]})
    own = f"tool_choice = {choice}" if choice else ""
    spec = (
        f'model subject_model = "anthropic/{LEGACY}" {{\n  base_url = "{plait_fake_server.base_url("anthropic")}"\n'
        f'  api_key = env("{FAKE_KEY_ENV}")\n  retries = 0\n}}\n' + TOOL + AGENT.replace(SETTINGS, own)
    )
    _run(plait_fake_server, spec, Case(spec, {}))
    [first, *_] = _served(plait_fake_server, LEGACY)
    assert first.body["tool_choice"] == expected
    assert {tool["name"] for tool in first.body["tools"]} == {"lookup", "final_answer"}
